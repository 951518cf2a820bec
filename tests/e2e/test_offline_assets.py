"""Nothing the browser loads comes from outside 127.0.0.1: every page of the app is opened (a case, a
ticket and a trace drawn) while every request and websocket the page makes is recorded, and every host
must be the app's own. An icon or a font from an internet host would fail offline (and tell that host who
reads what)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from components.trace_link import trace_url
from dashboard.traces.request import TraceRequest
from tests.e2e.conftest import WAIT, click_button, settled

pytestmark = pytest.mark.browser
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
NO_NETWORK = {"data", "blob", "about"}  # schemes that never leave the browser


def _open(page: Page, url: str, *headings: str) -> None:
    """Go to `url` and wait for the headings that start with `headings`, then for the run to finish."""
    page.goto(url)
    for heading in headings:
        expect(page.get_by_role("heading", name=re.compile("^" + re.escape(heading))).first).to_be_visible(timeout=WAIT)
    settled(page)


def test_no_request_leaves_the_machine(app, page: Page):
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.on("websocket", lambda socket: urls.append(socket.url))

    _open(page, app.url, "Recall Review")
    _open(page, f"{app.url}/overview", "Overview")
    _open(page, f"{app.url}/exceptions?case=E-1002", "E-1002:", "Exact")
    trace = TraceRequest(
        bank=app.finance_bank,
        query="price variance V02",
        tags=("vendor:V02", "type:price_variance"),
        tags_match="all_strict",
    )
    _open(page, trace_url(trace, app.url), "Recall traces")
    click_button(page, re.compile("Run this recall"))
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=WAIT)  # the charts drawn too
    settled(page)
    _open(page, f"{app.url}/tickets?ticket=T-2004", "T-2004: Ann Lee")
    _open(page, f"{app.url}/migration", "Migration to tags")
    _open(page, f"{app.url}/audit", "Decision audit log")
    _open(page, f"{app.url}/incidents", "Incidents")

    network = [u for u in urls if urlsplit(u).scheme not in NO_NETWORK]
    assert any(urlsplit(u).scheme in ("ws", "wss") for u in network), "the app's websocket was not recorded"
    assert len(network) > 20, f"too few requests recorded to prove anything: {network}"
    outside = sorted({u for u in network if urlsplit(u).hostname not in LOCAL_HOSTS})
    assert not outside, f"requests left 127.0.0.1: {outside}"
