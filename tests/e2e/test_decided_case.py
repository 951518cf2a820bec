"""A decision is deliberate, in Chromium against the real app and server: on a decided case a second A and a submitted
form record nothing and say why where the reviewer acted, naming the standing decision; Revise decision, with a reason,
records revision 2, and the case shows both revisions."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import click_button, decision_form, heading, press, settled
from tests.e2e.test_reviewer_journeys import choose_other_outcome, in_view, shown_recommendation, type_name

pytestmark = pytest.mark.browser
CASE = "E-1006"


def _form(page: Page):
    return decision_form(page)


def test_a_decided_case_records_nothing_by_a_stray_key_or_the_form_and_revise_records_revision_two(
    app, page: Page, shots
):
    outbox = app.outbox()
    page.goto(f"{app.url}/exceptions?case={CASE}")
    expect(heading(page, f"{CASE}:")).to_be_visible()
    type_name(page, "Dana Finance")
    page.get_by_text("Open the next unreviewed case after a decision").click()  # stay on the case after deciding
    settled(page)

    # The first decision: an override to another outcome, with a reason and a note.
    recommended = shown_recommendation(page)
    press(page, "o")
    settled(page)
    outcome = choose_other_outcome(page, recommended)
    _form(page).get_by_text("CONTRACT_AMENDMENT: Contract or PO amended", exact=True).click()
    page.locator('textarea[aria-label="Note"]').fill("Vendor disputes the quantity.")
    click_button(page, "Record decision")
    expect(page.get_by_text(re.compile(rf"^{CASE} recorded: "))).to_be_visible()
    first = outbox.latest("exception", CASE)
    assert (first.revision, first.decision.outcome, first.decision.note) == (
        1,
        outcome,
        "Vendor disputes the quantity.",
    )
    standing = (
        re.escape(f"{CASE} is already decided: ")
        + r".* by Dana Finance, revision 1 "
        + re.escape(f"(decision #{first.id}).")
    )

    # A stray A: nothing recorded, said under the keys, naming the standing decision.
    press(page, "a")
    said = page.get_by_text(re.compile(rf"^Not recorded: {standing} To change it, use Revise decision"))
    expect(said).to_be_visible()
    in_view(said)
    shots(page, "decided-stray-accept")
    assert [r.revision for r in outbox.history("exception", CASE)] == [1]

    # The form on a decided case is Revise decision: submitted without a reason, nothing is recorded and it says why,
    # with the reason box focused.
    expect(heading(page, "Revise decision")).to_be_visible()
    page.locator('textarea[aria-label="Note"]').fill("Quantity confirmed by the warehouse.")
    click_button(page, "Revise decision")
    said = page.get_by_text(re.compile(rf"^Not recorded: {standing} Revising it needs a reason\."))
    expect(said).to_be_visible()
    in_view(said)
    reason_box = page.locator('input[aria-label="Reason for revising (required)"]')
    expect(reason_box).to_be_focused()
    shots(page, "decided-form-needs-reason")
    assert [r.revision for r in outbox.history("exception", CASE)] == [1]

    # With a reason: revision 2, the accept outcome the form names, and both revisions on the case.
    reason_box.fill("The goods receipt arrived after the first decision.")
    click_button(page, "Revise decision")
    confirmed = page.get_by_text(re.compile(rf"^{CASE} revised: .* \(revision 2, decision #\d+\)"))
    expect(confirmed).to_be_visible()
    in_view(confirmed)  # brought into view, where the reviewer's eyes go next
    revised = outbox.latest("exception", CASE)
    assert (revised.revision, revised.decision.outcome, revised.decision.revision_reason) == (
        2,
        recommended,
        "The goods receipt arrived after the first decision.",
    )
    assert revised.decision.note == "Quantity confirmed by the warehouse."
    history = page.get_by_test_id("stExpander").filter(has_text="Decision history: 2 revisions")
    expect(history).to_contain_text(f"Revision 2, decision #{revised.id}")
    expect(history).to_contain_text(f"Revision 1, decision #{first.id}")
    expect(history).to_contain_text("Revised because: The goods receipt arrived after the first decision.")
    expect(history).to_contain_text("Vendor disputes the quantity.")
    shots(page, "decided-revised-history")

    # The Audit log shows both, the revision with its reason.
    page.goto(f"{app.url}/audit")
    expect(page.get_by_text(re.compile(r"Revision 2, revised because: The goods receipt arrived"))).to_be_visible()
