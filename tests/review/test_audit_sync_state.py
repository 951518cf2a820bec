"""How far a bank's audit log has been read, in the review store (migration 0018): entries read counted as they are
written, a cursor that never moves back, the log's count and the first catch-up's end, one reader at a time through a
lease; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import command

from dashboard.store.agent_runs import BACKLOG_SHOWN, AgentRunStore, AuditRecall, audit_recalls, audit_sync_state
from dashboard.store.db import alembic_config, upgrade

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)


def _entry(n: int, bank: str = "fin") -> AuditRecall:
    return AuditRecall(entry_id=f"{bank}-{n:05d}", bank_id=bank, started_at=T0 + timedelta(seconds=n), query=f"q{n}")


def test_entries_read_are_counted_as_written_and_the_cursor_only_moves_on(review_engine):
    store = AgentRunStore(review_engine)
    assert store.sync_state("fin").entries == 0 and store.sync_state("fin").log_entries is None
    assert store.record_read("fin", [_entry(n) for n in range(5)], log_entries=12) == 5
    assert store.record_read("fin", [_entry(n) for n in range(3, 8)], until=_entry(7).started_at) == 3  # 3 and 4 known
    state = store.sync_state("fin")
    assert (state.entries, state.log_entries, state.synced_until, state.caught_up_at) == (
        8,
        12,
        _entry(7).started_at,
        None,
    )
    assert state.catching_up and state.behind == 4
    store.record_read("fin", [], until=_entry(2).started_at)  # an overlap read again: the cursor stays
    assert store.synced_until("fin") == _entry(7).started_at
    store.record_read("fin", [_entry(n) for n in range(8, 12)], until=_entry(11).started_at, caught_up=True)
    state = store.sync_state("fin")
    assert (state.entries, state.behind, state.catching_up) == (12, 0, False) and state.caught_up_at is not None
    # after the first catch-up, a few entries behind are not a catch-up a page waits for; a large backlog is
    store.record_read("fin", [], log_entries=12 + 40)
    assert not store.sync_state("fin").catching_up
    store.record_read("fin", [], log_entries=12 + BACKLOG_SHOWN)
    assert store.sync_state("fin").catching_up
    assert store.tally(["fin", "sup"]) == (0, 12)  # from the counter: the rows themselves are not counted
    with review_engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(audit_recalls)).scalar_one() == 12


def test_one_reader_at_a_time_and_a_dead_readers_lease_runs_out(review_engine):
    store = AgentRunStore(review_engine)
    now = datetime.now(UTC)
    assert store.take_lease("fin", "a", now + timedelta(seconds=60), now)
    assert store.take_lease("fin", "a", now + timedelta(seconds=120), now)  # renewed by its holder
    assert not store.take_lease("fin", "b", now + timedelta(seconds=60), now)
    assert store.take_lease("sup", "b", now + timedelta(seconds=60), now)  # another bank
    assert store.take_lease("fin", "b", now + timedelta(seconds=300), now + timedelta(seconds=121))  # a's ran out
    store.release_lease("fin", "a")  # not a's any more: nothing changes
    assert store.sync_state("fin").reader == "b"
    store.release_lease("fin", "b")
    assert store.take_lease("fin", "a", now + timedelta(seconds=60), now)


def test_the_migration_counts_what_the_store_holds_and_downgrades(review_engine):
    store = AgentRunStore(review_engine)
    store.record_read("fin", [_entry(n) for n in range(6)], until=_entry(5).started_at)
    store.record_read("sup", [_entry(n, "sup") for n in range(3)])  # entries, no cursor: a read that never finished
    config = alembic_config(review_engine)
    command.downgrade(config, "0017_person_ids")
    with review_engine.begin() as conn:
        assert "log_entries" not in {c["name"] for c in sa.inspect(conn).get_columns("audit_sync_state")}
        conn.execute(sa.text("UPDATE audit_sync_state SET entries = 99 WHERE bank_id = 'fin'"))  # a count gone wrong
        conn.execute(sa.text("DELETE FROM audit_sync_state WHERE bank_id = 'sup'"))
    command.upgrade(config, "head")
    upgrade(review_engine)  # idempotent
    fin, sup = store.sync_state("fin"), store.sync_state("sup")
    assert (fin.entries, fin.synced_until, fin.caught_up_at) == (6, _entry(5).started_at, _entry(5).started_at)
    assert (sup.entries, sup.synced_until) == (3, _entry(2, "sup").started_at)
    with review_engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(audit_sync_state)).scalar_one() == 2
