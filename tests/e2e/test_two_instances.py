"""Two dashboard instances on one PostgreSQL review store and one Hindsight, behind a real load balancer (Debian's
HAProxy, tests/load_balancer.py, the configuration docs/scaling.md shows): reviewers reach the app only through the
balancer's address. A reviewer's session stays on its instance (sticky by the cookie HAProxy inserts), a decision made
through one instance is in the other's evidence at its next case open (review.freshness, not a cache expiry), and two
reviewers deciding one case on the two instances leave one decision: the second is refused, in words."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Response, expect

from dashboard import demo_data
from dashboard.delivery.outbox import Outbox, StoredDecision
from dashboard.store.db import make_engine
from tests.conftest import SIGNING_SECRET, DemoBanks, review_database, seed_demo_banks
from tests.e2e.conftest import VIEWPORT, WAIT, click_button, heading, press, serve_app, settled
from tests.load_balancer import COOKIE, INSTANCE_HEADER, Balancer, load_balancer
from tests.warm_app import start_warmed

pytestmark = pytest.mark.browser
SIBLING = "E-1902"  # a second V02 price variance: E-1002's decision is its exact precedent
CONTESTED = "E-1005"  # V03 quantity mismatch: no other case of the queue shares its vendor and type
REVIEWER_NAME = 'input[aria-label="Reviewer name"]'


@dataclass
class Team:
    balancer: Balancer
    store_url: str
    instances: dict[str, str]  # HAProxy's server name -> the instance's own URL (only HAProxy uses it)
    user_agent: str  # the browser's own, which each context extends with its reviewer's name (HAProxy logs it)

    def decisions(self, case_id: str) -> list[StoredDecision]:
        """Every decision on the finance case in the review store both instances share, newest first."""
        engine = make_engine(self.store_url, Path(tempfile.gettempdir()))  # a URL: the folder is not used
        try:
            return Outbox(engine, signing_key=SIGNING_SECRET).history("exception", case_id)
        finally:
            engine.dispose()


@pytest.fixture(scope="module")
def team(hindsight, browser: Browser, tmp_path_factory) -> Iterator[Team]:
    """Two app instances (their own data directories and processes; one PostgreSQL review store, one Hindsight, fresh
    demo banks) and HAProxy before them; everything stopped by PID after, whatever happens."""
    folder = tmp_path_factory.mktemp("two-instances")
    banks: DemoBanks = seed_demo_banks(hindsight)
    queue_file = folder / "exceptions.csv"  # the demo queue plus a second Acme Fasteners price variance
    rows = demo_data.EXCEPTIONS.read_text().splitlines()
    e1002 = next(r for r in rows if r.startswith("E-1002,"))
    queue_file.write_text(
        "\n".join([*rows, e1002.replace("E-1002,", f"{SIBLING},", 1).replace("INV-9101", "INV-9901")]) + "\n"
    )
    with review_database(hindsight.settings) as store_url, ExitStack() as stack:
        env = {k: v for k, v in os.environ.items() if k != "HINDSIGHT_API_URL"}
        env.update(hindsight.env(finance=banks.finance, support=banks.support))
        env.update(RECALL_REVIEW_DATABASE_URL=store_url, RECALL_REVIEW_EXCEPTIONS_FILE=str(queue_file))
        instances = {}
        for name in ("a", "b"):
            data_dir = Path(tempfile.mkdtemp(prefix=f"recall-review-instance-{name}-"))  # each instance's own
            stack.callback(shutil.rmtree, data_dir, ignore_errors=True)
            instances[name] = stack.enter_context(serve_app(env, data_dir, start=start_warmed))
        balancer = stack.enter_context(load_balancer(instances, folder / "haproxy"))
        probe = browser.new_page()
        user_agent = probe.evaluate("navigator.userAgent")
        probe.close()
        yield Team(balancer, store_url, instances, user_agent)


class Reviewer:
    """A reviewer's own browser (a context: its own cookies, so its own sticky instance), reaching the app only
    through the balancer; every response it gets is kept with the instance HAProxy says answered it."""

    def __init__(self, browser: Browser, team: Team, name: str, instance: str | None = None):
        self.name, self.team = name, team
        self.user_agent = f"{team.user_agent} reviewer/{name.replace(' ', '-')}"
        self.context: BrowserContext = browser.new_context(viewport=VIEWPORT, user_agent=self.user_agent)
        self.context.set_default_timeout(WAIT)
        if instance is not None:  # HAProxy's own cookie, as if it had put this reviewer there
            self.context.add_cookies([{"name": COOKIE, "value": instance, "url": team.balancer.url}])
        self.page: Page = self.context.new_page()
        self.served: list[tuple[str, str | None]] = []  # (url, the instance header) of every response
        self.sockets: list[str] = []
        self.cases: list[str] = []  # the cases opened by keys, in order
        self.page.on("response", lambda r: self.served.append((r.url, r.headers.get(INSTANCE_HEADER.lower()))))
        self.page.on("websocket", lambda ws: self.sockets.append(ws.url))

    def open(self, path: str) -> str:
        """Open `path` through the balancer; returns the instance that served the page."""
        return instance_of(self.page.goto(f"{self.team.balancer.url}{path}"))

    def cookie(self) -> str | None:
        return next((c["value"] for c in self.context.cookies(self.team.balancer.url) if c["name"] == COOKIE), None)

    def logged(self):
        """What HAProxy logged of this reviewer's requests: the page, its static files, its WebSocket."""
        return [r for r in self.team.balancer.requests() if r.agent == self.user_agent]

    def type_name(self) -> None:
        box = self.page.locator(REVIEWER_NAME)
        box.fill(self.name)
        box.press("Tab")
        settled(self.page)


def open_case(page: Page) -> str:
    """The id of the case the page shows (its header, e.g. "E-1002: V02 price variance")."""
    header = page.locator(".st-key-case_header").get_by_role("heading", name=re.compile(r"^E-\d+:"))
    expect(header).to_have_count(1)
    return header.inner_text().split(":")[0]


def instance_of(response: Response | None) -> str:
    assert response is not None and response.ok, f"the balancer did not serve the page: {response}"
    return response.headers[INSTANCE_HEADER.lower()]


@pytest.fixture
def reviewers(browser: Browser, team: Team) -> Iterator[Callable[..., Reviewer]]:
    """Make reviewers (browser contexts) for one test; each is closed after it."""
    made: list[Reviewer] = []

    def reviewer(name: str, instance: str | None = None) -> Reviewer:
        made.append(Reviewer(browser, team, name, instance))
        return made[-1]

    yield reviewer
    for r in made:
        r.context.close()


def walk(reviewers: list[Reviewer], key: str) -> None:
    """Each reviewer presses `key` (J or K) on their own instance, then waits for the case it opens: the two instances
    work at once."""
    before = [open_case(r.page) for r in reviewers]
    for r in reviewers:
        press(r.page, key)
    for r, case in zip(reviewers, before):
        expect(heading(r.page, f"{case}:")).to_have_count(0)
        r.cases.append(open_case(r.page))


def test_two_instances_behind_haproxy_sticky_sessions_fresh_evidence_and_one_decision_per_case(team: Team, reviewers):
    ivy = reviewers("Ivy Instance")  # no cookie yet: HAProxy's round robin picks her instance
    first = ivy.open("/exceptions?case=E-1002")
    assert ivy.cookie() == first  # ... and the cookie it inserted names it
    # Round robin would send the next new browser to the other instance only if no other request came in between (the
    # readiness probe through the frontend counts too): Kai is given the other instance's cookie, exactly what HAProxy
    # sets, so the test does not depend on that order.
    other = next(name for name in team.instances if name != first)
    kai = reviewers("Kai Instance", instance=other)
    evidence = kai.page.locator(".st-key-case_evidence")
    assert kai.open(f"/exceptions?case={SIBLING}") == other  # Kai's instance recalls (and caches) the sibling
    expect(evidence).to_contain_text("Exact: this vendor AND this type (2)")
    expect(heading(ivy.page, "E-1002:")).to_be_visible()

    # (b) A decision through Ivy's instance is in Kai's instance's evidence at its next case open: Kai leaves the
    # sibling (J) and comes back (K), in the same session, on the instance that cached its recall before the decision.
    ivy.type_name()
    click_button(ivy.page, "Record decision")
    expect(
        ivy.page.get_by_text(re.compile(r"E-1002 recorded: \w+ \(decision #\d+\), saved to the agents' memory"))
    ).to_be_visible()
    kai.cases.append(SIBLING)
    ivy.cases.append(open_case(ivy.page))  # auto-advance opened the next unreviewed case
    walk([kai, ivy], "j")
    walk([kai, ivy], "k")
    assert kai.cases[-1] == SIBLING, kai.cases
    expect(evidence).to_contain_text("Exact: this vendor AND this type (3)")
    expect(evidence).to_contain_text("decision-E-1002")
    expect(evidence).to_contain_text("by reviewer Ivy Instance")

    # (a) Sticky: across those keys, another J and a reload (a new Streamlit session) each reviewer stays on their
    # instance (checked below, over every request of the test).
    walk([kai, ivy], "j")
    expect(ivy.page.locator(REVIEWER_NAME)).to_have_value("Ivy Instance")  # her session, kept by her instance all along
    for reviewer, instance in ((ivy, first), (kai, other)):
        assert instance_of(reviewer.page.reload()) == instance
    for reviewer in (ivy, kai):
        expect(heading(reviewer.page, f"{reviewer.cases[-1]}:")).to_be_visible()

    # (c) Both open one case on their own instance; Ivy decides it, then Kai, on a screen that showed it undecided.
    for reviewer, instance in ((ivy, first), (kai, other)):
        assert reviewer.open(f"/exceptions?case={CONTESTED}") == instance
    for reviewer in (ivy, kai):
        expect(heading(reviewer.page, f"{CONTESTED}:")).to_be_visible()
        reviewer.type_name()
    click_button(ivy.page, "Record decision")
    expect(ivy.page.get_by_text(re.compile(rf"{CONTESTED} recorded: \w+ \(decision #\d+\)"))).to_be_visible()
    click_button(kai.page, "Record decision")
    expect(
        kai.page.get_by_text(
            re.compile(
                r"Not recorded yet: Ivy Instance decided this case meanwhile \(.+, decision #\d+, "
                r"revision 1\)\. Nothing was overwritten: choose\."
            )
        )
    ).to_be_visible()
    expect(kai.page.get_by_role("button", name="Keep theirs")).to_be_visible()
    stored = team.decisions(CONTESTED)  # the shared review store: one decision, Ivy's
    assert [(d.decision.reviewer, d.revision) for d in stored] == [("Ivy Instance", 1)], stored

    # (a) What each browser saw: every response of the balancer's (pages, scripts, styles, fonts, health polls) named
    # the reviewer's instance, and so does the cookie. What HAProxy saw: each request of this browser went there, the
    # WebSocket too (upgraded: 101). Keys travel over the tab's one WebSocket: one per page load (open, reload, open).
    for reviewer, instance in ((ivy, first), (kai, other)):
        assert reviewer.cookie() == instance
        own = [(url, served_by) for url, served_by in reviewer.served if url.startswith(team.balancer.url)]
        assert own and {served_by for _url, served_by in own} == {instance}, own
        logged = reviewer.logged()
        assert logged and {r.server for r in logged} == {instance}, logged
        assert [r.status for r in logged if r.uri.startswith("/_stcore/stream")] == [101, 101, 101], logged
        assert len(reviewer.sockets) == 3, reviewer.sockets
    servers = team.balancer.servers()  # HAProxy's own counters: both instances served sessions and passed their checks
    assert all(int(servers[name]["stot"]) > 0 and servers[name]["check_status"] == "L7OK" for name in team.instances), (
        servers
    )
