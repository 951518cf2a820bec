"""What the reference agents did and what the audit log says they recalled, in the review store.

- `agent_runs`: one row per agent run (case, agent and variant, time, the recalls it made with the
  audit ids of their log entries, its recommendation or draft and what it cited).
- `audit_recalls`: the compact projection of each audit-log recall entry (request tags and mode,
  result ids, tags, scores, text hash; never the texts), fetched once by the incremental sync.
- `audit_sync_state`: per bank, how far the sync has read.

Tables are created by the Alembic migration 0002_agent_audit. No Streamlit here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, Field
from sqlalchemy import JSON, Boolean, Column, DateTime, Engine, Index, Integer, String, Table, Text

from dashboard.review.db import as_utc, metadata, upgrade
from dashboard.review.decision import CASE_KIND

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
    Column("entries", Integer, nullable=False, server_default="0"),
)


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
    owner: str | None = None  # support: the customer it provably belongs to (tag, or the marker its original text starts with)
    marker_name: str | None = None  # support: the name in the original text's leading marker, whoever it names
    metadata: dict[str, str] = Field(default_factory=dict)  # outcome, decided_on, source, vendor_code ...
    origin: str | None = None  # who wrote it, in words, as its signature proved when it was recalled (None: not checked)

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
    variant: Literal["reviewed", "seed", "naive", "submitted"]  # submitted: an agent of its own handed the case in (the API)
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
        self, case_kind: str | None = None, case_id: str | None = None, bank_id: str | None = None, ended_since: datetime | None = None
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
            AgentRun.model_validate({**{k: v for k, v in r.items() if k != "id"},
                                     "started_at": as_utc(r["started_at"]), "ended_at": as_utc(r["ended_at"])})
            for r in rows
        ]

    def latest_run(self, case_kind: str, case_id: str, bank_id: str | None = None) -> AgentRun | None:
        found = self.runs(case_kind, case_id, bank_id)
        return found[0] if found else None

    def tally(self, bank_ids: list[str]) -> tuple[int, int]:
        """(agent runs recorded, audit-log recall entries read) for these banks: counted in SQL."""
        with self.engine.connect() as conn:
            runs = conn.execute(sa.select(sa.func.count()).select_from(agent_runs).where(agent_runs.c.bank_id.in_(bank_ids))).scalar_one()
            read = conn.execute(
                sa.select(sa.func.count()).select_from(audit_recalls).where(audit_recalls.c.bank_id.in_(bank_ids))
            ).scalar_one()
        return int(runs), int(read)

    # -- audit projection ----------------------------------------------------------------------
    def known_entries(self, bank_id: str, ids: list[str]) -> set[str]:
        known: set[str] = set()
        with self.engine.connect() as conn:
            for start in range(0, len(ids), 500):  # bounded IN lists
                chunk = ids[start : start + 500]
                query = sa.select(audit_recalls.c.entry_id).where(audit_recalls.c.bank_id == bank_id, audit_recalls.c.entry_id.in_(chunk))
                known |= set(conn.execute(query).scalars())
        return known

    def add_entries(self, entries: list[AuditRecall]) -> int:
        """Store projections not stored yet; returns how many were new."""
        fresh: list[AuditRecall] = []
        for bank in {e.bank_id for e in entries}:
            mine = [e for e in entries if e.bank_id == bank]
            known = self.known_entries(bank, [e.entry_id for e in mine])
            fresh += [e for e in {e.entry_id: e for e in mine}.values() if e.entry_id not in known]
        if fresh:
            with self.engine.begin() as conn:
                conn.execute(audit_recalls.insert(), [{**e.model_dump(mode="json"), "started_at": e.started_at} for e in fresh])
        return len(fresh)

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
        with self.engine.connect() as conn:
            value = conn.execute(
                sa.select(audit_sync_state.c.synced_until).where(audit_sync_state.c.bank_id == bank_id)
            ).scalar_one_or_none()
        return None if value is None else as_utc(value)

    def set_synced_until(self, bank_id: str, until: datetime, added: int) -> None:
        with self.engine.begin() as conn:
            done = conn.execute(
                audit_sync_state.update().where(audit_sync_state.c.bank_id == bank_id)
                .values(synced_until=until, entries=audit_sync_state.c.entries + added)
            )
            if done.rowcount == 0:
                conn.execute(audit_sync_state.insert().values(bank_id=bank_id, synced_until=until, entries=added))
