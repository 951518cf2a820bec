"""Several instances on one PostgreSQL review store: every decision reaches Hindsight exactly once, through
an outage in the middle. Two app processes (each submitting and running its worker thread) and two
`python -m dashboard worker` processes share the store; they reach the session's Hindsight through a path
the test cuts while decisions keep coming, and restores (tests/outage.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.store.db import make_engine
from tests.conftest import review_database
from tests.outage import Outage

ROOT = Path(__file__).resolve().parents[2]
PER_APP = 40


def _spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _all_memories(gateway: HindsightGateway, bank: str) -> list[dict]:
    items, offset = [], 0
    while True:
        page = gateway.list_memories(bank, limit=100, offset=offset)["items"]
        items += page
        if len(page) < 100:
            return items
        offset += 100


def test_two_apps_and_two_workers_deliver_80_decisions_exactly_once_through_an_outage(hindsight, bank_id):
    bank, gateway = bank_id, hindsight.gateway
    with review_database(hindsight.settings) as url, Outage(hindsight.settings.base_url) as path:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "RECALL_REVIEW_DATABASE_URL": url, "HINDSIGHT_API_URL": path.url}
        engine = make_engine(url, hindsight.settings.data_dir)
        store = Outbox(engine)
        apps = [
            _spawn(["tests.review_app_process", url, bank, str(1 + n * PER_APP), str(PER_APP)], env) for n in range(2)
        ]
        workers = [_spawn(["dashboard", "worker", "--idle", "0.2"], env) for _ in range(2)]
        try:
            _wait(lambda: len(store.history()) >= PER_APP // 2, 120, "the first decisions")
            path.down()  # Hindsight goes out of reach in the middle; the apps keep recording
            _wait(lambda: len(store.history()) >= PER_APP + PER_APP // 2, 120, "decisions recorded during the outage")
            assert store.pending_count() > 0
            path.up()
            store.retry_now()  # what "Deliver now" does; otherwise the backoff decides when
            outputs = [app.communicate(timeout=300)[0] for app in apps]
            _wait(lambda: store.pending_count() == 0, 120, "every decision delivered")
        finally:
            for worker in workers:
                worker.send_signal(signal.SIGTERM)
            worker_outputs = [worker.communicate(timeout=60)[0] for worker in workers]
            for proc in apps:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        history = store.history()
        engine.dispose()

    reports = [json.loads(out.strip().splitlines()[-1]) for out in outputs]
    by_workers = [int(out.strip().splitlines()[-1].rsplit(" ", 1)[1]) for out in worker_outputs]
    assert [r["recorded"] for r in reports] == [PER_APP, PER_APP]
    # Every row was sent by exactly one of the four: the sends add up to 2 * PER_APP, no more.
    assert sum(r["delivered"] for r in reports) + sum(by_workers) == 2 * PER_APP
    assert len(history) == 2 * PER_APP and {e.state for e in history} == {"delivered"}
    assert any(e.attempts > 1 for e in history)  # some rows met the outage and were retried
    memories = _all_memories(gateway, bank)
    per_document = Counter(m["document_id"] for m in memories)
    assert len(per_document) == 2 * PER_APP and set(per_document.values()) == {1}
