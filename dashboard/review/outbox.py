"""Durable delivery of reviewer decisions to Hindsight.

A decision is written to SQLite in the data directory (the append-only audit log) BEFORE the UI
confirms it, then retained into Hindsight; a failed delivery is retried with backoff. The retained
record has a document id derived from the case, so delivering twice, or a revised decision, replaces
the memory and never duplicates it. No Streamlit here.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

from dashboard.hindsight.calls import RetainFn
from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.decision import ReviewerDecision

MAX_BACKOFF_S = 300.0
SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    case_kind     TEXT NOT NULL,
    case_id       TEXT NOT NULL,
    bank_id       TEXT NOT NULL,
    document_id   TEXT NOT NULL,
    decision      TEXT NOT NULL,          -- ReviewerDecision as JSON
    record        TEXT NOT NULL,          -- MemoryRecord as JSON, exactly what is retained
    created_at    TEXT NOT NULL,
    state         TEXT NOT NULL DEFAULT 'pending',   -- pending | delivered | superseded
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT,
    next_attempt_at TEXT NOT NULL,
    delivered_at  TEXT
);
CREATE INDEX IF NOT EXISTS decisions_pending ON decisions (state, next_attempt_at);
CREATE INDEX IF NOT EXISTS decisions_case ON decisions (case_kind, case_id);
"""


class StoredDecision(BaseModel):
    id: int
    case_kind: str
    case_id: str
    bank_id: str
    document_id: str
    decision: ReviewerDecision
    record: MemoryRecord
    created_at: datetime
    state: str
    attempts: int
    last_error: str | None
    next_attempt_at: datetime
    delivered_at: datetime | None


class DeliveryReport(BaseModel):
    delivered: int = 0
    failed: int = 0
    superseded: int = 0
    still_pending: int = 0
    error: str | None = None


def _stored(row: sqlite3.Row) -> StoredDecision:
    return StoredDecision.model_validate({**dict(row), "decision": json.loads(row["decision"]), "record": json.loads(row["record"])})


def _now() -> datetime:
    return datetime.now(UTC)


class Outbox:
    def __init__(self, path: Path, clock: Callable[[], datetime] = _now):
        self.path = path
        self.clock = clock
        self._lock = threading.Lock()  # one delivery at a time per process
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.executescript(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)  # autocommit each statement
        try:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a confirmed decision survives a power cut
            yield db
        finally:
            db.close()

    def record(self, bank_id: str, decision: ReviewerDecision, memory: MemoryRecord) -> int:
        """Store the decision durably; returns its audit id. Delivery is a separate step."""
        now = self.clock().isoformat()
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO decisions (case_kind, case_id, bank_id, document_id, decision, record, created_at,"
                " next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (decision.case_kind, decision.case_id, bank_id, memory.document_id,
                 decision.model_dump_json(), memory.model_dump_json(), now, now),
            )  # fmt: skip
            return int(cursor.lastrowid)

    def deliver_due(self, retain: RetainFn) -> DeliveryReport:
        """Deliver every pending decision whose retry time has come, oldest first.

        `retain(bank_id, records)` is HindsightGateway.retain. An older pending decision for a document
        that a newer one will replace is marked superseded instead of sent. Stops at the first
        failure (the server is likely down) and backs off every row still due.
        """
        report = DeliveryReport()
        with self._lock, self._connect() as db:
            now = self.clock()
            due = db.execute(
                "SELECT * FROM decisions WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY id",
                (now.isoformat(),),
            ).fetchall()
            newest = {}
            for row in due:
                newest[(row["bank_id"], row["document_id"])] = row["id"]
            for row in due:
                if newest[(row["bank_id"], row["document_id"])] != row["id"]:
                    db.execute("UPDATE decisions SET state = 'superseded' WHERE id = ?", (row["id"],))
                    report.superseded += 1
                    continue
                try:
                    retain(row["bank_id"], [MemoryRecord.model_validate_json(row["record"])])
                except Exception as exc:  # whatever failed, the decision stays pending and is retried
                    report.error = str(exc) if isinstance(exc, HindsightError) else f"{type(exc).__name__}: {exc}"
                    break
                db.execute(
                    "UPDATE decisions SET state = 'delivered', delivered_at = ?, attempts = attempts + 1,"
                    " last_error = NULL WHERE id = ?",
                    (self.clock().isoformat(), row["id"]),
                )
                report.delivered += 1
            if report.error:
                self._back_off(db, now, report.error)
            report.still_pending = self.pending_count(db)
            report.failed = report.still_pending if report.error else 0
        return report

    def _back_off(self, db: sqlite3.Connection, now: datetime, error: str) -> None:
        rows = db.execute(
            "SELECT id, attempts FROM decisions WHERE state = 'pending' AND next_attempt_at <= ?", (now.isoformat(),)
        ).fetchall()
        for row in rows:
            attempts = row["attempts"] + 1
            wait = min(2.0 ** (attempts - 1), MAX_BACKOFF_S)  # 1, 2, 4 ... 300 s
            db.execute(
                "UPDATE decisions SET attempts = ?, last_error = ?, next_attempt_at = ? WHERE id = ?",
                (attempts, error[:500], (now + timedelta(seconds=wait)).isoformat(), row["id"]),
            )

    def retry_now(self) -> None:
        """Make every pending decision due immediately (the reviewer pressed "deliver now")."""
        with self._connect() as db:
            db.execute("UPDATE decisions SET next_attempt_at = ? WHERE state = 'pending'", (self.clock().isoformat(),))

    def pending_count(self, db: sqlite3.Connection | None = None) -> int:
        if db is None:
            with self._connect() as own:
                return self.pending_count(own)
        return int(db.execute("SELECT COUNT(*) FROM decisions WHERE state = 'pending'").fetchone()[0])

    def history(self, case_kind: str | None = None, case_id: str | None = None) -> list[StoredDecision]:
        """The append-only log, newest first, optionally for one case."""
        query, args = "SELECT * FROM decisions WHERE 1 = 1", []
        if case_kind:
            query, args = query + " AND case_kind = ?", [*args, case_kind]
        if case_id:
            query, args = query + " AND case_id = ?", [*args, case_id]
        with self._connect() as db:
            rows = db.execute(query + " ORDER BY id DESC", args).fetchall()
        return [_stored(row) for row in rows]

    def get(self, audit_id: int) -> StoredDecision | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM decisions WHERE id = ?", (audit_id,)).fetchone()
        return None if row is None else _stored(row)

    def submit(self, bank_id: str, decision: ReviewerDecision, memory: MemoryRecord, retain: RetainFn):
        """Record the decision durably FIRST, then try to deliver everything due.

        Returns (this decision as stored, delivery report): the row is read back by its own audit id,
        so a concurrent reviewer's decision on the same case is never reported as this one.
        """
        audit_id = self.record(bank_id, decision, memory)
        report = self.deliver_due(retain)
        return self.get(audit_id), report

    def latest(self, case_kind: str, case_id: str) -> StoredDecision | None:
        entries = self.history(case_kind, case_id)
        return entries[0] if entries else None
