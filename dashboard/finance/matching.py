"""A case's match status in plain words: 2-way (invoice against PO) or 3-way (and against the goods received),
each check against the tolerance the queue file gives. What the file does not give is said to be unknown,
never guessed. No Streamlit here."""

from __future__ import annotations

from dataclasses import dataclass

from dashboard.finance.models import ExceptionCase


@dataclass(frozen=True)
class MatchStatus:
    kind: str  # "3-way" when the file gives a receipt, else "2-way"
    lines: list[str]  # one plain sentence per check, or per thing not known
    failed: list[str]  # the tolerances that failed: "price", "receipt amount", "quantity"

    @property
    def headline(self) -> str:
        if self.failed:
            return f"{self.kind} match: the {' and '.join(self.failed)} tolerance{'s' if len(self.failed) > 1 else ''} failed"
        return f"{self.kind} match"


def _pct(value: float, base: float) -> float | None:
    return 100 * (value - base) / base if base else None


def _check(
    what: str, label: str, value: float, base: float, tolerance: float | None, unit: str = ""
) -> tuple[str, bool]:
    """(sentence, failed) for `value` against `base` within `tolerance` %."""
    pct = _pct(value, base)
    if value == base:
        diff = "the same"
    elif pct is None:
        diff = "against nothing"
    else:
        diff = f"{abs(pct):.1f}% {'above' if value > base else 'below'}"
    sentence = f"{label}: {value:,.2f}{unit} against {base:,.2f}{unit}, {diff}"
    if tolerance is None:
        return sentence + "; no tolerance in the queue file, so within or outside it is not known.", False
    failed = pct is None or abs(pct) > tolerance
    return (
        sentence + f"; the tolerance is {tolerance:g}%: the {what} tolerance {'failed' if failed else 'holds'}.",
        failed,
    )


def match_status(case: ExceptionCase) -> MatchStatus:
    tol, lines, failed = case.tolerance_pct, [], []
    sentence, bad = _check("price", "Invoice against PO", case.invoice_amount, case.po_amount, tol)
    lines.append(sentence)
    failed += ["price"] if bad else []
    receipt = case.received_amount is not None or case.received_quantity is not None
    if case.received_amount is not None:
        sentence, bad = _check(
            "receipt amount", "Invoice against goods received", case.invoice_amount, case.received_amount, tol
        )
        lines.append(sentence)
        failed += ["receipt amount"] if bad else []
    if case.received_quantity is not None and case.invoiced_quantity is not None:
        sentence, bad = _check(
            "quantity",
            "Quantity invoiced against received",
            case.invoiced_quantity,
            case.received_quantity,
            tol,
            " units",
        )
        lines.append(sentence)
        failed += ["quantity"] if bad else []
    elif case.received_quantity is not None:
        lines.append(f"Received {case.received_quantity:,.2f} units; the invoiced quantity is not in the queue file.")
    if not receipt:
        lines.append("No receipt in the queue file (received quantity or amount): a 2-way match only.")
    return MatchStatus(kind="3-way" if receipt else "2-way", lines=lines, failed=failed)
