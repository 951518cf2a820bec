"""Nothing typed is lost, in Chromium against the real app and server: a half-written override on a case is kept as
that case's draft when J moves on (marked there and beside the queue, never on another case) and is all there on K
back; Esc leaves the note box so J moves instead of typing; a refusal focuses the control it names, in view."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from dashboard.finance.models import OUTCOME_WORDS
from tests.e2e.conftest import click_button, decision_form, heading, settled, ticket_form
from tests.e2e.test_reviewer_journeys import choose_other_outcome, form_starts_clean, shown_recommendation, type_name

pytestmark = pytest.mark.browser
NOTE = "Half-written: PO 1003 was amended on"


def test_a_draft_is_kept_per_case_esc_leaves_the_note_and_a_refusal_focuses_its_control(app, page: Page, shots):
    page.goto(f"{app.url}/exceptions?case=E-1003")
    expect(heading(page, "E-1003:")).to_be_visible()
    type_name(page, "Dana Finance")

    decision_form(page).get_by_text("Override", exact=True).click()
    settled(page)
    outcome = choose_other_outcome(page, shown_recommendation(page))
    settled(page)
    decision_form(page).get_by_text("CONTRACT_AMENDMENT: Contract or PO amended", exact=True).click()
    settled(page)
    note = page.locator('textarea[aria-label="Note"]')
    note.click()
    note.press_sequentially(NOTE)  # typed as a person types, the focus left in the box
    page.keyboard.press("Escape")  # leaves the box: the keys work again
    settled(page)
    page.keyboard.press("j")
    expect(heading(page, "E-1004:")).to_be_visible()
    settled(page)
    form_starts_clean(page)  # nothing of E-1003's draft on another case
    expect(page.get_by_text("Unsent drafts, kept for this session: E-1003.")).to_be_visible()
    expect(page.get_by_text(re.compile("^Unsent draft on "))).to_have_count(0)
    shots(page, "drafts-another-case-clean")

    page.keyboard.press("k")
    expect(heading(page, "E-1003:")).to_be_visible()
    settled(page)
    expect(page.get_by_text(re.compile(r"^Unsent draft on E-1003: "))).to_be_visible()
    form = decision_form(page)
    expect(form.get_by_role("radio", name="Override")).to_be_checked()
    expect(form.get_by_role("combobox", name="Override outcome")).to_have_value(OUTCOME_WORDS[outcome])
    expect(form.get_by_role("radio", name="CONTRACT_AMENDMENT: Contract or PO amended")).to_be_checked()
    expect(note).to_have_value(NOTE)  # all of it, and no "j" typed into it
    expect(page.get_by_text(re.compile(r"unsent draft$"))).to_be_visible()  # the badge in the case's header
    shots(page, "drafts-back-on-its-case")
    assert app.outbox().latest("exception", "E-1003") is None  # a draft records nothing

    # An override without an outcome: refused under the button, and the outcome control it names focused, in view.
    page.keyboard.press("j")
    expect(heading(page, "E-1004:")).to_be_visible()
    settled(page)
    decision_form(page).get_by_text("Override", exact=True).click()
    settled(page)
    click_button(page, "Record decision")
    expect(page.get_by_text(re.compile(r"^Not recorded: .*outcome"))).to_be_visible()
    page.wait_for_function("() => !!document.activeElement.closest('[data-testid=stSelectbox]')")
    expect(page.get_by_test_id("stSelectbox").filter(has_text="Override outcome")).to_be_in_viewport()
    shots(page, "drafts-refusal-focuses-outcome")
    assert app.outbox().latest("exception", "E-1004") is None


EDIT = "Hi Ann, the second November charge is being refunded; half-written"
TICKET_NOTE = "Checked the statement: two charges on"


def _top(locator) -> float:
    """Where the element starts on the page (not the viewport: a click may scroll)."""
    return locator.evaluate("e => e.getBoundingClientRect().top + window.scrollY")


def test_a_ticket_draft_is_kept_per_ticket_its_notice_moves_nothing_and_esc_leaves_the_note(app, page: Page, shots):
    page.goto(f"{app.url}/tickets?ticket=T-2004")
    expect(heading(page, "T-2004:")).to_be_visible()
    type_name(page, "Rita Lead")
    settled(page)
    form = ticket_form(page)
    response = page.locator('textarea[aria-label="Response to send"]')
    drafted = response.input_value()
    top = _top(form)

    form.get_by_text("Send my edit", exact=True).click()
    expect(page.get_by_text(re.compile(r"^Unsent draft on T-2004: "))).to_be_visible()  # said on the first change ...
    settled(page)
    assert _top(form) == top  # ... in a slot kept for it under the form: the form did not move
    response.fill(EDIT)
    note = page.locator('textarea[aria-label="Note (required when you replace the draft)"]')
    note.click()
    note.press_sequentially(TICKET_NOTE)  # typed as a person types, the focus left in the box
    page.keyboard.press("Escape")  # leaves the box: the keys work again
    settled(page)
    page.keyboard.press("j")
    expect(heading(page, "T-2005:")).to_be_visible()
    settled(page)
    expect(
        ticket_form(page).get_by_role("radio", name="Send the draft")
    ).to_be_checked()  # nothing of T-2004's draft here
    expect(response).not_to_have_value(EDIT)
    expect(note).to_have_value("")
    expect(page.get_by_text(re.compile("^Unsent draft on "))).to_have_count(0)
    expect(page.get_by_text(re.compile(r"Unsent drafts, kept for this session: T-2004\.$"))).to_be_visible()
    shots(page, "ticket-drafts-another-ticket-clean")

    page.keyboard.press("k")
    expect(heading(page, "T-2004:")).to_be_visible()
    settled(page)
    expect(page.get_by_text(re.compile(r"^Unsent draft on T-2004: "))).to_be_visible()
    expect(ticket_form(page).get_by_role("radio", name="Send my edit")).to_be_checked()
    expect(response).to_have_value(EDIT)
    expect(note).to_have_value(TICKET_NOTE)  # all of it, and no "j" typed into it
    expect(page.get_by_text(re.compile(r"unsent draft$"))).to_be_visible()  # the badge in the ticket's header
    assert drafted != EDIT
    shots(page, "ticket-drafts-back-on-its-ticket")
    assert app.outbox().latest("ticket", "T-2004") is None  # a draft records nothing
