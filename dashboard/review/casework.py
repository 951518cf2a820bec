"""Shared casework beside the decisions: claims with a lease, comments, and the per-case flags the
Overview computes from recalls (kept in the review store, so they survive restarts and every instance
sees them). No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from pydantic import BaseModel, Field
from sqlalchemy import Engine
from sqlalchemy.dialects import postgresql, sqlite

from dashboard.review.flag_counts import FlagTallies, QueueFlags
from dashboard.store.db import as_utc
from dashboard.store.identity import Actor, Person, as_person
from dashboard.store.schema import NAME, case_flags, claims, comments

CLAIM_S = 15 * 60


class Claim(BaseModel):
    bank_id: str
    case_kind: str
    case_id: str
    holder: str
    person_id: str | None = None  # a signed-in holder's issuer and subject (identity.Person.id)
    claimed_at: datetime
    expires_at: datetime

    def held_by(self, who: Actor) -> bool:
        return _holds(Person.stored(self.holder, self.person_id), as_person(who))


class Comment(BaseModel):
    id: int
    author: str = Field(max_length=NAME)
    person_id: str | None = None
    body: str
    created_at: datetime


def _holds(holder: Person, who: Person) -> bool:
    """A claim is its holder's: the same subject when signed in, else the same typed name (as typed)."""
    return holder.id == who.id if holder.signed_in or who.signed_in else holder.name == who.name


def _held_by(who: Person) -> sa.ColumnElement:
    return (
        claims.c.person_id == who.id
        if who.signed_in
        else sa.and_(claims.c.holder == who.name, claims.c.person_id.is_(None))
    )


def _upsert(engine: Engine, table: sa.Table):
    return (postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert)(table)


def _merged(engine: Engine, new: sa.ColumnElement, keys: tuple[str, ...]) -> sa.ColumnElement:
    """The stored flags with the top-level `keys` taken from `new` (a shallow merge, done by the database)."""
    if engine.dialect.name == "postgresql":
        return case_flags.c.flags.op("||")(new)  # JSONB (migration 0011)
    pairs = []
    for key in keys:
        path = sa.literal('$."' + key.replace('"', "") + '"', sa.String)
        pairs += [path, new.op("->")(path)]  # `->` yields JSON, so json_set stores it as JSON, not as a string
    return sa.func.json_set(case_flags.c.flags, *pairs)


class Casework:
    def __init__(self, engine: Engine, clock: Callable[[], datetime] = lambda: datetime.now(UTC)):
        self.engine = engine
        self.clock = clock
        self._tallies = FlagTallies(engine)  # (bank, kind) -> its flags counted, kept between runs

    # -- claims ------------------------------------------------------------------------------

    def claim(self, bank_id: str, case_kind: str, case_id: str, holder: Actor, lease_s: float = CLAIM_S) -> Claim:
        """Take (or renew) the case for `holder`; returns the claim that holds now, which is someone
        else's when their lease has not run out."""
        now, holder = self.clock(), as_person(holder)
        insert = _upsert(self.engine, claims).values(
            bank_id=bank_id,
            case_kind=case_kind,
            case_id=case_id,
            holder=holder.name,
            person_id=holder.id,
            claimed_at=now,
            expires_at=now + timedelta(seconds=lease_s),
        )
        statement = insert.on_conflict_do_update(
            index_elements=["bank_id", "case_kind", "case_id"],
            set_={
                "holder": insert.excluded.holder,
                "person_id": insert.excluded.person_id,
                "claimed_at": insert.excluded.claimed_at,
                "expires_at": insert.excluded.expires_at,
            },
            where=sa.or_(_held_by(holder), claims.c.expires_at < now),
        )
        with self.engine.begin() as conn:
            conn.execute(statement)
        return self.holder_of(bank_id, case_kind, case_id)

    def holder_of(self, bank_id: str, case_kind: str, case_id: str) -> Claim | None:
        """The live claim on a case, or None (never claimed, released, or its lease ran out)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(claims).where(
                    claims.c.bank_id == bank_id,
                    claims.c.case_kind == case_kind,
                    claims.c.case_id == case_id,
                    claims.c.expires_at >= self.clock(),
                )
            ).first()
        if row is None:
            return None
        data = dict(row._mapping)
        return Claim(**{**data, "claimed_at": as_utc(data["claimed_at"]), "expires_at": as_utc(data["expires_at"])})

    def may_decide(self, bank_id: str, case_kind: str, case_id: str, who: Actor | None) -> bool:
        """The rule right before a write: nobody but `who` holds a live claim on the case."""
        held = self.holder_of(bank_id, case_kind, case_id)
        return held is None or (who is not None and held.held_by(who))

    def live_claims(self, bank_id: str, case_kind: str) -> dict[str, str]:
        """case id -> holder, for every live claim of one bank and kind (one query: the queue's "my queue")."""
        query = sa.select(claims.c.case_id, claims.c.holder).where(
            claims.c.bank_id == bank_id, claims.c.case_kind == case_kind, claims.c.expires_at >= self.clock()
        )
        with self.engine.connect() as conn:
            return {case_id: holder for case_id, holder in conn.execute(query)}

    def release(self, bank_id: str, case_kind: str, case_id: str, holder: Actor) -> bool:
        with self.engine.begin() as conn:
            result = conn.execute(
                claims.delete().where(
                    claims.c.bank_id == bank_id,
                    claims.c.case_kind == case_kind,
                    claims.c.case_id == case_id,
                    _held_by(as_person(holder)),
                )
            )
        return result.rowcount == 1

    # -- comments ----------------------------------------------------------------------------

    def comment(self, bank_id: str, case_kind: str, case_id: str, author: Actor, body: str) -> int:
        author = as_person(author)
        with self.engine.begin() as conn:
            result = conn.execute(
                comments.insert().values(
                    bank_id=bank_id,
                    case_kind=case_kind,
                    case_id=case_id,
                    author=author.name[:NAME],
                    person_id=author.id,
                    body=body[:4000],
                    created_at=self.clock(),
                )
            )
        return int(result.inserted_primary_key[0])

    def comments(self, bank_id: str, case_kind: str, case_id: str) -> list[Comment]:
        """Oldest first."""
        query = (
            sa.select(comments.c.id, comments.c.author, comments.c.person_id, comments.c.body, comments.c.created_at)
            .where(comments.c.bank_id == bank_id, comments.c.case_kind == case_kind, comments.c.case_id == case_id)
            .order_by(comments.c.id)
        )
        with self.engine.connect() as conn:
            return [Comment(**{**dict(r._mapping), "created_at": as_utc(r.created_at)}) for r in conn.execute(query)]

    # -- per-case flags for the Overview -----------------------------------------------------

    def put_flags(self, bank_id: str, case_kind: str, case_id: str, flags: dict) -> None:
        self.put_many_flags(bank_id, case_kind, {case_id: flags})

    def put_many_flags(self, bank_id: str, case_kind: str, flags_by_case: Mapping[str, dict]) -> None:
        """Set these flags on these cases in one transaction. Each given key replaces that key whole; the
        case's other keys stay (the recall's flags and the incidents are written by different code paths),
        merged in SQL so two writers of different keys never overwrite each other."""
        by_keys: dict[tuple[str, ...], list[dict]] = {}
        now = self.clock()
        for case_id, flags in flags_by_case.items():
            row = {"bank_id": bank_id, "case_kind": case_kind, "case_id": case_id, "flags": flags, "updated_at": now}
            by_keys.setdefault(tuple(sorted(flags)), []).append(row)
        with self.engine.begin() as conn:
            for keys, rows in by_keys.items():
                insert = _upsert(self.engine, case_flags)
                statement = insert.on_conflict_do_update(
                    index_elements=["bank_id", "case_kind", "case_id"],
                    set_={
                        "flags": _merged(self.engine, insert.excluded.flags, keys),
                        "updated_at": insert.excluded.updated_at,
                    },
                )
                conn.execute(statement, rows)

    def flags(self, bank_id: str, case_kind: str, case_ids: list[str] | None = None) -> dict[str, dict]:
        """case id -> its latest flags, for one bank and kind (only `case_ids` when given)."""
        query = sa.select(case_flags.c.case_id, case_flags.c.flags).where(
            case_flags.c.bank_id == bank_id, case_flags.c.case_kind == case_kind
        )
        if case_ids is not None:
            query = query.where(case_flags.c.case_id.in_(case_ids))
        with self.engine.connect() as conn:
            return {case_id: flags for case_id, flags in conn.execute(query)}

    def read_flag_counts(self, bank_id: str, case_kind: str) -> None:
        """Read the flags of this bank and kind into the counts kept by the process (before serving: at 100,000
        cases ~0.5 s the first Overview would otherwise wait for)."""
        self._tallies.read(bank_id, case_kind)

    def queue_flags(self, bank_id: str, case_kind: str, queue_ids: list[str]) -> QueueFlags:
        """The stored flags of this queue, counted (the Overview)."""
        return self._tallies.queue_flags(bank_id, case_kind, queue_ids)
