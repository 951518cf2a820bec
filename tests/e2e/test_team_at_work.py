"""Two reviewers at work on one app instance: each types a name as a person types it (key by key), then presses the
review keys while the other decides. Every key does what it says (J opens the next case; A records under the name
typed) and the name stays in its box. Seen before on one instance: the first J after the name did nothing and the
name was gone by the first A ("A reviewer name is required"), so later J's typed into the name box."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from dashboard import demo_data
from dashboard.finance import queue as exception_queue
from dashboard.finance.models import ExceptionCase
from dashboard.queue_files import load_rows
from tests.e2e.conftest import VIEWPORT, settled

pytestmark = pytest.mark.browser
LANDS_WITHIN_MS = 20_000  # what a key did shows within this; a lost key never does
NAME = 'input[aria-label="Reviewer name"]'


def _queue_order() -> list[str]:
    return [c.id for c in exception_queue.select(load_rows(demo_data.EXCEPTIONS, ExceptionCase), {})]


def _heading(page: Page, case: str):
    return page.get_by_role("heading", name=re.compile(f"^{re.escape(case)}:"))


def _open(page: Page, url: str, case: str) -> None:
    page.goto(f"{url}/exceptions?case={case}")
    expect(_heading(page, case)).to_be_visible(timeout=60_000)
    settled(page)


def _type_name(page: Page, name: str) -> None:
    """Typed key by key, then the reviewer leaves the box (as the keys need) and goes on at once."""
    page.locator(NAME).click()
    page.locator(NAME).press_sequentially(name, delay=40)


def _key(page: Page, key: str) -> None:
    """A key as a reviewer presses it: the focus leaves any field, no wait for the page to settle."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)


def _j_moves(page: Page, to: str, name: str) -> None:
    _key(page, "j")
    expect(_heading(page, to)).to_be_visible(timeout=LANDS_WITHIN_MS)
    expect(page.locator(NAME)).to_have_value(name)


def _a_records(page: Page, case: str, name: str) -> None:
    _key(page, "a")
    expect(page.get_by_text(re.compile(rf"^{re.escape(case)} recorded: "))).to_be_visible(timeout=LANDS_WITHIN_MS)
    expect(page.locator(NAME)).to_have_value(name)


def _case(page: Page) -> str:
    return page.evaluate("() => new URLSearchParams(location.search).get('case')")


def test_two_reviewers_at_once_keep_each_typed_name_and_every_key(app, browser):
    ids = _queue_order()
    team = {
        "Ivy Typed": browser.new_context(viewport=VIEWPORT).new_page(),
        "Kai Typed": browser.new_context(viewport=VIEWPORT).new_page(),
    }
    for (name, page), start in zip(team.items(), (ids[0], ids[8])):
        _open(page, app.url, start)
    for name, page in team.items():  # both type at once, and press on without waiting for the page
        _type_name(page, name)
    for step in range(1, 11):
        pressed = {}
        for name, page in team.items():
            case = _case(page)
            key = "a" if step % 5 == 0 else "j"
            _key(page, key)
            pressed[name] = (case, key)
        for name, page in team.items():
            case, key = pressed[name]
            if key == "j":
                expect(_heading(page, ids[ids.index(case) + 1]), f"{name}'s J #{step} on {case}").to_be_visible(
                    timeout=LANDS_WITHIN_MS
                )
            else:
                expect(
                    page.get_by_text(re.compile(rf"^{re.escape(case)} recorded: ")), f"{name}'s A on {case}"
                ).to_be_visible(timeout=LANDS_WITHIN_MS)
            expect(page.locator(NAME), f"{name}'s name after step {step}").to_have_value(name)
        page.wait_for_timeout(1_500)
    for page in team.values():
        page.context.close()


def test_a_name_typed_and_the_first_j_land_though_another_reviewers_decision_changes_the_page_meanwhile(browser):
    """Hindsight down, so a decision stays waiting for delivery and the banner above every page says so. Kai's page is
    drawn with no banner; Kai types a name (still in the box, not sent) while Ivy decides. Kai's next run is then a full
    one (the queue moved) that draws the banner above the case: the name Kai leaves the box with and the J pressed at
    once must both land, and the name must still be there after later runs that Ivy's decisions start. Before the
    banners had one fixed slot, the case's part of the page moved down with the banner, and Streamlit dropped the key
    and the value the browser had sent to it where it was: the first J did nothing and the name was gone."""
    from tests.e2e.test_team import _stored, hindsight_down, serve

    ids = _queue_order()
    with serve(**hindsight_down()) as (url, data_dir):
        ivy, kai = (browser.new_context(viewport=VIEWPORT).new_page() for _ in range(2))
        _open(ivy, url, ids[0])
        _open(kai, url, ids[8])
        banner = re.compile(r"decision\(s\) saved and waiting for delivery")
        expect(kai.get_by_text(banner)).to_have_count(0)  # drawn before anyone decided
        _type_name(kai, "Kai Typed")  # the focus left in the box: nothing sent yet
        _type_name(ivy, "Ivy Typed")
        _key(ivy, "a")
        expect(ivy.get_by_text(re.compile(rf"^{re.escape(ids[0])} recorded: "))).to_be_visible(timeout=LANDS_WITHIN_MS)
        kai.keyboard.press("Escape")  # Kai leaves the box (the name is sent) and presses J at once
        kai.keyboard.press("j")
        expect(_heading(kai, ids[9]), "Kai's first J").to_be_visible(timeout=LANDS_WITHIN_MS)
        expect(kai.get_by_text(banner)).to_be_visible()  # the run that drew it changed the page above the case
        settled(kai)
        expect(kai.locator(NAME), "Kai's name after the run Ivy's decision changed").to_have_value("Kai Typed")

        settled(ivy)
        ivys_next = _case(ivy)  # auto-advance opened the next unreviewed case
        _a_records(ivy, ivys_next, "Ivy Typed")  # decided: Kai's next run is a full one again (the queue moved)
        _j_moves(kai, ids[10], "Kai Typed")
        _a_records(kai, ids[10], "Kai Typed")
        settled(kai)
        expect(kai.locator(NAME)).to_have_value("Kai Typed")
        assert {(row["case_id"], row["reviewer"]) for row in _stored(data_dir)} >= {
            (ids[0], "Ivy Typed"),
            (ivys_next, "Ivy Typed"),
            (ids[10], "Kai Typed"),
        }
        ivy.context.close()
        kai.context.close()
