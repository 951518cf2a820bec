"""A new review store's first catch-up with a long audit log runs off the page path (AppTest, real server): the
Overview's run ends while the read is held, the page draws from what the store holds and says how far the read has
got, the agent run's own entries are there already (read by its own time), and once the read is done the page counts
every entry, with the same incidents."""

from __future__ import annotations

import re
import threading
import time

from benches import audit_fill
from dashboard.agents import audit_sync
from dashboard.agents.runner import run_exception
from dashboard.app import audit, resources
from dashboard.store.agent_runs import AgentRunStore
from tests.conftest import PROVEN
from tests.helpers import DEMO_CASES, open_page, texts

PAGE = "views/overview.py"
ENTRIES = 600


def _until(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def _read_caption(at) -> tuple[int, int]:
    """(agent runs, recalls read from the audit log) as the incidents' caption says them."""
    caption = next(c.value for c in at.caption if "recalls read from Hindsight's audit log" in c.value)
    runs, read = re.search(r"from (\d+) agent runs and ([\d,]+) recalls read", caption).groups()
    return int(runs), int(read.replace(",", ""))


def test_the_overview_draws_while_a_new_store_reads_a_long_log_and_says_how_far(
    hindsight, point_app, demo_banks, monkeypatch
):
    gw, fin, sup = hindsight.gateway, demo_banks.finance, demo_banks.support
    for bank in (fin, sup):
        gw.enable_audit_log(bank)
    outbox = point_app(hindsight.env(finance=fin, support=sup))
    store = AgentRunStore(outbox.engine)
    case = next(c for c in DEMO_CASES if c.id == "E-1002")
    run = run_exception(
        gw, store, fin, case, "naive", PROVEN
    )  # its recalls are matched to their entries by its own time
    assert run.audit_ids and store.sync_state(fin).entries < 10
    assert (
        audit_fill.fill(hindsight.settings.pg_port, fin, ENTRIES) == ENTRIES
    )  # the bank's history: copies of its own entries
    monkeypatch.setattr(audit_sync, "PAGE", 100)  # windows of ~80 entries

    held, release = [], threading.Event()

    def reviewers_first() -> None:  # the reader's gate: its first look passes (the counts), then it waits for the test
        held.append(time.monotonic())
        if len(held) > 1:
            release.wait(300)

    reader = audit.AuditReader(resources.gateway(), resources.agent_runs(), reviewers_first)
    monkeypatch.setattr(audit, "reader", lambda: reader)
    try:
        at = open_page(PAGE, timeout=180)  # its first visit: the cases measured, the incidents checked
        assert reader.busy()  # the read was asked for and is held: the page's run did not wait for it
        _until(lambda: len(held) > 1)  # counted, waiting before its first body
        at.run()
        assert not at.exception, at.exception
        progress = [p.proto.text.replace("\\", "") for p in at.get("progress")]  # markdown-escaped text, read as shown
        line = next(t for t in progress if f"audit log of {fin}" in t)
        read, total = (
            int(n.replace(",", "")) for n in re.search(r"background: ([\d,]+) of ([\d,]+) entries", line).groups()
        )
        assert read == store.sync_state(fin).entries < 10 and total >= ENTRIES
        assert "Queue status" in texts(at)  # the page drew what it has meanwhile
        metrics = {m.label: m.value for m in at.metric}
        assert _read_caption(at) == (1, store.tally([fin, sup])[1])  # the run's own entries only, so far

        release.set()
        _until(lambda: not reader.busy(), timeout=300)
        at.run()
        assert not at.exception, at.exception
        assert not [p for p in at.get("progress") if "audit log" in p.proto.text]  # done: no progress line
        state = store.sync_state(fin)
        assert not state.catching_up and state.entries >= ENTRIES and state.caught_up_at is not None
        assert _read_caption(at) == (1, store.tally([fin, sup])[1]) and _read_caption(at)[1] >= ENTRIES
        assert {m.label: m.value for m in at.metric}["Cases with incidents"] == metrics["Cases with incidents"]
        assert reader.reports[fin].fetched == state.entries - read  # each entry read once: none the run had read
    finally:
        release.set()
        reader.stop()
