"""The review store's engine: SQLite in the data directory by default, PostgreSQL for a team.

`RECALL_REVIEW_DATABASE_URL=postgresql+psycopg://user:pass@host/db` makes every instance share one
store; without it each instance keeps `<data_dir>/review.sqlite3` (WAL, foreign keys on). The schema
is owned by Alembic (`dashboard/store/migrations/`); `upgrade(engine)` brings a store to head.
No Streamlit here.
"""

from __future__ import annotations

import weakref
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, MetaData, create_engine, event

# Every table of the review store (and of the rooms that add their own) registers here.
metadata = MetaData()

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_FILE = "review.sqlite3"


def as_utc(value: datetime | None) -> datetime | None:
    """A datetime read back from the store, zoned: SQLite hands them back naive, and everything stored is UTC."""
    return value if value is None or value.tzinfo else value.replace(tzinfo=UTC)


def make_engine(url: str | None, data_dir: Path) -> Engine:
    """The store's engine: `url` (a SQLAlchemy URL) or, when None/empty, the SQLite file in `data_dir`."""
    if url:
        return create_engine(url, pool_pre_ping=True)
    return sqlite_engine(data_dir / SQLITE_FILE)


class _SQLiteConnection(Connection):
    """Tells a read from a write at BEGIN: a transaction the first statement of `engine.connect()` began (autobegin) is
    a read; one begun explicitly (`engine.begin()`, `conn.begin()`) a write."""

    reading = False

    def _autobegin(self) -> None:
        self.reading = True
        try:
            super()._autobegin()
        finally:
            self.reading = False


def sqlite_engine(path: Path) -> Engine:
    """A SQLite store in one file: WAL, synchronous writes, foreign keys, writers queued at BEGIN, readers never."""
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 30})
    engine._connection_cls = _SQLiteConnection  # SQLAlchemy's hook for the class `connect()` makes

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record) -> None:
        # pysqlite's own transaction handling is switched off so BEGIN IMMEDIATE (below) takes the write lock.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")  # a confirmed decision survives a power cut
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:
        # Writers queue on the database lock at BEGIN, not halfway through (no upgrade deadlocks). Readers begin deferred:
        # in WAL mode they wait for no writer and no other reader. (All BEGIN IMMEDIATE, eight reviewers' page runs
        # queued one by one on the lock for their reads, in SQLite's busy sleeps of up to 100 ms.)
        connection.exec_driver_sql("BEGIN" if getattr(connection, "reading", False) else "BEGIN IMMEDIATE")

    return engine


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


_upgraded: weakref.WeakSet[Engine] = weakref.WeakSet()


def upgrade(engine: Engine) -> None:
    """Run Alembic `upgrade head` on this store (idempotent; safe to call at every start), once per engine."""
    if engine in _upgraded:
        return
    command.upgrade(alembic_config(engine), "head")
    _upgraded.add(engine)
