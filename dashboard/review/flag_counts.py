"""The per-case flags of a queue, counted for the Overview: how many cases were recalled, checked for a crowd-out,
caught one, recommended what, and had which incidents. No Streamlit.

The database reads what each case adds to the counts out of its JSON (PostgreSQL keeps it as JSONB, migration 0011;
SQLite as JSON text: the few JSON functions differ by name). The counts over a bank's rows are kept per process and
brought up to date from the rows written since (each row carries the table's change count, migration 0013), so a
queue of 100,000 cases is read once, not on every run (~0.25 s of each Overview run at that size, docs/scaling.md).
A delete moves another counter: then the rows are read again. The rows of cases no longer queued (a queue file
changed) are subtracted.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy import Engine

from dashboard.store.schema import case_flags, log_versions

# The keys of a case's flags, named here once: the recall's flags (finance.flags, support.flags), its incident kinds
# (agents.incidents).
RECALL, INCIDENTS = "recall", "incidents"
DELETED = "review_case_flags_deleted"  # the counter a delete moves (migration 0013)


class FinanceCounts(NamedTuple):
    recalled: int = 0  # with finance flags
    checked: int = 0  # with a crowd-out check
    prevented: int = 0  # checked, and a single pass would have lost exact precedents
    precedents_saved: int = 0
    no_relevant: int = 0
    recommendations: tuple[tuple[str, int], ...] = ()  # (the agent's action, cases)
    set_aside: int = 0  # records set aside as untrusted (finance.trust), over the cases
    forged: int = 0  # of them, records claiming a reviewer's decision this dashboard never recorded
    swung: int = 0  # cases whose recommendation rests on an untrusted record


class IncidentCounts(NamedTuple):
    checked: int = 0  # cases whose agent runs were checked
    cases: int = 0  # of them, with at least one incident
    by_kind: tuple[tuple[str, int], ...] = ()  # (kind, cases)


class Counted(NamedTuple):
    """What one case's stored flags add to the counts."""

    recalled: bool = False  # the recall's flags are stored
    action: str | None = None  # the agent's action
    exact: int | None = None  # exact precedents
    lost: int | None = None  # exact precedents a plain search loses; None: not checked
    no_relevant: bool = False
    incidents: tuple[str, ...] | None = None  # its incident kinds, each once; None: never checked
    set_aside: int = 0  # records set aside as untrusted
    forged: int = 0  # records claiming a reviewer's authority they lack
    swung: bool = False  # the recommendation turns on an untrusted record


class _Tally:
    """The counts over every stored row of one bank and kind, changed row by row."""

    def __init__(self, deleted: int):
        self.deleted = deleted  # the deletes counter when the rows were read: when it moves, read them all again
        self.change_seq = -1  # the highest change count among the rows read
        self.rows: dict[str, Counted] = {}
        self.finance: dict[str | None, list[int]] = {}  # action -> the FinanceCounts columns before `recommendations`
        self.incidents = [0, 0]  # checked, with at least one
        self.kinds: Counter[str] = Counter()
        self.losing: dict[str, Counted] = {}  # the cases where a plain search loses exact precedents
        self.unrecalled: set[str] = set()  # the cases with flags but not the recall's

    def put(self, case_id: str, counted: Counted) -> None:
        if (old := self.rows.get(case_id)) is not None:
            self._add(case_id, old, -1)
        self.rows[case_id] = counted
        self._add(case_id, counted, 1)

    def _add(self, case_id: str, c: Counted, sign: int) -> None:
        if c.recalled:
            totals = self.finance.setdefault(c.action, [0] * FINANCE_COLUMNS)
            for i, value in enumerate(_finance(c)):
                totals[i] += sign * value
        elif sign > 0:
            self.unrecalled.add(case_id)
        else:
            self.unrecalled.discard(case_id)
        if c.incidents is not None:
            self.incidents[0] += sign
            if c.incidents:
                self.incidents[1] += sign
                self.kinds.update({kind: sign for kind in c.incidents})
        if c.lost and c.lost > 0:
            if sign > 0:
                self.losing[case_id] = c
            else:
                self.losing.pop(case_id, None)


def _finance(c: Counted) -> tuple[int, ...]:
    return (
        1,
        c.lost is not None,
        bool(c.lost and c.lost > 0),
        c.lost or 0,
        c.no_relevant,
        c.set_aside,
        c.forged,
        c.swung,
    )


FINANCE_COLUMNS = len(_finance(Counted()))


class FlagTallies:
    """The kept counts of every bank and kind this process has counted. Shared by every session: a lock keeps one
    reader at a time, and what it hands out (QueueFlags) is its own."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._tallies: dict[tuple[str, str], _Tally] = {}
        self._answers: dict[
            tuple[str, str], tuple
        ] = {}  # the last answer of each: (tally, its change count, queue ids, answer)
        self._lock = threading.Lock()

    def read(self, bank_id: str, case_kind: str) -> None:
        """Bring the counts of this bank and kind up to date (the first time: read them all)."""
        with self._lock:
            self._current(bank_id, case_kind)

    def queue_flags(self, bank_id: str, case_kind: str, queue_ids: Sequence[str]) -> QueueFlags:
        """The flags of one bank's queue of one kind (`queue_ids`, in the queue's order), counted; the same answer
        while no row was written and the ids are the same object (comparing 100,000 ids to the rows: ~35 ms)."""
        with self._lock:
            tally = self._current(bank_id, case_kind)
            kept = self._answers.get((bank_id, case_kind))
            if kept is not None and kept[0] is tally and kept[1] == tally.change_seq and kept[2] is queue_ids:
                return kept[3]
            answer = QueueFlags(tally, queue_ids)
            self._answers[(bank_id, case_kind)] = (tally, tally.change_seq, queue_ids, answer)
            return answer

    def _current(self, bank_id: str, case_kind: str) -> _Tally:
        key = (bank_id, case_kind)
        tally = self._tallies.pop(key, None)  # put back once up to date: a read that fails halfway is read again whole
        with self.engine.connect() as conn:
            deleted = conn.execute(sa.select(log_versions.c.version).where(log_versions.c.log == DELETED)).scalar_one()
            query = _projection(self.engine).where(case_flags.c.bank_id == bank_id, case_flags.c.case_kind == case_kind)
            if tally is None or tally.deleted != deleted:
                tally = _Tally(deleted)
            else:
                query = query.where(case_flags.c.change_seq > tally.change_seq)
            for case_id, change_seq, *values in conn.execute(query):
                tally.put(case_id, _counted(*values))
                tally.change_seq = max(tally.change_seq, change_seq)
        self._tallies[key] = tally
        return tally


class QueueFlags:
    """The stored flags of one bank's queue of one kind, counted: the bank's counts less those of the cases no longer
    queued."""

    def __init__(self, tally: _Tally, queue_ids: Sequence[str]):
        queued, rows = set(queue_ids), tally.rows
        self.extra = sorted(rows.keys() - queued)  # flags of cases no longer queued
        # set operations over 100,000 ids; the queue's order is walked only when some are unmeasured
        unmeasured = (queued - rows.keys()) | (queued & tally.unrecalled)
        self.unmeasured = [i for i in queue_ids if i in unmeasured] if unmeasured else []  # in the queue's order
        self.incidents_checked_anywhere = tally.incidents[0] > 0
        finance = {action: list(totals) for action, totals in tally.finance.items()}
        incidents, kinds = list(tally.incidents), Counter(tally.kinds)
        for case_id in self.extra:
            gone = rows[case_id]
            if gone.recalled:
                finance[gone.action] = [t - v for t, v in zip(finance[gone.action], _finance(gone), strict=True)]
            if gone.incidents is not None:
                incidents[0] -= 1
                incidents[1] -= bool(gone.incidents)
                kinds.subtract(gone.incidents)
        totals = [sum(column) for column in zip(*finance.values(), strict=True)] or [0] * FINANCE_COLUMNS
        recalled, checked, prevented, saved, no_relevant, set_aside, forged, swung = totals
        self._finance = FinanceCounts(
            recalled,
            checked,
            prevented,
            saved,
            no_relevant,
            tuple(sorted((a, t[0]) for a, t in finance.items() if t[0])),
            set_aside,
            forged,
            swung,
        )
        self._incidents = IncidentCounts(*incidents, by_kind=tuple(sorted((k, n) for k, n in kinds.items() if n)))
        losing = [(i, c.exact, c.lost, c.action) for i, c in tally.losing.items() if i in queued]
        self._missed = sorted(losing, key=lambda row: (-row[2], row[0]))

    def finance(self) -> FinanceCounts:
        return self._finance

    def incidents(self) -> IncidentCounts:
        return self._incidents

    def missed(self, limit: int) -> list[tuple[str, int, int, str]]:
        """The queued cases where a plain single search would lose exact precedents, most lost first, at most
        `limit`: (case id, exact precedents, lost, the agent's action)."""
        return self._missed[:limit]


def _projection(engine: Engine) -> sa.Select:
    """Each row's case id, change count, and what it adds to the counts (the arguments of `_counted`)."""
    flags = case_flags.c.flags
    return sa.select(
        case_flags.c.case_id,
        case_flags.c.change_seq,
        _typed(engine, flags, RECALL, "object"),
        flags[(RECALL, "action")].as_string(),
        flags[(RECALL, "exact")].as_integer(),
        flags[(RECALL, "crowd_out_lost")].as_integer(),
        flags[(RECALL, "relevant")].as_integer(),
        sa.case((_typed(engine, flags, INCIDENTS, "array"), flags[INCIDENTS].as_string())),
        *(_length(engine, flags, key) for key in ("set_aside", "forged", "swung_by")),
    )


def _counted(recalled, action, exact, lost, relevant, incidents: str | None, set_aside=0, forged=0, swung=0) -> Counted:
    kinds = (
        None
        if incidents is None
        else ()
        if incidents == "[]"
        else tuple(dict.fromkeys(map(str, json.loads(incidents))))
    )
    if not recalled:
        return Counted(incidents=kinds)
    return Counted(True, action, exact, lost, relevant == 0, kinds, set_aside or 0, forged or 0, bool(swung))


def _length(engine: Engine, flags: sa.ColumnElement, key: str) -> sa.ColumnElement:
    """The length of the recall flags' list `key` (0 when the flags were written before it)."""
    if engine.dialect.name == "postgresql":
        return sa.func.coalesce(sa.func.jsonb_array_length(flags[(RECALL, key)]), 0)
    return sa.func.coalesce(sa.func.json_array_length(flags, f"$.{RECALL}.{key}"), 0)


def _typed(engine: Engine, flags: sa.ColumnElement, key: str, json_type: str) -> sa.ColumnElement:
    """Whether the flags hold `key` as a JSON `json_type` ("object", "array")."""
    if engine.dialect.name == "postgresql":
        return sa.func.coalesce(sa.func.jsonb_typeof(flags[key]) == json_type, False)
    return sa.func.coalesce(sa.func.json_type(flags, f"$.{key}") == json_type, False)
