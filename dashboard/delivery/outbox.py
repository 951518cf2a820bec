"""The review store's decisions: recorded durably, delivered to Hindsight row by row.

A decision is written to the review store (SQLite in the data directory, or a team's PostgreSQL) BEFORE
the UI confirms it; the retained record has a document id derived from the case, so delivering twice,
or a revised decision, replaces the memory and never duplicates it. Decisions are append-only: each
carries the revision of the case it was made on, and one made on a stale revision raises
`RevisionConflict` instead of overwriting. A decision above its reviewer's approval limit is recorded
`awaiting_approval` with its "proposed" step (review/approvals.py): delivery never claims it. Delivery
(store/delivery_queue.py) claims due rows with a lease, so several workers never send
one row twice; failures are per row. A row its writer sends at once (a reviewer's own decision) is written
already leased to that writer: the workers poll the store every few seconds, and one taking the row between the
write and the writer's attempt would leave the reviewer told "delivered later" about a row being delivered.
No Streamlit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import IntegrityError

from dashboard.hindsight.calls import RetainFn
from dashboard.hindsight.wire import MemoryRecord, tag_value
from dashboard.origin.provenance import Provenance
from dashboard.store.db import as_utc
from dashboard.store.decision import EvidenceSnapshot, Hold, ReviewerDecision
from dashboard.store.delivery_queue import DeliveryQueue, DeliveryReport, leased_to, utc_now, worker_name
from dashboard.store.errors import RevisionConflict
from dashboard.store.schema import AWAITING, AWAITING_SECOND, DISCARDED, HELD, PENDING, approvals, decisions
from dashboard.store.standing import DecisionState, StandingCount, StandingDecisions, decision_ids


class StoredDecision(BaseModel):
    id: int
    case_kind: str
    case_id: str
    bank_id: str
    revision: int
    document_id: str
    decision: ReviewerDecision
    record: MemoryRecord
    evidence: EvidenceSnapshot | None = None
    created_at: datetime
    state: str  # pending | delivered | superseded | failed | discarded | awaiting_approval | returned | awaiting_second | awaiting_lead
    attempts: int
    last_error: str | None
    next_attempt_at: datetime
    delivered_at: datetime | None

    @property
    def held(self) -> bool:
        """Awaiting a second approval, or returned by one: not (yet) a decision memory or an agent may see."""
        return self.state in HELD


def stored_decision(row: sa.Row) -> StoredDecision:
    """A decisions row as the model, its times zoned."""
    data = dict(row._mapping)
    for key in ("created_at", "next_attempt_at", "delivered_at"):
        data[key] = as_utc(data[key])
    return StoredDecision.model_validate(data)


def of_case(bank_id: str, case_kind: str, case_id: str) -> tuple:
    """The decisions of one case of one bank: the log's case key."""
    return decisions.c.bank_id == bank_id, decisions.c.case_kind == case_kind, decisions.c.case_id == case_id


def report_columns(decision: ReviewerDecision, memory: MemoryRecord) -> dict:
    """What the Overview counts of a decision, as the row's plain columns (migrations 0010 and 0015 fill older rows
    alike): the group is its record's first tag its kind groups by, "" when the record has none."""
    group = (tag_value(memory.tags, decision.report_by) or "") if decision.report_by else None
    return {
        "decided_on": decision.decided_at.date(),
        "overridden": decision.overridden,
        "reason_code": decision.reason_code,
        "report_group": group,
    }


class Outbox(DeliveryQueue):
    """The decision log of the review store. `store` is an engine, or a SQLite file path (tests, tools)."""

    table = decisions
    inert_states = (DISCARDED, *HELD)  # a held decision is not (yet) one: it replaces nothing

    def __init__(self, store: Engine | Path, clock: Callable[[], datetime] = utc_now, signing_key: bytes | None = None):
        super().__init__(store, clock)
        self.standing = StandingDecisions(self.engine)
        # signs each decision's record: only these carry a reviewer's authority (the configured key, else the store's)
        self.provenance = Provenance(self.engine, signing_key)

    def _parse(self, row: sa.Row) -> StoredDecision:
        return stored_decision(row)

    def _send(self, send: RetainFn, row: StoredDecision) -> None:
        send(row.bank_id, [row.record])

    # -- recording ---------------------------------------------------------------------

    def current_revision(self, bank_id: str, case_kind: str, case_id: str) -> int:
        """The case's revision: how many decisions it has (0 = undecided). A form carries it to submit."""
        with self.engine.connect() as conn:
            return self._revision(conn, bank_id, case_kind, case_id)

    @staticmethod
    def _revision(conn: sa.Connection, bank_id: str, case_kind: str, case_id: str) -> int:
        query = sa.select(sa.func.coalesce(sa.func.max(decisions.c.revision), 0)).where(
            *of_case(bank_id, case_kind, case_id)
        )
        return int(conn.execute(query).scalar_one())

    def record(
        self,
        bank_id: str,
        decision: ReviewerDecision,
        memory: MemoryRecord,
        *,
        base_revision: int | None = None,
        evidence: EvidenceSnapshot | None = None,
        hold: Hold | None = None,
        blind: bool = False,
        writer: str | None = None,
        then: Callable[[Connection, int], None] | None = None,
    ) -> int:
        """Store the decision durably; returns its audit id. Delivery is a separate step (`writer`: who takes it,
        see `leased_to`). `then(conn, audit_id)` writes what belongs with it in the same transaction (raising undoes both).

        `base_revision` is the case's revision the reviewer saw; when another decision landed since,
        `RevisionConflict` is raised and nothing is written. None appends as the newest (imports, tools).
        With `hold` the row awaits a second approval, its "proposed" step written in the same transaction; `blind`:
        it awaits a blind second review (review/second_review.py).
        """
        self.provenance.key  # read (or made) before the insert's transaction: it is signed with it inside
        for _attempt in range(5):
            try:
                return self._insert(bank_id, decision, memory, base_revision, evidence, hold, blind, writer, then)
            except IntegrityError:
                # Someone took this revision between our read and our insert.
                if base_revision is not None:
                    theirs = self.latest_in_bank(bank_id, decision.case_kind, decision.case_id)
                    raise RevisionConflict(theirs, base_revision) from None
        raise RuntimeError(f"could not record a decision on {decision.case_id}: the case is being written too often")

    def _insert(self, bank_id, decision, memory, base_revision, evidence, hold, blind, writer, then) -> int:
        now = self.clock()
        with self.engine.begin() as conn:
            current = self._revision(conn, bank_id, decision.case_kind, decision.case_id)
            if base_revision is not None and current != base_revision:
                theirs = conn.execute(
                    sa.select(decisions).where(
                        *of_case(bank_id, decision.case_kind, decision.case_id), decisions.c.revision == current
                    )
                ).one()
                raise RevisionConflict(stored_decision(theirs), base_revision)
            # a reviewer's authority, proven: signed as this revision of the case, with its outcome and text
            memory = self.provenance.sign_decision(
                memory, decision.reviewer, bank_id, decision.case_kind, decision.case_id, current + 1, decision.outcome
            )
            result = conn.execute(
                decisions.insert().values(
                    bank_id=bank_id,
                    case_kind=decision.case_kind,
                    case_id=decision.case_id,
                    revision=current + 1,
                    document_id=memory.document_id,
                    reviewer=decision.reviewer,
                    decision=decision.model_dump(mode="json"),
                    record=memory.model_dump(mode="json"),
                    evidence=evidence.model_dump(mode="json") if evidence else None,
                    **report_columns(decision, memory),
                    created_at=now,
                    state=AWAITING if hold else (AWAITING_SECOND if blind else PENDING),
                    attempts=0,
                    next_attempt_at=now,
                    **({} if hold or blind else leased_to(writer, now)),
                )
            )
            audit_id = int(result.inserted_primary_key[0])
            if hold:
                conn.execute(
                    approvals.insert().values(
                        decision_id=audit_id,
                        step="proposed",
                        actor=decision.reviewer,
                        person_id=decision.person.id,
                        at=now,
                        **hold.model_dump(),
                    )
                )
            if then is not None:
                then(conn, audit_id)
            return audit_id

    def submit(
        self,
        bank_id: str,
        decision: ReviewerDecision,
        memory: MemoryRecord,
        retain: RetainFn | None,
        *,
        base_revision: int | None = None,
        evidence: EvidenceSnapshot | None = None,
        hold: Hold | None = None,
        blind: bool = False,
    ) -> tuple[StoredDecision, DeliveryReport]:
        """Record the decision durably FIRST, then try to deliver that one row (None: leave it to the worker).

        The page passes the gateway: one bounded attempt for the reviewer's own row (refused at once
        while Hindsight is down); a failure leaves the row to the worker's backoff.

        Returns (this decision as stored, delivery report): the row is read back by its own audit id,
        so a concurrent reviewer's decision on the same case is never reported as this one. Other due
        rows are the worker's; a reviewer never waits behind them. A held decision is not delivered.
        """
        held = hold is not None or blind
        writer = worker_name() if retain is not None and not held else None
        audit_id = self.record(
            bank_id,
            decision,
            memory,
            base_revision=base_revision,
            evidence=evidence,
            hold=hold,
            blind=blind,
            writer=writer,
        )
        report = self.deliver_due(retain, only_id=audit_id, owner=writer) if writer is not None else DeliveryReport()
        if retain is None or held:
            report.still_pending = self.pending_count()
        return self.get(audit_id), report

    # -- reading ---------------------------------------------------------------------------

    def history(self, case_kind: str | None = None, case_id: str | None = None) -> list[StoredDecision]:
        """The append-only log, newest first, optionally for one case."""
        query = sa.select(decisions).order_by(decisions.c.id.desc())
        if case_kind:
            query = query.where(decisions.c.case_kind == case_kind)
        if case_id:
            query = query.where(decisions.c.case_id == case_id)
        with self.engine.connect() as conn:
            return [stored_decision(row) for row in conn.execute(query)]

    def case_history(self, bank_id: str, case_kind: str, case_id: str) -> list[StoredDecision]:
        """Every decision on one case of one bank, oldest first (revision 1, 2 ...), held or not."""
        query = (
            sa.select(decisions)
            .where(*of_case(bank_id, case_kind, case_id))
            .order_by(decisions.c.revision, decisions.c.id)
        )
        with self.engine.connect() as conn:
            return [stored_decision(row) for row in conn.execute(query)]

    def decided_cases(self, bank_id: str, case_kind: str) -> set[str]:
        """The cases of this bank with a reviewer's decision (not one held for, or returned by, a second approval)."""
        query = (
            sa.select(decisions.c.case_id)
            .distinct()
            .where(
                decisions.c.bank_id == bank_id,
                decisions.c.case_kind == case_kind,
                decisions.c.state.not_in([*HELD, DISCARDED]),
            )
        )
        with self.engine.connect() as conn:
            return set(conn.execute(query).scalars())

    def latest_per_case(self, bank_id: str, case_kind: str) -> dict[str, StoredDecision]:
        """case id -> newest decision of this kind in this bank, each built as the model, in one query."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(decisions).where(decisions.c.id.in_(decision_ids(bank_id, case_kind))))
            return {row.case_id: stored_decision(row) for row in rows}

    def decision_states(self, bank_id: str, case_kind: str) -> Mapping[str, DecisionState]:
        """case id -> the state and outcome of its standing decision: what a queue page reads on every run."""
        return self.standing.states(bank_id, case_kind)

    def standing_counts(self, bank_id: str, case_kind: str) -> tuple[StandingCount, ...]:
        """The standing decisions counted as the Overview charts them (StandingDecisions.counts)."""
        return self.standing.counts(bank_id, case_kind)

    def latest_decided(self, bank_id: str, case_kind: str, case_id: str) -> StoredDecision | None:
        """The case's newest decision (not a held one), built in full: what its page shows of it."""
        return self._newest(*of_case(bank_id, case_kind, case_id), decisions.c.state.not_in(HELD))

    def latest(self, case_kind: str, case_id: str) -> StoredDecision | None:
        """The case's newest decision in any bank, held or not."""
        return self._newest(decisions.c.case_kind == case_kind, decisions.c.case_id == case_id)

    def latest_in_bank(self, bank_id: str, case_kind: str, case_id: str) -> StoredDecision | None:
        """The case's newest decision in this bank, held or not: the revision a new one must follow."""
        return self._newest(*of_case(bank_id, case_kind, case_id))

    def _newest(self, *where) -> StoredDecision | None:
        """The newest decisions row matching `where`, built in full (the one read behind every "latest")."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(decisions).where(*where).order_by(decisions.c.id.desc()).limit(1)).first()
        return None if row is None else stored_decision(row)
