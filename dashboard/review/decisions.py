"""The one way a reviewer's decision is recorded, for both queues, bulk approval and the `decide` command.

A page (or the CLI) builds the decision and the memory it is retained as with its domain's rules
(finance.decisions, support.decisions); this service then, in order:

1. checks the reviewer's role (roles.require: NotAllowed);
2. checks the case still shows what the reviewer's screen showed (its id, the agent's recommendation or draft, the
   evidence: `Proposal.shown`), nobody else holds a live claim on it, and no decision on it awaits a second
   approval (Refused);
3. stores it in the outbox FIRST, on the revision the reviewer saw (RevisionConflict when another decision
   landed since), then delivers that row when Hindsight answers (else the worker does, later). A decision on
   an amount above the reviewer's approval limit is stored awaiting a second approval instead: not delivered,
   not a human decision anywhere, until `second_approval` confirms it (review/approvals.py). The first decision
   on a case sampled for a blind second review (review/second_review.py) is held the same way until
   `second_review` agrees with it, or `lead_decision` settles a disagreement;
   A case with a standing decision takes no second first decision (AlreadyDecided, naming it): changing it is a
   revision, asked for explicitly with a reason (`revise=`), which passes every check above like a first decision
   and records revision N+1; every revision stays in the log;
4. bumps the decision's scope in the review store, so every instance recalls that scope again at its next
   case open, and releases the reviewer's claim;
5. returns what the page shows next: the stored decision, its delivery, and the next unreviewed case.

No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from dashboard.access.limits import ApprovalLimits, in_words
from dashboard.access.roles import require
from dashboard.delivery.outbox import Outbox, StoredDecision
from dashboard.hindsight.calls import RetainFn
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.approvals import Approvals, HeldDecision, second_approver_problem
from dashboard.review.calibration import calibration_counts
from dashboard.review.casework import Casework
from dashboard.review.freshness import Freshness
from dashboard.review.second_review import (
    AlreadySettled,
    BlindCase,
    SecondReviews,
    lead_problem,
    second_review_problem,
    selected,
)
from dashboard.review.workflow import next_unreviewed
from dashboard.settings import Role, Settings
from dashboard.store.decision import (
    NOTE_MAX_CHARS,
    REVISION_REASON_MAX_CHARS,
    EvidenceSnapshot,
    Hold,
    ReviewerDecision,
    Shown,
    changed_since_shown,
)
from dashboard.store.delivery_queue import DeliveryReport, worker_name
from dashboard.store.errors import AlreadyDecided, NotAllowed, Refused, RevisionConflict
from dashboard.store.identity import Actor, Person, as_person
from dashboard.store.kept import KeptUntilTheLogChanges
from dashboard.store.schema import DISCARDED

__all__ = ["AlreadyDecided", "Decided", "DecisionService", "NotAllowed", "Proposal", "Refused", "RevisionConflict"]


@dataclass(frozen=True)
class Decided:
    stored: StoredDecision
    report: DeliveryReport
    next_case: str | None  # the next unreviewed case of the queue, None at its end
    held_because: str | None = None  # awaiting a second approval: the amount against the limit, in plain words
    blind: bool = False  # held for a blind second review

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
    evidence: EvidenceSnapshot | None = None  # the case's evidence as it is when the decision is recorded
    amount: float | None = None  # the invoice amount approval limits apply to; None: no limit applies (tickets)
    shown: Shown | None = None  # what the reviewer's screen showed when they acted; None: no screen (the CLI, imports)

    def by(self, person: Person) -> Proposal:
        """This proposal as `person`'s decision: a signed-in reviewer's subject and issuer are recorded with it."""
        if person.name != self.decision.reviewer:
            raise Refused(f"The decision names {self.decision.reviewer}, but {person.name} is signed in.")
        return replace(self, decision=self.decision.by(person))

    def unchanged(self) -> None:
        """Refused when the case no longer shows what the reviewer's screen showed."""
        if self.shown is not None:
            now = Shown.of(self.decision.case_id, self.evidence or EvidenceSnapshot(available=False))
            why = changed_since_shown(self.shown, now, self.decision.words or None)
            if why:
                raise Refused(why)


class DecisionService:
    def __init__(
        self,
        outbox: Outbox,
        casework: Casework,
        freshness: Freshness,
        retain: RetainFn | None,
        limits: ApprovalLimits = ApprovalLimits(),
        second_review_share: float = 0.0,
    ):
        self.outbox, self.casework, self.freshness, self.retain, self.limits = (
            outbox,
            casework,
            freshness,
            retain,
            limits,
        )
        self.approvals = Approvals(outbox.engine, outbox.clock)
        self.second_reviews, self.second_review_share = SecondReviews(outbox.engine, outbox.clock), second_review_share
        self._calibration = KeptUntilTheLogChanges(
            outbox.engine
        )  # (bank, kind) -> its counts, read again when the log changes

    def decide(
        self,
        bank_id: str,
        role: Role,
        proposal: Proposal,
        *,
        queue: Sequence[str] = (),
        decided: Collection[str] = (),
        revise: str | None = None,
    ) -> Decided:
        """Record one decision (see the module's steps); NotAllowed, Refused or RevisionConflict name why not.
        `revise`: the reason for revising the case's standing decision; without it a decided case is refused
        (AlreadyDecided), with it an undecided one is."""
        decision = proposal.decision.model_copy(update={"role": role})  # on its row and in the exports
        require(role, "decide")
        proposal.unchanged()
        self._check_claim(bank_id, decision.case_kind, decision.case_id, decision.person)
        waiting = self.held(bank_id, decision.case_kind, decision.case_id)
        if waiting is not None and waiting.awaiting:
            raise Refused(
                f"{decision.case_id} awaits a second approval ({waiting.summary()}): confirm or reject it first."
            )
        if self.blind_case(bank_id, decision.case_kind, decision.case_id) is not None:
            raise Refused(f"{decision.case_id} awaits a blind second review or a lead: decide it there.")
        standing = self.standing(bank_id, decision.case_kind, decision.case_id)
        # One made on a revision older than the standing one meets it as a conflict (the outbox), where the reviewer chooses.
        if (
            revise is None
            and standing is not None
            and (proposal.base_revision is None or proposal.base_revision >= standing.revision)
        ):
            raise AlreadyDecided(standing)
        if revise is not None:
            proposal = _as_revision(proposal, standing, revise)
            decision = decision.model_copy(update={"revision_reason": proposal.decision.revision_reason})
        hold, held_because = self._hold(role, proposal)
        # A four-eyes hold is a second look already; otherwise a sampled case's first decision, or a revision of it,
        # waits blind (a revision passes the controls a first decision does).
        blind = (
            hold is None
            and selected(decision.case_id, self.second_review_share)
            and (revise is not None or self.outbox.current_revision(bank_id, decision.case_kind, decision.case_id) == 0)
        )
        stored, report = self.outbox.submit(
            bank_id,
            decision,
            proposal.record,
            self.retain,
            base_revision=proposal.base_revision,
            evidence=proposal.evidence,
            hold=hold,
            blind=blind,
        )
        if blind:
            self.second_reviews.record_first(stored, role)
        if hold is None and not blind:  # a held decision changes no recall until it is released
            self.freshness.bump(bank_id, proposal.scope)
        self.casework.release(bank_id, decision.case_kind, decision.case_id, decision.person)
        following = next_unreviewed(queue, decision.case_id, {*decided, decision.case_id}) if queue else None
        return Decided(stored=stored, report=report, next_case=following, held_because=held_because, blind=blind)

    def standing(self, bank_id: str, case_kind: str, case_id: str) -> StoredDecision | None:
        """The case's standing decision: its newest not held (nor discarded after Hindsight refused it); None: undecided."""
        newest = self.outbox.latest_decided(bank_id, case_kind, case_id)
        return None if newest is None or newest.state == DISCARDED else newest

    def revisions(self, bank_id: str, case_kind: str, case_id: str) -> list[StoredDecision]:
        """Every decision recorded on the case, oldest first: its history, each revision with its reason."""
        return self.outbox.case_history(bank_id, case_kind, case_id)

    def _hold(self, role: Role, proposal: Proposal) -> tuple[Hold | None, str | None]:
        amount, reviewer = proposal.amount, proposal.decision.person
        if amount is None:
            return None, None
        limit = self.limits.limit_for(reviewer, role)
        if limit.covers(amount):
            return None, None
        return Hold(role=role, amount=amount, limit=limit.amount, scope=proposal.scope), in_words(
            reviewer, limit, amount
        )

    def _check_claim(self, bank_id: str, case_kind: str, case_id: str, who: Actor) -> None:
        held = self.casework.holder_of(bank_id, case_kind, case_id)
        if held is not None and not held.held_by(who):
            raise Refused(f"{case_id} is claimed by {held.holder} until {held.expires_at:%H:%M} UTC.")

    def held(self, bank_id: str, case_kind: str, case_id: str) -> HeldDecision | None:
        """The case's newest decision when it awaits a second approval or was returned by one; else None."""
        return self.approvals.held(bank_id, case_kind, case_id).get(case_id)

    def held_cases(self, bank_id: str, case_kind: str) -> Mapping[str, HeldDecision]:
        """case id -> its decision awaiting a second approval or returned by one (the queue's status column)."""
        return self.approvals.held(bank_id, case_kind)

    def approval_problem(self, held: HeldDecision, approver: Actor, role: Role) -> str | None:
        """Why `approver` may not confirm or reject `held` (the page disables its buttons with it); None: they may."""
        return second_approver_problem(held, approver, role, self.limits)

    def second_approval(
        self, bank_id: str, role: Role, case_kind: str, case_id: str, approver: Actor, *, confirm: bool, note: str = ""
    ) -> Decided:
        """A second approver confirms the held decision (it is delivered like any decision) or rejects it (the
        case returns to the queue). Refused names why not: not someone else, a limit below the amount, no held
        decision, or another approver settled it first."""
        require(role, "decide")
        approver, note = as_person(approver), note.strip()
        if not approver.name.strip():
            raise Refused("A second approver's name is required.")
        if len(note) > NOTE_MAX_CHARS:
            raise Refused(f"The note is {len(note):,} characters; the limit is {NOTE_MAX_CHARS:,}.")
        held = self.held(bank_id, case_kind, case_id)
        if held is None:
            raise Refused(f"{case_id} has no decision awaiting a second approval.")
        self._check_claim(bank_id, case_kind, case_id, approver)
        problem = self.approval_problem(held, approver, role)  # also: a returned decision awaits nothing
        if problem:
            raise Refused(problem)
        limit = self.limits.limit_for(approver, role).amount
        writer = self._writer()
        if not self.approvals.settle(held, approver, role, limit, confirm=confirm, note=note, writer=writer):
            raise Refused(f"{case_id}'s second approval was given by someone else meanwhile.")
        report = self._release(bank_id, held.stored.id, held.proposed.scope, writer) if confirm else DeliveryReport()
        return Decided(stored=self.outbox.get(held.stored.id), report=report, next_case=None)

    def blind_case(self, bank_id: str, case_kind: str, case_id: str) -> BlindCase | None:
        """The case's first decision when it awaits a blind second review or a lead; else None."""
        return self.second_reviews.open(bank_id, case_kind, case_id).get(case_id)

    def blind_cases(self, bank_id: str, case_kind: str) -> dict[str, BlindCase]:
        """case id -> its first decision awaiting a blind second review or a lead (the queue's filters)."""
        return self.second_reviews.open(bank_id, case_kind)

    def second_review_problem(self, case: BlindCase, who: Actor, role: Role) -> str | None:
        """Why `who` may not give the blind second review (the page disables its form with it); None: they may."""
        return second_review_problem(case, who, role) if case.awaiting_second else lead_problem(case, who, role)

    def agreement_counts(self) -> list[tuple[str, str, str, str, int]]:
        """(first reviewer, second reviewer, their outcomes, cases) of every blind second review (the Overview)."""
        return self.second_reviews.pair_counts()

    def calibration_counts(self, bank_id: str, case_kind: str) -> dict[str, tuple[int, int]]:
        """confidence band -> (standing decisions, recommendations kept) of this bank's kind of case (the Overview)."""
        return self._calibration.get(
            (bank_id, case_kind), lambda: calibration_counts(self.outbox.engine, bank_id, case_kind)
        )

    def second_review(self, bank_id: str, role: Role, proposal: Proposal) -> Decided:
        """The blind second reviewer's decision: the same outcome releases the first decision to memory; another
        sends the case to a lead. Refused names why not (the first reviewer, nothing awaiting, someone first)."""
        require(role, "decide")
        proposal.unchanged()
        decision = proposal.decision
        case = self._blind(bank_id, decision.case_kind, decision.case_id, decision.person)
        problem = second_review_problem(case, decision.person, role)
        if problem:
            raise Refused(problem)
        writer = self._writer()
        if not self.second_reviews.record_second(case, role, decision, writer):
            raise Refused(f"{case.case_id}'s second review was given by someone else meanwhile.")
        agreed = decision.outcome == case.first.decision.outcome
        report = self._release(bank_id, case.first.id, proposal.scope, writer) if agreed else DeliveryReport()
        self.casework.release(bank_id, decision.case_kind, decision.case_id, decision.person)
        return Decided(stored=self.outbox.get(case.first.id), report=report, next_case=None)

    def lead_decision(self, bank_id: str, role: Role, proposal: Proposal) -> Decided:
        """A lead settles a disagreement: their decision is recorded and delivered (or, above the lead's approval
        limit, held for a second approval like any decision); the first is superseded, and both reviewers'
        decisions stay in the audit."""
        require(role, "settle_disagreement")
        proposal.unchanged()
        decision = proposal.decision.model_copy(update={"role": role})  # on its row and in the exports
        case = self._blind(bank_id, decision.case_kind, decision.case_id, decision.person)
        problem = lead_problem(case, decision.person, role)
        if problem:
            raise Refused(problem)
        hold, held_because = self._hold(role, proposal)  # a lead's approval limit binds them like anyone's
        writer = self._writer()
        try:  # the lead's decision and the step that settles the first are one transaction
            audit_id = self.outbox.record(
                bank_id,
                decision,
                proposal.record,
                base_revision=case.first.revision,
                evidence=proposal.evidence,
                hold=hold,
                writer=writer,
                then=lambda conn, lead_id: self.second_reviews.record_lead(conn, case, role, decision, lead_id),
            )
        except (RevisionConflict, AlreadySettled):
            raise Refused(f"{case.case_id} was settled by another lead meanwhile.") from None
        report = self._release(bank_id, audit_id, proposal.scope, writer) if hold is None else DeliveryReport()
        self.casework.release(bank_id, decision.case_kind, decision.case_id, decision.person)
        return Decided(stored=self.outbox.get(audit_id), report=report, next_case=None, held_because=held_because)

    def _writer(self) -> str | None:
        """Who sends a row this request writes or releases, at once (outbox.leased_to); None: the workers do."""
        return worker_name() if self.retain is not None else None

    def _release(self, bank_id: str, row_id: int, scope: str, writer: str | None) -> DeliveryReport:
        """A decision that may now reach memory (written or released leased to `writer`): delivered at once when
        Hindsight answers (else by the worker), and its scope recalled again on every instance."""
        report = (
            self.outbox.deliver_due(self.retain, only_id=row_id, owner=writer)
            if writer is not None
            else DeliveryReport()
        )
        self.freshness.bump(bank_id, scope)
        return report

    def _blind(self, bank_id: str, case_kind: str, case_id: str, who: Actor) -> BlindCase:
        case = self.blind_case(bank_id, case_kind, case_id)
        if case is None:
            raise Refused(f"{case_id} has no decision awaiting a blind second review or a lead.")
        self._check_claim(bank_id, case_kind, case_id, who)
        return case

    def decide_many(self, bank_id: str, role: Role, proposals: Sequence[Proposal]) -> tuple[list[Decided], list[str]]:
        """Bulk approval: each proposal recorded on its own, on revision 0; (recorded, skipped case ids). A case
        claimed or decided by someone else meanwhile is skipped: theirs stands. One above the reviewer's limit is
        recorded awaiting a second approval, like a single decision."""
        require(role, "decide")
        recorded, skipped = [], []
        for proposal in proposals:
            try:
                recorded.append(self.decide(bank_id, role, proposal))
            except (Refused, RevisionConflict):
                skipped.append(proposal.decision.case_id)
        return recorded, skipped


def _as_revision(proposal: Proposal, standing: StoredDecision | None, reason: str) -> Proposal:
    """The proposal as a revision of `standing`, its reason recorded with it; Refused when there is nothing to revise
    or no reason (or one too long) is given."""
    case_id, reason = proposal.decision.case_id, reason.strip()
    if standing is None:
        raise Refused(f"{case_id} has no standing decision to revise: decide it.")
    if not reason:
        raise Refused(f"{AlreadyDecided(standing).standing_words} Revising it needs a reason: give one.")
    if len(reason) > REVISION_REASON_MAX_CHARS:
        raise Refused(
            f"The reason for revising is {len(reason):,} characters; the limit is {REVISION_REASON_MAX_CHARS:,}."
        )
    return replace(proposal, decision=proposal.decision.model_copy(update={"revision_reason": reason}))


def decision_service(
    outbox: Outbox,
    retain: RetainFn | None = None,
    *,
    limits: ApprovalLimits = ApprovalLimits(),
    second_review_share: float = 0.0,
    casework: Casework | None = None,
    freshness: Freshness | None = None,
) -> DecisionService:
    """The decision service on `outbox`'s store, as the app, the CLI and the tests build it (`retain` None: delivery
    waits for a worker). Its claims and freshness are on the same store, unless the caller shares its own."""
    return DecisionService(
        outbox,
        casework or Casework(outbox.engine),
        freshness or Freshness(outbox.engine),
        retain,
        limits,
        second_review_share,
    )


def configured_decision_service(
    settings: Settings, outbox: Outbox, retain: RetainFn | None, **shared
) -> DecisionService:
    """The deployment's service: its approval limits and second-review share from the settings."""
    return decision_service(
        outbox,
        retain,
        limits=ApprovalLimits(settings.approval_limits),
        second_review_share=settings.second_review_share,
        **shared,
    )
