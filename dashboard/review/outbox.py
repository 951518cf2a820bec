"""The review store's decisions: recorded durably, delivered to Hindsight row by row.

A decision is written to the review store (SQLite in the data directory, or a team's PostgreSQL) BEFORE
the UI confirms it; the retained record has a document id derived from the case, so delivering twice,
or a revised decision, replaces the memory and never duplicates it. Decisions are append-only: each
carries the revision of the case it was made on, and one made on a stale revision raises
`RevisionConflict` instead of overwriting. A decision above its reviewer's approval limit is recorded
`awaiting_approval` with its "proposed" step (review/approvals.py): delivery never claims it. Delivery
claims due rows with a lease (and `FOR UPDATE SKIP LOCKED` on PostgreSQL) so several workers never send
one row twice; failures are per row. A row its writer sends at once (a reviewer's own decision) is written
already leased to that writer: the workers poll the store every few seconds, and one taking the row between the
write and the writer's attempt would leave the reviewer told "delivered later" about a row being delivered.
No Streamlit.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import IntegrityError

from dashboard.hindsight.calls import RetainFn
from dashboard.hindsight.errors import HindsightRequestRejected, HindsightUnavailable
from dashboard.hindsight.wire import MemoryRecord, tag_value
from dashboard.review.db import as_utc, sqlite_engine, upgrade
from dashboard.review.decision import EvidenceSnapshot, Hold, ReviewerDecision
from dashboard.review.provenance import Provenance
from dashboard.review.schema import AWAITING, AWAITING_SECOND, DELIVERED, DISCARDED, FAILED, HELD, PENDING, SUPERSEDED, approvals, decisions
from dashboard.review.standing import DecisionState, StandingCount, StandingDecisions, decision_ids

MAX_BACKOFF_S = 300.0
LEASE_S = 120.0  # longer than any retain call; a crashed worker's rows are claimed again after it
CLAIM_BATCH = 50
ERROR_CHARS = 1000


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


class DeliveryReport(BaseModel):
    delivered: int = 0
    failed: int = 0  # parked as failed: the server rejected them
    superseded: int = 0
    still_pending: int = 0
    error: str | None = None  # the outage that backed every due row off


class RevisionConflict(Exception):
    """Another decision landed on this case since the reviewer loaded it: they choose, nothing is overwritten."""

    def __init__(self, theirs: StoredDecision, expected_revision: int):
        super().__init__(
            f"{theirs.case_kind} {theirs.case_id} was decided meanwhile (revision {theirs.revision}, you loaded {expected_revision})"
        )
        self.theirs = theirs
        self.expected_revision = expected_revision


def stored_decision(row: sa.Row) -> StoredDecision:
    """A decisions row as the model, its times zoned."""
    data = dict(row._mapping)
    for key in ("created_at", "next_attempt_at", "delivered_at"):
        data[key] = as_utc(data[key])
    return StoredDecision.model_validate(data)


def report_columns(decision: ReviewerDecision, memory: MemoryRecord) -> dict:
    """What the Overview counts of a decision, as the row's plain columns (migration 0010 fills older rows alike)."""
    return {
        "decided_on": decision.decided_at.date(), "overridden": decision.overridden, "reason_code": decision.reason_code,
        "vendor": tag_value(memory.tags, "vendor") if decision.case_kind == "exception" else None,
    }


def utc_now() -> datetime:
    return datetime.now(UTC)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def leased_to(writer: str | None, now: datetime) -> dict:
    """The delivery columns of a row written already leased to `writer`, who sends it next (`deliver_due(...,
    only_id=..., owner=writer)`); None: any worker may take it. A writer that dies leaves it to the workers
    once the lease runs out."""
    return {} if writer is None else {"lease_owner": writer, "lease_until": now + timedelta(seconds=LEASE_S)}


def backoff_s(attempts: int) -> float:
    """Seconds before the next try after `attempts` failed ones: 1, 2, 4 ... capped at MAX_BACKOFF_S."""
    return min(MAX_BACKOFF_S, 2.0 ** max(attempts - 1, 0))


class DeliveryQueue:
    """Rows of one review-store table delivered to Hindsight with a lease, a backoff and per-row failures.

    The table has the delivery columns of `review_decisions` (state, attempts, last_error, next_attempt_at,
    lease_owner, lease_until, delivered_at) plus bank_id and document_id; a subclass says how a row is
    read (`_parse`) and sent (`_send`). The decisions (Outbox) and curation (review.curation) share it.
    """

    table: sa.Table
    inert_states: tuple[str, ...] = (DISCARDED,)  # a newer row in these states replaces nothing

    def __init__(self, store: Engine | Path, clock: Callable[[], datetime] = utc_now):
        self.engine = store if isinstance(store, Engine) else sqlite_engine(store)
        self.clock = clock
        upgrade(self.engine)

    def _parse(self, row: sa.Row):
        raise NotImplementedError

    def _send(self, send: Callable, row) -> None:
        raise NotImplementedError

    # -- delivery ------------------------------------------------------------------------

    def _claim(self, owner: str, now: datetime, limit: int, only_id: int | None) -> list:
        """Lease up to `limit` due rows to `owner`, oldest first; rows another worker holds are skipped (`only_id`:
        also the row written leased to `owner`)."""
        lease_free = sa.or_(self.table.c.lease_until.is_(None), self.table.c.lease_until < now)
        if only_id is not None:
            lease_free = sa.or_(lease_free, self.table.c.lease_owner == owner)
        query = (
            sa.select(self.table.c.id)
            .where(self.table.c.state == PENDING, self.table.c.next_attempt_at <= now, lease_free)
            .order_by(self.table.c.id)
            .limit(limit)
        )
        if only_id is not None:
            query = query.where(self.table.c.id == only_id)
        with self.engine.begin() as conn:  # SQLite: BEGIN IMMEDIATE, one claimer at a time
            if conn.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True)
            ids = list(conn.execute(query).scalars())
            if not ids:
                return []
            conn.execute(
                self.table.update()
                .where(self.table.c.id.in_(ids))
                .values(lease_owner=owner, lease_until=now + timedelta(seconds=LEASE_S))
            )
            rows = conn.execute(sa.select(self.table).where(self.table.c.id.in_(ids)).order_by(self.table.c.id)).all()
        return [self._parse(row) for row in rows]

    def _finish(self, row_id: int, owner: str, **values) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                self.table.update()
                .where(self.table.c.id == row_id, self.table.c.lease_owner == owner)
                .values(lease_owner=None, lease_until=None, **values)
            )

    def _newer_exists(self, row) -> bool:
        with self.engine.connect() as conn:
            newer = conn.execute(
                sa.select(self.table.c.id).where(
                    self.table.c.bank_id == row.bank_id, self.table.c.document_id == row.document_id,
                    self.table.c.id > row.id, self.table.c.state.notin_(self.inert_states),
                ).limit(1)
            ).first()
        return newer is not None

    def deliver_due(
        self, send: Callable, *, owner: str | None = None, limit: int = CLAIM_BATCH, only_id: int | None = None
    ) -> DeliveryReport:
        """Claim and deliver due rows, oldest first; every failure stays with its own row.

        `send` is what `_send` calls: for decisions `retain(bank_id, records)`, HindsightGateway.retain. A row
        a newer row on the same document will replace (or undo) is marked superseded instead of sent.
        Hindsight unavailable: every due row backs off (1, 2, 4 ... 300 s) and this pass stops. Hindsight rejects a row (4xx): that row
        is parked `failed` with the server's message for a lead; the rest go on.
        """
        owner = owner or worker_name()
        report = DeliveryReport()
        now = self.clock()
        claimed = self._claim(owner, now, limit, only_id)
        for index, row in enumerate(claimed):
            if self._newer_exists(row):
                self._finish(row.id, owner, state=SUPERSEDED)
                report.superseded += 1
                continue
            try:
                self._send(send, row)
            except HindsightUnavailable as exc:
                report.error = str(exc)
                for left in claimed[index:]:
                    self._back_off(left, owner, now, report.error)
                self._back_off_unclaimed(now, report.error)
                break
            except HindsightRequestRejected as exc:
                self._finish(row.id, owner, state=FAILED, attempts=row.attempts + 1, last_error=str(exc)[:ERROR_CHARS])
                report.failed += 1
                continue
            except Exception as exc:  # noqa: BLE001 - an unexpected error stays with its row, which is retried
                report.error = f"{type(exc).__name__}: {exc}"
                self._back_off(row, owner, now, report.error)
                continue
            self._finish(row.id, owner, state=DELIVERED, delivered_at=self.clock(), attempts=row.attempts + 1, last_error=None)
            report.delivered += 1
        report.still_pending = self.pending_count()
        return report

    def _back_off(self, row, owner: str, now: datetime, error: str) -> None:
        attempts = row.attempts + 1
        wait = timedelta(seconds=backoff_s(attempts))
        self._finish(row.id, owner, attempts=attempts, last_error=error[:ERROR_CHARS], next_attempt_at=now + wait)

    def _back_off_unclaimed(self, now: datetime, error: str) -> None:
        """The server is down: rows due now, not leased by anyone, wait too (one backoff step each)."""
        lease_free = sa.or_(self.table.c.lease_until.is_(None), self.table.c.lease_until < now)
        with self.engine.begin() as conn:
            rows = conn.execute(
                sa.select(self.table.c.id, self.table.c.attempts).where(
                    self.table.c.state == PENDING, self.table.c.next_attempt_at <= now, lease_free
                )
            ).all()
            for row_id, attempts in rows:
                conn.execute(
                    self.table.update().where(self.table.c.id == row_id).values(
                        attempts=attempts + 1, last_error=error[:ERROR_CHARS],
                        next_attempt_at=now + timedelta(seconds=backoff_s(attempts + 1)),
                    )
                )

    def retry_now(self) -> None:
        """Make every pending decision due immediately (someone pressed "deliver now")."""
        with self.engine.begin() as conn:
            conn.execute(self.table.update().where(self.table.c.state == PENDING).values(next_attempt_at=self.clock()))

    def retry_failed(self, audit_id: int) -> bool:
        """A lead sends a parked row again (after fixing what the server rejected). False if it was not failed."""
        with self.engine.begin() as conn:
            result = conn.execute(
                self.table.update()
                .where(self.table.c.id == audit_id, self.table.c.state == FAILED)
                .values(state=PENDING, next_attempt_at=self.clock(), lease_owner=None, lease_until=None)
            )
        return result.rowcount == 1

    def discard_failed(self, audit_id: int) -> bool:
        """A lead gives up on a parked row; it stays in the log as discarded. False if it was not failed."""
        with self.engine.begin() as conn:
            result = conn.execute(
                self.table.update().where(self.table.c.id == audit_id, self.table.c.state == FAILED).values(state=DISCARDED)
            )
        return result.rowcount == 1

    def next_due_in(self) -> float | None:
        """Seconds until the next pending row is due (0 if one is due now); None when nothing is pending."""
        with self.engine.connect() as conn:
            soonest = conn.execute(
                sa.select(sa.func.min(self.table.c.next_attempt_at)).where(self.table.c.state == PENDING)
            ).scalar()
        if soonest is None:
            return None
        return max(0.0, (as_utc(soonest) - self.clock()).total_seconds())

    # -- reading ---------------------------------------------------------------------------

    def get(self, row_id: int):
        """One row by its id (a decision's audit id), parsed; None when there is none."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(self.table).where(self.table.c.id == row_id)).first()
        return None if row is None else self._parse(row)

    def pending_count(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).where(self.table.c.state == PENDING)).scalar_one())

    def failed_count(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).where(self.table.c.state == FAILED)).scalar_one())


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
            decisions.c.bank_id == bank_id, decisions.c.case_kind == case_kind, decisions.c.case_id == case_id
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
        memory = self.provenance.sign(memory, "reviewer", decision.reviewer)  # a reviewer's authority, proven
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
                        decisions.c.bank_id == bank_id, decisions.c.case_kind == decision.case_kind,
                        decisions.c.case_id == decision.case_id, decisions.c.revision == current,
                    )
                ).one()
                raise RevisionConflict(stored_decision(theirs), base_revision)
            result = conn.execute(
                decisions.insert().values(
                    bank_id=bank_id, case_kind=decision.case_kind, case_id=decision.case_id, revision=current + 1,
                    document_id=memory.document_id, reviewer=decision.reviewer,
                    decision=decision.model_dump(mode="json"), record=memory.model_dump(mode="json"),
                    evidence=evidence.model_dump(mode="json") if evidence else None,
                    **report_columns(decision, memory),
                    created_at=now, state=AWAITING if hold else (AWAITING_SECOND if blind else PENDING), attempts=0, next_attempt_at=now,
                    **({} if hold or blind else leased_to(writer, now)),
                )
            )
            audit_id = int(result.inserted_primary_key[0])
            if hold:
                conn.execute(approvals.insert().values(
                    decision_id=audit_id, step="proposed", actor=decision.reviewer, at=now, **hold.model_dump()
                ))
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
            bank_id, decision, memory, base_revision=base_revision, evidence=evidence, hold=hold, blind=blind, writer=writer
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

    def decided_cases(self, bank_id: str, case_kind: str) -> set[str]:
        """The cases of this bank with a reviewer's decision (not one held for, or returned by, a second approval)."""
        query = sa.select(decisions.c.case_id).distinct().where(
            decisions.c.bank_id == bank_id, decisions.c.case_kind == case_kind, decisions.c.state.not_in([*HELD, DISCARDED])
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
        query = (
            sa.select(decisions)
            .where(decisions.c.bank_id == bank_id, decisions.c.case_kind == case_kind, decisions.c.case_id == case_id,
                   decisions.c.state.not_in(HELD))
            .order_by(decisions.c.id.desc())
            .limit(1)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return None if row is None else stored_decision(row)

    def latest(self, case_kind: str, case_id: str) -> StoredDecision | None:
        entries = self.history(case_kind, case_id)
        return entries[0] if entries else None

    def latest_in_bank(self, bank_id: str, case_kind: str, case_id: str) -> StoredDecision | None:
        query = (
            sa.select(decisions)
            .where(decisions.c.bank_id == bank_id, decisions.c.case_kind == case_kind, decisions.c.case_id == case_id)
            .order_by(decisions.c.revision.desc())
            .limit(1)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return None if row is None else stored_decision(row)
