"""`python -m benches audit`: the audit log's cost, measured against a real Hindsight.

Fills a bank's audit log with N recalls (resumable: only the missing ones are made), then measures
the incremental sync into a fresh review store (entries per second, each body fetched once), a
second sync with nothing new, and the Exceptions page's warm rerun with a case open and the agent's
recall shown beside today's (AppTest in a child process, dashboard.app.page_timing).

With `--audit-entries N`, the Overview instead: its page runs against demo banks whose finance audit log holds N recall
entries, side by side with the same banks fresh (a few dozen entries), each on a new review store whose flags are
measured and whose incidents were never checked (what an app started on an empty data directory has after its first
pages: the Overview's first visit then checks the incidents). Then the same on a store that has read the whole log,
with new entries written since (the incremental read). On the embedded server the log is filled by copies of the
bank's own real entries inserted into its table (benches/audit_fill.py: ~30 s for 100,000); on another server
by real recalls.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benches.registry import command

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
            bank,
            f"{case.recall_query()} #{i}",
            tags=CaseKey.of(case).tags,
            tags_match=modes[i % 2],
            max_tokens=max_tokens_for(5),
        )

    for start in range(0, missing, 1000):
        failed = [
            r
            for r in gw.recall_many([job(have + i) for i in range(start, min(missing, start + 1000))])
            if isinstance(r, BaseException)
        ]
        if failed:
            raise RuntimeError(f"{len(failed)} recalls failed: {failed[0]}")
        log(f"  {min(missing, start + 1000)} / {missing}")
    deadline = time.monotonic() + 60
    while gw.list_audit_entries(bank, limit=1).get("total", 0) < recalls and time.monotonic() < deadline:
        time.sleep(0.5)  # audit writes are fire-and-forget
    return gw.list_audit_entries(bank, limit=1).get("total", 0)


def run(recalls: int, repeat: int, log) -> dict:
    from benches.recall import server_running
    from dashboard.settings import load_settings

    settings = load_settings()
    with server_running(settings, log):
        return _measure(settings, recalls, repeat, log)


def _measure(settings, recalls: int, repeat: int, log) -> dict:
    from benches.recall import time_page
    from dashboard.agents.audit_sync import sync_bank
    from dashboard.agents.runner import run_exception
    from dashboard.cli.seed import finance_records, seed_bank
    from dashboard.finance.models import ExceptionCase
    from dashboard.hindsight.gateway import HindsightGateway
    from dashboard.queue_files import load_rows
    from dashboard.store.agent_runs import AgentRunStore
    from dashboard.store.db import make_engine

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
        figures.update(
            sync_entries=report.added, sync_s=round(seconds, 2), sync_entries_per_s=round(report.added / seconds, 1)
        )
        started_at = time.perf_counter()
        again = sync_bank(gw, store, bank)
        figures.update(
            resync_nothing_new_ms=round((time.perf_counter() - started_at) * 1000, 1), resync_fetched=again.fetched
        )
        case = next(c for c in load_rows(settings.exceptions_file, ExceptionCase) if c.id == PAGE_CASE)
        run_exception(gw, store, bank, case, "reviewed")
        env = {
            **os.environ,
            "RECALL_REVIEW_FINANCE_BANK": bank,
            "RECALL_REVIEW_DATA_DIR": str(store_dir),
            "RECALL_REVIEW_API_PORT": str(settings.api_port),
            "RECALL_REVIEW_PG_PORT": str(settings.pg_port),
        }
        timing = time_page(env, PAGE_CASE, repeat)
        warm = sorted(timing["warm_ms"])
        figures.update(
            page_cold_ms=round(timing["cold_ms"], 1),
            page_warm_median_ms=round(warm[len(warm) // 2], 1),
            page_warm_max_ms=round(warm[-1], 1),
        )
    finally:
        gw.close()
    return figures


NEW_SINCE = 20  # recalls made before each run on the caught-up store: what its forward read has to read
SIDES = ("fresh", "long, new store", "long, caught up")


def _settings_for(settings, finance: str, support: str, data_dir: Path):
    from dashboard.settings import Settings

    return Settings(**{**settings.model_dump(), "finance_bank": finance, "support_bank": support, "data_dir": data_dir})


def _downgraded_to(app_root: Path, data_dir: Path) -> None:
    """The store in `data_dir` brought down to the migrations of the checkout at `app_root` (an older commit's app)."""
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from dashboard.store.db import alembic_config, make_engine

    config = Config()
    config.set_main_option("script_location", str(app_root / "dashboard" / "store" / "migrations"))
    engine = make_engine(None, data_dir)
    try:
        command.downgrade(alembic_config(engine), ScriptDirectory.from_config(config).get_current_head())
    finally:
        engine.dispose()


def _overview_child(env: dict[str, str], repeat: int, audit_wait: float | None, app_root: Path | None) -> dict:
    argv = [sys.executable, "-m", "dashboard.app.page_timing", "views/overview.py", "--repeat", str(max(3, repeat))]
    if audit_wait is not None:
        argv += ["--audit-wait", str(audit_wait)]
    if app_root is not None:
        env = {**env, "PYTHONPATH": str(app_root)}
    child = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=7200, cwd=app_root, check=False)
    lines = child.stdout.strip().splitlines()
    timing = json.loads(lines[-1]) if lines else {}
    if child.returncode != 0 or "warm_ms" not in timing:
        raise RuntimeError(f"the Overview failed: {timing.get('error') or child.stderr[-2000:]}")
    return timing


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")


def overview(entries: int, runs: int, repeat: int, log, *, catch_up: bool = True, app_root: Path | None = None) -> dict:
    from benches.recall import server_running
    from dashboard.settings import load_settings

    settings = load_settings()
    with server_running(settings, log):
        return _overview(settings, entries, runs, repeat, log, catch_up, app_root)


def _overview(settings, entries: int, runs: int, repeat: int, log, catch_up: bool, app_root: Path | None) -> dict:
    import shutil

    from benches import audit_fill
    from dashboard.agents.audit_sync import sync_bank
    from dashboard.cli.seed import finance_records, seed_bank, seed_flags, support_records
    from dashboard.hindsight.gateway import HindsightGateway
    from dashboard.store.agent_runs import AgentRunStore
    from dashboard.store.db import make_engine

    gw = HindsightGateway(settings.base_url, settings.api_key, timeout=300.0)
    work = Path(tempfile.mkdtemp(prefix="bench-audit-overview-", dir=settings.data_dir))
    fresh = (
        f"bench-ov-fresh-{os.getpid()}"  # new banks each time, deleted after: their logs hold only this bench's recalls
    )
    pairs = {
        "fresh": (f"{fresh}-finance", f"{fresh}-support"),
        "long": (f"bench-ov-{entries}-finance", f"bench-ov-{entries}-support"),
    }
    figures: dict = {"audit_entries": entries, "runs": runs, "app": str(app_root) if app_root else "this checkout"}
    try:
        templates = {}
        for name, (fin, sup) in pairs.items():
            seed_bank(gw, fin, finance_records())
            seed_bank(gw, sup, support_records())
            for bank in (fin, sup):
                gw.enable_audit_log(bank)
            templates[name] = work / f"{name}-flags"
            log(f"{name}: the flags of {fin} and {sup} measured into a new store (the incidents never checked) ...")
            seed_flags(gw, _settings_for(settings, fin, sup, templates[name]), log=log, incidents=False)
        fin = pairs["long"][0]
        audit_fill.ensure_real_entries(gw, fin, [("price variance", [], "any")])
        if settings.embedded:
            log(
                f"{fin}: filling its audit log to {entries:,} recall entries (copies of its own, into the server's table) ..."
            )
            filled = audit_fill.fill(settings.pg_port, fin, entries, log=log)
        else:
            log(f"{fin}: an external server: filling its audit log by real recalls (slow) ...")
            filled = _fill(gw, fin, entries, log)
        figures["log_entries"] = {
            bank: gw.list_audit_entries(bank, action="recall", limit=1).get("total", 0)
            for pair in pairs.values()
            for bank in pair
        }
        log(f"recall entries in the logs: {figures['log_entries']} ({filled:,} in {fin})")
        sides = {
            "fresh": (pairs["fresh"], templates["fresh"], 120.0),
            "long, new store": (pairs["long"], templates["long"], 30.0),
        }
        if catch_up:
            caught = work / "long-caught-up"
            shutil.copytree(templates["long"], caught)
            store = AgentRunStore(make_engine(None, caught))
            log(
                f"reading the whole log of {' and '.join(pairs['long'])} into a store (the catch-up, in this process) ..."
            )
            started = time.perf_counter()
            read = [0]

            def said(added: int) -> None:
                read[0] += added
                if read[0] // 10_000 != (read[0] - added) // 10_000:
                    log(f"  {read[0]:,} entries read")

            reports = [sync_bank(gw, store, bank, progress=said) for bank in pairs["long"]]
            seconds = time.perf_counter() - started
            added = sum(r.added for r in reports)
            started = time.perf_counter()
            again = [sync_bank(gw, store, bank) for bank in pairs["long"]]
            figures.update(
                catch_up_entries=added,
                catch_up_s=round(seconds, 1),
                catch_up_entries_per_s=round(added / seconds, 1),
                catch_up_windows=sum(r.windows for r in reports),
                nothing_new_ms=round((time.perf_counter() - started) * 1000, 1),
                nothing_new_fetched=sum(r.fetched for r in again),
            )
            store.engine.dispose()
            sides["long, caught up"] = (pairs["long"], caught, 60.0)
        samples: dict[str, list[dict]] = {side: [] for side in sides}
        for run in range(runs):
            for side, ((fin, sup), template, wait) in sides.items():
                if side == "long, caught up":  # new entries since the store's cursor: the forward read has them to read
                    for i in range(NEW_SINCE):
                        gw.recall(
                            fin,
                            f"price variance for vendor V0{i % 9 + 1} #{run}-{i}",
                            tags=[f"vendor:V0{i % 9 + 1}"],
                            tags_match="any_strict",
                        )
                data_dir = work / f"run-{run}-{side.replace(' ', '-').replace(',', '')}"
                shutil.copytree(template, data_dir)
                if app_root is not None:
                    _downgraded_to(app_root, data_dir)
                env = {
                    **os.environ,
                    "RECALL_REVIEW_FINANCE_BANK": fin,
                    "RECALL_REVIEW_SUPPORT_BANK": sup,
                    "RECALL_REVIEW_DATA_DIR": str(data_dir),
                    "RECALL_REVIEW_API_PORT": str(settings.api_port),
                    "RECALL_REVIEW_PG_PORT": str(settings.pg_port),
                    "RECALL_REVIEW_PREFETCH": "false",
                }
                timing = _overview_child(env, repeat, None if app_root else wait, app_root)
                samples[side].append(timing)
                read = timing.get("audit", {}).get(fin, {})
                log(
                    f"  run {run + 1}, {side}: first visit {timing['cold_ms'] / 1000:.2f} s, warm {_median(timing['warm_ms']) / 1000:.2f} s"
                    + (
                        f", {read.get('entries', 0):,} of {read.get('log_entries') or 0:,} entries of {fin} read by then"
                        if read
                        else ""
                    )
                )
        for side, timings in samples.items():
            figures[side] = {
                "first_visit_ms": [round(t["cold_ms"], 1) for t in timings],
                "first_visit_median_ms": round(_median([t["cold_ms"] for t in timings]), 1),
                "warm_median_ms": round(_median([m for t in timings for m in t["warm_ms"]]), 1),
                "warm_max_ms": round(max(m for t in timings for m in t["warm_ms"]), 1),
            }
            if all("after_ms" in t for t in timings):
                figures[side]["after_read_median_ms"] = round(_median([t["after_ms"] for t in timings]), 1)
                figures[side]["audit"] = [t.get("audit") for t in timings]
    finally:
        for bank in pairs["fresh"]:
            try:
                gw.delete_bank(bank)
            except Exception as exc:  # noqa: BLE001  (a leftover bank is said, never a failed bench)
                log(f"could not delete {bank}: {exc}")
        gw.close()
        shutil.rmtree(work, ignore_errors=True)
    return figures


def _print_overview(figures: dict) -> None:
    print(f"The Overview's page run (AppTest, ms), {figures['runs']} run(s) a side; app: {figures['app']}")
    print(f"recall entries in the logs: {figures['log_entries']}")
    print(f"{'side':22} {'first visit (median)':>22} {'warm median':>12} {'warm max':>9} {'after the read':>15}")
    for side in SIDES:
        if side in figures:
            f = figures[side]
            print(
                f"{side:22} {f['first_visit_median_ms']:>22} {f['warm_median_ms']:>12} {f['warm_max_ms']:>9} {f.get('after_read_median_ms', ''):>15}"
            )
    for side in SIDES:
        for i, read in enumerate((figures.get(side) or {}).get("audit") or []):
            print(
                f"  {side}, run {i + 1}: "
                + "; ".join(
                    f"{bank}: {r['entries']:,} of {r['log_entries'] or 0:,} read"
                    + (f" (this run fetched {r['fetched']:,}, listed {r['listed']:,})" if "fetched" in r else "")
                    for bank, r in read.items()
                )
            )
    if "catch_up_s" in figures:
        print(
            f"catch-up of a new store (this process): {figures['catch_up_entries']:,} entries in {figures['catch_up_s']} s "
            f"({figures['catch_up_entries_per_s']}/s, {figures['catch_up_windows']} list requests); again with nothing new: "
            f"{figures['nothing_new_ms']} ms, {figures['nothing_new_fetched']} fetched"
        )


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--recalls", type=int, default=10_000, help="recall entries in the bank's audit log")
    parser.add_argument("--repeat", type=int, default=10, help="warm reruns of the page")
    parser.add_argument(
        "--audit-entries",
        type=int,
        default=None,
        help="the Overview instead: its page runs against a log of this many entries beside a fresh one",
    )
    parser.add_argument("--runs", type=int, default=3, help="with --audit-entries: runs a side, interleaved")
    parser.add_argument(
        "--no-catch-up", action="store_true", help="with --audit-entries: skip the store that read the whole log"
    )
    parser.add_argument(
        "--app-root",
        type=Path,
        default=None,
        help="with --audit-entries: the pages of another checkout (e.g. `git archive` of an older commit), for before/after",
    )
    parser.add_argument("--json", action="store_true")


@command("audit", "benchmark the audit-log sync and the case page with the agent's recall shown", _args)
def run_bench_audit(args: argparse.Namespace) -> int:
    if args.recalls < 1:
        print("error: --recalls: must be at least 1", file=sys.stderr)
        return 2

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.audit_entries is not None:
        if args.audit_entries < 1 or args.runs < 1:
            print(
                f"error: {'--audit-entries' if args.audit_entries < 1 else '--runs'}: must be at least 1",
                file=sys.stderr,
            )
            return 2
        if args.app_root is not None and not (args.app_root / "dashboard" / "app" / "main.py").is_file():
            print(f"error: --app-root: {args.app_root} holds no dashboard/app/main.py", file=sys.stderr)
            return 2
        figures = overview(
            args.audit_entries,
            args.runs,
            args.repeat,
            log,
            catch_up=not args.no_catch_up,
            app_root=args.app_root.resolve() if args.app_root else None,
        )
        if args.json:
            print(json.dumps(figures, indent=2))
        else:
            _print_overview(figures)
        return 0
    figures = run(args.recalls, args.repeat, log=log)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, value in figures.items():
            print(f"{name:28} {value}")
    return 0
