"""The cases whose agent runs had incidents, as the per-case flags keep them: the kinds (flag_counts.INCIDENTS) and
the agent variants whose runs had them (VARIANTS), both written by the Incidents check (agents/findings.py). No
Streamlit.

The Overview says what went wrong and where from these rows, so it needs the cases, not only their count. Cases with
incidents are few; the first read takes only them, later reads only the rows written since (each row carries the
table's change count, migration 0013), so a queue of 100,000 recalled cases is not read on every run. A delete moves
another counter: then they are read again.
"""

from __future__ import annotations

import json
import threading
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy import Engine

from dashboard.review.flag_counts import DELETED, INCIDENTS
from dashboard.store.schema import case_flags, log_versions

VARIANTS = "incident_variants"  # the flags key: the variants of the agent runs that had the case's incidents


class StoredIncidents(NamedTuple):
    case_id: str
    kinds: tuple[str, ...]
    variants: tuple[str, ...]  # () when the check that wrote the kinds did not say (written before VARIANTS was)


class _Kept(NamedTuple):
    deleted: int
    change_seq: int
    cases: dict[str, StoredIncidents]


def _strings(text: str | None) -> tuple[str, ...]:
    """A JSON list of strings as the database hands it out (text); anything else is no list."""
    value = json.loads(text) if text else None
    return tuple(dict.fromkeys(map(str, value))) if isinstance(value, list) else ()


class IncidentCases:
    """The cases with incidents of each bank and kind, kept per process. Shared by every session (a lock)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._kept: dict[tuple[str, str], _Kept] = {}
        self._lock = threading.Lock()

    def read(self, bank_id: str, case_kind: str) -> dict[str, StoredIncidents]:
        """case id -> its incident kinds and the variants behind them, for the cases with at least one incident."""
        flags = case_flags.c.flags
        columns = (
            case_flags.c.case_id,
            case_flags.c.change_seq,
            flags[INCIDENTS].as_string(),
            flags[VARIANTS].as_string(),
        )
        mine = (case_flags.c.bank_id == bank_id, case_flags.c.case_kind == case_kind)
        with self._lock, self.engine.connect() as conn:
            deleted = conn.execute(sa.select(log_versions.c.version).where(log_versions.c.log == DELETED)).scalar_one()
            kept = self._kept.get((bank_id, case_kind))
            if (
                kept is None or kept.deleted != deleted
            ):  # the first read: only the rows with an incident (JSON text "[]": none)
                # read before the rows: a row written in between is read again next time, never missed
                top = conn.execute(sa.select(sa.func.max(case_flags.c.change_seq)).where(*mine)).scalar_one()
                query = sa.select(*columns).where(
                    *mine, flags[INCIDENTS].as_string().isnot(None), flags[INCIDENTS].as_string() != "[]"
                )
                kept = _Kept(deleted, -1 if top is None else top, {})
            else:  # every row written since: an incident may have gone
                query = sa.select(*columns).where(*mine, case_flags.c.change_seq > kept.change_seq)
            cases, newest = dict(kept.cases), kept.change_seq
            for case_id, change_seq, kinds, variants in conn.execute(query):
                newest = max(newest, change_seq)
                found = StoredIncidents(case_id, _strings(kinds), _strings(variants))
                if found.kinds:
                    cases[case_id] = found
                else:
                    cases.pop(case_id, None)
            kept = _Kept(deleted, newest, cases)
            self._kept[(bank_id, case_kind)] = kept
        return dict(kept.cases)
