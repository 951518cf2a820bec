"""The finance exception queue as the reviewer sees it: status, filters, sort, table. No Streamlit here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date

import pandas as pd

from dashboard.finance.flags import FinanceFlags
from dashboard.finance.flags import stored as stored_flags
from dashboard.finance.models import OUTCOME_WORDS, ExceptionCase
from dashboard.finance.policy import Recommendation
from dashboard.review import figures
from dashboard.review.workflow import sla_state
from dashboard.store.standing import DecisionState

STATUSES = figures.STATUSES  # a case's status is the one every page counts (review/figures.py)
SORTS = {
    "Age (oldest first)": (lambda c: c.opened_on, False),
    "Age (newest first)": (lambda c: c.opened_on, True),
    "Amount (largest first)": (lambda c: c.invoice_amount, True),
    "Amount (smallest first)": (lambda c: c.invoice_amount, False),
}
DEFAULT_SORT = "Age (oldest first)"
PLAIN_SEARCH_MISSES = "two-step search saved"  # the crowd-out check: what one any_strict search would lose, kept here
COLUMNS = [
    "case",
    "vendor",
    "type",
    "invoice amount",
    "variance",
    "variance %",
    "age (days)",
    "status",
    "decision",
    "exact precedents",
    "agent recommends",
    PLAIN_SEARCH_MISSES,
    "incident",
]


def select(
    cases: Iterable[ExceptionCase],
    decided: Mapping[str, DecisionState],
    *,
    vendors: Iterable[str] = (),
    types: Iterable[str] = (),
    statuses: Iterable[str] = (),
    sort: str = DEFAULT_SORT,
    held: Mapping[str, str] | None = None,
) -> list[ExceptionCase]:
    """Filter (an empty filter keeps everything) and sort; ties keep the file's order. `held`: case id -> the
    status of its decision held for a second approval."""
    vendors, types, statuses, held = set(vendors), set(types), set(statuses), held or {}
    kept = [
        c
        for c in cases
        if (not vendors or c.vendor_code in vendors)
        and (not types or c.exception_type in types)
        and (not statuses or figures.case_status(decided.get(c.id), held.get(c.id)) in statuses)
    ]
    key, reverse = SORTS.get(sort, SORTS[DEFAULT_SORT])
    return sorted(kept, key=key, reverse=reverse)


def recommends(flags: FinanceFlags) -> str:
    return f"{OUTCOME_WORDS.get(flags.action, flags.action)} ({flags.confidence:.0%})"


def queue_frame(
    cases: list[ExceptionCase],
    decided: Mapping[str, DecisionState],
    today: date,
    flags: Mapping[str, dict] | None = None,
    incidents: Mapping[str, str] | None = None,
    held: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The queue table. `flags`: case id -> its stored flags; `incidents`: case id -> its incident cell; `held`:
    case id -> the status of its held decision. A flag column is blank for a case not measured yet."""
    flags, incidents, held = flags or {}, incidents or {}, held or {}
    rows = []
    for c in cases:
        stored = decided.get(c.id)
        measured = stored_flags(flags.get(c.id))
        rows.append(
            {
                "case": c.id,
                "vendor": f"{c.vendor_code} {c.vendor_name}",
                "type": c.exception_type,
                "invoice amount": c.invoice_amount,
                "variance": c.variance,
                "variance %": c.variance_pct,
                "age (days)": (today - c.opened_on).days,
                "status": figures.case_status(stored, held.get(c.id)),
                "decision": OUTCOME_WORDS[stored.outcome] if stored else "",
                "exact precedents": measured.exact if measured else None,
                "agent recommends": recommends(measured) if measured else "",
                PLAIN_SEARCH_MISSES: measured.crowd_out if measured else "",
                "incident": incidents.get(c.id, ""),
            }
        )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["exact precedents"] = frame["exact precedents"].astype("Int64")  # blank, not NaN, when not measured
    return frame


def resolve_case(
    cases: Sequence[ExceptionCase], ids: Sequence[str], selected_rows: list[int], linked_id: str | None
) -> tuple[ExceptionCase | None, str | None]:
    """(case to show, problem): a selected row wins, else the deep-linked id; an unknown id is a problem. `ids`: the
    cases' ids, in order (searched as strings: walking 100,000 models for one id took ~27 ms)."""
    if selected_rows and 0 <= selected_rows[0] < len(cases):
        return cases[selected_rows[0]], None
    if linked_id:
        try:
            return cases[ids.index(linked_id)], None
        except ValueError:
            return None, f"No exception {linked_id!r} in the queue (or it is filtered out)."
    return None, None


BULK_CONFIDENCE = 0.8  # a recommendation this sure, cited from relevant precedents, may be approved in bulk


def well_supported(rec: Recommendation) -> bool:
    """Backed by relevant precedents with high confidence: safe to approve with the rest of a batch."""
    return rec.policy in ("precedent", "human") and bool(rec.cited) and rec.confidence >= BULK_CONFIDENCE


def with_sla(frame: pd.DataFrame, sla_days: int) -> pd.DataFrame:
    """The queue table with its SLA column (on time / due / overdue) beside the age."""
    frame = frame.copy()
    frame.insert(
        frame.columns.get_loc("age (days)") + 1, "SLA", [sla_state(int(a), sla_days) for a in frame["age (days)"]]
    )
    return frame
