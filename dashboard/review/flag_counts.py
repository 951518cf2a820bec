"""The per-case flags of a queue, counted by the review store's database: how many cases were recalled, checked for a
crowd-out, caught one, recommended what, and had which incidents. A queue of 100,000 cases comes back as a few
grouped rows, never as its flags read into Python (docs/scaling.md). PostgreSQL keeps them as JSONB (migration
0011), SQLite as JSON text: the few JSON functions differ by name. No Streamlit.

The flags table may hold cases no longer queued (a queue file changed): one read of the stored ids finds them, and
their counts, all additive, are subtracted from the bank's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence, Set
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy import Engine

from dashboard.review.schema import case_flags

# The keys of a case's flags, named here once: the recall's flags (finance.flags, support.flags), its incident kinds
# (agents.incidents).
RECALL, INCIDENTS = "recall", "incidents"
CHUNK = 500  # bounded IN lists


class FinanceCounts(NamedTuple):
    recalled: int = 0  # with finance flags
    checked: int = 0  # with a crowd-out check
    prevented: int = 0  # checked, and a single pass would have lost exact precedents
    precedents_saved: int = 0
    no_relevant: int = 0
    recommendations: tuple[tuple[str, int], ...] = ()  # (the agent's action, cases)


class IncidentCounts(NamedTuple):
    checked: int = 0  # cases whose agent runs were checked
    cases: int = 0  # of them, with at least one incident
    by_kind: tuple[tuple[str, int], ...] = ()  # (kind, cases)


class StoredIds:
    """The ids of the cases with flags, per bank and kind, kept while their number stays: a flags row is written once
    per case and never deleted, so the set changes only when it grows (one index count says whether it did)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._kept: dict[tuple[str, str], tuple[int, frozenset[str]]] = {}

    def get(self, bank_id: str, case_kind: str) -> frozenset[str]:
        mine = (case_flags.c.bank_id == bank_id, case_flags.c.case_kind == case_kind)
        with self.engine.connect() as conn:
            count = conn.execute(sa.select(sa.func.count()).select_from(case_flags).where(*mine)).scalar_one()
            kept = self._kept.get((bank_id, case_kind))
            if kept is not None and kept[0] == count:
                return kept[1]
            ids = frozenset(conn.execute(sa.select(case_flags.c.case_id).where(*mine)).scalars())
        self._kept[(bank_id, case_kind)] = (len(ids), ids)
        return ids


class QueueFlags:
    """The stored flags of one bank's queue of one kind (`queue_ids`), counted in SQL."""

    def __init__(self, engine: Engine, bank_id: str, case_kind: str, queue_ids: Collection[str], stored: Set[str]):
        """`stored`: the ids of every case of this bank and kind with flags (StoredIds)."""
        self.engine, self.bank_id, self.case_kind = engine, bank_id, case_kind
        flags, case_id = case_flags.c.flags, case_flags.c.case_id
        with engine.connect() as conn:
            not_recalled = set(conn.execute(sa.select(case_id).where(*self._mine(), sa.not_(_typed(engine, flags, RECALL, "object")))).scalars())
            checked = _typed(engine, flags, INCIDENTS, "array")
            self.incidents_checked_anywhere = conn.execute(sa.select(sa.exists().where(*self._mine(), checked))).scalar_one()
        queued = set(queue_ids)
        self.extra = sorted(stored - queued)  # flags of cases no longer queued
        self.unmeasured = [i for i in queue_ids if i not in stored or i in not_recalled]  # in the queue's order

    def _mine(self) -> tuple[sa.ColumnElement, ...]:
        return case_flags.c.bank_id == self.bank_id, case_flags.c.case_kind == self.case_kind

    def _counted(self, query: sa.Select, keys: int = 0) -> dict[tuple, list[int]]:
        """The query's counts (after its first `keys` columns, the group's key) over the bank, minus the same counts
        over the cases no longer queued."""
        counts: dict[tuple, list[int]] = {}
        with self.engine.connect() as conn:
            for sign, where in ((1, ()), *((-1, (case_flags.c.case_id.in_(chunk),)) for chunk in _chunks(self.extra))):
                for row in conn.execute(query.where(*self._mine(), *where)):
                    kept = counts.setdefault(tuple(row[:keys]), [0] * (len(row) - keys))
                    for i, value in enumerate(row[keys:]):
                        kept[i] += sign * (value or 0)
        return counts

    def finance(self) -> FinanceCounts:
        flags = case_flags.c.flags
        lost = flags[(RECALL, "crowd_out_lost")].as_integer()
        action = flags[(RECALL, "action")].as_string()
        query = sa.select(
            action, sa.func.count(), sa.func.count(lost), sa.func.count().filter(lost > 0), sa.func.sum(lost),
            sa.func.count().filter(flags[(RECALL, "relevant")].as_integer() == 0),
        ).where(_typed(self.engine, flags, RECALL, "object")).group_by(action)
        by_action = self._counted(query, keys=1)
        totals = [sum(column) for column in zip(*by_action.values(), strict=True)] or [0] * 5
        return FinanceCounts(*totals, recommendations=tuple(sorted((a, c[0]) for (a,), c in by_action.items() if c[0])))

    def incidents(self) -> IncidentCounts:
        flags = case_flags.c.flags
        has = _typed(self.engine, flags, INCIDENTS, "array")
        any_kind = _array_length(self.engine, flags, INCIDENTS) > 0
        checked, cases = self._counted(sa.select(sa.func.count(), sa.func.count().filter(any_kind)).where(has))[()]
        kinds = _elements(self.engine, flags, INCIDENTS)
        query = (
            sa.select(kinds.c.value, sa.func.count(sa.distinct(case_flags.c.case_id))).select_from(case_flags)
            .join(kinds, sa.true()).where(has).group_by(kinds.c.value)
        )
        by_kind = self._counted(query, keys=1)
        return IncidentCounts(checked, cases, tuple(sorted((kind, c[0]) for (kind,), c in by_kind.items() if c[0])))

    def missed(self, limit: int) -> list[tuple[str, int, int, str]]:
        """The queued cases where a plain single search would lose exact precedents, most lost first, at most
        `limit`: (case id, exact precedents, lost, the agent's action)."""
        flags = case_flags.c.flags
        lost = flags[(RECALL, "crowd_out_lost")].as_integer()
        query = (
            sa.select(case_flags.c.case_id, flags[(RECALL, "exact")].as_integer(), lost, flags[(RECALL, "action")].as_string())
            .where(*self._mine(), lost > 0).order_by(lost.desc(), case_flags.c.case_id).limit(limit + len(self.extra))
        )
        extra = set(self.extra)
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query) if row[0] not in extra][:limit]


def _chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def _typed(engine: Engine, flags: sa.ColumnElement, key: str, json_type: str) -> sa.ColumnElement:
    """Whether the flags hold `key` as a JSON `json_type` ("object", "array")."""
    if engine.dialect.name == "postgresql":
        return sa.func.coalesce(sa.func.jsonb_typeof(flags[key]) == json_type, False)
    return sa.func.coalesce(sa.func.json_type(flags, f"$.{key}") == json_type, False)


def _array_length(engine: Engine, flags: sa.ColumnElement, key: str) -> sa.ColumnElement:
    if engine.dialect.name == "postgresql":
        return sa.func.jsonb_array_length(flags[key])
    return sa.func.json_array_length(flags, f"$.{key}")


def _elements(engine: Engine, flags: sa.ColumnElement, key: str):
    """The text elements of the array `key`, one row each (a table-valued function beside the flags row)."""
    if engine.dialect.name == "postgresql":
        array = sa.case((sa.func.jsonb_typeof(flags[key]) == "array", flags[key]))  # a scalar there would be an error
        return sa.func.jsonb_array_elements_text(array).table_valued("value").render_derived()
    return sa.func.json_each(flags, f"$.{key}").table_valued("value")  # SQLite names json_each's columns itself
