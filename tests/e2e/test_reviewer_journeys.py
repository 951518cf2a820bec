"""Reviewer journeys in Chromium at 1440x900, written as a person uses the app (type, click, press keys, scroll),
checking what the page shows AND what the review store recorded: a finance reviewer deciding with A, O and the
buttons after abandoning a half-filled override; a support lead deciding a legacy ticket without scrolling to
its form; a refusal appears in the viewport, wherever the reviewer acted."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from dashboard.agents.findings import find_incidents, store_incident_kinds
from dashboard.agents.runner import run_ticket
from dashboard.finance.models import OUTCOME_WORDS
from dashboard.review.casework import Casework
from dashboard.review.curation import Curation
from dashboard.store.agent_runs import AgentRunStore
from tests.e2e.conftest import click_button, decision_form, heading, metric, open_select, press, settled, ticket_form
from tests.helpers import demo_ticket

pytestmark = pytest.mark.browser
OUTCOME_OF = {words: outcome for outcome, words in OUTCOME_WORDS.items()}


def in_view(locator) -> None:
    """The element comes into the 1440x900 window by itself (no scrolling on the test's part)."""
    expect(locator).to_be_in_viewport(ratio=1)


def scrolled_to_top(page: Page) -> None:
    page.wait_for_function("() => document.querySelector('[data-testid=stMain]').scrollTop === 0")


def moved_on(page: Page, confirmation: str, next_heading: str) -> None:
    """After a decision: its confirmation says where the page moved on, in view, with the next case's top shown."""
    said = page.get_by_text(re.compile(confirmation))
    expect(said).to_be_visible()
    expect(heading(page, next_heading)).to_be_visible()
    in_view(said)
    scrolled_to_top(page)


def type_name(page: Page, name: str) -> None:
    field = page.locator('input[aria-label="Reviewer name"]')
    field.fill(name)
    field.press("Tab")
    settled(page)


def shown_recommendation(page: Page) -> str:
    """The agent's recommendation as the case's screen shows it (the metric and the accept button agree)."""
    words = metric(page, "Agent recommends").inner_text().lower()
    expect(page.get_by_role("button", name=re.compile(rf"^Accept: {re.escape(words)} Shortcut A$"))).to_be_visible()
    return OUTCOME_OF[words]


def form_starts_clean(page: Page) -> None:
    """The open case's form as it opens, as this run drew it: accept chosen, no override outcome, no reason, no note.
    Under load a fragment run interrupted by a rerun can leave the previous case's form faded beside it (Streamlit
    clears no stale element after such a run: streamlit#9389); a submit from that form names its own case and is
    refused (tests/app/test_finance_app.py), so only the current run's elements are read here."""
    settled(page)
    current = page.locator('[data-testid="stElementContainer"][data-stale="false"]')
    expect(current.get_by_role("radio", name=re.compile(r"^Accept: "))).to_be_checked()
    expect(current.get_by_test_id("stSelectbox").filter(has_text="Override outcome")).to_have_text(
        re.compile(r"^Override outcome\s*$")
    )  # none chosen
    expect(
        current.get_by_role("radiogroup", name=re.compile("^Reason code")).get_by_role("radio", checked=True)
    ).to_have_count(0)
    expect(current.locator('textarea[aria-label="Note"]')).to_have_value("")


def choose_other_outcome(page: Page, recommended: str) -> str:
    """Open the override outcome list and pick the first outcome offered (never the recommended one)."""
    open_select(page, "Override outcome")
    offered = [o.inner_text().strip() for o in page.get_by_role("option").all()]
    assert OUTCOME_WORDS[recommended] not in offered and len(offered) == 2, offered
    page.get_by_role("option").first.click()
    return OUTCOME_OF[offered[0]]


def test_a_finance_reviewer_records_exactly_what_each_case_showed(app, page: Page, shots):
    outbox = app.outbox()
    page.goto(f"{app.url}/exceptions?case=E-1010")
    expect(heading(page, "E-1010:")).to_be_visible()
    type_name(page, "Dana Finance")

    # A half-filled override on E-1010, never submitted: J moves on, and nothing of it follows.
    form = decision_form(page)
    form.get_by_text("Override", exact=True).click()
    choose_other_outcome(page, shown_recommendation(page))
    form.get_by_text(re.compile(r"^NEEDS_APPROVER: ")).click()
    page.locator('textarea[aria-label="Note"]').fill("Note written for E-1010 only.")
    shots(page, "journey-finance-half-filled")
    press(page, "j")
    expect(heading(page, "E-1011:")).to_be_visible()
    form_starts_clean(page)
    press(page, "j")
    expect(heading(page, "E-1012:")).to_be_visible()
    form_starts_clean(page)

    # 1. A on E-1012: it records the recommendation the button names, and says where the page moved on.
    recommended = shown_recommendation(page)
    press(page, "a")
    moved_on(
        page, rf"^E-1012 recorded: {re.escape(OUTCOME_WORDS[recommended])} \(decision #\d+\).* Now E-1013: ", "E-1013:"
    )
    decided = outbox.latest("exception", "E-1012").decision
    assert (decided.outcome, decided.overridden, decided.reason_code, decided.note) == (recommended, False, None, "")
    assert decided.agent_recommendation == recommended
    form_starts_clean(page)

    # 2. O on E-1013: the form switches to override and is brought into view; outcome, reason and note as typed.
    recommended = shown_recommendation(page)
    press(page, "o")
    settled(page)  # the old run's form is gone: until then a locator can meet two
    expect(decision_form(page).get_by_role("radio", name="Override")).to_be_checked()
    outcome = choose_other_outcome(page, recommended)
    decision_form(page).get_by_text("CONTRACT_AMENDMENT: Contract or PO amended", exact=True).click()
    page.locator('textarea[aria-label="Note"]').fill("E-1013: PO 7713 amended on 2 Dec.")
    shots(page, "journey-finance-override")
    click_button(page, "Record decision")
    expect(
        page.get_by_text(
            re.compile(rf"^E-1013 recorded: {re.escape(OUTCOME_WORDS[outcome])} \(decision #\d+\).* Now E-1014: ")
        )
    ).to_be_visible()
    decided = outbox.latest("exception", "E-1013").decision
    assert (decided.outcome, decided.overridden, decided.reason_code, decided.note) == (
        outcome,
        True,
        "CONTRACT_AMENDMENT",
        "E-1013: PO 7713 amended on 2 Dec.",
    )
    assert decided.agent_recommendation == recommended
    expect(heading(page, "E-1014:")).to_be_visible()
    form_starts_clean(page)

    # 3. The form's button, untouched, on E-1014: the recommendation it names, never an override from elsewhere.
    recommended = shown_recommendation(page)
    click_button(page, "Record decision")
    expect(page.get_by_text(re.compile(rf"^E-1014 recorded: {re.escape(OUTCOME_WORDS[recommended])} "))).to_be_visible()
    decided = outbox.latest("exception", "E-1014").decision
    assert (decided.outcome, decided.overridden, decided.reason_code, decided.note) == (recommended, False, None, "")

    assert (
        outbox.latest("exception", "E-1010") is None and outbox.latest("exception", "E-1011") is None
    )  # abandoned: nothing
    assert [h.case_id for h in outbox.history("exception")] == ["E-1014", "E-1013", "E-1012"]
    expect(heading(page, "E-1015:")).to_be_visible()  # moved on after E-1014
    press(page, "k")
    expect(heading(page, "E-1014:")).to_be_visible()
    press(page, "k")  # back to E-1013: its form starts clean too, under the decision it shows
    expect(heading(page, "E-1013:")).to_be_visible()
    expect(
        page.get_by_text(re.compile(rf"^Decided: {re.escape(OUTCOME_WORDS[outcome])} \(override of "))
    ).to_be_visible()
    form_starts_clean(page)
    shots(page, "journey-finance-decided")


def _naive_agent_leaked_into(app, hindsight, ticket_id: str) -> None:
    """The demo's naive support agent answers the ticket (its legacy fallback admits another customer's records), and the
    agents' runs are checked for incidents, as `python -m dashboard seed` does before the app serves."""
    store = AgentRunStore(app.outbox().engine)
    run = run_ticket(hindsight.gateway, store, app.support_bank, demo_ticket(ticket_id), "naive", retain=False)
    found = find_incidents(hindsight.gateway, store, app.outbox(), [run])
    assert [i.kind for i in found] == ["other_customer"]
    store_incident_kinds(Casework(app.outbox().engine), [run], found)


def test_a_support_lead_decides_a_legacy_ticket_with_its_form_in_view(app, hindsight, page: Page, shots):
    _naive_agent_leaked_into(app, hindsight, "T-2004")
    page.goto(f"{app.url}/tickets?ticket=T-2004")
    expect(heading(page, "T-2004: Ann Lee")).to_be_visible()
    settled(page)
    incident = page.get_by_text(
        re.compile(r"^Incident in .+ run .*: another customer's records reached the answer\.")
    )  # whose run
    legacy = page.get_by_text(
        re.compile("^This customer has no tagged history yet: old untagged records were searched")
    )
    response = page.locator('textarea[aria-label="Response to send"]')
    record = page.get_by_role("button", name="Record decision")
    scrolled_to_top(page)
    for seen in (incident, legacy, response, record):  # at 1440x900, nothing scrolled
        expect(seen).to_be_visible()
        in_view(seen)
    expect(
        page.get_by_text(re.compile(r"^Not used because: names another customer \(\d+\)"))
    ).to_be_visible()  # folded, counted
    shots(page, "tickets", readme=True)

    type_name(page, "Rita Lead")
    ticket_form(page).get_by_text("Send my edit", exact=True).click()
    edited = "Hi Ann, the duplicate November charge is refunded; it shows on your card in 5-7 business days."
    response.fill(edited)
    click_button(page, "Record decision")
    moved_on(
        page,
        r"^T-2004 recorded: the drafted response edited, then sent \(decision #\d+\).* Now T-2005, Ann Leeds\.$",
        "T-2005: Ann Leeds",
    )
    shots(page, "journey-support-moved-on")
    decided = app.outbox().latest("ticket", "T-2004").decision
    assert (decided.action, decided.details["response"], decided.reviewer) == ("edit_and_approve", edited, "Rita Lead")


def test_a_refusal_appears_in_the_viewport_where_the_reviewer_acted(app, page: Page, shots):
    page.goto(f"{app.url}/exceptions?case=E-1007")
    expect(heading(page, "E-1007:")).to_be_visible()
    settled(page)

    # The form's button, far down the page, with no name: the refusal under it, in view, the name field focused.
    record = page.get_by_role("button", name="Record decision")
    record.scroll_into_view_if_needed()
    click_button(page, "Record decision")
    refusal_words = "Not recorded: A reviewer name is required to record a decision."
    refusal = page.get_by_text(refusal_words)
    expect(refusal).to_be_visible()
    settled(page)
    in_view(refusal)
    expect(page.locator('input[aria-label="Reviewer name"]')).to_be_focused()

    # A, with the page scrolled to the case's facts below: the refusal under the keys, brought into view.
    page.get_by_role("heading", name="Invoice and PO").scroll_into_view_if_needed()
    press(page, "a")
    # Waited for where A says it, under the keys: the form's refusal alone also counts one until A's run arrives, and
    # that run draws A's refusal ~40 ms before it clears the form's (a key pressed and checked in between saw both).
    expect(page.locator(".st-key-case_feedback").get_by_text(refusal_words)).to_be_visible()
    expect(refusal).to_have_count(1)
    settled(page)
    in_view(refusal)
    assert outbox_empty(app)

    # A note over the limit: refused under the button, in view, with what was cut shown in full.
    expect(page.locator('input[aria-label="Reviewer name"]')).to_be_focused()  # A's refusal focused the field to fix
    page.keyboard.type("Dana")
    page.keyboard.press("Tab")
    settled(page)
    note = "".join(f"{i:05d} " for i in range(834))
    page.locator('textarea[aria-label="Note"]').fill(note)
    click_button(page, "Record decision")
    warning = page.get_by_text(re.compile(r"^Not submitted: your note was 5,004 characters; the limit is 4,000"))
    expect(warning).to_be_visible()
    settled(page)
    in_view(warning)
    expect(page.locator('textarea[aria-label="Note"]')).to_have_value(note[:4000])
    shots(page, "journey-long-note-refused")

    # A curation proposal with a reason over its limit: refused inside its popover, under the form, not behind it at the
    # card; the reason kept in the box, nothing recorded.
    propose = page.get_by_role("button", name=re.compile("Propose retiring this record")).first
    settled(page)
    propose.scroll_into_view_if_needed()
    propose.click()
    reason = page.locator('textarea[aria-label^="Reason (required"]')
    reason.fill("x" * 600)
    page.get_by_test_id("stPopoverBody").get_by_role("button", name="Propose").click()
    said = page.get_by_test_id("stPopoverBody").get_by_text("Not recorded: reason: 600 characters; the limit is 500")
    expect(said).to_be_visible()
    settled(page)
    in_view(said)
    uncovered(said)
    expect(reason).to_have_value("x" * 600)
    assert Curation(app.outbox().engine).history() == []
    page.keyboard.press("Escape")

    # A ticket without a name: the same, on the support page.
    page.goto(f"{app.url}/tickets?ticket=T-2006")
    expect(heading(page, "T-2006:")).to_be_visible()
    click_button(page, "Record decision")
    refusal = page.get_by_text("Not recorded: a reviewer name is required")
    expect(refusal).to_be_visible()
    settled(page)
    in_view(refusal)
    assert outbox_empty(app)


def uncovered(locator) -> None:
    """Nothing lies over the element's middle (a popover over a refusal would hide it however much is in view)."""
    assert locator.evaluate("""element => {
        const box = element.getBoundingClientRect();
        const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
        return element.contains(top);
    }""")


def outbox_empty(app) -> bool:
    return app.outbox().history() == []
