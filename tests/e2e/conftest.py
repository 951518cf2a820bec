"""Browser fixtures: one real embedded Hindsight (the session's `hindsight`); per test, fresh demo banks
and one app process (a fork of a warmed one, tests/warm_app.py) on a free loopback port; Debian's Chromium driven
by Playwright. Everything started here is stopped here, by PID (the app's whole process group)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from dashboard.cli.app_server import serve_app
from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.wire import MemoryRecord
from dashboard.store.db import make_engine
from tests.conftest import SIGNING_SECRET, forget_banks, seed_demo_banks
from tests.warm_app import start_warmed

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("RECALL_REVIEW_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts" / "e2e"
README_SHOTS = REPO / "docs" / "screenshots"
UPDATE_SHOTS = os.environ.get("RECALL_REVIEW_UPDATE_SCREENSHOTS") == "1"
# A full-page picture re-lays the whole page out twice (Streamlit scrolls inside its own container): ~2 s of a loaded
# machine per step, so by default each step keeps what the window shows, and the full page on request.
FULL_SHOTS = UPDATE_SHOTS or os.environ.get("RECALL_REVIEW_FULL_SCREENSHOTS") == "1"

# Untrusted memory text: must render as literal text, never as HTML or markdown.
XSS_IMG = "<img src=x onerror=alert(1)>"
XSS_LINK = "[x](javascript:alert(1))"
XSS_REMOTE = "![](http://127.0.0.1:9/p.png)"
PROBE_CASE = "E-1015"  # V12 Brightline price variance: the probe is retained under its vendor and type
PROBE_TEXT = f"Probe precedent for V12 price variance. {XSS_IMG} {XSS_LINK} {XSS_REMOTE} end of probe."


def pytest_collection_modifyitems(items):
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test leaves a picture of every page it had open (test-artifacts/e2e/failed/): the page
    as it stood when the assertion gave up, which the assertion's message alone does not say. Its report also
    carries the end of its app's log and what the browser's console said: a click that seemed to do nothing
    leaves its trace there, if anywhere."""
    report = yield
    if report.when == "call" and report.failed:
        app = item.funcargs.get("app") or item.funcargs.get("read_only_app")
        if isinstance(app, App) and app.log.exists():
            report.sections.append(
                ("app log (last 60 lines)", "\n".join(app.log.read_text(errors="replace").splitlines()[-60:]))
            )
        if console := getattr(item.funcargs.get("page"), "console_seen", None):
            report.sections.append(("browser console (last 40 messages)", "\n".join(console[-40:])))
    browser = item.funcargs.get("browser")
    if report.when == "call" and report.failed and browser is not None:
        pages = [page for context in browser.contexts for page in context.pages]
        folder = ARTIFACTS / "failed"
        folder.mkdir(parents=True, exist_ok=True)
        for n, page in enumerate(pages, 1):
            try:
                page.screenshot(path=str(folder / f"{item.name}-{n}.png"), full_page=True, timeout=10_000)
            except Exception as exc:  # a closed page: say so, never hide the test's own failure
                report.sections.append(("failure screenshot", f"page {n}: {exc}"))
    return report


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, tmp_path_factory):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium (scripts/setup installs it; "
            "or apt-get install chromium). They are never skipped.",
            pytrace=False,
        )
    home = tmp_path_factory.mktemp("chromium-home")  # Chromium writes nothing into the real home
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "headless": True,
        "env": {**os.environ, "HOME": str(home)},
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT}


@dataclass
class App:
    url: str
    finance_bank: str
    support_bank: str
    data_dir: Path
    log: Path

    def outbox(self) -> Outbox:
        """The app's review store: the store the app process opens from the same settings."""
        return Outbox(make_engine(None, self.data_dir), signing_key=SIGNING_SECRET)


@pytest.fixture
def app_env() -> dict[str, str]:
    """Settings a test module adds to its app's environment (override this fixture); none by default."""
    return {}


@pytest.fixture
def app(hindsight, demo_banks, app_env) -> App:
    """A fresh app for each test: its own demo banks, its own empty decision outbox, its own process, so
    every test passes alone and in any order."""
    with serving(hindsight, demo_banks, app_env) as app:
        yield app


@pytest.fixture(scope="module")
def read_only_app(hindsight) -> Iterator[App]:
    """One app for a module whose tests only read its pages (nothing typed, nothing decided): demo banks and a process
    of its own, started once for the module instead of once per test (each start is a demo copy and an app fork)."""
    banks = seed_demo_banks(hindsight)
    try:
        with serving(hindsight, banks, {}) as app:
            yield app
            assert app.outbox().history() == [], "a test given the read-only app recorded a decision: give it `app`"
    finally:
        forget_banks(hindsight, banks.finance, banks.support)


@contextmanager
def serving(hindsight, demo_banks, app_env: dict[str, str]) -> Iterator[App]:
    """An app on `demo_banks` (and the untrusted-text probe) with an empty review store, in a process of its own."""
    fin, sup = demo_banks.finance, demo_banks.support
    hindsight.gateway.retain(
        fin,
        [
            MemoryRecord(
                document_id="probe-untrusted-text",
                content=PROBE_TEXT,
                tags=["vendor:V12", "type:price_variance"],
                metadata={"kind": "probe"},
                context="untrusted text probe",
            )
        ],
    )
    data_dir = Path(tempfile.mkdtemp(prefix="recall-review-e2e-"))  # the app's own review store
    env = {k: v for k, v in os.environ.items() if k != "HINDSIGHT_API_URL"}
    env.update(hindsight.env(finance=fin, support=sup))
    env.update(app_env)
    try:
        with serve_app(env, data_dir, start=start_warmed) as url:
            yield App(url=url, finance_bank=fin, support_bank=sup, data_dir=data_dir, log=data_dir / "streamlit.log")
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


class Shots:
    """A screenshot of each step in test-artifacts/e2e/: the window, or the full page with
    RECALL_REVIEW_FULL_SCREENSHOTS=1; with RECALL_REVIEW_UPDATE_SCREENSHOTS=1 (full pages) the README's ones are
    also written to docs/screenshots/."""

    def __init__(self):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.n = 0

    def __call__(self, page, name: str, readme: bool = False) -> Path:
        self.n += 1
        path = ARTIFACTS / f"{name}.png"
        page.mouse.move(0, 0)  # no hover tooltip in the picture
        if not FULL_SHOTS:
            settled(page)
            page.screenshot(path=str(path))
            return path
        page.wait_for_timeout(300)  # let charts finish their transition
        # Streamlit scrolls inside its main container, so a "full page" shot needs a viewport as tall as it.
        height = page.evaluate(
            "() => Math.max(...['stMain', 'stAppViewContainer'].map(id => document.querySelector(`[data-testid=${id}]`)?.scrollHeight || 0))"
        )
        size = page.viewport_size
        page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height), 8000))})
        page.wait_for_timeout(300)
        settled(page)  # no grey skeleton either: a loaded machine left them in the README's pictures
        page.screenshot(path=str(path), full_page=True)
        page.set_viewport_size(size)
        if readme and UPDATE_SHOTS:
            README_SHOTS.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, README_SHOTS / f"{name}.png")
        return path


@pytest.fixture(scope="session")
def shots() -> Shots:
    return Shots()


# -- what every browser test does: wait on real signals, press keys, find headings and cells ----------
WAIT = 60_000  # ms: a cold app process under load can take this long to answer
expect.set_options(timeout=WAIT)
VIEWPORT = {"width": 1440, "height": 900}


@pytest.fixture
def page(page: Page) -> Page:
    page.set_default_timeout(WAIT)
    page.set_viewport_size(VIEWPORT)
    page.console_seen = []  # read by the failure report
    page.on("console", lambda message: page.console_seen.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: page.console_seen.append(f"page error: {error}"))
    return page


def settled(page: Page) -> None:
    """Wait until the page's script run has finished (Streamlit marks the app `notRunning`) and the code of every
    element it drew has loaded: until then such an element is a grey skeleton, and a click or key meant for it
    is lost (measured: a key pressed as the run ended did nothing for ~1 s, while 33 skeletons showed)."""
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning", timeout=WAIT)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=WAIT)


def click_button(page: Page, name: str | re.Pattern) -> None:
    """Click a button once the page's script run has finished: a click that lands while the page reruns can be lost."""
    settled(page)
    page.get_by_role("button", name=name).click()


def click_when_still(page: Page, locator) -> None:
    """Click `locator` once the page has settled and the element has stopped moving: what an expander just opened
    lays out (its tables size themselves once drawn) can move a link after Playwright's own two-frame check, and
    the click then lands beside it (a trace link that did not navigate, one clean-clone run in two)."""
    settled(page)
    locator.scroll_into_view_if_needed()
    page.wait_for_function(
        """element => new Promise(done => {
            const box = () => JSON.stringify(element.getBoundingClientRect());
            const before = box();
            setTimeout(() => done(box() === before), 200);
        })""",
        arg=locator.element_handle(),
        timeout=WAIT,
    )
    locator.click()


def press(page: Page, *keys: str) -> None:
    """Press review keys with the focus on no field (a key typed into a field never triggers them), each once the
    page has settled and the button carrying that key is enabled: Streamlit binds a button's shortcut only once the
    button is drawn and enabled, so a key pressed before then is lost (a click waits; a key does not)."""
    for key in keys:
        settled(page)
        button = page.get_by_role("button", name=re.compile(rf"Shortcut {re.escape(key.upper())}$"))
        if button.count():  # "r" (rerun) is Streamlit's own key, on no button
            expect(button).to_be_enabled()
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        page.keyboard.press(key)


def decision_form(page: Page):
    """The open finance case's decision form (a bordered box keyed by its case, not a st.form: its fields are sent as
    they change, so an unsent override is kept as the case's draft)."""
    return page.locator('[class*="st-key-decision_form_"]')


def ticket_form(page: Page):
    """The open ticket's decision form (a bordered box keyed by its ticket: its fields are sent as they change, so an
    unsent decision is kept as the ticket's draft)."""
    return page.locator('[class*="st-key-ticket_decision_"]')


def heading(page: Page, text: str):
    return page.get_by_role("heading", name=re.compile("^" + re.escape(text)))


def open_select(page: Page, label: str, last: bool = False):
    """Open the st.selectbox with this label and wait for its list; returns its input. The box is scrolled to the
    middle first, as a reader would see it: at the viewport's bottom edge the list opening scrolls the page and
    closes again (measured: 6 to 10 of 10 clicks opened nothing there, 0 of 10 once centred)."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label).locator("input")
    box = box.last if last else box
    box.evaluate("input => input.scrollIntoView({block: 'center'})")
    box.click()
    expect(page.get_by_role("option").first).to_be_visible()
    return box


def choose(page: Page, label: str, option: str) -> None:
    """Pick an option of a st.selectbox by its label (typing filters the list)."""
    box = open_select(page, label)
    box.press_sequentially(option)
    page.get_by_role("option").filter(has_text=option).first.click()


def metric(page: Page, label: str):
    """The value of the st.metric with exactly this label ("Decided" is not "Cases decided")."""
    label_is = page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    return page.get_by_test_id("stMetric").filter(has=label_is).get_by_test_id("stMetricValue")


def grid_cells(page: Page, *expected: str) -> str:
    """The text of the grid cells on screen (a canvas grid draws accessibility cells only for the rows it shows),
    once every `expected` text is among them."""
    if expected:
        page.wait_for_function(
            "texts => { const all = [...document.querySelectorAll('[id^=glide-cell]')].map(c => c.innerText).join('\\n');"
            " return texts.every(t => all.includes(t)); }",
            arg=list(expected),
            timeout=WAIT,
        )
    return "\n".join(page.locator("[id^=glide-cell]").all_inner_texts())


def paste_over_the_limit(page: Page, note_label: str, submit: str) -> None:
    """Paste a 5,004-character note and submit: refused, the box keeps the first 4,000 and the cut part is shown
    in full (a browser would drop a paste over a field's max length whole)."""
    note = "".join(f"{i:05d} " for i in range(834))
    box = page.locator(f'textarea[aria-label="{note_label}"]')
    box.fill(note)
    click_button(page, submit)
    expect(
        page.get_by_text(re.compile(r"Not submitted: your note was 5,004 characters; the limit is 4,000"))
    ).to_be_visible()
    settled(page)
    assert box.input_value() == note[:4000]
    assert page.get_by_test_id("stCode").inner_text().strip() == note[4000:].strip()  # the cut part, in full
