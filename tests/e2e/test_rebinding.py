"""DNS rebinding, in Chromium: a page on a name the operator never chose, made to resolve to the dashboard (Chromium's
host resolver rules stand in for the rebinding DNS), is same-origin with it. It gets the refusal instead of the app: no
page, no WebSocket (so no widget event, no decision), no API; the same steps on 127.0.0.1 reach all three and record a
decision. Sign-in off (the one-person mode on loopback, where everyone is `lead`) and on (the test OpenID provider)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserType, Page, expect

from dashboard.access.api_tokens import ApiTokens
from dashboard.store.db import make_engine
from tests.e2e.conftest import WAIT, click_button, heading, settled
from tests.e2e.test_sign_in import DANA, open_case, sign_in, signed_in_app  # noqa: F401  (the signed-in app fixture)

pytestmark = pytest.mark.browser

REBOUND = "rebind.attacker.example"

# From a page: open the app's WebSocket and call the API, same-origin, as the attacker's script would.
PROBE = """async (token) => {
  const websocket = await new Promise(resolve => {
    const socket = new WebSocket(`ws://${location.host}/_stcore/stream`);
    socket.onopen = () => { socket.close(); resolve("opened"); };
    socket.onerror = () => resolve("refused");
    setTimeout(() => resolve("no answer"), 15000);
  });
  const api = await fetch("/api/v1/cases/finance", {headers: {Authorization: `Bearer ${token}`}});
  return {websocket, api: api.status, api_body: await api.text()};
}"""


@pytest.fixture(scope="module")
def rebinding_browser(browser_type: BrowserType, browser_type_launch_args) -> Iterator[Browser]:
    """Chromium whose resolver answers 127.0.0.1 for the attacker's name, as a rebound DNS answer would."""
    args = [*browser_type_launch_args.get("args", []), f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"]
    browser = browser_type.launch(**{**browser_type_launch_args, "args": args})
    yield browser
    browser.close()


def _page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(WAIT)
    return page


def _read_token(data_dir) -> str:
    token, _ = ApiTokens(make_engine(None, data_dir)).create("rebinding-probe", ["finance"], ["read"], "Lead Lee")
    return token


def _refused_on_the_rebound_name(browser: Browser, url: str, token: str) -> None:
    """The attacker's name: the app's page is a refusal, and from that origin the WebSocket and the API are refused."""
    port = url.rsplit(":", 1)[1]
    page = _page(browser)
    answer = page.goto(f"http://{REBOUND}:{port}/exceptions?case=E-1002")
    assert answer.status == 421
    expect(page.locator("body")).to_contain_text(f"does not answer to the host name '{REBOUND}:{port}'")
    assert page.get_by_test_id("stApp").count() == 0 and page.locator('input[aria-label="Reviewer name"]').count() == 0
    probe = page.evaluate(PROBE, token)
    assert probe["websocket"] == "refused"
    assert probe["api"] == 421 and "RECALL_REVIEW_ALLOWED_HOSTS" in probe["api_body"]
    page.context.close()


def _reached_on_its_own_name(page: Page, token: str) -> None:
    probe = page.evaluate(PROBE, token)
    assert (probe["websocket"], probe["api"]) == ("opened", 200)


def test_sign_in_off_a_rebound_name_records_nothing_and_127_0_0_1_records_the_decision(app, rebinding_browser):
    token = _read_token(app.data_dir)
    _refused_on_the_rebound_name(rebinding_browser, app.url, token)
    assert app.outbox().history() == []  # nothing recorded from the attacker's name

    page = _page(rebinding_browser)  # the same browser, on the app's own name
    page.goto(f"{app.url}/exceptions?case=E-1002")
    expect(heading(page, "E-1002: V02 price variance")).to_be_visible()
    settled(page)
    name = page.locator('input[aria-label="Reviewer name"]')
    name.fill("Ada Local")
    name.press("Tab")
    click_button(page, re.compile("^Accept: "))
    expect(page.get_by_text(re.compile(r"E-1002 recorded"))).to_be_visible()
    _reached_on_its_own_name(page, token)
    (stored,) = [d for d in app.outbox().history() if d.decision.case_id == "E-1002"]
    assert stored.decision.reviewer == "Ada Local"
    page.context.close()


def test_sign_in_on_a_rebound_name_is_refused_and_a_signed_in_reviewer_on_127_0_0_1_records_the_decision(
    signed_in_app, rebinding_browser
):  # noqa: F811
    app = signed_in_app
    token = _read_token(app.data_dir)
    _refused_on_the_rebound_name(rebinding_browser, app.url, token)
    assert app.decisions("E-1006") == []

    page = _page(rebinding_browser)
    sign_in(page, app, DANA)
    open_case(page, app, "E-1006")
    click_button(page, "Record decision")
    expect(page.get_by_text(re.compile("E-1006 recorded"))).to_be_visible()
    _reached_on_its_own_name(page, token)
    (stored,) = app.decisions("E-1006")
    assert stored.decision.reviewer_subject == DANA["sub"]
    page.context.close()
