"""Blind second review in the browser: the second reviewer's page holds nothing of the first decision (its
reviewer, note or outcome); their different outcome sends the case to a lead, who sees both side by side and
decides; the next recall finds the lead's decision, while the first two stay in the audit and its export only."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import OUTCOME_WORDS
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.reporting.audit_export import audit_rows, to_csv
from dashboard.review.decisions import decision_service
from dashboard.store.decision import OUTCOMES
from tests.conftest import PROVEN
from tests.e2e.conftest import choose, click_button, decision_form, heading, settled
from tests.helpers import demo_case, exception_proposal

pytestmark = pytest.mark.browser
CASE = demo_case("E-1013")  # in the default tenth sampled for a blind second review (a stable hash of its id)
FIRST, FIRST_NOTE = "Quincy Firstly", "first-note-7f3a: checked with the buyer"


@pytest.fixture
def app_env() -> dict[str, str]:
    return {"RECALL_REVIEW_SECOND_REVIEW_SHARE": "0.10"}


def _reviewer(page: Page, name: str) -> None:
    field = page.locator('input[aria-label="Reviewer name"]')
    field.fill(name)
    field.press("Tab")
    settled(page)


def test_a_blind_second_review_that_disagrees_goes_to_a_lead_whose_decision_memory_holds(
    app, hindsight, page: Page, shots
):
    outbox = app.outbox()
    service = decision_service(outbox, hindsight.gateway.retain, second_review_share=0.10)
    _, rec = assess(
        two_stage_recall(hindsight.gateway.recall, app.finance_bank, CaseKey.of(CASE), CASE.recall_query()), PROVEN
    )
    first_outcome, lead_outcome = [o for o in OUTCOMES if o != rec.action][:2]
    assert service.decide(
        app.finance_bank, "reviewer", exception_proposal(CASE, rec, FIRST, first_outcome, FIRST_NOTE)
    ).blind
    service.casework.comment(app.finance_bank, "exception", CASE.id, FIRST, "first-comment-9c2e: I'd reject this")

    page.goto(f"{app.url}/exceptions?case={CASE.id}")
    expect(heading(page, "Blind second review")).to_be_visible()
    expect(page.get_by_text("A blind second review is asked for", exact=False)).to_be_visible()
    settled(page)
    shots(page, "blind-second-review")
    dom = page.content()  # the whole DOM, hidden parts too
    assert FIRST not in dom and "first-note-7f3a" not in dom and "Quincy" not in dom and "first-comment-9c2e" not in dom
    expect(page.get_by_text("Comments are hidden until the blind second review is given", exact=False)).to_have_count(1)
    assert f"Outcome: {first_outcome}" not in dom and f"review: {first_outcome}" not in dom
    assert first_outcome not in page.locator(".st-key-case_header").inner_text()  # the badge names no outcome

    _reviewer(page, "Lee Second")
    click_button(page, "Record decision")  # the recommendation, unlike the first decision
    expect(page.get_by_text(re.compile(f"{CASE.id}: second review recorded; the two decisions differ"))).to_be_visible()
    expect(heading(page, "The reviewers disagree: a lead decides")).to_be_visible()
    expect(page.get_by_text(re.compile("You cannot decide it here: You decided this case already"))).to_be_visible()
    assert hindsight.gateway.document(app.finance_bank, document_id_for(CASE.id)) is None  # neither is in memory

    _reviewer(page, "Max Lead")
    expect(page.get_by_text("You decided this case already", exact=False)).to_have_count(
        0
    )  # the rerun under the new name
    settled(page)
    for seen in (
        f"First review: {FIRST}",
        "first-note-7f3a",
        "Blind second review: Lee Second",
        "first-comment-9c2e",
    ):  # the lead sees all
        expect(page.get_by_text(seen, exact=False)).to_have_count(1)
    shots(page, "blind-review-lead")
    decision_form(page).get_by_text("Override", exact=True).click()
    expect(decision_form(page).get_by_role("radio", name="Override")).to_be_checked()
    choose(page, "Override outcome", OUTCOME_WORDS[lead_outcome])
    decision_form(page).get_by_text("CONTRACT_AMENDMENT: Contract or PO amended", exact=True).click()
    page.locator('textarea[aria-label="Note"]').fill("lead-note: settled with AP")
    click_button(page, "Record decision")
    expect(
        page.get_by_text(re.compile(f"{CASE.id}: the lead's decision, {OUTCOME_WORDS[lead_outcome]}, recorded"))
    ).to_be_visible()

    result = two_stage_recall(hindsight.gateway.recall, app.finance_bank, CaseKey.of(CASE), CASE.recall_query())
    (own,) = [e for e in result.exact if e.document_id == document_id_for(CASE.id)]
    assert f"Decision: {lead_outcome}, by reviewer Max Lead " in own.text
    assert FIRST not in own.text and "Lee Second" not in own.text and "first-note" not in own.text
    history = outbox.history()
    exported = audit_rows(history, service.second_reviews.trail([h.id for h in history]))
    assert [(r.reviewer, r.review_step, r.provenance) for r in exported if r.case_id == CASE.id] == [
        ("Max Lead", "lead", "the lead's decision: delivered"),
        (FIRST, "first", "superseded by the lead Max Lead"),
        ("Lee Second", "second", "superseded by the lead Max Lead"),
    ]
    assert "first-note-7f3a" in to_csv(exported)
