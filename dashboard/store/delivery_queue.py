"""Rows of a review-store table delivered to Hindsight: claimed with a lease (and `FOR UPDATE SKIP LOCKED` on
PostgreSQL) so several workers never send one row twice, backed off while Hindsight is down, parked one by one when it
rejects them. The decision log (delivery/outbox.py) and curation (review/curation.py) are two such tables. No Streamlit.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy import Engine

from dashboard.hindsight.errors import HindsightRequestRejected, HindsightUnavailable
from dashboard.store.db import as_utc, sqlite_engine, upgrade
from dashboard.store.schema import DELIVERED, DISCARDED, FAILED, PENDING, SUPERSEDED

MAX_BACKOFF_S = 300.0
LEASE_S = 120.0  # longer than any retain call; a crashed worker's rows are claimed again after it
CLAIM_BATCH = 50
ERROR_CHARS = 1000


class DeliveryReport(BaseModel):
    delivered: int = 0
    failed: int = 0  # parked as failed: the server rejected them
    superseded: int = 0
    still_pending: int = 0
    error: str | None = None  # the outage that backed every due row off


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
    changes_memory = True  # a delivered row changes what a recall finds (the worker tells on_delivered)

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
                sa.select(self.table.c.id)
                .where(
                    self.table.c.bank_id == row.bank_id,
                    self.table.c.document_id == row.document_id,
                    self.table.c.id > row.id,
                    self.table.c.state.notin_(self.inert_states),
                )
                .limit(1)
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
            self._finish(
                row.id, owner, state=DELIVERED, delivered_at=self.clock(), attempts=row.attempts + 1, last_error=None
            )
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
                    self.table.update()
                    .where(self.table.c.id == row_id)
                    .values(
                        attempts=attempts + 1,
                        last_error=error[:ERROR_CHARS],
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
                self.table.update()
                .where(self.table.c.id == audit_id, self.table.c.state == FAILED)
                .values(state=DISCARDED)
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
