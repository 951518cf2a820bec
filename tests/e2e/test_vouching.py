"""Vouching in Chromium, two people in two browser sessions against the real server: a note of unknown origin escalates
E-1016; on the Audit page Lee proposes vouching for that document, Dana confirms it in her own session; the case page
then counts the note as of known origin and no longer escalates the case."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.app.test_vouching_page import CASE, NOTE, SWUNG, agent_notes
from tests.e2e.conftest import VIEWPORT, WAIT, click_button, settled

pytestmark = pytest.mark.browser


def _open_vouching(page: Page, url: str, name: str) -> None:
    page.goto(f"{url}/audit")
    settled(page)
    section = page.get_by_text("Vouching for records of unknown origin", exact=False)
    if not page.get_by_label("Your name (lead)").is_visible():
        section.click()
    page.get_by_label("Your name (lead)").fill(name)
    page.get_by_label("Your name (lead)").press("Tab")
    settled(page)


def test_a_lead_proposes_another_confirms_in_her_own_session_and_the_case_is_decided(
    app, hindsight, browser: Browser, page: Page, shots
):
    hindsight.gateway.retain(app.finance_bank, agent_notes())
    hindsight.settle(app.finance_bank)
    page.goto(f"{app.url}/exceptions?case={CASE}")
    expect(page.get_by_text(SWUNG, exact=False)).to_be_visible(timeout=WAIT)

    _open_vouching(page, app.url, "Lee")
    page.get_by_label("Document (for one document)").fill(NOTE)
    page.get_by_label("What you reviewed, and why the records can be trusted (at most 500 characters)").fill(
        "Read the V05 note with AP: written by our intake agent"
    )
    click_button(page, "Propose vouching")
    expect(page.get_by_text(f"Proposed: vouch #1 for document {NOTE} of bank", exact=False)).to_be_visible(timeout=WAIT)
    shots(page, "vouch-proposed")

    other = browser.new_context(viewport=VIEWPORT).new_page()  # Dana, in a session of her own
    try:
        _open_vouching(other, app.url, "Dana")
        expect(other.get_by_text("Proposed by Lee on ", exact=False)).to_be_visible(timeout=WAIT)
        click_button(other, "Confirm")
        expect(
            other.get_by_text(
                "1 document(s) of " + app.finance_bank + " now of known origin (Lee, confirmed by Dana).", exact=False
            )
        ).to_be_visible(timeout=WAIT)
        shots(other, "vouch-confirmed")

        other.goto(f"{app.url}/exceptions?case={CASE}")
        expect(
            other.get_by_text("vouched for by Lee, confirmed by Dana after review", exact=False).first
        ).to_be_visible(timeout=WAIT)
        expect(other.get_by_text(SWUNG, exact=False)).to_have_count(0)
        shots(other, "vouched-case")
    finally:
        other.context.close()
