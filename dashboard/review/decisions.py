"""The one way a reviewer's decision is recorded, for both queues, bulk approval and the `decide` command.

A page (or the CLI) builds the decision and the memory it is retained as with its domain's rules
(finance.decisions, support.decisions); this service then, in order:

1. checks the reviewer's role (roles.require: NotAllowed);
2. checks nobody else holds a live claim on the case (Refused);
3. stores it in the outbox FIRST, on the revision the reviewer saw (RevisionConflict when another decision
   landed since), then delivers that row when Hindsight answers (else the worker does, later);
4. bumps the decision's scope in the review store, so every instance recalls that scope again at its next
   case open, and releases the reviewer's claim;
5. returns what the page shows next: the stored decision, its delivery, and the next unreviewed case.

No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from dashboard.hindsight.calls import RetainFn
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.casework import Casework
from dashboard.review.decision import EvidenceSnapshot, ReviewerDecision
from dashboard.review.freshness import Freshness
from dashboard.review.outbox import DeliveryReport, Outbox, RevisionConflict, StoredDecision
from dashboard.review.roles import NotAllowed, require
from dashboard.review.workflow import next_unreviewed
from dashboard.settings import Role


__all__ = ["Decided", "DecisionService", "NotAllowed", "Proposal", "Refused", "RevisionConflict"]


class Refused(Exception):
    """The decision may not be recorded now; the message says why, for a person."""


@dataclass(frozen=True)
class Decided:
    stored: StoredDecision
    report: DeliveryReport
    next_case: str | None  # the next unreviewed case of the queue, None at its end

    @property
    def delivered(self) -> bool:
        return self.stored.state == "delivered"


@dataclass(frozen=True)
class Proposal:
    """A decision ready to record: what the reviewer decided, what memory it becomes, on what it was made."""

    decision: ReviewerDecision
    record: MemoryRecord
    scope: str  # what recalls it changes: finance.models.decision_scope, support.customers.customer_tag
    base_revision: int | None = 0  # the case revision the reviewer saw; None appends (imports, tools)
    evidence: EvidenceSnapshot | None = None


class DecisionService:
    def __init__(self, outbox: Outbox, casework: Casework, freshness: Freshness, retain: RetainFn | None):
        self.outbox, self.casework, self.freshness, self.retain = outbox, casework, freshness, retain

    def decide(
        self, bank_id: str, role: Role, proposal: Proposal, *, queue: Sequence[str] = (), decided: Collection[str] = ()
    ) -> Decided:
        """Record one decision (see the module's steps); NotAllowed, Refused or RevisionConflict name why not."""
        decision = proposal.decision
        require(role, "decide")
        held = self.casework.holder_of(bank_id, decision.case_kind, decision.case_id)
        if held is not None and held.holder != decision.reviewer:
            raise Refused(f"{decision.case_id} is claimed by {held.holder} until {held.expires_at:%H:%M} UTC.")
        stored, report = self.outbox.submit(
            bank_id, decision, proposal.record, self.retain, base_revision=proposal.base_revision, evidence=proposal.evidence
        )
        self.freshness.bump(bank_id, proposal.scope)
        self.casework.release(bank_id, decision.case_kind, decision.case_id, decision.reviewer)
        following = next_unreviewed(queue, decision.case_id, {*decided, decision.case_id}) if queue else None
        return Decided(stored=stored, report=report, next_case=following)

    def decide_many(self, bank_id: str, role: Role, proposals: Sequence[Proposal]) -> tuple[list[Decided], list[str]]:
        """Bulk approval: each proposal recorded on its own, on revision 0; (recorded, skipped case ids). A case
        claimed or decided by someone else meanwhile is skipped: theirs stands."""
        require(role, "decide")
        recorded, skipped = [], []
        for proposal in proposals:
            try:
                recorded.append(self.decide(bank_id, role, proposal))
            except (Refused, RevisionConflict):
                skipped.append(proposal.decision.case_id)
        return recorded, skipped
