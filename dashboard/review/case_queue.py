"""The cases handed in to the review store: by an agent over the API, or by `queue import FILE`. No Streamlit.

A case is written once per (kind, case id). Handing in the same body again answers with the case as it is (an agent's
retry); another body for that id is a `CaseConflict` naming the fields that differ, and nothing is written. An import
is all or nothing: one conflicting row and no row of the file lands. The case's own fields are validated by its kind
before they get here; this room names no kind.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError

from dashboard.store.agent_part import AgentPart
from dashboard.store.db import as_utc, sqlite_engine, upgrade
from dashboard.store.delivery_queue import utc_now
from dashboard.store.schema import queued_cases

Q = queued_cases.c


class QueuedCase(BaseModel):
    model_config = ConfigDict(frozen=True)

    seq: int
    case_kind: str
    case_id: str
    fields: dict[str, Any]
    agent: AgentPart | None
    source: str
    created_at: datetime
    withdrawal: Withdrawal | None = None  # withdrawn by its agent while open: out of the queue


class Withdrawal(BaseModel):
    """Who withdrew a handed-in case, why and when (through the API, with a token that may submit its kind)."""

    model_config = ConfigDict(frozen=True)

    by: str
    why: str
    at: datetime


class CaseConflict(ValueError):
    """A case id handed in with another body than the one stored; `fields` names what differs ("invoice_amount",
    "agent.confidence"), `rows` the import rows concerned."""

    def __init__(self, case_id: str, fields: Sequence[str], rows: Sequence[int] = ()):
        self.case_id, self.fields, self.rows = case_id, list(fields), list(rows)
        where = f"row {rows[0]}: " if rows else ""
        super().__init__(f"{where}{case_id} was handed in already with other values: {', '.join(self.fields)} differ")


def body_hash(fields: Mapping[str, Any], agent: AgentPart | None) -> str:
    body = {"fields": fields, "agent": agent.model_dump(mode="json") if agent else None}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def differing(stored: QueuedCase, fields: Mapping[str, Any], agent: AgentPart | None) -> list[str]:
    """The names of what differs between a stored case and a body handed in for its id."""
    names = sorted(k for k in {*stored.fields, *fields} if stored.fields.get(k) != fields.get(k))
    theirs = stored.agent.model_dump(mode="json") if stored.agent else {}
    ours = agent.model_dump(mode="json") if agent else {}
    if bool(theirs) != bool(ours):
        return [*names, "agent"]
    return names + sorted(f"agent.{k}" for k in {*theirs, *ours} if theirs.get(k) != ours.get(k))


def _case(row: sa.Row) -> QueuedCase:
    return QueuedCase(
        seq=row.seq,
        case_kind=row.case_kind,
        case_id=row.case_id,
        fields=row.fields,
        agent=AgentPart.model_validate(row.agent) if row.agent else None,
        source=row.source,
        created_at=as_utc(row.created_at),
        withdrawal=Withdrawal(by=row.withdrawn_by, why=row.withdrawn_why or "", at=as_utc(row.withdrawn_at))
        if row.withdrawn_at is not None
        else None,
    )


class CaseQueue:
    """The handed-in cases of every kind. `store` is an engine, or a SQLite file path (tests, tools)."""

    def __init__(self, store: Engine | Path, clock=utc_now):
        self.engine = store if isinstance(store, Engine) else sqlite_engine(store)
        self.clock = clock
        upgrade(self.engine)
        self._kept: dict[str, tuple[int, tuple[QueuedCase, ...]]] = {}

    def submit(
        self, case_kind: str, case_id: str, fields: Mapping[str, Any], agent: AgentPart | None, source: str
    ) -> tuple[QueuedCase, bool]:
        """(the case as stored, whether this call wrote it). CaseConflict when the id holds another body."""
        digest = body_hash(fields, agent)
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    queued_cases.insert().values(**self._values(case_kind, case_id, fields, agent, source, digest))
                )
            return self.get(case_kind, case_id), True
        except IntegrityError:
            stored = self.get(case_kind, case_id)
            if stored is None:  # not a duplicate id: something else broke
                raise
            if body_hash(stored.fields, stored.agent) != digest:
                raise CaseConflict(case_id, differing(stored, fields, agent)) from None
            return stored, False

    def import_cases(
        self, case_kind: str, rows: Sequence[tuple[str, Mapping[str, Any]]], source: str
    ) -> tuple[int, int]:
        """Every row (case id, fields) or none: (added, already there with the same values). CaseConflict names the
        first row (counted from 1) whose id holds other values."""
        with self.engine.begin() as conn:
            stored = dict(conn.execute(sa.select(Q.case_id, Q.body_sha256).where(Q.case_kind == case_kind)).all())
            new = []
            for number, (case_id, fields) in enumerate(rows, 1):
                digest = body_hash(fields, None)
                if case_id not in stored:
                    new.append(self._values(case_kind, case_id, fields, None, source, digest))
                elif stored[case_id] != digest:
                    theirs = _case(
                        conn.execute(
                            sa.select(queued_cases).where(Q.case_kind == case_kind, Q.case_id == case_id)
                        ).one()
                    )
                    raise CaseConflict(case_id, differing(theirs, fields, None), rows=[number])
            if new:
                conn.execute(queued_cases.insert(), new)
        return len(new), len(rows) - len(new)

    def _values(self, case_kind, case_id, fields, agent, source, digest) -> dict:
        return dict(
            case_kind=case_kind,
            case_id=case_id,
            fields=dict(fields),
            body_sha256=digest,
            source=source[:120],
            agent=agent.model_dump(mode="json") if agent else None,
            created_at=self.clock(),
        )

    def withdraw(self, case_kind: str, case_id: str, by: str, why: str) -> QueuedCase | None:
        """Withdraw the case (kept, out of the queue); withdrawn already, it stays as it was. None: no such case. The
        caller checks it is still open: this room does not read decisions."""
        with self.engine.begin() as conn:
            conn.execute(
                queued_cases.update()
                .where(Q.case_kind == case_kind, Q.case_id == case_id, Q.withdrawn_at.is_(None))
                .values(withdrawn_at=self.clock(), withdrawn_by=by[:120], withdrawn_why=why)
            )
        return self.get(case_kind, case_id)

    def get(self, case_kind: str, case_id: str) -> QueuedCase | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(queued_cases).where(Q.case_kind == case_kind, Q.case_id == case_id)).first()
        return None if row is None else _case(row)

    def version(self, case_kind: str) -> tuple[int, int]:
        """(the newest case's seq, 0: none; how many are withdrawn): cases are only ever added or withdrawn, so an
        unchanged version is an unchanged queue."""
        with self.engine.connect() as conn:
            newest, withdrawn = conn.execute(
                sa.select(sa.func.coalesce(sa.func.max(Q.seq), 0), sa.func.count(Q.withdrawn_at)).where(
                    Q.case_kind == case_kind
                )
            ).one()
        return int(newest), int(withdrawn)

    def cases(self, case_kind: str) -> tuple[QueuedCase, ...]:
        """Every handed-in case of the kind still in the queue (not withdrawn), oldest first; the same tuple while none
        was added or withdrawn (pages key on it). What was read is kept and only newer ones are read, unless one was
        withdrawn since."""
        version = self.version(case_kind)
        seen, kept = self._kept.get(case_kind, ((0, 0), ()))
        if version != seen:
            after = seen[0] if version[1] == seen[1] else 0  # a withdrawal: read the queue again
            with self.engine.connect() as conn:
                rows = conn.execute(
                    sa.select(queued_cases)
                    .where(Q.case_kind == case_kind, Q.seq > after, Q.withdrawn_at.is_(None))
                    .order_by(Q.seq)
                )
                kept = (*(kept if after else ()), *(_case(r) for r in rows))
            self._kept[case_kind] = (version, kept)
        return kept

    def page(self, case_kind: str, after: int = 0, limit: int = 100) -> list[QueuedCase]:
        """Up to `limit` cases with seq above `after`, oldest first (keyset pagination: the last one's seq is the next `after`)."""
        query = sa.select(queued_cases).where(Q.case_kind == case_kind, Q.seq > after).order_by(Q.seq).limit(limit)
        with self.engine.connect() as conn:
            return [_case(r) for r in conn.execute(query)]
