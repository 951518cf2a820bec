"""The case figures every page shows (cases, decided, held for a second approver, held for a blind second review,
awaiting the lead, open): one status per case, one count over a queue. No Streamlit.

A page that shows one of these figures reads it here, so the Overview, the Audit log, its export, the Home page and
the queue pages cannot disagree. A case's status is its held decision's when one is held (a held decision is the
case's newest: nobody decides a held case again), else its standing decision's, else open. A held decision is not a
decision yet: it is counted as held, never as decided.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet

from pydantic import BaseModel, ConfigDict

from dashboard.delivery.outbox import StoredDecision
from dashboard.review.approvals import HeldDecision
from dashboard.review.second_review import BlindCase
from dashboard.store.standing import DecisionState

OPEN, DECIDED, PENDING_DELIVERY = "open", "decided", "pending delivery"
# The held statuses, as HeldDecision.status and BlindCase.status say them
AWAITING_APPROVAL, RETURNED = "awaiting second approval", "returned"
AWAITING_SECOND, AWAITING_LEAD = "awaiting blind second review", "awaiting lead"
STATUSES = (OPEN, DECIDED, PENDING_DELIVERY, AWAITING_APPROVAL, RETURNED, AWAITING_SECOND, AWAITING_LEAD)


def case_status(standing: DecisionState | None, held: str | None = None) -> str:
    """One case's status: `standing`, its standing decision (Outbox.decision_states); `held`, the status of its
    held decision (held_statuses), which wins."""
    if held:
        return held
    if standing is None:
        return OPEN
    return PENDING_DELIVERY if standing.state == "pending" else DECIDED


def held_statuses(held: Mapping[str, HeldDecision], blind: Mapping[str, BlindCase]) -> dict[str, str]:
    """case id -> the status of its decision held for a second approval (Approvals.held) or a blind second review
    (SecondReviews.open)."""
    return {case_id: h.status for case_id, h in (*held.items(), *blind.items())}


class CaseFigures(BaseModel):
    """A queue's cases by status. `decided` counts the decisions that stand (pending delivery among them); a held
    decision is counted by its hold only; a returned case is open again."""

    model_config = ConfigDict(frozen=True)

    cases: int = 0
    open: int = 0  # no decision stands (returned ones among them)
    returned: int = 0  # rejected by the second approver: back in the queue
    decided: int = 0
    pending_delivery: int = 0  # of the decided, not yet stored in Hindsight
    held_for_approver: int = 0  # above the reviewer's approval limit, waiting for a second approver
    held_for_blind_review: int = 0  # waiting for a blind second review
    awaiting_lead: int = 0  # the two reviews differ: waiting for a lead

    @property
    def held(self) -> int:
        return self.held_for_approver + self.held_for_blind_review + self.awaiting_lead

    def __add__(self, other: CaseFigures) -> CaseFigures:
        return CaseFigures(**{name: getattr(self, name) + getattr(other, name) for name in CaseFigures.model_fields})


def figures_of(counts: Mapping[str, int]) -> CaseFigures:
    """The figures of cases counted by status (status -> cases), e.g. Counter(case_status(...) for each case)."""
    n = {status: counts.get(status, 0) for status in STATUSES}
    return CaseFigures(
        cases=sum(counts.values()),
        open=n[OPEN] + n[RETURNED],
        returned=n[RETURNED],
        decided=n[DECIDED] + n[PENDING_DELIVERY],
        pending_delivery=n[PENDING_DELIVERY],
        held_for_approver=n[AWAITING_APPROVAL],
        held_for_blind_review=n[AWAITING_SECOND],
        awaiting_lead=n[AWAITING_LEAD],
    )


def case_figures(ids: Iterable[str], standing: Mapping[str, DecisionState], held: Mapping[str, str]) -> CaseFigures:
    """The figures of a queue: `ids`, its cases; `standing`, the standing decisions (Outbox.decision_states); `held`,
    the held statuses (held_statuses). case_status's rule counted by set operations, not called per case: a queue page
    asks on every run, and at 100,000 cases that took ~27 ms, this ~19 ms (2 busy cores)."""
    queued = ids if isinstance(ids, AbstractSet) else set(ids)
    on_hold = Counter(status for case_id, status in held.items() if case_id in queued and status)
    standing_here = (standing.keys() & queued) - {case_id for case_id, status in held.items() if status}
    pending = len(
        standing_here & {case_id for case_id, s in standing.items() if s.state == "pending"}
    )  # few, by one scan
    on_hold.update(
        {
            PENDING_DELIVERY: pending,
            DECIDED: len(standing_here) - pending,
            OPEN: len(queued) - len(standing_here) - sum(on_hold.values()),
        }
    )
    return figures_of(on_hold)


def log_statuses(
    history: Iterable[StoredDecision],
    standing_of: Callable[[str, str], Mapping[str, DecisionState]],
    held_of: Callable[[str, str], Mapping[str, str]],
) -> dict[tuple[str, str, str], str]:
    """(bank, case kind, case id) -> the status now of each case these decisions are about (an audit log's rows):
    `standing_of(bank, kind)`, its standing decisions (Outbox.decision_states); `held_of(bank, kind)`, its held
    statuses (held_statuses)."""
    cases: dict[tuple[str, str], set[str]] = {}
    for entry in history:
        cases.setdefault((entry.bank_id, entry.case_kind), set()).add(entry.case_id)
    statuses = {}
    for (bank, kind), ids in cases.items():
        standing, held = standing_of(bank, kind), held_of(bank, kind)
        statuses |= {(bank, kind, case_id): case_status(standing.get(case_id), held.get(case_id)) for case_id in ids}
    return statuses
