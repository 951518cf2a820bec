"""Agreement between reviewers in the blind second review, and the agent's calibration: pure functions on the
counts the review store aggregates in SQL (review/second_review.py, review/calibration.py). No Streamlit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from pydantic import BaseModel

from dashboard.review.calibration import LABELS

OVERALL = "all pairs"


class Agreement(BaseModel):
    pair: str  # "Dana and Lee", or OVERALL
    cases: int
    percent: float  # observed agreement, 0..100
    kappa: float | None  # Cohen's kappa; None when undefined (chance agreement is 1: both always said the same)


def cohen_kappa(table: Mapping[tuple[str, str], int]) -> tuple[float, float | None]:
    """(observed agreement, kappa) of a contingency table {(rater A's outcome, rater B's outcome): cases}.
    kappa = (po - pe) / (1 - pe), pe = sum over outcomes of A's share times B's share."""
    n = sum(table.values())
    a, b = Counter(), Counter()
    for (x, y), count in table.items():
        a[x] += count
        b[y] += count
    observed = sum(count for (x, y), count in table.items() if x == y) / n
    expected = sum(a[k] * b[k] for k in a) / n**2
    return observed, None if expected >= 1 else (observed - expected) / (1 - expected)


def _agreement(pair: str, table: Mapping[tuple[str, str], int]) -> Agreement:
    observed, kappa = cohen_kappa(table)
    return Agreement(pair=pair, cases=sum(table.values()), percent=100 * observed, kappa=kappa)


def agreements(counts: Iterable[tuple[str, str, str, str, int]]) -> list[Agreement]:
    """Per reviewer pair (whoever came first), then overall, from (first reviewer, second reviewer, first outcome,
    second outcome, cases). Overall treats "first" and "second" as the two raters."""
    pairs: dict[str, Counter] = {}
    overall: Counter = Counter()
    for first, second, first_outcome, second_outcome, n in counts:
        (x, ox), (y, oy) = sorted([(first, first_outcome), (second, second_outcome)], key=lambda r: r[0].casefold())
        pairs.setdefault(f"{x} and {y}", Counter())[(ox, oy)] += n
        overall[(first_outcome, second_outcome)] += n
    rows = [_agreement(pair, table) for pair, table in sorted(pairs.items())]
    return [*rows, _agreement(OVERALL, overall)] if overall else []


class CalibrationBand(BaseModel):
    band: str
    decisions: int
    kept: int  # the recommendation approved, not overridden

    @property
    def kept_percent(self) -> float | None:
        return 100 * self.kept / self.decisions if self.decisions else None


def calibration(counts: Mapping[str, tuple[int, int]]) -> list[CalibrationBand]:
    """Every confidence band in order, with its decisions and how many kept the recommendation (0 when none)."""
    return [
        CalibrationBand(band=label, decisions=counts.get(label, (0, 0))[0], kept=counts.get(label, (0, 0))[1])
        for label in LABELS
    ]


def kappa_text(kappa: float | None) -> str:
    return "n/a" if kappa is None else f"{kappa:.2f}"
