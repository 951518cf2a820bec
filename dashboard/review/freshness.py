"""How fresh a cached recall is, across every instance sharing the review store.

A decision is retained into memory under a scope: a vendor and exception type (finance), a customer
(support). `bump` adds one to that scope's generation in the review store; a case open reads its scope's
stamp (one primary-key query) and recalls again when it moved since its cached recall was made, so the
decision shows at once on every instance, not when a cache entry expires. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy import Engine

from dashboard.store.db import upgrade
from dashboard.store.schema import generations

EVERYTHING = "*"  # bumped when many scopes change at once (a decision delivered late, a migration)


class Freshness:
    def __init__(self, engine: Engine):
        self.engine = engine
        upgrade(engine)

    def stamps(self, bank_id: str, scopes: Iterable[str]) -> dict[str, int]:
        """scope -> its freshness stamp (its generation plus the bank's EVERYTHING one): a cached recall made
        under another stamp is stale. One query, on the primary key."""
        wanted = set(scopes)
        query = sa.select(generations.c.scope, generations.c.generation).where(
            generations.c.bank_id == bank_id, generations.c.scope.in_([*wanted, EVERYTHING])
        )
        with self.engine.connect() as conn:
            found = dict(conn.execute(query).tuples().all())
        everything = found.get(EVERYTHING, 0)
        return {scope: found.get(scope, 0) + everything for scope in wanted}

    def generation(self, bank_id: str) -> int:
        """The bank's generation: moves whenever any of its scopes does (the sum of its rows' generations; one
        query over the bank's few rows). Work kept per generation is redone, once, after any decision."""
        query = sa.select(sa.func.coalesce(sa.func.sum(generations.c.generation), 0)).where(
            generations.c.bank_id == bank_id
        )
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def stamp(self, bank_id: str, scope: str) -> int:
        return self.stamps(bank_id, [scope])[scope]

    def bump(self, bank_id: str, scope: str) -> None:
        """One more change in this scope (EVERYTHING: in every scope of the bank)."""
        now = datetime.now(UTC)
        where = (generations.c.bank_id == bank_id, generations.c.scope == scope)
        with self.engine.begin() as conn:
            if conn.execute(
                generations.update().where(*where).values(generation=generations.c.generation + 1, updated_at=now)
            ).rowcount:
                return
            try:
                with conn.begin_nested():
                    conn.execute(
                        generations.insert().values(bank_id=bank_id, scope=scope, generation=1, updated_at=now)
                    )
            except sa.exc.IntegrityError:  # another instance inserted it first: count ours on top
                conn.execute(
                    generations.update().where(*where).values(generation=generations.c.generation + 1, updated_at=now)
                )
