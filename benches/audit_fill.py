"""A bank's audit log filled to a length, fast: copies of its own real recall entries inserted into the embedded
server's `audit_log` table (hindsight-api 1.1.0, migration c2d3e4f5g6h7), for the benches and the tests.

Each copy is a real row of the same bank (its request, its response with the bank's own memory ids and texts, its
transport and metadata, its duration) under a new id, dated before the oldest entry the bank has, one every
`step` apart: the history of an older bank, in the shape the server writes it. 100,000 entries take ~30 s here,
where as many real recalls take ~2 hours. Only the embedded server's database can be reached this way; the
bank needs at least one real recall entry to copy (`ensure_real_entries` makes a few).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

BATCH = 20_000  # rows per INSERT: one transaction each, so an interrupted fill keeps what it wrote


def _connect(pg_port: int):
    import psycopg

    from dashboard.hindsight.embedded import HOST, PG_DATABASE, PG_PASSWORD, PG_USER

    return psycopg.connect(f"postgresql://{PG_USER}:{PG_PASSWORD}@{HOST}:{pg_port}/{PG_DATABASE}", autocommit=True)


def recall_entries(pg_port: int, bank_id: str) -> int:
    """How many recall entries the bank's audit log holds (the server's table, counted)."""
    with _connect(pg_port) as conn:
        return conn.execute(
            "SELECT count(*) FROM audit_log WHERE bank_id = %s AND action = 'recall'", (bank_id,)
        ).fetchone()[0]


def ensure_real_entries(gateway, bank_id: str, queries: list[tuple[str, list[str], str]], wait_s: float = 30.0) -> None:
    """Real recalls of `queries` ((query, tags, tags_match)) so the log has rows to copy; waits until they are written
    (audit writes are fire-and-forget)."""
    import time

    if gateway.list_audit_entries(bank_id, limit=1).get("total", 0) >= len(queries):
        return
    for query, tags, tags_match in queries:
        gateway.recall(bank_id, query, tags=tags, tags_match=tags_match)
    deadline = time.monotonic() + wait_s
    while gateway.list_audit_entries(bank_id, limit=1).get("total", 0) < len(queries) and time.monotonic() < deadline:
        time.sleep(0.2)


def fill(
    pg_port: int,
    bank_id: str,
    entries: int,
    *,
    step: timedelta = timedelta(seconds=30),
    log: Callable[[str], None] = lambda _m: None,
) -> int:
    """Copies of the bank's real recall entries until its log holds `entries` recall entries (none removed when it holds
    more); returns how many it holds. The copies are older than every entry it had, `step` apart."""
    with _connect(pg_port) as conn:
        have, oldest = conn.execute(
            "SELECT count(*), min(started_at) FROM audit_log WHERE bank_id = %s AND action = 'recall'", (bank_id,)
        ).fetchone()
        missing = entries - have
        if missing <= 0:
            return have
        if have == 0:
            raise ValueError(f"{bank_id}: no recall entry in its audit log to copy (turn the log on and recall once)")
        conn.execute(
            "CREATE TEMP TABLE audit_templates AS SELECT row_number() OVER (ORDER BY started_at, id) - 1 AS i, action, transport,"
            " request, response, metadata, coalesce(ended_at - started_at, interval '0') AS took"
            " FROM audit_log WHERE bank_id = %s AND action = 'recall'",
            (bank_id,),
        )
        for start in range(0, missing, BATCH):
            end = min(missing, start + BATCH)
            # g counts back from the oldest entry: g = missing is the oldest copy, g = 1 the newest
            conn.execute(
                "INSERT INTO audit_log (id, action, transport, bank_id, started_at, ended_at, request, response, metadata)"
                " SELECT gen_random_uuid(), t.action, t.transport, %(bank)s, %(oldest)s - g * %(step)s,"
                " %(oldest)s - g * %(step)s + t.took, t.request, t.response, t.metadata"
                " FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g JOIN audit_templates t ON t.i = g %% %(have)s::bigint",
                {"bank": bank_id, "oldest": oldest, "step": step, "lo": start + 1, "hi": end, "have": have},
            )
            log(f"  {bank_id}: {have + end:,} of {entries:,} recall entries")
        conn.execute("DROP TABLE audit_templates")
        conn.execute("ANALYZE audit_log")
    return recall_entries(pg_port, bank_id)
