"""`python -m benches team`: N reviewers at once on one app instance, each in its own Chromium context (its own
Streamlit session) or its own agent-API session, against a real Hindsight.

Every cell (N reviewers, a pace, a load) gets a fresh app started as people start it (`streamlit run` on the app's entry
file, its own review store). By default the team shares the demo queue on the demo precedents, as issue 45 measured
it: reviewer i opens the i-th nth of the queue, types its name as a person does (a key at a time, then Esc), then
presses J (K at the queue's last case) and every fifth key A (accept), so claims, decisions and held cases of one
reviewer meet the others' keys. With another --size the queue is synthetic (on the bench bank) and each reviewer keeps
to a stretch of its own. A key landed only when it did what it says within LOST_AFTER_S: the next case's evidence drawn
under a header naming the case in the address bar (for A, with its confirmation), or, for J/K with nowhere to go, the
page saying so. An A the page refused (nothing recorded, and why said) did not land, and neither did a key nothing came
of: both count as lost, except an A refused because another reviewer had already decided the case (the page naming
their standing decision, or their decision made meanwhile): that refusal is right, and is counted apart. A typed value
is lost when, once a key's run is drawn, the name typed is no longer in its box.
Two paces:

- paced: a key every `pace` seconds per reviewer (starts staggered over the first interval); a key still unsettled at
  its slot is waited for first (a reviewer does not press ahead of a screen that has not moved);
- fast: the next key as soon as the page has settled (its run done, no skeleton), as a reviewer racing the queue.

Reported per cell: the median, p90 and p95 of J and of every key, and the keys lost, beside N=1 in the same run;
quiet, and with `--hog` again beside a CPU hog. After the run the review store is read back: every A that landed is
exactly one decision of that reviewer on the case the screen showed, and a refused A none. Everything it starts it stops, by PID.

With `--client browser` (the default) the clients are real browsers sharing the machine's cores with the app and
Hindsight, so the tails include the browsers' own CPU. With `--client protocol` each reviewer is a session of Streamlit's
agent API (`/_stcore/agent/interact`, the app started with `server.enableAgentApi`): the same buttons and callbacks (a
key is its button's trigger, scoped to the fragment as the browser's is), answered once the run has settled, so a key's
time is the app's own share with no browser on the machine. The two are reported apart, never mixed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benches.browser import CHROMIUM, EVIDENCE_SHOWN, IDLE, NO_SKELETON, VIEWPORT, _load, _prepare
from benches.registry import command
from dashboard.cli.app_server import serve_app

LOST_AFTER_S = 60.0
DECIDED_BY_ANOTHER = "decided by another"  # an A refused, rightly: another reviewer's decision stands on the case
# The refusal names the standing decision ("E-1004 is already decided: ... by <reviewer>, revision 1") or the one made
# meanwhile ("Not recorded yet: <reviewer> decided this case meanwhile"; an alert's text starts with its icon's name);
# a reviewer's own is not another's.
BY_ANOTHER = """(t, previous, me) => t.includes('Not recorded') && !t.includes(' by ' + me + ', revision')
  && !t.includes('Not recorded yet: ' + me + ' decided') && (t.includes(previous + ' is already decided:')
  || t.includes(' decided this case meanwhile'))"""
TYPING_DELAY_MS = 90  # between the keys of a typed reviewer name
ACCEPT_EVERY = 5  # every fifth key is A
TARGETS_S = {"paced": {"J median": 0.4, "J p95": 1.0}, "fast": {}}  # fast: median <= 3x the single reviewer's
SEEN = """() => JSON.stringify({
  focus: document.activeElement && (document.activeElement.getAttribute('aria-label') || document.activeElement.tagName),
  state: document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state'),
  alerts: Array.from(document.querySelectorAll('[data-testid=stAlert]')).map((el) => el.innerText.slice(0, 160)),
})"""
LANDED = f"""([previous, accept, me]) => {{
  const fresh = (el) => el.closest('[data-stale="true"]') === null && el.checkVisibility();
  const alerts = Array.from(document.querySelectorAll('[data-testid=stAlert]')).filter(fresh).map((el) => el.innerText);
  if (accept && alerts.some((t) => ({BY_ANOTHER})(t, previous, me))) return '{DECIDED_BY_ANOTHER}';
  if (accept && alerts.some((t) => t.includes('Not recorded'))) return 'refused';
  if (accept && alerts.some((t) => t.startsWith(previous + ': second review recorded'))) return 'second review';
  if (!accept && alerts.some((t) => t.includes(previous) && t.includes('there is no'))) return 'said';
  const moved = ({EVIDENCE_SHOWN})(previous);
  if (moved && (!accept || alerts.some((t) => / recorded: /.test(t)))) return 'moved';
  return false;
}}"""


@dataclass
class Press:
    reviewer: int
    key: str
    case: str  # the case on screen when it was pressed
    seconds: float | None  # None: lost (nothing moved within LOST_AFTER_S)
    after: str = ""  # the case in the address bar once it landed or was given up
    seen: str = ""  # for a lost key: what the page showed (its alerts, the focused element)
    how: str = (
        ""  # moved, refused (A: nothing recorded, and why said), decided by another (A: refused, rightly, another
    )
    # reviewer's decision standing), second review (A: the approval a held case awaited) or said (J/K: nowhere to go)
    name_kept: bool = True  # the reviewer name typed at the start still in its box once this key's run was drawn

    @property
    def landed(self) -> bool:
        """It did what it says: a refusal said why it did nothing, and is no landing."""
        return self.seconds is not None and self.how not in ("refused", DECIDED_BY_ANOTHER)

    @property
    def lost(self) -> bool:
        """Neither landed nor rightly refused (another reviewer's decision stands on the case)."""
        return not self.landed and self.how != DECIDED_BY_ANOTHER


@dataclass
class Cell:
    reviewers: int
    pace: str  # "paced" or "fast"
    load: str
    presses: list[Press] = field(default_factory=list)
    decisions_checked: str = ""

    def times(self, keys: str) -> list[float]:
        return sorted(p.seconds for p in self.presses if p.key in keys and p.landed)

    def lost(self) -> int:
        """Keys that did not do what they say: nothing within LOST_AFTER_S, or a refusal (but not another's decision)."""
        return sum(p.lost for p in self.presses)

    def refused(self) -> int:
        return sum(p.how == "refused" for p in self.presses)

    def decided_by_another(self) -> int:
        """A's rightly refused: another reviewer had already decided the case."""
        return sum(p.how == DECIDED_BY_ANOTHER for p in self.presses)

    def names_lost(self) -> int:
        """Keys after whose run the reviewer's typed name was no longer in its box."""
        return sum(not p.name_kept for p in self.presses)


def quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


async def _settled(page) -> None:
    await page.wait_for_selector(IDLE, state="attached", timeout=LOST_AFTER_S * 1000)
    await page.wait_for_function(NO_SKELETON, timeout=LOST_AFTER_S * 1000)


async def _landed(page, previous: str, accept: bool, me: str) -> str | None:
    """How the key landed: "moved" (the next case drawn; for A with its confirmation), "refused" (A: the page said
    why nothing was recorded), "decided by another" (A: refused, as another reviewer than `me` had decided the case) or
    "said" (J/K: the page said there is nowhere to go); None: lost."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        answer = await page.wait_for_function(
            LANDED, arg=[previous, accept, me], timeout=LOST_AFTER_S * 1000, polling="raf"
        )
        return await answer.json_value()
    except PlaywrightTimeout:  # the key did nothing the reviewer could see
        return None


async def _case(page) -> str:
    return await page.evaluate("() => new URLSearchParams(location.search).get('case')")


async def _reviewer(
    browser,
    url: str,
    i: int,
    start_case: str,
    last_case: str,
    keys: int,
    pace_s: float | None,
    stagger_s: float,
    presses: list[Press],
    shots: Path | None = None,
) -> None:
    context = await browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(LOST_AFTER_S * 1000 * 5)  # eight sessions opening at once on two cores
    try:
        page = await context.new_page()
        await page.goto(f"{url}/exceptions?case={start_case}")
        await page.wait_for_function(EVIDENCE_SHOWN, arg=None, timeout=LOST_AFTER_S * 1000 * 5, polling="raf")
        name, typed = page.locator('input[aria-label="Reviewer name"]'), f"Team Reviewer {i + 1}"
        await name.click()
        await name.press_sequentially(typed, delay=TYPING_DELAY_MS)  # as a person types it, a key at a time
        await page.keyboard.press("Escape")  # leaves the box (the keys work again): the name is sent
        await _settled(page)
        await asyncio.sleep(stagger_s)
        begun = time.perf_counter()
        for n in range(keys):
            case = await _case(page)
            key = "a" if (n + 1) % ACCEPT_EVERY == 0 else ("k" if case == last_case else "j")
            await page.evaluate("() => document.activeElement && document.activeElement.blur()")
            start = time.perf_counter()
            await page.keyboard.press(key)
            landed = await _landed(page, case, key == "a", typed)
            press = Press(
                i,
                key.upper(),
                case,
                time.perf_counter() - start if landed else None,
                await _case(page),
                how=landed or "",
            )
            if landed:
                await _settled(page)  # the run this key started, drawn: the typed name must still be there
                press.name_kept = await name.input_value() == typed
            if not press.landed or not press.name_kept:
                press.seen = await page.evaluate(SEEN)
                if shots is not None:
                    await page.screenshot(path=str(shots / f"lost-r{i + 1}-{n + 1}-{key}.png"))
            presses.append(press)
            if pace_s is None:
                await _settled(page)
            else:
                await asyncio.sleep(max(0.0, begun + (n + 1) * pace_s - time.perf_counter()))
    finally:
        await context.close()


TRIGGERS = {
    "j": "exc_next",
    "k": "exc_prev",
    "a": "exc_accept",
}  # the keyboard bar's buttons (components/review_keys.py)


def _shown(node, found: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """(type, body) of the headers and alerts in an agent-API snapshot's tree, in order."""
    found = [] if found is None else found
    if isinstance(node, dict):
        if node.get("type") in ("header", "success", "warning", "error", "info"):
            found.append((node["type"], str((node.get("props") or {}).get("body", ""))))
        for value in node.values():
            _shown(value, found)
    elif isinstance(node, list):
        for value in node:
            _shown(value, found)
    return found


def by_another(alert: str, previous: str, me: str) -> bool:
    """The refusal of an A names another reviewer's decision standing on the case (BY_ANOTHER, in Python)."""
    return (
        "Not recorded" in alert
        and f" by {me}, revision" not in alert
        and f"Not recorded yet: {me} decided" not in alert
        and (f"{previous} is already decided:" in alert or " decided this case meanwhile" in alert)
    )


def agent_landed(snapshot: dict, previous: str, accept: bool, me: str = "") -> str | None:
    """How a key landed, read from the settled page the agent API answers with (the browser's LANDED, on its tree)."""
    shown = _shown(snapshot.get("tree"))
    alerts = [body for kind, body in shown if kind != "header"]
    if accept and any(by_another(body, previous, me) for body in alerts):
        return DECIDED_BY_ANOTHER
    if accept and any("Not recorded" in body for body in alerts):
        return "refused"
    if accept and any(body.startswith(f"{previous}: second review recorded") for body in alerts):
        return "second review"  # the case awaited another reviewer's approval: this A gave it, and the case stays
    if not accept and any(previous in body and "there is no" in body for body in alerts):
        return "said"
    case = ((snapshot.get("query_params") or {}).get("case") or [None])[0]
    moved = case not in (None, previous) and any(
        kind == "header" and body.startswith(f"{case}:") for kind, body in shown
    )
    if moved and (not accept or any(" recorded: " in body for body in alerts)):
        return "moved"
    return None


async def _agent_reviewer(
    url: str,
    i: int,
    start_case: str,
    last_case: str,
    keys: int,
    pace_s: float | None,
    stagger_s: float,
    presses: list[Press],
) -> None:
    """One reviewer's session driven through Streamlit's agent API (`/_stcore/agent/interact`): the same widgets and
    callbacks as the browser's keys (each shortcut is its button's trigger), each request answered once the run
    settled, with no browser's CPU on the machine. A key's time is its request's round trip."""
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=LOST_AFTER_S * 5) as client:

        async def interact(body: dict) -> dict:
            answer = await client.post("/_stcore/agent/interact", json=body)
            snapshot = answer.json()
            if answer.status_code != 200:
                raise RuntimeError(f"{answer.status_code}: {snapshot}")
            return snapshot

        session = (await interact({"page": "exceptions", "query_params": {"case": [start_case]}}))["session_id"]
        me = f"Team Reviewer {i + 1}"
        snapshot = await interact({"session_id": session, "widget_state": {"reviewer_name": me}})
        await asyncio.sleep(stagger_s)
        begun = time.perf_counter()
        client.timeout = httpx.Timeout(LOST_AFTER_S)
        for n in range(keys):
            case = ((snapshot.get("query_params") or {}).get("case") or [""])[0]
            key = "a" if (n + 1) % ACCEPT_EVERY == 0 else ("k" if case == last_case else "j")
            start = time.perf_counter()
            try:
                snapshot = await interact({"session_id": session, "trigger": {"key": TRIGGERS[key]}})
                landed, seen = agent_landed(snapshot, case, key == "a", me), ""
            except (httpx.HTTPError, RuntimeError) as exc:  # no answer within LOST_AFTER_S, or the API refused it
                landed, seen = None, str(exc)[:300]
            after = ((snapshot.get("query_params") or {}).get("case") or [""])[0]
            press = Press(
                i, key.upper(), case, time.perf_counter() - start if landed else None, after, how=landed or ""
            )
            if not landed:
                press.seen = seen or json.dumps([body for _kind, body in _shown(snapshot.get("tree"))][:6])[:300]
            presses.append(press)
            if pace_s is not None:
                await asyncio.sleep(max(0.0, begun + (n + 1) * pace_s - time.perf_counter()))


async def _cell(
    reviewer, case_ids: list[str], last: str, n: int, keys: int, pace_s: float | None, shared: bool
) -> list[Press]:
    """Reviewer i starts at the i-th nth of the queue; `shared`: all walk one queue (K at its last case), else each keeps
    to its own stretch (K at its end)."""
    stretch = len(case_ids) // n
    presses: list[Press] = []
    await asyncio.gather(
        *(
            reviewer(
                i,
                case_ids[i * stretch],
                last if shared else case_ids[(i + 1) * stretch - 1],
                keys,
                pace_s,
                (pace_s or 0.0) * i / n,
                presses,
            )
            for i in range(n)
        )
    )
    return presses


def _check_decisions(data_dir: Path, bank: str, presses: list[Press]) -> tuple[list[str], str]:
    """Every A that landed is one decision (held ones too) by its reviewer on the case it was pressed on; nothing else
    recorded. Returns that verdict and the cases decided."""
    import sqlalchemy as sa

    from dashboard.store.db import make_engine
    from dashboard.store.schema import decisions

    engine = make_engine(None, data_dir)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.select(decisions.c.case_id, decisions.c.reviewer).where(decisions.c.bank_id == bank)
            ).all()
    finally:
        engine.dispose()
    stored = sorted((case, reviewer) for case, reviewer in rows)
    accepted = sorted((p.case, f"Team Reviewer {p.reviewer + 1}") for p in presses if p.key == "A" and p.how == "moved")
    cases = sorted({case for case, _ in stored})
    if stored == accepted:
        return (
            cases,
            f"the {len(stored)} landed A's are exactly the {len(stored)} decisions recorded, each by its reviewer on its case",
        )
    return cases, (
        f"MISMATCH between screen and store: recorded but not confirmed on screen {sorted(set(stored) - set(accepted))}, "
        f"confirmed on screen but not recorded {sorted(set(accepted) - set(stored))}"
    )


def run(
    reviewers: list[int],
    pace_s: float,
    keys: int,
    fast_keys: int,
    size: int,
    bank_size: int,
    hog: bool,
    paces: tuple[str, ...] = ("paced", "fast"),
    shots: Path | None = None,
    client: str = "browser",
    log: Callable[[str], None] = print,
) -> dict:
    import functools

    from playwright.async_api import async_playwright

    from benches.recall import machine, server_running
    from dashboard.finance.decisions import document_id_for
    from dashboard.hindsight.gateway import HindsightGateway
    from dashboard.settings import load_settings

    settings = load_settings()
    notes = [
        f"machine: {machine()}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average {os.getloadavg()[0]:.1f} at start"
    ]
    cells: list[Cell] = []
    with (
        server_running(settings, log),
        tempfile.TemporaryDirectory(prefix="bench-team-") as work,
        closing(HindsightGateway(settings.base_url, settings.api_key, timeout=300.0)) as gw,
    ):
        queue = _prepare(gw, size, bank_size, Path(work), log)  # the demo queue and bank at its size (18)
        bank, queue_file, order = queue.bank, queue.queue_file, queue.case_ids
        shared = not queue.synthetic  # the demo queue is one the whole team walks, as issue 45 measured it
        env = {
            **os.environ,
            "RECALL_REVIEW_FINANCE_BANK": bank,
            "RECALL_REVIEW_EXCEPTIONS_FILE": str(queue_file),
            "RECALL_REVIEW_API_PORT": str(settings.api_port),
            "RECALL_REVIEW_PG_PORT": str(settings.pg_port),
        }
        env.pop("RECALL_REVIEW_DATABASE_URL", None)  # each cell's app keeps its own review store
        if client == "protocol":
            env["STREAMLIT_SERVER_ENABLE_AGENT_API"] = "true"  # /_stcore/agent/interact, for this bench's apps only

        async def all_cells() -> None:
            async with async_playwright() as pw:
                browser = None
                if client == "browser":
                    browser = await pw.chromium.launch(
                        executable_path=CHROMIUM, headless=True, env={**os.environ, "HOME": work}
                    )
                try:
                    for load in ("quiet", "hog")[: 2 if hog else 1]:
                        with _load(load, Path(work)):
                            for pace in paces:
                                for n in reviewers:
                                    cell = Cell(n, pace, load)
                                    log(f"{n} reviewer(s), {pace}, {load} ...")
                                    data_dir = Path(tempfile.mkdtemp(prefix="app-", dir=work))
                                    offset = (
                                        0 if shared else len(cells) * 7
                                    )  # each cell on cases no earlier cell recalled first
                                    ids = order[offset:] + order[:offset]
                                    with serve_app(env, data_dir) as url:
                                        reviewer = (
                                            functools.partial(_reviewer, browser, url, shots=shots)
                                            if browser
                                            else functools.partial(_agent_reviewer, url)
                                        )
                                        cell.presses = await _cell(
                                            reviewer,
                                            ids,
                                            order[-1],
                                            n,
                                            keys if pace == "paced" else fast_keys,
                                            pace_s if pace == "paced" else None,
                                            shared,
                                        )
                                    decided, cell.decisions_checked = _check_decisions(data_dir, bank, cell.presses)
                                    for case_id in decided:
                                        gw.delete_document(bank, document_id_for(case_id))  # the bank as it was
                                    for p in cell.presses:
                                        if not p.landed or not p.name_kept:
                                            log(
                                                f"  {'name gone' if p.landed else p.how or 'lost'}: reviewer {p.reviewer + 1} pressed {p.key} on "
                                                f"{p.case}; the address bar then said {p.after}; {p.seen}"
                                            )
                                    log(
                                        f"  J median {_fmt(quantile(cell.times('J'), 0.5))}, p95 {_fmt(quantile(cell.times('J'), 0.95))}, "
                                        f"lost {cell.lost()} of {len(cell.presses)} ({cell.refused()} refused), A refused as {DECIDED_BY_ANOTHER} "
                                        f"{cell.decided_by_another()}, typed names lost "
                                        f"{cell.names_lost()}; {cell.decisions_checked}"
                                    )
                                    cells.append(cell)
                finally:
                    if browser is not None:
                        await browser.close()

        asyncio.run(all_cells())
    notes.append(
        f"queue: {queue.label}; "
        + (
            "every reviewer on the one queue (claims, decisions and held cases meet)"
            if shared
            else "each reviewer its own stretch of it"
        )
    )
    landed = Counter(p.how for c in cells for p in c.presses if p.seconds is not None)
    notes.append(
        "keys that landed: "
        + ", ".join(f"{n} {how}" for how, n in sorted(landed.items()))
        + " (moved: the next case drawn, with the confirmation for A; refused: A said why nothing was recorded; decided by "
        "another: A refused, rightly, another reviewer's decision standing on the case, not lost; second review: A "
        "gave the approval a held case awaited, and the case stays; "
        "said: J/K said there is nowhere to go)"
    )
    notes.append(
        "client: one headless Chromium, a context (a Streamlit session) per reviewer, driven by Playwright"
        if client == "browser"
        else "client: Streamlit's agent API over HTTP (/_stcore/agent/interact), a session per reviewer, each key its "
        "button's trigger, timed to the settled page's answer: no browser on the machine"
    )
    if hog:
        notes.append(
            f"hog: one process spinning on one core beside the app, the server{'' if client == 'protocol' else ' and the browser'}"
        )
    return summarise(cells, pace_s, notes)


def _fmt(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


def summarise(cells: list[Cell], pace_s: float, notes: list[str]) -> dict:
    rows = []
    for cell in cells:
        j, every = cell.times("J"), cell.times("JKNA")
        single = next((c for c in cells if c.reviewers == 1 and c.pace == cell.pace and c.load == cell.load), None)
        single_median = quantile(single.times("J"), 0.5) if single else None
        median = quantile(j, 0.5)
        verdict = []
        if cell.pace == "paced":
            verdict += [
                median is not None and median <= TARGETS_S["paced"]["J median"],
                (p95 := quantile(j, 0.95)) is not None and p95 <= TARGETS_S["paced"]["J p95"],
            ]
        elif single_median and median is not None:
            verdict.append(median <= 3 * single_median)
        verdict += [cell.lost() == 0, cell.names_lost() == 0]
        rows.append(
            {
                "reviewers": cell.reviewers,
                "pace": f"a key every {pace_s:g} s" if cell.pace == "paced" else "as fast as it settles",
                "load": cell.load,
                "J_median_s": median,
                "J_p90_s": quantile(j, 0.9),
                "J_p95_s": quantile(j, 0.95),
                "all_median_s": quantile(every, 0.5),
                "all_p95_s": quantile(every, 0.95),
                "lost": cell.lost(),
                "refused": cell.refused(),
                "decided_by_another": cell.decided_by_another(),
                "names_lost": cell.names_lost(),
                "keys": len(cell.presses),
                "store": cell.decisions_checked,
                "verdict": "PASS" if all(verdict) else "MISS",
            }
        )
    return {"rows": rows, "notes": notes}


def print_report(report: dict, out=sys.stdout) -> None:
    print(
        "\n| reviewers | pace | load | J median | J p90 | J p95 | all keys median | all keys p95 | keys lost | A refused: decided by another | typed values lost | verdict |",
        file=out,
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|", file=out)
    for r in report["rows"]:
        print(
            f"| {r['reviewers']} | {r['pace']} | {r['load']} | {_fmt(r['J_median_s'])} | {_fmt(r['J_p90_s'])} | "
            f"{_fmt(r['J_p95_s'])} | {_fmt(r['all_median_s'])} | {_fmt(r['all_p95_s'])} | {r['lost']} of {r['keys']} ({r['refused']} refused) | "
            f"{r['decided_by_another']} | {r['names_lost']} | {r['verdict']} |",
            file=out,
        )
    for r in report["rows"]:
        print(f"note: {r['reviewers']} reviewer(s), {r['pace']}, {r['load']}: {r['store']}", file=out)
    for note in report["notes"]:
        print(f"note: {note}", file=out)
    print(
        "targets: a key every 3 s at 8 reviewers: J median <= 0.4 s, p95 <= 1.0 s; as fast as it settles: J median "
        "<= 3x the single reviewer's; 0 keys lost everywhere",
        file=out,
    )


def _counts(value: str) -> list[int]:
    try:
        counts = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError("a comma-separated list of reviewer counts, e.g. 1,4,8") from None
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError("each count must be at least 1")
    return counts if counts[0] == 1 else [1, *counts]  # N=1 beside the others, in the same run


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reviewers", type=_counts, default=[1, 4, 8], help="reviewer counts (1 is always measured too)"
    )
    parser.add_argument("--pace", type=float, default=3.0, help="seconds between one reviewer's keys, paced")
    parser.add_argument("--keys", type=int, default=8, help="keys per reviewer, paced")
    parser.add_argument("--fast-keys", type=int, default=10, help="keys per reviewer, as fast as the page settles")
    parser.add_argument(
        "--size",
        type=int,
        default=18,
        help="18: the demo queue on the demo precedents, one queue for the whole team (as issue 45 "
        "measured); any other: a synthetic queue on the bench bank, each reviewer a stretch of it",
    )
    parser.add_argument("--bank-size", type=int, default=1000, help="memories in the bench bank")
    parser.add_argument("--hog", action="store_true", help="measure again beside a CPU hog (one process on one core)")
    parser.add_argument(
        "--paces",
        type=lambda v: tuple(p for p in v.split(",") if p),
        default=("paced", "fast"),
        help="which paces: paced, fast or both (paced,fast)",
    )
    parser.add_argument("--shots", type=Path, help="a folder for a screenshot of the page at each lost key")
    parser.add_argument(
        "--client",
        choices=("browser", "protocol"),
        default="browser",
        help="browser: a Chromium context per reviewer; protocol: Streamlit's agent API over HTTP (no "
        "browser's CPU on the machine: the app's own share of each key)",
    )
    parser.add_argument("--json", action="store_true")


@command("team", "N reviewers at once on one app in Chromium: key times per N and lost keys, paced and fast", _args)
def run_bench_team(args: argparse.Namespace) -> int:
    if args.pace <= 0 or args.keys < 1 or args.fast_keys < 1:
        print("error: --pace, --keys and --fast-keys must be positive", file=sys.stderr)
        return 2
    if args.size != 18 and args.size < 2 * max(args.reviewers) * 2:
        print(
            f"error: --size: {args.size} cases are too few for {max(args.reviewers)} reviewers' stretches",
            file=sys.stderr,
        )
        return 2
    if not set(args.paces) <= {"paced", "fast"} or not args.paces:
        print("error: --paces: paced, fast or paced,fast", file=sys.stderr)
        return 2
    figures = run(
        args.reviewers,
        args.pace,
        args.keys,
        args.fast_keys,
        args.size,
        args.bank_size,
        args.hog,
        args.paces,
        args.shots,
        args.client,
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    print(json.dumps(figures, indent=2) if args.json else "", end="")
    if not args.json:
        print_report(figures)
    return 0
