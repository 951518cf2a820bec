"""`python -m benches scale`: the PostgreSQL review store with a large history, measured.

Seeds a scratch database in the embedded server's PostgreSQL (dropped after) with `--decisions` decisions
over `--cases` exceptions (a case's decisions are its revisions; every 97th row is held for a second
approval) and one flags row per case, by COPY, then times side by side, interleaved, what the pages read
on every run: each case's newest state and outcome from the standing decisions (migration 0012), against the
same grouped out of the log, built in full, and read from the whole log into Python, as the pages did before; the
Overview's standing counts and calibration; the cases decided; one case's latest decision; the flags. Every read
is made afresh (a new Outbox: nothing kept from the round before).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

from benches.registry import command

BANK = "bench-scale"
HELD_EVERY = 97  # every 97th decision seeded is held for a second approval
# What the queue pages read on every run, and what they read before (2026-12-05, 2026-12-04, then 2026-12-03).
QUEUE_READ = "each case's standing state and outcome, from the standing decisions (the queue pages now)"
GROUPED_READ = "each case's newest state and outcome, grouped out of the log (before)"
MODELS_READ = "each case's newest decision built in full (before that)"
LOG_READ = "each case's newest decision, the whole log read into Python (before that)"


def _case(i: int) -> str:
    return f"E-{i:06d}"


def seed(
    engine,
    case_ids: Sequence[str],
    decisions: int,
    log: Callable[[str], None],
    bank: str = BANK,
    flagged: Sequence[str] | None = None,
) -> int:
    """`decisions` rows over the cases (row n is revision n // len + 1 of case n % len; every 97th is held for a
    second approval, with its "proposed" step as the app writes it), then one flags row per case (per `flagged`
    case when given: a queue's undecided cases were recalled too). Returns the last decision's id: the bench
    browser forgets what its runs added after it."""
    from dashboard.agents.incidents import INCIDENTS_KEY
    from dashboard.finance import flags as finance_flags
    from dashboard.finance.flags import FinanceFlags
    from dashboard.hindsight.wire import MemoryRecord
    from dashboard.store.decision import ReviewerDecision
    from dashboard.store.schema import AWAITING, DELIVERED

    at = datetime(2026, 12, 1, tzinfo=UTC)
    flag_rows = case_ids if flagged is None else flagged
    templates = {}
    for outcome in ("approve", "reject", "escalate"):
        decision = ReviewerDecision(
            case_id="CASE",
            case_kind="exception",
            reviewer="Bench Reviewer",
            authenticated=False,
            outcome=outcome,
            overridden=outcome != "approve",
            decided_at=at,
            report_by="vendor",
        )
        record = MemoryRecord(
            document_id="decision-CASE",
            content=f"Case CASE. Decision: {outcome}.",
            tags=["vendor:V01", "kind:decision"],
            metadata={"agent_confidence": "0.80"},
        )
        templates[outcome] = (decision.model_dump_json(), record.model_dump_json())
    outcomes = list(templates)
    recall = FinanceFlags(
        k=5,
        exact=3,
        relevant=4,
        broader=2,
        action="approve",
        confidence=0.8,
        policy="exact",
        crowd_out_lost=0,
        exact_ids=["PREC-V01-PRI-001"],
    ).model_dump(mode="json")
    flags = json.dumps({finance_flags.KEY: recall, INCIDENTS_KEY: []})  # as a recall and an incident check keep them
    columns = (
        "bank_id, case_kind, case_id, revision, document_id, reviewer, decision, record, decided_on, overridden, report_group,"
        " created_at, state, attempts, next_attempt_at, delivered_at"
    )
    started = time.perf_counter()
    pooled = engine.raw_connection()
    raw = pooled.driver_connection  # psycopg's own connection, for COPY
    try:
        with raw.cursor() as cur:
            with cur.copy(f"COPY review_decisions ({columns}) FROM STDIN") as copy:
                for n in range(decisions):
                    case = case_ids[n % len(case_ids)]
                    decision, record = templates[outcomes[n % 3]]
                    state = AWAITING if n % HELD_EVERY == 0 else DELIVERED
                    copy.write_row(
                        (
                            bank,
                            "exception",
                            case,
                            n // len(case_ids) + 1,
                            f"decision-{case}",
                            "Bench Reviewer",
                            decision.replace("CASE", case),
                            record.replace("CASE", case),
                            at.date(),
                            outcomes[n % 3] != "approve",
                            "V01",
                            at,
                            state,
                            1,
                            at,
                            at,
                        )
                    )
            cur.execute(
                'INSERT INTO review_approvals (decision_id, step, actor, role, amount, "limit", scope, note, at)'
                " SELECT id, 'proposed', reviewer, 'reviewer', 50000, 10000, 'vendor V01', '', created_at"
                " FROM review_decisions WHERE bank_id = %s AND state = %s",
                (bank, AWAITING),
            )
            with cur.copy("COPY review_case_flags (bank_id, case_kind, case_id, flags, updated_at) FROM STDIN") as copy:
                for case in flag_rows:
                    copy.write_row((bank, "exception", case, flags, at))
            cur.execute("SELECT max(id) FROM review_decisions")
            last_id = cur.fetchone()[0]
        raw.commit()
        raw.autocommit = True  # VACUUM cannot run in a transaction; it also makes the index-only scans possible
        with raw.cursor() as cur:
            for table in ("review_decisions", "review_approvals", "review_case_flags"):
                cur.execute(f"VACUUM ANALYZE {table}")
    finally:
        raw.autocommit = False  # as the pool lent it
        pooled.close()
    log(
        f"seeded {decisions:,} decisions over {len(case_ids):,} cases and {len(flag_rows):,} flags rows in {time.perf_counter() - started:.1f} s"
    )
    return last_id


def latest_in_history(history: Iterable, bank_for: Mapping[str, str]) -> dict[tuple[str, str], object]:
    """(kind, case id) -> newest decision, for decisions (StoredDecision) in the bank of their kind: the whole log
    read into Python, as the pages did before `Outbox.decision_states`; kept as the bench's reference."""
    latest: dict[tuple[str, str], object] = {}
    for stored in sorted(history, key=lambda s: s.id, reverse=True):
        bank = bank_for.get(stored.case_kind)
        if stored.held or (bank is not None and stored.bank_id != bank):
            continue
        latest.setdefault((stored.case_kind, stored.case_id), stored)
    return latest


def states_grouped_from_the_log(engine, bank: str, kind: str) -> dict[str, tuple]:
    """case id -> (state, outcome, ticket action) of its newest decision not held, grouped out of the whole log, as
    Outbox.decision_states read them before the standing decisions (migration 0012); kept as the bench's reference."""
    import sqlalchemy as sa

    from dashboard.store.schema import HELD, decisions

    d = decisions.c
    newest = (
        sa.select(sa.func.max(d.id))
        .where(d.bank_id == bank, d.case_kind == kind, d.state.not_in(HELD))
        .group_by(d.case_id)
    )
    query = sa.select(d.case_id, d.state, d.decision["outcome"].as_string(), d.decision["action"].as_string())
    with engine.connect() as conn:
        return {case_id: tuple(fields) for case_id, *fields in conn.execute(query.where(d.id.in_(newest)))}


def _timed(call: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def measure(engine, cases: int, repeat: int, log: Callable[[str], None]) -> dict[str, dict]:
    """Median and samples (ms) of each read, interleaved so every read sees the same load."""
    from dashboard.delivery.outbox import Outbox
    from dashboard.review.calibration import calibration_counts
    from dashboard.review.casework import Casework

    outbox, casework = Outbox(engine), Casework(engine)
    page = [_case(i) for i in range(50)]
    reads: dict[str, Callable[[], object]] = {
        QUEUE_READ: lambda: Outbox(engine).decision_states(BANK, "exception"),
        GROUPED_READ: lambda: states_grouped_from_the_log(engine, BANK, "exception"),
        MODELS_READ: lambda: outbox.latest_per_case(BANK, "exception"),
        LOG_READ: lambda: latest_in_history(outbox.history("exception"), {"exception": BANK}),
        "the standing decisions counted by day, outcome and reason (the Overview)": lambda: Outbox(
            engine
        ).standing_counts(BANK, "exception"),
        "the calibration by confidence band (the Overview)": lambda: calibration_counts(engine, BANK, "exception"),
        "the cases decided (ids only)": lambda: outbox.decided_cases(BANK, "exception"),
        "one case's latest decision, in full (a case open)": lambda: outbox.latest_decided(
            BANK, "exception", _case(cases // 2)
        ),
        "every case's flags": lambda: casework.flags(BANK, "exception"),
        "the flags of a page of 50 cases": lambda: casework.flags(BANK, "exception", page),
    }
    samples: dict[str, list[float]] = {name: [] for name in reads}
    sizes: dict[str, int] = {}
    for n in range(repeat):
        for name, read in reads.items():
            ms, result = _timed(read)
            samples[name].append(ms)
            sizes[name] = len(result) if hasattr(result, "__len__") else int(result is not None)
        log(f"round {n + 1} of {repeat} done")
    return {
        name: {"median_ms": round(statistics.median(s), 1), "samples_ms": [round(x, 1) for x in s], "rows": sizes[name]}
        for name, s in samples.items()
    }


def run(cases: int, decisions: int, repeat: int, log: Callable[[str], None] = print) -> dict:
    from benches.recall import machine, server_running
    from dashboard.delivery.outbox import Outbox
    from dashboard.hindsight.embedded import scratch_database
    from dashboard.settings import load_settings
    from dashboard.store.db import make_engine

    settings = load_settings()
    if not settings.embedded:
        raise RuntimeError(
            "`benches scale` seeds a scratch database in the embedded server's PostgreSQL: unset HINDSIGHT_API_URL"
        )
    notes = [
        f"machine: {machine()}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average {os.getloadavg()[0]:.1f} at start"
    ]
    with server_running(settings, log), scratch_database(settings.pg_port, "bench_scale") as url:
        engine = make_engine(url, settings.data_dir)
        try:
            Outbox(engine)  # the schema, by the migrations
            seed(engine, [_case(i) for i in range(cases)], decisions, log)
            figures = measure(engine, cases, repeat, log)
        finally:
            engine.dispose()
    now = figures[QUEUE_READ]["median_ms"]
    for name, before in (
        ("grouped out of the log", GROUPED_READ),
        ("each newest decision built in full", MODELS_READ),
        ("the whole log read into Python", LOG_READ),
    ):
        notes.append(
            f"{name} / the queue's states and outcomes: {figures[before]['median_ms'] / now:.1f}x"
            if now
            else "no timing"
        )
    return {"cases": cases, "decisions": decisions, "repeat": repeat, "figures": figures, "notes": notes}


def print_report(report: dict, out=sys.stdout) -> None:
    print(
        f"review store: {report['decisions']:,} decisions over {report['cases']:,} cases, median of {report['repeat']}",
        file=out,
    )
    width = max(len(name) for name in report["figures"])
    for name, row in report["figures"].items():
        samples = ", ".join(f"{s:.1f}" for s in row["samples_ms"])
        print(f"  {name:<{width}}  {row['median_ms']:>10.1f} ms  ({samples}; {row['rows']:,} rows)", file=out)
    for note in report["notes"]:
        print(f"  {note}", file=out)


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", type=int, default=100_000, help="exceptions in the queue (default 100,000)")
    parser.add_argument(
        "--decisions", type=int, default=1_000_000, help="decisions in the review store (default 1,000,000)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds of every read (the medians are of these)")
    parser.add_argument("--json", action="store_true")


@command(
    "scale", "time the review store's reads with a large history (a scratch PostgreSQL database, dropped after)", _args
)
def run_bench_scale(args: argparse.Namespace) -> int:
    for flag, value in (("--cases", args.cases), ("--decisions", args.decisions), ("--repeat", args.repeat)):
        if value < 1:
            print(f"error: {flag}: must be at least 1", file=sys.stderr)
            return 2
    report = run(args.cases, args.decisions, args.repeat, log=lambda m: print(m, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
    return 0
