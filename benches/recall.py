"""`python -m benches recall`: what the dashboard costs against a real Hindsight, side by side in one run.

Starts (or reuses) the embedded server, seeds deterministic banks of the given sizes (resumable),
then measures, interleaving the things it compares so both see the same server load:
lean request study, two-stage (lean) vs one default any_strict recall, dashboard overhead over the
same raw client calls, queue loads vs sequential default recalls, a warm rerun of the Exceptions
page (AppTest), trace parsing, what-if replay, growth between sizes. Every label says the sizes the
flags asked for. Prints medians and p95 and the ratios against the targets (PASS/MISS). Speed lives
here, not in tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from benches import data as bench_data
from benches.registry import command
from dashboard.cli.registry import input_error
from dashboard.finance.recall import (
    DEFAULT_K,
    LEAN_BUDGET,
    CaseKey,
    atwo_stage_recall,
    max_tokens_for,
    two_stage_recall,
)
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import RecallResponse, RecallTrace, RetrievalHit, RetrievalList, RrfCandidate, SourceRanks
from dashboard.reporting.overview import p95
from dashboard.settings import load_settings

SAMPLE_CASES = 8
REPLAY_SIZES = (300, 3000)  # candidates in the synthetic traces; the target judges the last
TARGETS = {  # what is judged -> (limit, unit): a ratio or milliseconds, "at most"; labels carry the sizes
    "overhead": (1.10, "x"),
    "two-stage vs single": (1.0, "x"),
    "queue": (1.0, "x"),
    "warm rerun": (300.0, "ms"),
    "parse": (100.0, "ms"),
    "replay": (50.0, "ms"),
    "replay + scoring": (50.0, "ms"),
}


def _ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


class Report:
    def __init__(self):
        self.rows: list[dict] = []
        self.ratios: list[dict] = []
        self.notes: list[str] = []

    def timing(self, name: str, samples: list[float], extra: str = "") -> float:
        med = statistics.median(samples)
        self.rows.append(
            {
                "name": name,
                "median_ms": round(med, 2),
                "p95_ms": round(p95(samples), 2),
                "n": len(samples),
                "note": extra,
            }
        )
        return med

    def ratio(self, name: str, value: float, detail: str = "", target_of: str | None = None) -> None:
        """`target_of` names the TARGETS entry this ratio is judged against (None: reported, not judged)."""
        target = TARGETS.get(target_of) if target_of else None
        verdict = None if target is None else ("PASS" if value <= target[0] else "MISS")
        self.ratios.append(
            {
                "name": name,
                "value": round(value, 3),
                "target": target[0] if target else None,
                "unit": target[1] if target else "x",
                "verdict": verdict,
                "detail": detail,
            }
        )

    def print(self, out=sys.stdout) -> None:
        w = max(len(r["name"]) for r in self.rows) if self.rows else 40
        print(f"\n{'measurement'.ljust(w)}  median ms    p95 ms    n  note", file=out)
        for r in self.rows:
            print(f"{r['name'].ljust(w)}  {r['median_ms']:9.2f} {r['p95_ms']:9.2f} {r['n']:4d}  {r['note']}", file=out)
        w = max(len(r["name"]) for r in self.ratios) if self.ratios else 40
        print(f"\n{'ratio / target'.ljust(w)}     value   target  verdict  detail", file=out)
        for r in self.ratios:
            target = "" if r["target"] is None else f"<= {r['target']:g}{r['unit']}"
            unit = "ms" if r["unit"] == "ms" else "x"
            print(
                f"{r['name'].ljust(w)}  {r['value']:8.3f}{unit:2} {target:>9}  {r['verdict'] or '-':7}  {r['detail']}",
                file=out,
            )
        for note in self.notes:
            print(f"note: {note}", file=out)


# -- raw calls (the baseline: the official client, nothing of ours) ----------------------------------
class RawClient:
    """The official client on its own loop in this thread: the calls the dashboard makes, made directly."""

    def __init__(self, base_url: str, api_key: str | None):
        from hindsight_client import Hindsight

        self.loop = asyncio.new_event_loop()
        self.client = Hindsight(base_url, api_key=api_key, timeout=120.0)

    def recall(self, bank, query, **kw):
        return self.loop.run_until_complete(self.client.arecall(bank, query, **kw))

    def close(self):
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()


def raw_two_stage(raw: RawClient, bank: str, key: CaseKey, query: str, k: int, budget: str) -> int:
    """The dashboard's two passes as bare client calls (same arguments, same skip rule); returns calls."""
    kw = {"tags": key.tags, "max_tokens": max_tokens_for(k), "budget": budget}
    first = raw.recall(bank, query, tags_match="all_strict", **kw)
    if len(first.results) >= k:
        return 1
    raw.recall(bank, query, tags_match="any_strict", **kw)
    return 2


def default_single(raw: RawClient, bank: str, key: CaseKey, query: str):
    """The naive single pass: one any_strict recall with the server's defaults (budget mid, 4096 tokens)."""
    return raw.recall(bank, query, tags=key.tags, tags_match="any_strict")


# -- measurements -------------------------------------------------------------------------------------
def lean_study(rep: Report, gw: HindsightGateway, bank: str, size: int, sample, repeat: int) -> None:
    """What budget / max_tokens / types cost and return: the two-stage result vs the server's defaults."""
    k = DEFAULT_K
    configs = {
        "default (mid, 4096)": {"budget": "mid", "max_tokens": 4096},
        f"mid, {max_tokens_for(k)} tokens": {"budget": "mid", "max_tokens": max_tokens_for(k)},
        f"low, {max_tokens_for(k)} tokens": {"budget": "low", "max_tokens": max_tokens_for(k)},
        f"low, {max_tokens_for(k)}, types=[world]": {
            "budget": "low",
            "max_tokens": max_tokens_for(k),
            "types": ["world"],
        },
    }

    def run(cfg, case):
        key = CaseKey.of(case)

        def recall(bank_id, query, **kw):
            kw.update(cfg)
            return gw.recall(bank_id, query, **kw)

        return two_stage_recall(recall, bank, key, case.recall_query(), k=k)

    times = {name: [] for name in configs}
    baseline = {c.id: run(configs["default (mid, 4096)"], c) for c in sample}
    agree = {name: [0, 0, 0.0] for name in configs}  # same exact set, same top k, overlap sum
    for _ in range(repeat):
        for case in sample:
            for name, cfg in configs.items():
                result = None

                def call(cfg=cfg, case=case):
                    nonlocal result
                    result = run(cfg, case)

                times[name].append(_ms(call))
                if _ == 0:
                    base = baseline[case.id]
                    same_exact = [e.id for e in result.exact] == [e.id for e in base.exact]
                    same_top = [e.id for e in result.records] == [e.id for e in base.records]
                    overlap = len({e.id for e in result.records} & {e.id for e in base.records}) / max(
                        1, len(base.records)
                    )
                    agree[name][0] += same_exact
                    agree[name][1] += same_top
                    agree[name][2] += overlap
    n = len(sample)
    for name in configs:
        a = agree[name]
        rep.timing(
            f"[{size}] lean study, two-stage {name}",
            times[name],
            f"same exact as default {a[0]}/{n}; same top {k} {a[1]}/{n}; overlap {a[2] / n:.0%}",
        )


def recall_side_by_side(rep: Report, gw, raw: RawClient, bank: str, size: int, sample, repeat: int) -> dict:
    lean, single, rawts = [], [], []
    for _ in range(repeat):
        for case in sample:
            key, q = CaseKey.of(case), case.recall_query()
            lean.append(_ms(lambda: two_stage_recall(gw.recall, bank, key, q, k=DEFAULT_K)))
            single.append(_ms(lambda: default_single(raw, bank, key, q)))
            rawts.append(_ms(lambda: raw_two_stage(raw, bank, key, q, DEFAULT_K, LEAN_BUDGET)))
    calls = [two_stage_recall(gw.recall, bank, CaseKey.of(c), c.recall_query()).calls for c in sample]
    return {
        "lean": rep.timing(f"[{size}] two-stage recall, lean (dashboard)", lean, f"calls per case {calls}"),
        "single": rep.timing(f"[{size}] one default any_strict recall (raw client)", single),
        "raw": rep.timing(f"[{size}] the same two-stage calls, raw client", rawts),
    }


def queue_load(rep: Report, gw, raw: RawClient, bank: str, size: int, cases, repeat: int) -> float:
    n = len(cases)
    jobs = [
        (lambda c=c: atwo_stage_recall(gw.arecall, bank, CaseKey.of(c), c.recall_query(), k=DEFAULT_K)) for c in cases
    ]
    dash, seq = [], []
    for _ in range(repeat):
        dash.append(_ms(lambda: gw.recall_many(jobs)))
        seq.append(_ms(lambda: [default_single(raw, bank, CaseKey.of(c), c.recall_query()) for c in cases]))
    d = rep.timing(f"[{size}] queue of {n}: dashboard load (lean, 4 in flight)", dash)
    s = rep.timing(f"[{size}] queue of {n}: {n} default single recalls, sequential", seq)
    return d / s


def trace_parse(rep: Report, base_url: str, bank: str, size: int, sample, repeat: int) -> float:
    from hindsight_client_api.models.recall_response import RecallResponse as ClientResponse

    from dashboard.traces.analysis import analyse

    case = sample[0]
    body = None
    for budget in ("mid", "high"):
        payload = {
            "query": case.recall_query(),
            "budget": budget,
            "trace": True,
            "tags": CaseKey.of(case).tags,
            "tags_match": "any_strict",
        }
        if budget == "high":
            payload.pop("tags"), payload.pop("tags_match")
        req = urllib.request.Request(
            f"{base_url}/v1/default/banks/{bank}/memories/recall",
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=120) as resp:
            body = resp.read()
        if len(body) >= 900_000:
            break
    kb = len(body) / 1000
    ours = [_ms(lambda: RecallResponse.model_validate_json(body)) for _ in range(max(5, repeat))]
    theirs = [
        _ms(lambda: RecallResponse.model_validate(ClientResponse.from_json(body.decode()).to_dict()))
        for _ in range(max(5, repeat))
    ]
    parsed = RecallResponse.model_validate_json(body)
    full = [_ms(lambda: analyse(RecallResponse.model_validate_json(body))) for _ in range(max(5, repeat))]
    m = rep.timing(
        f"[{size}] parse a {kb:.0f} KB trace (model_validate_json, the gateway's path)",
        ours,
        f"{len(parsed.trace.rrf_merged) if parsed.trace else 0} fused candidates",
    )
    rep.timing(f"[{size}] parse the same trace via the client's models + to_dict", theirs)
    rep.timing(f"[{size}] parse + analyse the same trace", full)
    return m if kb >= 500 else float("nan")


def synthetic_trace(n: int, seed: int = 3, dated: bool = False) -> RecallTrace:
    rng = random.Random(seed)
    ids = [f"n{i:05d}" for i in range(n)]
    dates = {i: f"{2018 + rng.randrange(9)}-{1 + rng.randrange(12):02d}-15T00:00:00Z" if dated else None for i in ids}
    lists = []
    for method, share in (("semantic", 1.0), ("bm25", 0.7), ("graph", 0.3)):
        chosen = rng.sample(ids, int(n * share))
        hits = [
            RetrievalHit(rank=r, node_id=i, text="t", score=1.0 - r / (n + 1), score_name="s", event_date=dates[i])
            for r, i in enumerate(chosen, 1)
        ]
        lists.append(RetrievalList(method_name=method, fact_type="world", results=hits))
    merged = [
        RrfCandidate(node_id=i, rrf_score=0.0, source_ranks=SourceRanks(), final_rrf_rank=r)
        for r, i in enumerate(ids, 1)
    ]
    return RecallTrace(retrieval_results=lists, rrf_merged=merged)


def replay_bench(rep: Report, repeat: int) -> float:
    from dashboard.traces.replay import ReplaySettings, diff_top_k, replay

    result = 0.0
    for n in REPLAY_SIZES:
        trace = synthetic_trace(n)
        knobs = ReplaySettings(caps={"semantic": n // 2}, weights={"bm25": 0.5}, top_k=10)
        med = rep.timing(
            f"what-if replay over {n:,} candidates (+ top-k diff)",
            [_ms(lambda: diff_top_k(trace, replay(trace, knobs))) for _ in range(max(10, repeat))],
        )
        result = med
    return result


def scoring_bench(rep: Report, repeat: int) -> float:
    """Replay + the server's post-fusion scoring (the predicted RETURNED order) over 3,000 candidates."""
    from dashboard.traces.replay import ReplaySettings
    from dashboard.traces.scoring import predict

    trace = synthetic_trace(3000, dated=True)
    trace.query.timestamp, trace.query.budget = "2026-11-30T00:00:00Z", 1000
    knobs = ReplaySettings(caps={"semantic": 1500}, weights={"bm25": 0.5}, reranker_max_candidates=None, top_k=10)
    return rep.timing(
        "what-if replay + final scoring over 3,000 candidates (predicted returned top k)",
        [_ms(lambda: predict(trace, knobs).top_ids()) for _ in range(max(10, repeat))],
    )


def time_page(env: dict[str, str], case_id: str, repeat: int) -> dict:
    """The Exceptions page opened on `case_id`, timed by AppTest in a child process with `env`
    (dashboard.app.page_timing): {"cold_ms": ..., "warm_ms": [...]}."""
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "dashboard.app.page_timing",
            "../finance/pages/exceptions.py",
            "--case",
            case_id,
            "--repeat",
            str(max(5, repeat)),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    lines = child.stdout.strip().splitlines()
    timing = json.loads(lines[-1]) if lines else {}
    if child.returncode != 0 or "warm_ms" not in timing:
        raise RuntimeError(f"the Exceptions page failed: {timing.get('error') or child.stderr[-2000:]}")
    return timing


@contextmanager
def server_running(settings, log: Callable[[str], None]) -> Iterator[None]:
    """With no Hindsight URL configured, the embedded server runs for the block; it is stopped after only
    when the block started it (a server someone else started keeps running)."""
    if not settings.embedded:
        yield
        return
    from dashboard.hindsight.embedded import EmbeddedServer

    server = EmbeddedServer(settings, log=log)
    started = not server.status().healthy
    server.start()
    try:
        yield
    finally:
        if started:
            log("stopping the server the bench started")
            server.stop()


def warm_rerun(rep: Report, settings, bank: str, data_dir: Path, repeat: int, page_cases: int = 1000) -> float:
    """The Exceptions page with a queue of `page_cases` (the first 200 recalled with the queue), timed by
    AppTest in a child process pointed at the bench bank (dashboard.app.page_timing)."""
    queue_file = bench_data.write_cases_csv(
        data_dir / f"bench-exceptions-{page_cases}.csv", bench_data.cases(page_cases)
    )
    env = {
        **os.environ,
        "RECALL_REVIEW_EXCEPTIONS_FILE": str(queue_file),
        "RECALL_REVIEW_FINANCE_BANK": bank,
        "RECALL_REVIEW_DATA_DIR": str(settings.data_dir),
        "RECALL_REVIEW_API_PORT": str(settings.api_port),
        "RECALL_REVIEW_PG_PORT": str(settings.pg_port),
    }
    timing = time_page(env, "BE-00000", repeat)
    preloaded = min(200, page_cases)
    rep.timing(
        f"Exceptions page, {page_cases:,} cases, cold (recalls the first {preloaded}) [{bank}]", [timing["cold_ms"]]
    )
    return rep.timing(f"Exceptions page, {page_cases:,} cases, warm rerun with a case open [{bank}]", timing["warm_ms"])


# -- the command ----------------------------------------------------------------------------------------
def machine() -> str:
    mem = ""
    try:
        kb = int(next(line for line in open("/proc/meminfo") if line.startswith("MemTotal")).split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GB"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{platform.machine()} {os.cpu_count()} vCPU{mem}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def run(
    sizes: list[int],
    repeat: int,
    log: Callable[[str], None] = print,
    queue_sizes: tuple[int, int] = (17, 200),
    page_cases: int = 1000,
) -> Report:
    settings = load_settings()
    rep = Report()
    rep.notes.append(
        f"machine: {machine()}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average {os.getloadavg()[0]:.1f} at start"
    )
    with server_running(settings, log):
        _measure(rep, settings, sizes, repeat, log, queue_sizes, page_cases)
    return rep


def _measure(
    rep: Report,
    settings,
    sizes: list[int],
    repeat: int,
    log: Callable[[str], None],
    queue_sizes: tuple[int, int],
    page_cases: int,
) -> None:
    gw = HindsightGateway(settings.base_url, settings.api_key, timeout=300.0)
    raw = RawClient(settings.base_url, settings.api_key)
    try:
        for size in sizes:
            bench_data.seed(gw, size, log=log)
        per_size: dict[int, dict] = {}
        small_q, big_q = queue_sizes
        queue = bench_data.cases(max(big_q, SAMPLE_CASES))
        sample = queue[:SAMPLE_CASES]
        for size in sizes:
            bank = bench_data.bench_bank(size)
            log(f"measuring {bank} ...")
            two_stage_recall(gw.recall, bank, CaseKey.of(sample[0]), sample[0].recall_query())  # warm up
            lean_study(rep, gw, bank, size, sample, repeat)
            per_size[size] = recall_side_by_side(rep, gw, raw, bank, size, sample, repeat)
            per_size[size]["small queue"] = queue_load(rep, gw, raw, bank, size, queue[:small_q], repeat)
            per_size[size]["big queue"] = queue_load(rep, gw, raw, bank, size, queue[:big_q], 1)
            per_size[size]["parse"] = trace_parse(rep, settings.base_url, bank, size, sample, repeat)
        largest, smallest = max(sizes), min(sizes)
        big = per_size[largest]
        rep.ratio(
            "dashboard overhead (two-stage vs the same raw client calls)",
            big["lean"] / big["raw"],
            f"at {largest} memories",
            target_of="overhead",
        )
        for size in sizes:
            if size != largest:
                rep.ratio(f"[{size}] dashboard overhead", per_size[size]["lean"] / per_size[size]["raw"])
                rep.ratio(
                    f"[{size}] two-stage lean vs one default any_strict",
                    per_size[size]["lean"] / per_size[size]["single"],
                )
                rep.ratio(
                    f"[{size}] queue of {small_q} vs {small_q} sequential default recalls",
                    per_size[size]["small queue"],
                )
            rep.ratio(f"[{size}] queue of {big_q} vs {big_q} sequential default recalls", per_size[size]["big queue"])
        rep.ratio(
            "two-stage lean vs one default any_strict (largest bank)",
            big["lean"] / big["single"],
            f"at {largest} memories",
            target_of="two-stage vs single",
        )
        rep.ratio(
            f"queue of {small_q}, cold, vs {small_q} sequential default recalls (largest bank)",
            big["small queue"],
            f"at {largest} memories",
            target_of="queue",
        )
        if largest != smallest:
            for what in ("lean", "single"):
                rep.ratio(
                    f"growth {smallest} -> {largest} memories, {'two-stage lean' if what == 'lean' else 'default any_strict'}",
                    per_size[largest][what] / per_size[smallest][what],
                )
        rep.ratio(
            f"warm rerun, Exceptions page, {page_cases:,} cases",
            warm_rerun(rep, settings, bench_data.bench_bank(smallest), settings.data_dir, repeat, page_cases),
            target_of="warm rerun",
        )
        parse = big["parse"]
        if parse == parse:  # not NaN: the trace was big enough to be the ~1 MB case
            rep.ratio("parse a ~1 MB trace", parse, f"at {largest} memories", target_of="parse")
        else:
            rep.notes.append(
                "parse target not judged: the largest bank's trace is well under 1 MB (bench with --sizes ...,10000)"
            )
        rep.ratio(f"replay {REPLAY_SIZES[-1]:,} candidates", replay_bench(rep, repeat), target_of="replay")
        rep.ratio(
            f"replay + final scoring, {REPLAY_SIZES[-1]:,} candidates",
            scoring_bench(rep, repeat),
            target_of="replay + scoring",
        )
    finally:
        raw.close()
        gw.close()


def main(
    sizes: list[int], repeat: int, as_json: bool, queue_sizes: tuple[int, int] = (17, 200), page_cases: int = 1000
) -> int:
    rep = run(
        sizes,
        repeat,
        log=lambda m: print(m, file=sys.stderr, flush=True),
        queue_sizes=queue_sizes,
        page_cases=page_cases,
    )
    if as_json:
        print(json.dumps({"rows": rep.rows, "ratios": rep.ratios, "notes": rep.notes}, indent=2))
    else:
        rep.print()
    return 0


def _bench_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes", default="1000,10000", help="bank sizes in memories, comma-separated (default 1000,10000)"
    )
    parser.add_argument("--repeat", default="5", help="repetitions per measurement (default 5)")
    parser.add_argument("--queues", default="17,200", help="the two queue sizes to load (default 17,200)")
    parser.add_argument(
        "--page-cases", type=int, default=1000, help="cases in the Exceptions page's queue (default 1000)"
    )
    parser.add_argument("--json", action="store_true")


@command(
    "recall",
    "benchmark recall, queue loading, page rerun, trace parsing and replay against a real Hindsight",
    _bench_args,
)
def run_recall(args: argparse.Namespace) -> int:
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(not 20 <= s <= 100_000 for s in sizes):
        return input_error("--sizes", f"comma-separated whole numbers from 20 to 100000, got {args.sizes!r}")
    try:
        repeat = int(args.repeat)
    except ValueError:
        repeat = 0
    if not 1 <= repeat <= 100:
        return input_error("--repeat", f"must be a whole number from 1 to 100, got {args.repeat!r}")
    try:
        small_q, big_q = (int(q) for q in args.queues.split(","))
    except ValueError:
        return input_error("--queues", f"two comma-separated whole numbers, got {args.queues!r}")
    if not (1 <= small_q <= 5000 and 1 <= big_q <= 5000 and 1 <= args.page_cases <= 100_000):
        return input_error("--queues", "queue sizes 1-5000 and --page-cases 1-100000")
    return main(sorted(set(sizes)), repeat, args.json, (small_q, big_q), args.page_cases)
