"""Answers read from the decision log, kept while the log's version stays. No Streamlit.

The version is a row the database moves on every change of the log and its approval steps (migration 0009), so a
decision made on another instance, a delivery or a row deleted by hand are all seen at the next read.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType

import sqlalchemy as sa
from sqlalchemy import Engine

from dashboard.store.schema import decisions, log_versions


def log_version(conn: sa.Connection) -> int:
    """The decision log's version (its approval steps included), moved by the database on every change: what was
    read under one version is still true while it stays."""
    return conn.execute(sa.select(log_versions.c.version).where(log_versions.c.log == decisions.name)).scalar_one()


class KeptUntilTheLogChanges:
    """Answers read from the decision log, kept per key while the log's version stays: a queue page asks the same
    questions on every run, and one primary-key read says whether a kept answer still holds. The version is read
    before the answer, so a write in between moves it and the next call reads again. Shared read-only."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._kept: dict[Hashable, tuple[int, Mapping | tuple]] = {}

    def get(self, key: Hashable, read: Callable[[], Mapping | tuple]) -> Mapping | tuple:
        with self.engine.connect() as conn:
            version = log_version(conn)
        kept = self._kept.get(key)
        if kept is not None and kept[0] == version:
            return kept[1]
        answer = read()
        if isinstance(answer, dict):
            answer = MappingProxyType(answer)
        self._kept[key] = (version, answer)
        return answer
