"""What the reference agents did and what the audit log says they recalled, in the review store.

- `agent_runs`: one row per agent run (case, agent and variant, time, the recalls it made with the
  audit ids of their log entries, its recommendation or draft and what it cited).
- `audit_recalls`: the compact projection of each audit-log recall entry (request tags and mode,
  result ids, tags, scores, text hash; never the texts), fetched once by the incremental sync.
- `audit_sync_state`: per bank, how far the sync has read (the cursor: the newest entry read in order), how many
  entries it has read and how many the log held when last counted (the progress a page shows), when the first
  catch-up reached the log's newest entry, and the lease of the one reader reading it now.

Tables are created by the Alembic migrations 0002_agent_audit and 0018_audit_sync_progress. No Streamlit here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, Field
from sqlalchemy import JSON, Boolean, Column, DateTime, Engine, Index, Integer, String, Table, Text
from sqlalchemy.dialects import postgresql, sqlite

from dashboard.store.db import as_utc, metadata, upgrade
from dashboard.store.decision import CASE_KIND

ID = 200
TZ = DateTime(timezone=True)

agent_runs = Table(
    "agent_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False, unique=True),
    Column("bank_id", String(ID), nullable=False),
    Column("case_kind", String(20), nullable=False),
    Column("case_id", String(ID), nullable=False),
    Column("agent", String(20), nullable=False),
    Column("variant", String(20), nullable=False),
    Column("started_at", TZ, nullable=False),
    Column("ended_at", TZ, nullable=False),
    Column("audit_log", Boolean, nullable=False),  # was the bank's audit log on
    Column("recalls", JSON, nullable=False),  # [RecallSnapshot]
    Column("output", JSON, nullable=False),  # recommendation or draft
    Column("cited", JSON, nullable=False),  # [ref]
    Index("ix_agent_runs_case", "case_kind", "case_id"),
)

audit_recalls = Table(
    "audit_recalls",
    metadata,
    Column("entry_id", String(64), primary_key=True),
    Column("bank_id", String(ID), nullable=False),
    Column("started_at", TZ, nullable=False),
    Column("query", Text, nullable=False),
    Column("tags", JSON, nullable=False),
    Column("tags_match", String(20), nullable=True),
    Column("results", JSON, nullable=False),  # [ResultRef]
    Column("text_hash", String(64), nullable=False),  # of the whole response's texts, in order
    Index("ix_audit_recalls_bank_time", "bank_id", "started_at"),
)

audit_sync_state = Table(
    "audit_sync_state",
    metadata,
    Column("bank_id", String(ID), primary_key=True),
    Column("synced_until", TZ, nullable=True),  # started_at of the newest entry read
    Column("entries", Integer, nullable=False, server_default="0"),  # entries read: the bank's rows of audit_recalls
    Column("log_entries", Integer, nullable=True),  # the log's recall entries when last counted: read + left to read
    Column("caught_up_at", TZ, nullable=True),  # when a read first reached the log's newest entry
    Column("reader", String(120), nullable=True),  # who reads it now (a lease: several instances, one reader)
    Column("lease_until", TZ, nullable=True),
)

BACKLOG_SHOWN = 1_000  # once caught up, entries behind before a page says the log is being read again


class ResultRef(BaseModel):
    """One recalled document (or observation), compact: enough to diff, flag and cite, never its text."""

    id: str  # the document id; an observation's (or a document-less memory's) memory id
    kind: Literal["document", "observation"] = "document"
    document_id: str | None = None
    facts: int = 1  # facts of the document the recall returned
    sources: list[str] = Field(default_factory=list)  # an observation's source documents
    tags: list[str] = Field(default_factory=list)
    score: float | None = None
    text_hash: str = ""
    owner: str | None = (
        None  # support: the customer it provably belongs to (tag, or the marker its original text starts with)
    )
    marker_name: str | None = None  # support: the name in the original text's leading marker, whoever it names
    metadata: dict[str, str] = Field(default_factory=dict)  # outcome, decided_on, source, vendor_code ...
    origin: str | None = (
        None  # who wrote it, in words, as its signature proved when it was recalled (None: not checked)
    )

    @property
    def ref(self) -> str:
        return self.document_id or self.id


class RecallSnapshot(BaseModel):
    """One recall call as sent, and what it returned."""

    label: str  # exact | decisions | broader | single | tagged | legacy | bank_wide
    query: str
    tags: list[str] = Field(default_factory=list)
    tags_match: str | None = None
    max_tokens: int | None = None
    budget: str | None = None
    results: list[ResultRef] = Field(default_factory=list)
    audit_id: str | None = None


class AgentRun(BaseModel):
    run_id: str
    bank_id: str
    case_kind: str = Field(pattern=CASE_KIND)
    case_id: str
    agent: str = Field(max_length=20)  # the kind whose agent ran (its settings key)
    variant: Literal[
        "reviewed", "seed", "naive", "submitted"
    ]  # submitted: an agent of its own handed the case in (the API)
    started_at: datetime
    ended_at: datetime
    audit_log: bool
    recalls: list[RecallSnapshot] = Field(default_factory=list)
    output: dict = Field(default_factory=dict)
    cited: list[str] = Field(default_factory=list)

    @property
    def audit_ids(self) -> list[str]:
        return [r.audit_id for r in self.recalls if r.audit_id]

    def as_json(self) -> dict:
        return {**self.model_dump(mode="json"), "audit_ids": self.audit_ids}


class AuditRecall(BaseModel):
    """The projection of one audit-log recall entry."""

    entry_id: str
    bank_id: str
    started_at: datetime
    query: str
    tags: list[str] = Field(default_factory=list)
    tags_match: str | None = None
    results: list[ResultRef] = Field(default_factory=list)
    text_hash: str = ""


class AuditSyncState(BaseModel):
    """How far a bank's audit log has been read into the store."""

    bank_id: str
    synced_until: datetime | None = None
    entries: int = 0  # read (the projection's rows)
    log_entries: int | None = None  # in the log when last counted; None: never counted
    caught_up_at: datetime | None = None
    reader: str | None = None
    lease_until: datetime | None = None

    @property
    def behind(self) -> int:
        """Entries the log held at the last count that are not read yet (0 when it was never counted)."""
        return max(0, (self.log_entries or 0) - self.entries)

    @property
    def catching_up(self) -> bool:
        """The first catch-up is not done, or (after it) a backlog a person would wait for is being read."""
        return self.behind > 0 and (self.caught_up_at is None or self.behind >= BACKLOG_SHOWN)


def _insert(engine: Engine, table: Table):
    return (postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert)(table)


class AgentRunStore:
    """Agent runs and the audit projection, on the review store's engine."""

    def __init__(self, engine: Engine):
        self.engine = engine
        upgrade(engine)

    # -- runs --------------------------------------------------------------------------------
    def record_run(self, run: AgentRun) -> None:
        row = run.model_dump(mode="json")
        row.update(started_at=run.started_at, ended_at=run.ended_at)
        with self.engine.begin() as conn:
            conn.execute(agent_runs.insert().values(**row))

    def runs(
        self,
        case_kind: str | None = None,
        case_id: str | None = None,
        bank_id: str | None = None,
        ended_since: datetime | None = None,
    ) -> list[AgentRun]:
        """Newest first."""
        query = sa.select(agent_runs).order_by(agent_runs.c.started_at.desc(), agent_runs.c.id.desc())
        if ended_since is not None:
            query = query.where(agent_runs.c.ended_at >= ended_since)
        for column, value in (("case_kind", case_kind), ("case_id", case_id), ("bank_id", bank_id)):
            if value is not None:
                query = query.where(agent_runs.c[column] == value)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [
            AgentRun.model_validate(
                {
                    **{k: v for k, v in r.items() if k != "id"},
                    "started_at": as_utc(r["started_at"]),
                    "ended_at": as_utc(r["ended_at"]),
                }
            )
            for r in rows
        ]

    def latest_run(self, case_kind: str, case_id: str, bank_id: str | None = None) -> AgentRun | None:
        found = self.runs(case_kind, case_id, bank_id)
        return found[0] if found else None

    def tally(self, bank_ids: list[str]) -> tuple[int, int]:
        """(agent runs recorded, audit-log recall entries read) for these banks: counted in SQL."""
        with self.engine.connect() as conn:
            runs = conn.execute(
                sa.select(sa.func.count()).select_from(agent_runs).where(agent_runs.c.bank_id.in_(bank_ids))
            ).scalar_one()
            # the rows read are counted as they are written (record_read): one row per bank, however long the log
            read = conn.execute(
                sa.select(sa.func.coalesce(sa.func.sum(audit_sync_state.c.entries), 0)).where(
                    audit_sync_state.c.bank_id.in_(bank_ids)
                )
            ).scalar_one()
        return int(runs), int(read)

    # -- audit projection ----------------------------------------------------------------------
    def known_entries(self, bank_id: str, ids: list[str]) -> set[str]:
        with self.engine.connect() as conn:
            return self._known(conn, bank_id, ids)

    def add_entries(self, entries: list[AuditRecall]) -> int:
        """Store projections not stored yet (the cursor stays); returns how many were new."""
        return sum(
            self.record_read(bank, [e for e in entries if e.bank_id == bank])
            for bank in dict.fromkeys(e.bank_id for e in entries)
        )

    def record_read(
        self,
        bank_id: str,
        entries: list[AuditRecall],
        *,
        until: datetime | None = None,
        log_entries: int | None = None,
        caught_up: bool = False,
    ) -> int:
        """In one transaction: the bank's projections not stored yet, the count of entries read, the cursor moved on to
        `until` (never back), the log's count, and (`caught_up`) that the read reached the log's newest entry (the count
        then is what was read). An entry
        another reader stored meanwhile is skipped (several instances on one store). Returns how many were new."""
        rows = [
            {**e.model_dump(mode="json"), "started_at": e.started_at} for e in {e.entry_id: e for e in entries}.values()
        ]
        added = 0
        with self.engine.begin() as conn:
            self._ensure_state(conn, bank_id)
            if rows:
                known = self._known(conn, bank_id, [r["entry_id"] for r in rows])
                fresh = [r for r in rows if r["entry_id"] not in known]
                if fresh:
                    statement = (
                        _insert(self.engine, audit_recalls).on_conflict_do_nothing().returning(audit_recalls.c.entry_id)
                    )
                    added = len(conn.execute(statement, fresh).all())
            values: dict = {"entries": audit_sync_state.c.entries + added}
            if until is not None:
                current, later = audit_sync_state.c.synced_until, sa.literal(until, TZ)
                values["synced_until"] = sa.case((sa.or_(current.is_(None), current < later), later), else_=current)
            if log_entries is not None:
                values["log_entries"] = log_entries
            if caught_up:  # every entry counted is read: the count is exact now
                values["caught_up_at"] = sa.func.coalesce(
                    audit_sync_state.c.caught_up_at, sa.literal(datetime.now(UTC), TZ)
                )
                values["log_entries"] = audit_sync_state.c.entries + added
            conn.execute(audit_sync_state.update().where(audit_sync_state.c.bank_id == bank_id).values(**values))
        return added

    @staticmethod
    def _known(conn, bank_id: str, ids: list[str]) -> set[str]:
        known: set[str] = set()
        for start in range(0, len(ids), 500):  # bounded IN lists
            chunk = ids[start : start + 500]
            query = sa.select(audit_recalls.c.entry_id).where(
                audit_recalls.c.bank_id == bank_id, audit_recalls.c.entry_id.in_(chunk)
            )
            known |= set(conn.execute(query).scalars())
        return known

    def _ensure_state(self, conn, bank_id: str) -> None:
        conn.execute(_insert(self.engine, audit_sync_state).values(bank_id=bank_id, entries=0).on_conflict_do_nothing())

    def entry(self, entry_id: str) -> AuditRecall | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(audit_recalls).where(audit_recalls.c.entry_id == entry_id)).mappings().first()
        return None if row is None else AuditRecall.model_validate({**row, "started_at": as_utc(row["started_at"])})

    def entries(self, bank_id: str, since: datetime | None = None) -> list[AuditRecall]:
        """Oldest first."""
        query = sa.select(audit_recalls).where(audit_recalls.c.bank_id == bank_id).order_by(audit_recalls.c.started_at)
        if since is not None:
            query = query.where(audit_recalls.c.started_at >= since)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [AuditRecall.model_validate({**r, "started_at": as_utc(r["started_at"])}) for r in rows]

    def synced_until(self, bank_id: str) -> datetime | None:
        return self.sync_state(bank_id).synced_until

    def sync_state(self, bank_id: str) -> AuditSyncState:
        return self.sync_states([bank_id])[bank_id]

    def sync_states(self, bank_ids: list[str]) -> dict[str, AuditSyncState]:
        """Each bank's read so far (one primary-key read each; a bank never read has the empty state)."""
        with self.engine.connect() as conn:
            rows = (
                conn.execute(sa.select(audit_sync_state).where(audit_sync_state.c.bank_id.in_(bank_ids)))
                .mappings()
                .all()
            )
        found = {
            r["bank_id"]: AuditSyncState.model_validate(
                {
                    **r,
                    "synced_until": as_utc(r["synced_until"]),
                    "caught_up_at": as_utc(r["caught_up_at"]),
                    "lease_until": as_utc(r["lease_until"]),
                }
            )
            for r in rows
        }
        return {bank: found.get(bank) or AuditSyncState(bank_id=bank) for bank in bank_ids}

    def take_lease(self, bank_id: str, reader: str, until: datetime, now: datetime | None = None) -> bool:
        """Become (or stay) the one reader of the bank's log until `until`; False while another reader's lease runs."""
        now = now or datetime.now(UTC)
        with self.engine.begin() as conn:
            self._ensure_state(conn, bank_id)
            taken = conn.execute(
                audit_sync_state.update()
                .where(
                    audit_sync_state.c.bank_id == bank_id,
                    sa.or_(
                        audit_sync_state.c.reader.is_(None),
                        audit_sync_state.c.reader == reader,
                        audit_sync_state.c.lease_until.is_(None),
                        audit_sync_state.c.lease_until < now,
                    ),
                )
                .values(reader=reader, lease_until=until)
            )
        return taken.rowcount == 1

    def release_lease(self, bank_id: str, reader: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                audit_sync_state.update()
                .where(audit_sync_state.c.bank_id == bank_id, audit_sync_state.c.reader == reader)
                .values(reader=None, lease_until=None)
            )
