"""`python -m benches api`: many agents handing cases in at once, through the real app's API.

Starts the app as people do (`python -m dashboard.app.serve`, a fresh review store of its own), makes an agent token,
then N clients in parallel hand in C cases between them; a share of them is sent twice (an agent's retry after a lost
answer) and a share again with other values (a conflict); with `--batch 100`, a client sends its share 100 at a time
through the batch route, each case's own result counted as a single answer would be. It checks that the store holds exactly C cases and that
every conflict was refused, and prints the rate and the latencies. A benchmark, not a test: its figures go to
docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benches.registry import command


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--retries", type=float, default=0.10, help="share of cases sent twice with the same body")
    parser.add_argument("--conflicts", type=float, default=0.01, help="share of cases sent again with other values")
    parser.add_argument(
        "--batch",
        type=int,
        default=0,
        help="hand the cases in N at a time through POST /cases/{kind}/batch (1-100; default: one by one)",
    )
    parser.add_argument("--json", action="store_true")


def _case(n: int, amount: float = 1200.0) -> dict:
    return {
        "id": f"E-B{n:05d}",
        "vendor_code": f"V{n % 12 + 1:02d}",
        "vendor_name": "Bench Vendor",
        "exception_type": ("price_variance", "quantity_mismatch", "duplicate_invoice")[n % 3],
        "invoice": f"INV-B{n}",
        "po": f"PO-B{n}",
        "invoice_amount": amount,
        "po_amount": 1000.0,
        "description": "Handed in by the API bench.",
        "opened_on": "2026-12-01",
    }


def _plan(cases: int, retries: float, conflicts: float) -> list[tuple[int, str]]:
    """(case number, "first" | "retry" | "conflict") in the order they are sent: each case first, then every tenth
    (say) again, and a few again with another amount. Deterministic."""
    every_retry, every_conflict = round(1 / retries) if retries else 0, round(1 / conflicts) if conflicts else 0
    sends = []
    for n in range(cases):
        sends.append((n, "first"))
        if every_retry and n % every_retry == 1:
            sends.append((n, "retry"))
        if every_conflict and n % every_conflict == 2:
            sends.append((n, "conflict"))
    return sends


def run(cases: int, clients: int, retries: float, conflicts: float, log, batch: int = 0) -> dict:
    import httpx

    from dashboard.access.api_tokens import ApiTokens
    from dashboard.cli.app_server import serve_app
    from dashboard.review.case_queue import CaseQueue
    from dashboard.store.db import SQLITE_FILE, sqlite_engine

    with tempfile.TemporaryDirectory(prefix="rr-bench-api-") as tmp:
        data_dir = Path(tmp)
        engine = sqlite_engine(data_dir / SQLITE_FILE)
        token, _ = ApiTokens(engine).create("bench-agent", ["finance"], ["submit", "read"], "bench")
        env = {**os.environ, "HINDSIGHT_API_URL": "http://127.0.0.1:9"}  # no Hindsight needed to hand cases in
        with serve_app(env, data_dir) as url:
            log(
                f"app on {url}; {clients} clients handing in {cases} cases"
                + (f" in batches of {batch}" if batch else "")
            )
            sends = _plan(cases, retries, conflicts)

            def body(n: int, how: str) -> dict:
                return {"case": _case(n, 1300.0 if how == "conflict" else 1200.0), "agent": {"name": "bench-agent"}}

            def client(shard):
                seen, took = Counter(), []
                with httpx.Client(
                    base_url=f"{url}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=120
                ) as http:
                    if batch:  # each request's latency is a whole batch's
                        for start in range(0, len(shard), batch):
                            part = shard[start : start + batch]
                            t0 = time.perf_counter()
                            answer = http.post(
                                "/cases/finance/batch", json={"cases": [body(n, how) for n, how in part]}
                            )
                            took.append(time.perf_counter() - t0)
                            answer.raise_for_status()
                            for (_, how), result in zip(part, answer.json()["results"], strict=True):
                                seen[(how, result["status"])] += 1
                        return seen, took
                    for n, how in shard:
                        t0 = time.perf_counter()
                        answer = http.post("/cases/finance", json=body(n, how))
                        took.append(time.perf_counter() - t0)
                        seen[(how, answer.status_code)] += 1
                return seen, took

            # A retry or a conflict is sent by the same client right after its case's first send (the plan keeps
            # them in order and the shards by position), as an agent retrying would.
            shards = [[s for s in sends if s[0] % clients == i] for i in range(clients)]
            t0 = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                results = list(pool.map(client, shards))
            wall = time.perf_counter() - t0
            stored = len(CaseQueue(engine).cases("exception"))
    statuses = sum((r[0] for r in results), Counter())
    took = sorted(t for r in results for t in r[1])
    return {
        "clients": clients,
        "cases": cases,
        "batch": batch or None,
        "sends": len(sends),
        "requests": len(took),
        "seconds": round(wall, 2),
        "cases_per_s": round(len(sends) / wall, 1),
        "requests_per_s": round(len(took) / wall, 1),
        "median_ms": round(1000 * statistics.median(took), 1),
        "p95_ms": round(1000 * took[int(0.95 * (len(took) - 1))], 1),
        "answers": {f"{how} {code}": n for (how, code), n in sorted(statuses.items())},
        "cases_stored": stored,
        "first_sends_stored": statuses[("first", 201)],
        "conflicts_refused": statuses[("conflict", 409)],
        "conflicts_sent": sum(1 for _, how in sends if how == "conflict"),
    }


@command(
    "api", "hand cases in through the real app's API from several clients at once, with retries and conflicts", _args
)
def run_bench_api(args: argparse.Namespace) -> int:
    if not 0 <= args.batch <= 100:
        print("error: --batch: 1 to 100 cases a request (0: one by one)", file=sys.stderr)
        return 2
    report = run(
        args.cases, args.clients, args.retries, args.conflicts, lambda m: print(m, file=sys.stderr), args.batch
    )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")
    ok = (
        report["cases_stored"] == report["first_sends_stored"] == args.cases
        and report["conflicts_refused"] == report["conflicts_sent"]
    )
    print(
        "exactly one case per id, every conflict refused" if ok else "MISMATCH: see cases_stored and conflicts_refused"
    )
    return 0 if ok else 1
