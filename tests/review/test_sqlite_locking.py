"""The SQLite review store: a read never waits for a writer (WAL, deferred BEGIN), and writers queue at BEGIN IMMEDIATE,
so a transaction never fails halfway upgrading its lock (dashboard/store/db.py)."""

import threading
import time

import sqlalchemy as sa

from dashboard.store.db import sqlite_engine


def test_a_read_during_a_write_answers_at_once_with_what_was_committed(tmp_path):
    engine = sqlite_engine(tmp_path / "store.sqlite3")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE t (x INTEGER)"))
    with engine.begin() as writer:  # holds the write lock
        writer.execute(sa.text("INSERT INTO t VALUES (1)"))
        started = time.monotonic()
        with engine.connect() as reader:
            assert reader.execute(sa.text("SELECT count(*) FROM t")).scalar_one() == 0
        assert time.monotonic() - started < 5  # it did not wait for the busy timeout (30 s)
    with engine.connect() as reader:
        assert reader.execute(sa.text("SELECT count(*) FROM t")).scalar_one() == 1


def test_writers_queue_at_begin_and_each_read_then_write_lands(tmp_path):
    engine = sqlite_engine(tmp_path / "store.sqlite3")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE t (x INTEGER)"))

    def read_then_write() -> None:  # the shape that deadlocks when two deferred transactions upgrade at once
        with engine.begin() as conn:
            n = conn.execute(sa.text("SELECT count(*) FROM t")).scalar_one()
            time.sleep(0.05)
            conn.execute(sa.text("INSERT INTO t VALUES (:n)"), {"n": n})

    threads = [threading.Thread(target=read_then_write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with engine.connect() as conn:
        assert sorted(conn.execute(sa.text("SELECT x FROM t")).scalars()) == [0, 1, 2, 3]  # each saw the one before
