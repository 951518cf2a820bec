"""The standing decisions (one row per case: its newest decision not held), as the queue pages and the Overview read
them. The database keeps the table (migration 0012); this module only reads it. No Streamlit.

A queue page asks for every case's state on every run. The answer is kept per bank and kind; while the decision log's
version stays it is returned as it is, and when the log moved only the rows whose change count is above the kept one
are read and laid over it (a decision changes one row of 100,000).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy import Engine

from dashboard.store.kept import KeptUntilTheLogChanges, log_version
from dashboard.store.schema import standing_decisions

S = standing_decisions.c


class DecisionState(NamedTuple):
    """A case's standing decision as a queue row shows it (Outbox.decision_states)."""

    state: str
    outcome: str
    action: str | None = None  # its kind's own action (ReviewerDecision.action)


class StandingCount(NamedTuple):
    """How many cases' standing decision was made on `day` with this outcome (Outbox.standing_counts)."""

    day: date
    overridden: bool
    reason_code: str | None  # an override's reason
    group: str | None  # an override's group (its kind's report_by tag of its record: finance, the vendor)
    case_id: str | None  # an override of a grouping kind whose record names no group: the queue knows it
    count: int


@dataclass(frozen=True)
class _KeptStates:
    log_version: int  # the decision log's, read before the rows
    change_seq: int  # the highest change count among the rows read
    states: Mapping[str, DecisionState]


def _of(bank_id: str, case_kind: str) -> tuple:
    """The standing decisions of one bank and kind: a prefix of the table's primary key."""
    return S.bank_id == bank_id, S.case_kind == case_kind


def decision_ids(bank_id: str, case_kind: str) -> sa.Select:
    """The ids of the standing decisions of one bank and kind, as a subquery."""
    return sa.select(S.decision_id).where(*_of(bank_id, case_kind))


class StandingDecisions:
    """Reads of the standing decisions, kept between a page's runs. Shared by every session: answers are read-only."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._states: dict[tuple[str, str], _KeptStates] = {}
        self._counts = KeptUntilTheLogChanges(engine)

    def states(self, bank_id: str, case_kind: str) -> Mapping[str, DecisionState]:
        """case id -> the state and outcome of its standing decision."""
        key = (bank_id, case_kind)
        with self.engine.connect() as conn:
            version = log_version(conn)
            kept = self._states.get(key)
            if kept is not None and kept.log_version == version:
                return kept.states
            fresh = self._changed_since(conn, kept, version, *key) if kept is not None else None
            fresh = fresh or self._read_all(conn, version, *key)
        self._states[key] = fresh
        return fresh.states

    @staticmethod
    def _rows(conn: sa.Connection, *where) -> tuple[int, dict[str, DecisionState]]:
        query = sa.select(S.case_id, S.state, S.outcome, S.action, S.change_seq).where(*where)
        states, newest = {}, 0
        for case_id, state, outcome, action, seq in conn.execute(query):
            states[case_id] = DecisionState(state, outcome, action)
            newest = max(newest, seq)
        return newest, states

    def _read_all(self, conn: sa.Connection, version: int, bank_id: str, case_kind: str) -> _KeptStates:
        newest, states = self._rows(conn, *_of(bank_id, case_kind))
        return _KeptStates(version, newest, MappingProxyType(states))

    def _changed_since(
        self, conn: sa.Connection, kept: _KeptStates, version: int, bank_id: str, case_kind: str
    ) -> _KeptStates | None:
        """The kept states with the rows changed since laid over them; None when a case has left the table meanwhile
        (its decisions deleted by hand): the caller reads it all."""
        newest, changed = self._rows(conn, *_of(bank_id, case_kind), S.change_seq > kept.change_seq)
        states = {**kept.states, **changed} if changed else dict(kept.states)
        count = conn.execute(sa.select(sa.func.count()).where(*_of(bank_id, case_kind))).scalar_one()
        if count != len(states):  # rows are only ever added or changed here: more kept than stored means one left
            return None
        return _KeptStates(version, max(newest, kept.change_seq), MappingProxyType(states))

    def changed_since(self, bank_id: str, case_kind: str, seq: int) -> tuple[int, list[str]]:
        """(the newest change count, the cases whose standing decision changed after `seq`, in the order they changed):
        the API's "decided since" cursor. The counts commit in order (migrations/standing_triggers.py), so a reader
        that passes the count it got back misses no change."""
        query = (
            sa.select(S.case_id, S.change_seq)
            .where(*_of(bank_id, case_kind), S.change_seq > seq)
            .order_by(S.change_seq)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return (rows[-1][1] if rows else seq), [case_id for case_id, _ in rows]

    def counts(self, bank_id: str, case_kind: str) -> tuple[StandingCount, ...]:
        """Each case's standing decision, counted by the day it was made, overridden or not, and for overrides by
        reason (and group, for a kind that groups them): what the Overview charts, grouped by the database. Read again only when
        the log changed."""

        def read() -> tuple[StandingCount, ...]:
            overridden = sa.func.coalesce(S.overridden, False)
            # an override whose record names no group ("") is counted per case, for the queue to name its group
            untagged = sa.case((sa.and_(overridden, S.report_group == ""), S.case_id))
            group = sa.case((sa.and_(overridden, S.report_group != ""), S.report_group))
            columns = (S.decided_on, overridden, sa.case((overridden, S.reason_code)), group, untagged)
            query = sa.select(*columns, sa.func.count()).where(*_of(bank_id, case_kind)).group_by(*columns)
            with self.engine.connect() as conn:
                counts = [StandingCount(day, bool(over), *rest) for day, over, *rest in conn.execute(query)]
            return tuple(
                sorted(counts, key=lambda c: (c.day, c.overridden, c.reason_code or "", c.group or "", c.case_id or ""))
            )

        return self._counts.get((bank_id, case_kind), read)
