"""Hindsight's audit log read into the review store forward from a cursor, on the real server: a new store reads every
entry once, the same as reading the whole log did; later reads fetch only the entries written since; a read stopped
halfway goes on where it stopped; an agent run reads the entries of its own time, never the log from its start.
The logs are made long by copies of their own real entries (benches/audit_fill.py), as the bench makes them."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import datetime

import pytest

from benches import audit_fill
from dashboard.agents import audit_sync
from dashboard.agents.audit_sync import OVERLAP, project_entry, sync_bank
from dashboard.agents.runner import run_exception
from dashboard.cli.seed import finance_records
from dashboard.finance.models import ExceptionCase
from dashboard.queue_files import load_rows
from dashboard.settings import load_settings
from dashboard.store.agent_runs import AgentRunStore
from dashboard.store.db import make_engine
from tests.conftest import PROVEN, forget_banks, seeded

QUERIES = [
    ("price variance for vendor V02", ["vendor:V02", "type:price_variance"], "all_strict"),
    ("duplicate invoice vendor V01", ["vendor:V01"], "any_strict"),
    ("tax mismatch on an invoice", [], "any"),
]


class Counting:
    """The gateway, with every list request's parameters and every body read kept."""

    def __init__(self, gateway):
        self._gateway, self.lists, self.bodies = gateway, [], []

    def __getattr__(self, name):
        return getattr(self._gateway, name)

    def list_audit_entries(self, bank_id, **params):
        self.lists.append(params)
        return self._gateway.list_audit_entries(bank_id, **params)

    def audit_entry(self, bank_id, entry_id):
        self.bodies.append(entry_id)
        return self._gateway.audit_entry(bank_id, entry_id)


def _wait_for_entries(gw, bank: str, total: int) -> None:
    deadline = time.monotonic() + 30
    while gw.list_audit_entries(bank, action="recall", limit=1)["total"] < total and time.monotonic() < deadline:
        time.sleep(0.2)  # audit writes are fire-and-forget


def _full_read(gw, bank: str) -> dict[str, dict]:
    """The whole log read as the sync read it before: every listed entry, newest first, each body projected."""
    items, offset = [], 0
    while True:
        page = gw.list_audit_entries(bank, action="recall", limit=500, offset=offset)
        items += page["items"]
        offset += 500
        if offset >= page["total"]:
            break
    return {i["id"]: project_entry(gw.audit_entry(bank, i["id"])).model_dump(mode="json") for i in items}


def _stored(store: AgentRunStore, bank: str) -> dict[str, dict]:
    return {e.entry_id: e.model_dump(mode="json") for e in store.entries(bank)}


def _long_log(server) -> Iterator[str]:
    """A bank of ten precedents whose audit log holds 300 recall entries: three real ones, the rest their copies,
    30 s apart before them (a bank with a history)."""
    gw = server.gateway
    bank = f"test-long-log-{uuid.uuid4().hex[:8]}"
    # signed as the seed's: records of unknown origin make an agent's run ask the server about bursts, recalls that
    # the audit log would hold too (hindsight/write_facts.py)
    gw.retain(bank, [seeded(r) for r in finance_records()[:10]])
    gw.enable_audit_log(bank)
    audit_fill.ensure_real_entries(gw, bank, QUERIES)
    assert audit_fill.fill(server.settings.pg_port, bank, 300) == 300
    yield bank
    forget_banks(server, bank)


@pytest.fixture
def long_log(hindsight):
    """The long log on the verbatim server: how the log is read (windows, cursor, bodies) is the same on both."""
    yield from _long_log(hindsight)


@pytest.fixture
def live_long_log(live):
    """The long log on each server mode: what a recall returned differs (extracting: facts and observations rewritten
    from the documents, not the texts as retained), so its projection is checked on both."""
    yield from _long_log(live)


def test_a_new_store_reads_each_entry_once_and_holds_what_a_full_read_holds(live, live_long_log, tmp_path, monkeypatch):
    monkeypatch.setattr(audit_sync, "PAGE", 40)  # windows of ~32 entries: the 300 are read in about ten
    gw = Counting(live.gateway)
    store = AgentRunStore(make_engine(None, tmp_path / "a"))
    report = sync_bank(gw, store, live_long_log)
    assert (report.added, report.fetched, report.log_entries, report.caught_up) == (300, 300, 300, True)
    assert set(Counter(gw.bodies).values()) == {1}  # each body read once
    assert report.windows >= 300 // 40 and all(p.get("limit", 0) <= 40 for p in gw.lists)
    assert sum(1 for p in gw.lists if p.get("offset")) <= 1  # the oldest entry's time, once: never paged by offset
    state = store.sync_state(live_long_log)
    assert (state.entries, state.log_entries, state.catching_up) == (300, 300, False) and state.caught_up_at is not None
    assert _stored(store, live_long_log) == _full_read(live.gateway, live_long_log)  # what the old full read gave
    # what each recall returned, as documents of the bank (extracting: the documents its facts came from), the
    # copies as their originals: nothing for V02's exact pass (none of the ten is one), every document for the others
    documents = {r.document_id for r in finance_records()[:10]}
    returned = {(e.query, frozenset(r.document_id for r in e.results)) for e in store.entries(live_long_log)}
    assert returned == {
        ("price variance for vendor V02", frozenset()),
        ("duplicate invoice vendor V01", frozenset(documents)),
        ("tax mismatch on an invoice", frozenset(documents)),
    }
    assert store.tally([live_long_log]) == (0, 300)


def test_later_reads_fetch_only_the_entries_written_since(hindsight, long_log, tmp_path):
    store = AgentRunStore(make_engine(None, tmp_path / "a"))
    sync_bank(hindsight.gateway, store, long_log)
    cursor = store.synced_until(long_log)
    for query, tags, mode in QUERIES[:2]:
        hindsight.gateway.recall(long_log, f"{query} again", tags=tags, tags_match=mode)
    _wait_for_entries(hindsight.gateway, long_log, 302)
    gw = Counting(hindsight.gateway)
    report = sync_bank(gw, store, long_log)
    new = {i["id"] for i in hindsight.gateway.list_audit_entries(long_log, action="recall", limit=2)["items"]}
    assert set(gw.bodies) == new and report.added == 2  # the two new bodies, nothing of the 300 before
    # every request (its count too) covers the time from the cursor on: what is new, not the log's 300
    assert gw.lists and all(datetime.fromisoformat(p["start"]) >= cursor - OVERLAP for p in gw.lists if p.get("start"))
    assert all(p.get("start") for p in gw.lists)
    assert report.listed < 300 and not any(p.get("offset") for p in gw.lists)
    assert store.sync_state(long_log).entries == 302
    gw.bodies.clear()
    assert sync_bank(gw, store, long_log).fetched == 0 and gw.bodies == []  # nothing new: no body read


def test_a_read_stopped_halfway_goes_on_where_it_stopped(hindsight, long_log, tmp_path, monkeypatch):
    monkeypatch.setattr(audit_sync, "PAGE", 40)
    gw = Counting(hindsight.gateway)
    store = AgentRunStore(make_engine(None, tmp_path / "b"))
    windows = iter(range(3))
    first = sync_bank(gw, store, long_log, keep_going=lambda: next(windows, None) is not None)  # stops at the third
    state = store.sync_state(long_log)
    assert 0 < state.entries < 300 and state.catching_up and state.synced_until is not None
    assert first.added == state.entries and not first.caught_up
    rest = sync_bank(gw, store, long_log)
    assert first.fetched + rest.fetched == 300 and set(Counter(gw.bodies).values()) == {1}  # no body read twice
    assert store.sync_state(long_log).entries == 300 and not store.sync_state(long_log).catching_up
    full = AgentRunStore(make_engine(None, tmp_path / "full"))
    sync_bank(hindsight.gateway, full, long_log)
    assert _stored(store, long_log) == _stored(full, long_log)


def test_an_agent_run_reads_the_entries_of_its_own_time_not_the_log(hindsight, long_log, tmp_path):
    gw = Counting(hindsight.gateway)
    store = AgentRunStore(make_engine(None, tmp_path / "c"))
    case = next(c for c in load_rows(load_settings().exceptions_file, ExceptionCase) if c.id == "E-1001")
    run = run_exception(gw, store, long_log, case, "reviewed", origin=PROVEN)
    assert run.audit_log and len(run.audit_ids) == len(run.recalls)  # every recall matched to its entry
    assert set(run.audit_ids) <= set(gw.bodies) and len(gw.bodies) < 10  # its own time's few, not the 300 before
    lo, hi = run.started_at - audit_sync.RUN_MARGIN, run.ended_at + audit_sync.RUN_MARGIN
    assert all(
        lo <= store.entry(i).started_at <= hi for i in gw.bodies
    )  # (the fixture's real recalls may be among them)
    assert store.sync_state(long_log).entries == len(set(gw.bodies))
    assert all(store.entry(i) is not None for i in run.audit_ids)
