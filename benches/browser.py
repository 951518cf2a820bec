"""`python -m benches browser`: the Finance exceptions page as a reviewer sees it, timed in Chromium.

For each queue size, against a real Hindsight (the embedded server for the block) and deterministic banks
(the demo queue on the demo precedents; a synthetic queue of that many cases on the 10k-memory bench
bank), every run starts a fresh `streamlit run` (own data dir and queue file, so an empty recall cache)
and a fresh browser context at 1440x900, then times:

- cold: a reviewer opens the app (Home), then `goto(/exceptions?case=<first case of the queue>)` until that
  case's evidence is visible: no recall cached, the app process already serving;
- first page of a fresh process: the same goto as the very first request of a new app process (started as
  people start it, warmed: dashboard/app/serve.py imports the app's modules before it serves);
- J, K: the next (previous) case's evidence visible after pressing J (K) on the settled page (warm process);
- N: the same for "next unreviewed" (J when the page has no such key; the report says which);
- decision: A (approve) on the settled page until the confirmation is on screen with the next case's evidence;
- the Overview, opened from the sidebar as a reviewer does, then by its address typed (a new session of the same
  browser), each until its headline shows and the page's run is done.
- each page's first load in a fresh session (Home, Overview, Audit log, Exceptions, Tickets, Incidents, Traces,
  Migration): a new browser context opens its address on the serving app process, until the page's title is drawn
  and its script run is done (the whole page drawn); the Tickets page on the demo support history.

With `--hog` every size is measured twice: at the machine's load, then beside a CPU hog (one process
spinning on one core), each against its own target.

"Evidence visible" is the agreed marker, the `st.container(key="case_evidence")` holding visible text
that this run drew (no stale element of the previous case counts), under a case header that names the case in
the address bar; on a page without that container the "Exact ..." evidence heading stands in, and the report
says which marker was used. Medians of the runs, side by side per size, against the targets (PASS/MISS).
Everything it starts it stops, by PID.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benches.registry import command
from dashboard.cli.app_server import serve_app
from dashboard.processes import Child, signals_held
from dashboard.reporting.headline import HEADLINE_START

LOADS = ("quiet", "hog")  # at the machine's load; beside a CPU hog
TARGETS_MS = {  # (quiet, under the hog)
    "first": (1500.0, 3000.0),
    "cold": (1000.0, 2000.0),
    "J": (300.0, 600.0),
    "K": (300.0, 600.0),
    "N": (300.0, 600.0),
    "decision": (500.0, 1000.0),
    "overview": (1000.0, 2000.0),  # the cold open's budget
    "overview_typed": (1000.0, 2000.0),
}
LABELS = {
    "first": "a fresh app process's first page, to the first case's evidence",
    "cold": "cold open (app already serving) to the first case's evidence",
    "J": "J (next) to its evidence, warm",
    "K": "K (previous) to its evidence, warm",
    "N": "N (next unreviewed) to its evidence, warm",
    "decision": "A (approve) to the confirmation with the next case drawn",
    "overview": "the Overview from the sidebar after the decision, to its headline with the page's run done",
    "overview_typed": "then its address typed (a new session), the same",
}
# Each page's first load in a fresh session (a new browser context) of a serving app process, until its title is drawn
# and its script run is done (the whole page drawn): the pages a person opens first.
PAGES = (
    ("Home", ""),
    ("Overview", "overview"),
    ("Audit log", "audit"),
    ("Exceptions", "exceptions"),
    ("Tickets", "tickets"),
    ("Incidents", "incidents"),
    ("Traces", "traces"),
    ("Migration", "migration"),
)
for _name, _path in PAGES:
    TARGETS_MS[f"page {_name}"] = (1500.0, 3000.0)
    LABELS[f"page {_name}"] = f"{_name}: first load in a fresh session, to the page drawn"
REVIEWER = "Bench Reviewer"
VIEWPORT = {"width": 1440, "height": 900}
WAIT_MS = 900_000  # today a cold open of a large queue recalls it first: minutes on a busy machine
CHROMIUM = os.environ.get("RECALL_REVIEW_CHROMIUM", "/usr/bin/chromium")
DEMO_BANK = "bench-finance-demo"
SUPPORT_BANK = "bench-support-demo"  # the demo support history: the Tickets page's first load recalls a real ticket

# Which evidence is on screen for the case in the address bar, drawn by the current run (Streamlit keeps the
# previous run's elements, marked data-stale, until it redraws them). The address bar moves a frame or two before
# the old elements are marked stale: then the previous case's header and evidence still look fresh, and a key would
# be timed at ~30 ms. So the case's header must name the case in the address bar. Returns the marker's name or false.
EVIDENCE_SHOWN = """(previous) => {
  const current = new URLSearchParams(location.search).get('case');
  if (previous !== null && current === previous) return false;
  const fresh = (el) => el.closest('[data-stale="true"]') === null && el.checkVisibility()
                        && el.innerText.trim().length > 0;
  const header = document.querySelector('.st-key-case_header h2');
  if (header && !(fresh(header) && header.innerText.trim().startsWith(current + ':'))) return false;
  const box = document.querySelector('.st-key-case_evidence');
  if (box) {
    const parts = box.querySelectorAll('[data-testid="stElementContainer"]');
    return Array.from(parts).some(fresh) ? 'container' : false;
  }
  const headings = document.querySelectorAll('h1, h2, h3, h4');
  return Array.from(headings).some((h) => /^Exact/.test(h.innerText.trim()) && fresh(h)) ? 'heading' : false;
}"""
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # no script run in progress
NO_SKELETON = "() => !document.querySelector('[data-testid=stSkeleton]')"
MARKERS = {
    "container": 'st.container(key="case_evidence") with visible text',
    "heading": 'fallback: the "Exact ..." evidence heading (no case_evidence container on this page)',
}


class BadArguments(ValueError):
    """Arguments that only make sense together with the queues prepared (e.g. --decisions and a short queue)."""


OPEN_AT_THE_HEAD = 20  # with --decisions, the queue's first cases stay open: the bench's keys and decision land there


@dataclass
class Queue:
    label: str
    bank: str
    queue_file: Path
    first_case: str
    case_ids: list[str]  # in the queue's order
    synthetic: bool


@dataclass
class SizeResult:
    label: str
    load: str = "quiet"
    samples: dict[str, list[float]] = field(default_factory=lambda: {what: [] for what in TARGETS_MS})
    keys: set[str] = field(default_factory=set)  # the key pressed for "N" (N, or J when the page has no N)

    def median(self, what: str) -> float | None:
        return statistics.median(self.samples[what]) if self.samples[what] else None


def _prepare(gw, size: int, bank_size: int, work: Path, log: Callable[[str], None]) -> Queue:
    """The size's bank (seeded, resumable) and queue file; the demo queue when `size` is its length."""
    from benches import data as bench_data
    from dashboard import demo_data
    from dashboard.cli.seed import finance_records, seed_bank, support_records
    from dashboard.finance import queue as exception_queue
    from dashboard.finance.models import ExceptionCase
    from dashboard.finance.recall import CaseKey, two_stage_recall
    from dashboard.queue_files import load_rows

    demo = load_rows(demo_data.EXCEPTIONS, ExceptionCase)
    if size == len(demo):
        bank, cases, label = DEMO_BANK, demo, f"{size} cases (demo)"
        seed_bank(gw, bank, finance_records())
    else:
        bank, cases = bench_data.bench_bank(bank_size), bench_data.cases(size)
        label = f"{size:,} cases, {bank_size:,}-memory bank"
        bench_data.seed(gw, bank_size, log=log)
    queue_file = bench_data.write_cases_csv(work / f"exceptions-{size}.csv", cases)
    ordered = exception_queue.select(cases, {})
    seed_bank(gw, SUPPORT_BANK, support_records())  # idempotent: the same document ids
    two_stage_recall(gw.recall, bank, CaseKey.of(ordered[0]), ordered[0].recall_query())  # the server warm, not the app
    return Queue(
        label=label,
        bank=bank,
        queue_file=queue_file,
        first_case=ordered[0].id,
        case_ids=[c.id for c in ordered],
        synthetic=bank != DEMO_BANK,
    )


@contextmanager
def _review_store(
    settings, queues: list[Queue], decisions: int, log: Callable[[str], None]
) -> Iterator[tuple[str | None, Callable[[], None]]]:
    """With `decisions`: a scratch PostgreSQL review store (dropped after) holding that many decisions over each
    synthetic queue's cases but its first OPEN_AT_THE_HEAD, for the synthetic queues' app processes; yields its URL
    and the function that forgets what a run added. Without: (None, a no-op), each app keeps its own store."""
    if not decisions:
        yield None, lambda: None
        return
    too_short = [q.label for q in queues if q.synthetic and len(q.case_ids) <= OPEN_AT_THE_HEAD]
    if too_short:
        raise BadArguments(
            f"--decisions: a synthetic queue needs more than {OPEN_AT_THE_HEAD} cases (its first stay open): {', '.join(too_short)}"
        )
    import sqlalchemy as sa

    from benches.scale import seed
    from dashboard.delivery.outbox import Outbox
    from dashboard.hindsight.embedded import scratch_database
    from dashboard.store.db import make_engine
    from dashboard.store.schema import approvals, second_reviews
    from dashboard.store.schema import decisions as decision_log

    with scratch_database(settings.pg_port, "bench_browser") as url:
        engine = make_engine(url, settings.data_dir)
        try:
            Outbox(engine)  # the schema, by the migrations
            last = max(
                seed(engine, q.case_ids[OPEN_AT_THE_HEAD:], decisions, log, bank=q.bank, flagged=q.case_ids)
                for q in queues
                if q.synthetic
            )

            def forget_the_run() -> None:
                with engine.begin() as conn:
                    conn.execute(sa.delete(second_reviews).where(second_reviews.c.decision_id > last))
                    conn.execute(sa.delete(approvals).where(approvals.c.decision_id > last))
                    conn.execute(sa.delete(decision_log).where(decision_log.c.id > last))

            yield url, forget_the_run
        finally:
            engine.dispose()


def _wait_evidence(page, previous: str | None) -> str:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return page.wait_for_function(EVIDENCE_SHOWN, arg=previous, timeout=WAIT_MS, polling="raf").json_value()
    except PlaywrightTimeout:
        after = f"after leaving case {previous}" if previous else "on the cold open"
        raise RuntimeError(f"no case evidence shown within {WAIT_MS / 1000:.0f} s {after} ({page.url})") from None


def _settle(page) -> None:
    """Until Streamlit has finished the page's run (and stays idle a moment) and no element is a grey skeleton (its
    code still loading: a key meant for it is lost), so a key starts from a quiet page."""
    for _ in range(2):
        page.wait_for_selector(IDLE, state="attached", timeout=WAIT_MS)
        page.wait_for_function(NO_SKELETON, timeout=WAIT_MS)
        page.wait_for_timeout(300)


def _case_in_url(page) -> str | None:
    return page.evaluate("() => new URLSearchParams(location.search).get('case')")


def _press(page, key: str, *, confirmed: bool = False) -> tuple[float, str]:
    """Press `key` (no field focused) and time it until the next case's evidence is shown (and, `confirmed`,
    the decision's confirmation); (ms, marker)."""
    previous = _case_in_url(page)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    start = time.perf_counter()
    page.keyboard.press(key)
    marker = _wait_evidence(page, previous)
    if confirmed:
        page.get_by_text(re.compile(r"recorded", re.IGNORECASE)).first.wait_for(state="visible", timeout=WAIT_MS)
    return (time.perf_counter() - start) * 1000.0, marker


def _has_next_unreviewed(page) -> bool:
    return page.get_by_role("button", name=re.compile("unreviewed", re.IGNORECASE)).count() > 0


def _cold_open(browser, url: str, queue: Queue, markers: set[str]) -> float:
    """A fresh browser context opens the queue's first case; ms until its evidence shows."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        start = time.perf_counter()
        page.goto(f"{url}/exceptions?case={queue.first_case}")
        markers.add(_wait_evidence(page, None))
        return (time.perf_counter() - start) * 1000.0
    finally:
        context.close()


def _overview(page, url: str | None) -> float:
    """ms from opening the Overview, by its sidebar link as a reviewer does (`url` None) or by its address typed
    (a new session of the same browser), until its one-line headline shows and the page's run is done."""
    start = time.perf_counter()
    if url is None:
        page.get_by_role("link", name="Overview").first.click()
    else:
        page.goto(f"{url}/overview")
    page.get_by_text(HEADLINE_START).first.wait_for(timeout=WAIT_MS)  # the Overview's first line
    page.wait_for_selector(IDLE, state="attached", timeout=WAIT_MS)
    return (time.perf_counter() - start) * 1000.0


def _first_load(browser, address: str) -> float:
    """ms from a fresh session's goto(address) until the page's title is drawn and its script run is done."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        start = time.perf_counter()
        page.goto(address)
        page.get_by_test_id("stMain").locator("h1").first.wait_for(timeout=WAIT_MS)
        page.wait_for_selector(IDLE, state="attached", timeout=WAIT_MS)
        return (time.perf_counter() - start) * 1000.0
    finally:
        context.close()


def _one_run(browser, env: dict[str, str], queue: Queue, result: SizeResult, markers: set[str], log) -> str:
    """One fresh app process for the first page, another for the rest; returns the case it decided."""
    with tempfile.TemporaryDirectory(prefix="bench-browser-app-") as data_dir, serve_app(env, Path(data_dir)) as url:
        result.samples["first"].append(_cold_open(browser, url, queue, markers))
    with tempfile.TemporaryDirectory(prefix="bench-browser-app-") as data_dir, serve_app(env, Path(data_dir)) as url:
        context = browser.new_context(viewport=VIEWPORT)
        try:
            page = context.new_page()
            page.goto(url)  # a reviewer opens the app: Home (no recall), then the queue
            _settle(page)
            start = time.perf_counter()
            page.goto(f"{url}/exceptions?case={queue.first_case}")
            markers.add(_wait_evidence(page, None))
            result.samples["cold"].append((time.perf_counter() - start) * 1000.0)
            for what in ("J", "K", "N"):
                _settle(page)
                key = what.lower() if what != "N" or _has_next_unreviewed(page) else "j"
                if what == "N":
                    result.keys.add(key.upper())
                ms, marker = _press(page, key)
                markers.add(marker)
                result.samples[what].append(ms)
            name = page.locator('input[aria-label="Reviewer name"]')  # who decides (sign-in is off here)
            name.fill(REVIEWER)
            name.press("Tab")
            _settle(page)
            decided = _case_in_url(page)
            ms, marker = _press(page, "a", confirmed=True)
            markers.add(marker)
            result.samples["decision"].append(ms)
            _settle(page)
            result.samples["overview"].append(_overview(page, None))
            _settle(page)
            result.samples["overview_typed"].append(_overview(page, url))
            for name, path in PAGES:
                result.samples[f"page {name}"].append(_first_load(browser, f"{url}/{path}"))
            log("  " + ", ".join(f"{what} {samples[-1] / 1000:.2f} s" for what, samples in result.samples.items()))
        finally:
            context.close()
    return decided


@contextmanager
def _load(load: str, work: Path) -> Iterator[None]:
    """The machine as it is, or with a CPU hog beside it (stopped by PID after, whatever happens)."""
    if load == "quiet":
        yield
        return
    hog = Child(
        [sys.executable, "-c", "while True: pass"],
        env={**os.environ, "HOME": str(work)},
        log=work / "hog.log",
        cwd=work,
        name="cpu hog",
    )
    try:
        yield
    finally:
        hog.stop(timeout=10)


def run(
    sizes: list[int],
    runs: int,
    bank_size: int,
    hog: bool = False,
    log: Callable[[str], None] = print,
    decisions: int = 0,
) -> dict:
    from playwright.sync_api import sync_playwright

    from benches.recall import machine, server_running
    from dashboard.finance.decisions import document_id_for
    from dashboard.hindsight.gateway import HindsightGateway
    from dashboard.settings import load_settings

    settings = load_settings()
    if not os.access(CHROMIUM, os.X_OK):
        raise RuntimeError(f"{CHROMIUM} is missing: install Debian's chromium (or set RECALL_REVIEW_CHROMIUM)")
    notes = [
        f"machine: {machine()}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average {os.getloadavg()[0]:.1f} at start"
    ]
    results: list[SizeResult] = []
    markers: set[str] = set()
    with (
        server_running(settings, log),
        tempfile.TemporaryDirectory(prefix="bench-browser-") as work,
        closing(HindsightGateway(settings.base_url, settings.api_key, timeout=300.0)) as gw,
    ):
        queues = [_prepare(gw, size, bank_size, Path(work), log) for size in sizes]
        if decisions:
            for q in queues:
                q.label += f", {decisions:,} decisions in the store" if q.synthetic else ", its own store"
        with _review_store(settings, queues, decisions, log) as (store_url, forget_the_run), sync_playwright() as pw:
            browser = None
            try:
                with signals_held():  # a stop during the launch waits until the browser is ours to close
                    browser = pw.chromium.launch(
                        executable_path=CHROMIUM, headless=True, env={**os.environ, "HOME": work}
                    )
                for load in LOADS[: 2 if hog else 1]:
                    with _load(load, Path(work)):
                        for queue in queues:
                            env = {
                                **os.environ,
                                "RECALL_REVIEW_FINANCE_BANK": queue.bank,
                                "RECALL_REVIEW_EXCEPTIONS_FILE": str(queue.queue_file),
                                "RECALL_REVIEW_SUPPORT_BANK": SUPPORT_BANK,
                                "RECALL_REVIEW_API_PORT": str(settings.api_port),
                                "RECALL_REVIEW_PG_PORT": str(settings.pg_port),
                                **({"RECALL_REVIEW_DATABASE_URL": store_url} if store_url and queue.synthetic else {}),
                            }
                            result = SizeResult(label=queue.label, load=load)
                            for n in range(runs):
                                log(
                                    f"{queue.label}, {load}: run {n + 1} of {runs} (fresh app process and browser context) ..."
                                )
                                decided = _one_run(browser, env, queue, result, markers, log)
                                gw.delete_document(
                                    queue.bank, document_id_for(decided)
                                )  # the bank as the bench found it
                                forget_the_run()  # and the shared review store
                            results.append(result)
            finally:
                if browser is not None:
                    browser.close()
    notes.append("evidence marker: " + "; ".join(MARKERS[m] for m in sorted(markers)))
    if decisions:
        from benches.scale import HELD_EVERY

        for q in queues:
            if q.synthetic:
                seeded = len(q.case_ids) - OPEN_AT_THE_HEAD
                notes.append(
                    f"review store: {decisions:,} decisions over {seeded:,} of the {len(q.case_ids):,} cases, "
                    f"{len(range(0, decisions, HELD_EVERY)):,} held, in a PostgreSQL database the apps share"
                )
    if hog:
        notes.append("hog: one process spinning on one core beside the app, the server and the browser")
    for result in results:
        if result.keys != {"N"}:
            notes.append(f"{result.label}: the page has no next-unreviewed key; N was timed with J")
    return summarise(results, runs, notes)


def summarise(results: list[SizeResult], runs: int, notes: list[str]) -> dict:
    """Medians per measurement, one cell per (size, load), each judged against its load's target."""
    rows = []
    for what, label in LABELS.items():
        targets = dict(zip(LOADS, TARGETS_MS[what], strict=True))
        cells = []
        for r in results:
            med = r.median(what)
            cells.append(
                {
                    "size": r.label,
                    "load": r.load,
                    "median_ms": None if med is None else round(med, 1),
                    "samples_ms": [round(s, 1) for s in r.samples[what]],
                    "verdict": None if med is None else ("PASS" if med <= targets[r.load] else "MISS"),
                }
            )
        rows.append({"name": label, "targets_ms": targets, "sizes": cells})
    return {"runs": runs, "viewport": f"{VIEWPORT['width']}x{VIEWPORT['height']}", "rows": rows, "notes": notes}


def print_report(report: dict, out=sys.stdout) -> None:
    columns = [f"{c['size']}, {c['load']}" for c in report["rows"][0]["sizes"]] if report["rows"] else []
    w = max(len(r["name"]) for r in report["rows"])
    cw = max([len(s) for s in columns] + [16])
    print(f"\nChromium {report['viewport']}, medians of {report['runs']} run(s)", file=out)
    print(
        f"{'measurement'.ljust(w)}  " + "  ".join(s.rjust(cw) for s in columns) + "    target (quiet / hog)", file=out
    )
    for row in report["rows"]:
        cells = []
        for c in row["sizes"]:
            value = "-" if c["median_ms"] is None else f"{c['median_ms'] / 1000:.2f} s {c['verdict']}"
            cells.append(value.rjust(cw))
        targets = " / ".join(f"{t / 1000:g} s" for t in row["targets_ms"].values())
        print(f"{row['name'].ljust(w)}  " + "  ".join(cells) + f"    <= {targets}", file=out)
    for note in report["notes"]:
        print(f"note: {note}", file=out)


def _sizes(value: str) -> list[int]:
    try:
        sizes = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("a comma-separated list of queue sizes, e.g. 18,1000") from None
    if not sizes or any(s < 2 for s in sizes):
        raise argparse.ArgumentTypeError("each queue size must be at least 2 (J needs a next case)")
    return sizes


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=[18, 1000],
        help="queue sizes; the demo queue's size (18) means the demo queue on the demo precedents, "
        "any other a synthetic queue on the bench bank",
    )
    parser.add_argument("--runs", type=int, default=3, help="fresh app processes per size (the medians are of these)")
    parser.add_argument(
        "--bank-size", type=int, default=10_000, help="memories in the bench bank of the synthetic queues"
    )
    parser.add_argument(
        "--hog", action="store_true", help="measure again beside a CPU hog (one process spinning on one core)"
    )
    parser.add_argument(
        "--decisions",
        type=int,
        default=0,
        help="decisions in a PostgreSQL review store shared by the app processes, over each synthetic "
        "queue's cases (e.g. 1000000 with --sizes 100000; a scratch database, dropped after)",
    )
    parser.add_argument("--json", action="store_true")


@command(
    "browser",
    "time the Finance exceptions page in Chromium: first page, cold open, J, K, N and a decision",
    _args,
)
def run_bench_browser(args: argparse.Namespace) -> int:
    if args.runs < 1:
        print("error: --runs: must be at least 1", file=sys.stderr)
        return 2
    if args.bank_size < 1:
        print("error: --bank-size: must be at least 1", file=sys.stderr)
        return 2
    if args.decisions < 0:
        print("error: --decisions: must be 0 or more", file=sys.stderr)
        return 2
    try:
        figures = run(
            args.sizes,
            args.runs,
            args.bank_size,
            args.hog,
            log=lambda m: print(m, file=sys.stderr, flush=True),
            decisions=args.decisions,
        )
    except BadArguments as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_report(figures)
    return 0
