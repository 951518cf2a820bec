"""`python -m dashboard bench-audit`: the audit log's cost, measured against a real Hindsight.

Fills a bank's audit log with N recalls (resumable: only the missing ones are made), then measures
the incremental sync into a fresh review store (entries per second, each body fetched once), a
second sync with nothing new, and the Exceptions page's warm rerun with a case open and the agent's
recall shown beside today's (AppTest in a child process, dashboard.cli.page_timing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from dashboard.cli.registry import command

PAGE_CASE = "E-1002"


def _fill(gw, bank: str, recalls: int, log) -> int:
    from dashboard.finance.models import ExceptionCase
    from dashboard.finance.recall import CaseKey, max_tokens_for
    from dashboard.queue_files import load_rows
    from dashboard.settings import load_settings

    have = gw.list_audit_entries(bank, limit=1).get("total", 0)
    missing = max(0, recalls - have)
    log(f"{bank}: {have} recall entries in the audit log, making {missing} more")
    cases = load_rows(load_settings().exceptions_file, ExceptionCase)
    modes = ("all_strict", "any_strict")

    def job(i: int):
        case = cases[i % len(cases)]
        return lambda: gw.arecall(
            bank, f"{case.recall_query()} #{i}", tags=CaseKey.of(case).tags, tags_match=modes[i % 2], max_tokens=max_tokens_for(5)
        )

    for start in range(0, missing, 1000):
        failed = [r for r in gw.recall_many([job(have + i) for i in range(start, min(missing, start + 1000))]) if isinstance(r, BaseException)]
        if failed:
            raise RuntimeError(f"{len(failed)} recalls failed: {failed[0]}")
        log(f"  {min(missing, start + 1000)} / {missing}")
    deadline = time.monotonic() + 60
    while gw.list_audit_entries(bank, limit=1).get("total", 0) < recalls and time.monotonic() < deadline:
        time.sleep(0.5)  # audit writes are fire-and-forget
    return gw.list_audit_entries(bank, limit=1).get("total", 0)


def run(recalls: int, repeat: int, log) -> dict:
    from dashboard.cli.bench import server_running
    from dashboard.settings import load_settings

    settings = load_settings()
    with server_running(settings, log):
        return _measure(settings, recalls, repeat, log)


def _measure(settings, recalls: int, repeat: int, log) -> dict:
    from dashboard.agents.audit_sync import sync_bank
    from dashboard.agents.runner import run_exception
    from dashboard.cli.bench import time_page
    from dashboard.cli.seed import finance_records, seed_bank
    from dashboard.finance.models import ExceptionCase
    from dashboard.hindsight.gateway import HindsightGateway
    from dashboard.queue_files import load_rows
    from dashboard.review.agent_runs import AgentRunStore
    from dashboard.review.db import make_engine

    gw = HindsightGateway(settings.base_url, settings.api_key, timeout=300.0)
    figures: dict = {"recalls_in_audit_log": 0}
    try:
        bank = f"bench-audit-{recalls}"
        seed_bank(gw, bank, finance_records())
        gw.enable_audit_log(bank)
        figures["recalls_in_audit_log"] = total = _fill(gw, bank, recalls, log)
        store_dir = Path(tempfile.mkdtemp(prefix="bench-audit-store-", dir=settings.data_dir))
        store = AgentRunStore(make_engine(None, store_dir))  # the store the page opens in store_dir
        log(f"syncing {total} entries into a fresh store ...")
        started_at = time.perf_counter()
        report = sync_bank(gw, store, bank)
        seconds = time.perf_counter() - started_at
        figures.update(sync_entries=report.added, sync_s=round(seconds, 2), sync_entries_per_s=round(report.added / seconds, 1))
        started_at = time.perf_counter()
        again = sync_bank(gw, store, bank)
        figures.update(resync_nothing_new_ms=round((time.perf_counter() - started_at) * 1000, 1), resync_fetched=again.fetched)
        case = next(c for c in load_rows(settings.exceptions_file, ExceptionCase) if c.id == PAGE_CASE)
        run_exception(gw, store, bank, case, "reviewed")
        env = {**os.environ, "RECALL_REVIEW_FINANCE_BANK": bank, "RECALL_REVIEW_DATA_DIR": str(store_dir),
               "RECALL_REVIEW_API_PORT": str(settings.api_port), "RECALL_REVIEW_PG_PORT": str(settings.pg_port)}
        timing = time_page(env, PAGE_CASE, repeat)
        warm = sorted(timing["warm_ms"])
        figures.update(page_cold_ms=round(timing["cold_ms"], 1), page_warm_median_ms=round(warm[len(warm) // 2], 1),
                       page_warm_max_ms=round(warm[-1], 1))
    finally:
        gw.close()
    return figures


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--recalls", type=int, default=10_000, help="recall entries in the bank's audit log")
    parser.add_argument("--repeat", type=int, default=10, help="warm reruns of the page")
    parser.add_argument("--json", action="store_true")


@command("bench-audit", "benchmark the audit-log sync and the case page with the agent's recall shown", _args)
def run_bench_audit(args: argparse.Namespace) -> int:
    if args.recalls < 1:
        print("error: --recalls: must be at least 1", file=sys.stderr)
        return 2
    figures = run(args.recalls, args.repeat, log=lambda m: print(m, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, value in figures.items():
            print(f"{name:28} {value}")
    return 0
