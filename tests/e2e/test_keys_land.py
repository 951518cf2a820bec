"""Every key a reviewer presses does something they can see: it moves, it records, or the page says why it did not.

With a team on one queue, the state of the case under a reviewer's keys changes because of someone else: another
reviewer claims it, or the reviewer walks past the queue's end. Streamlit unbinds a disabled button's shortcut in the
browser, so before the keys stayed enabled such a press vanished without a word (the concurrency bench counted one key
in six lost at eight reviewers). Keys are pressed here as a reviewer presses them, without waiting for a button to be
enabled."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa
from playwright.sync_api import Browser, Page, expect

from dashboard import demo_data
from dashboard.finance import queue as exception_queue
from dashboard.finance.models import ExceptionCase
from dashboard.queue_files import load_rows
from dashboard.store.db import make_engine
from tests.e2e.conftest import VIEWPORT, settled

pytestmark = pytest.mark.browser
SAID_WITHIN_MS = 20_000  # what the key did shows up within this; a lost key never does


def _queue_order() -> list[str]:
    return [c.id for c in exception_queue.select(load_rows(demo_data.EXCEPTIONS, ExceptionCase), {})]


def _open_as(page: Page, url: str, case: str, name: str) -> None:
    page.goto(f"{url}/exceptions?case={case}")
    expect(page.get_by_role("heading", name=re.compile(f"^{re.escape(case)}:"))).to_be_visible(timeout=60_000)
    field = page.locator('input[aria-label="Reviewer name"]')
    field.fill(name)
    field.press("Tab")
    settled(page)


def _key(page: Page, key: str) -> None:
    """A key pressed as a reviewer presses it: focus on no field, no wait for the button to be enabled."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)


def _decided(data_dir, case_id: str) -> int:
    engine = make_engine(None, data_dir)
    try:
        with engine.connect() as conn:
            return conn.execute(
                sa.text("SELECT count(*) FROM review_decisions WHERE case_id = :c"), {"c": case_id}
            ).scalar_one()
    finally:
        engine.dispose()


def test_a_key_on_a_case_another_reviewer_holds_or_past_the_queue_end_says_why_it_did_nothing(
    app, browser: Browser, shots
):
    ids = _queue_order()
    before, held = ids[1], ids[2]
    ivy, kai = (browser.new_context(viewport=VIEWPORT).new_page() for _ in range(2))

    _open_as(ivy, app.url, held, "Ivy Holder")  # Ivy claims the case Kai is about to reach
    ivy.get_by_role("button", name="Claim").click()
    expect(ivy.get_by_text(re.compile(r"Yours until"))).to_be_visible()

    _open_as(kai, app.url, before, "Kai Keys")
    _key(kai, "j")
    expect(kai.get_by_role("heading", name=re.compile(f"^{re.escape(held)}:"))).to_be_visible()
    expect(kai.get_by_text("Claimed by Ivy Holder until")).to_be_visible()
    settled(kai)
    _key(kai, "a")  # Accept on a case someone else holds: drawn disabled before, and its key vanished
    expect(kai.get_by_text(f"Not recorded: {held}: someone else holds it (see who above).")).to_be_visible(
        timeout=SAID_WITHIN_MS
    )
    shots(kai, "keys-land-held-case")
    assert _decided(app.data_dir, held) == 0  # said, and nothing recorded

    kai.goto(f"{app.url}/exceptions?case={ids[-1]}")
    expect(kai.get_by_role("heading", name=re.compile(f"^{re.escape(ids[-1])}:"))).to_be_visible(timeout=60_000)
    settled(kai)
    _key(kai, "j")  # past the queue's end: nowhere to go, and it says so
    expect(kai.get_by_text(f"{ids[-1]} is the last case of the queue shown: there is no next one.")).to_be_visible(
        timeout=SAID_WITHIN_MS
    )
    assert re.search(rf"case={re.escape(ids[-1])}\b", kai.url)
    _key(kai, "k")  # and the next key moves as before
    expect(kai.get_by_role("heading", name=re.compile(f"^{re.escape(ids[-2])}:"))).to_be_visible(timeout=SAID_WITHIN_MS)
