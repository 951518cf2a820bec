"""The review queue workflow in headless Chromium against a real Hindsight: N skips decided cases, a claim
holds against a second reviewer's browser, bulk approval records one decision per case, a long
precedent is readable in full, and a pasted long note is kept up to the limit with the rest shown."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser, Page, expect

from dashboard.finance.pages import recalls as finance_recalls
from dashboard.finance.policy import Recommendation
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.casework import Casework
from tests.e2e.conftest import (
    VIEWPORT,
    WAIT,
    click_button,
    decision_form,
    heading,
    open_select,
    paste_over_the_limit,
    press,
    settled,
)
from tests.helpers import demo_case, record_exception_decision

pytestmark = pytest.mark.browser
REC = Recommendation(action="reject", confidence=1.0, cited=[], rationale="r", policy="precedent")


def _name(page: Page, name: str) -> None:
    field = page.locator('input[aria-label="Reviewer name"]')
    field.fill(name)
    field.press("Tab")
    settled(page)


def test_n_skips_decided_cases(app, page: Page, shots):
    outbox = app.outbox()
    for case_id in ("E-1003", "E-1004"):
        record_exception_decision(outbox, app.finance_bank, demo_case(case_id), REC)
    page.goto(f"{app.url}/exceptions?case=E-1002")
    expect(heading(page, "E-1002:")).to_be_visible()
    expect(page.locator(".st-key-case_evidence")).to_contain_text("Exact: this vendor AND this type")
    settled(page)
    shots(page, "exceptions-case")
    press(page, "n")
    expect(page).to_have_url(re.compile(r"case=E-1005"))
    expect(heading(page, "E-1005:")).to_be_visible()
    settled(page)
    press(page, "k")  # K walks every case, decided ones too
    expect(heading(page, "E-1004:")).to_be_visible()


def test_a_key_redraws_the_case_and_a_decision_made_meanwhile_redraws_the_queue_too(app, page: Page):
    """J, K and N rerun the open case alone (a fragment); once a decision lands anywhere, the next key reruns the
    whole page, so the counts above the queue and the case's status agree with the store."""
    page.goto(f"{app.url}/exceptions?case=E-1002")
    expect(page.locator(".st-key-case_evidence")).to_contain_text("Exact: this vendor AND this type")
    counts = page.get_by_text(re.compile(r"^18 of 18 exceptions shown: \d+ decided"))
    expect(counts).to_have_text("18 of 18 exceptions shown: 0 decided, 18 open.")
    press(page, "j")
    expect(heading(page, "E-1003:")).to_be_visible()
    record_exception_decision(app.outbox(), app.finance_bank, demo_case("E-1004"), REC)  # another reviewer, meanwhile
    press(page, "j")
    expect(heading(page, "E-1004:")).to_be_visible()
    expect(counts).to_have_text(
        re.compile(r"^18 of 18 exceptions shown: 1 decided( \(1 not yet stored in memory\))?, 17 open\.$")
    )
    expect(page.locator(".st-key-case_header")).to_contain_text(re.compile(r"(pending delivery|decided): reject"))


def test_two_browsers_cannot_both_claim_a_case(app, browser: Browser):
    ann_ctx, bob_ctx = browser.new_context(viewport=VIEWPORT), browser.new_context(viewport=VIEWPORT)
    try:
        ann, bob = ann_ctx.new_page(), bob_ctx.new_page()
        for who, page in (("Ann", ann), ("Bob", bob)):
            page.set_default_timeout(WAIT)
            page.goto(f"{app.url}/exceptions?case=E-1002")
            expect(heading(page, "E-1002:")).to_be_visible()
            settled(page)
            _name(page, who)
            expect(page.get_by_role("button", name="Claim")).to_be_enabled()
        click_button(ann, "Claim")
        expect(ann.get_by_text(re.compile(r"Yours until \d\d:\d\d UTC"))).to_be_visible()
        click_button(bob, "Claim")  # Bob's page still offered it: the store says no
        expect(bob.get_by_text(re.compile(r"Claimed by Ann until"))).to_be_visible()
        expect(bob.get_by_role("button", name="Record decision")).to_be_disabled()
        press(bob, "a")  # the accept key stays live on a held case and says why it records nothing
        expect(bob.get_by_text("Not recorded: E-1002: someone else holds it (see who above).")).to_be_visible()
        claim = Casework(app.outbox().engine).holder_of(app.finance_bank, "exception", "E-1002")
        assert claim is not None and claim.holder == "Ann"
    finally:
        ann_ctx.close()
        bob_ctx.close()


@pytest.mark.parametrize("app_env", [{"RECALL_REVIEW_PREFETCH": "true"}])  # it waits for the queue's background recall
def test_bulk_acceptance_records_one_decision_per_case(app, page: Page, shots):
    page.goto(f"{app.url}/exceptions")
    expect(page.locator(".st-key-case_evidence")).to_contain_text("Exact: this vendor AND this type")
    settled(page)
    _name(page, "Bea Bulk")
    expect(
        page.get_by_text(re.compile(r"^18 of 18 exceptions shown: \d+ decided"))
    ).to_be_visible()  # above the closed panel
    page.locator(".st-key-exception_queue_open summary").click()
    button = page.get_by_role("button", name="Accept well-supported recommendations")
    expect(button).to_be_visible()  # the panel's table and bulk acceptance are drawn once it is open
    settled(page)
    still = page.get_by_text(re.compile(r"still being recalled in the background"))
    deadline = time.monotonic() + WAIT / 1000
    while (
        still.count() and time.monotonic() < deadline
    ):  # the prefetch fills the cache; a rerun (R) shows what is ready
        page.wait_for_timeout(finance_recalls.QUIET_S * 1000 + 500)  # each rerun holds the background back for QUIET_S
        press(page, "r")
        settled(page)
    expect(button).to_be_enabled()
    button.click()
    dialog = page.get_by_role("dialog")
    confirm = dialog.get_by_role("button", name=re.compile(r"^Accept all \d+$"))
    expect(confirm).to_be_visible()
    count = int(re.search(r"Accept all (\d+)", confirm.inner_text()).group(1))
    assert count >= 2
    shots(page, "exceptions-bulk-confirm")
    dialog.get_by_role("button", name=f"Accept all {count}").click()
    expect(page.get_by_text(re.compile(rf"^{count} decision\(s\) recorded, one per case"))).to_be_visible()
    history = app.outbox().history("exception")
    assert len(history) == count and len({s.decision.case_id for s in history}) == count
    assert all(s.evidence is not None and s.evidence.available for s in history)


def test_a_long_precedent_is_readable_in_full(app, hindsight, page: Page, shots):
    ending = "and the credit note was issued on the same day (END-OF-LONG-PRECEDENT)."
    text = (
        "Brightline Freight price variance precedent: the linehaul rate was billed above the PO because the fuel "
        "surcharge table changed mid-quarter; the buyer confirmed the new table in writing, "
    ) * 3
    text = (text + ending).strip()
    assert len(text) >= 600
    hindsight.gateway.retain(
        app.finance_bank,
        [
            MemoryRecord(
                document_id="long-precedent",
                content=text,
                tags=["vendor:V12", "type:price_variance"],
                metadata={"outcome": "approve", "decided_on": "2026-10-01"},
                context="long precedent",
            )
        ],
    )
    page.goto(f"{app.url}/exceptions?case=E-1015")
    evidence = page.locator(".st-key-case_evidence")
    end = evidence.get_by_text("END-OF-LONG-PRECEDENT", exact=False)
    expect(end).to_be_visible()
    settled(page)
    shown = evidence.inner_text()
    assert ending in shown and "…" not in shown  # wrapped, never cut
    box = end.bounding_box()
    assert (
        box is not None and box["x"] + box["width"] <= VIEWPORT["width"]
    )  # within the page, not clipped off to the right
    shots(page, "exceptions-long-precedent")


def test_an_unknown_link_offers_the_first_unreviewed_case(app, page: Page):
    page.goto(f"{app.url}/exceptions?case=NOPE")
    expect(page.get_by_text("No exception 'NOPE' in the queue (or it is filtered out).")).to_be_visible()
    settled(page)
    assert (
        page.get_by_text("in the queue", exact=False).count() == 1 and page.get_by_text("queue is empty").count() == 0
    )
    click_button(page, "Open E-1001, the first unreviewed exception")
    expect(heading(page, "E-1001:")).to_be_visible()
    assert page.url.endswith("case=E-1001")


def test_a_pasted_long_note_is_kept_up_to_the_limit_and_the_override_offers_only_other_outcomes(app, page: Page, shots):
    page.goto(f"{app.url}/exceptions?case=E-1002")  # the agent recommends reject
    expect(heading(page, "E-1002:")).to_be_visible()
    _name(page, "Pat Paste")
    page.get_by_test_id("stRadioGroup").get_by_text("Override", exact=True).click()
    open_select(page, "Override outcome")
    offered = page.get_by_role("option")
    assert sorted(o.strip() for o in offered.all_inner_texts()) == [
        "approve for payment",
        "escalate",
    ]  # never the recommended outcome
    page.get_by_role("option").filter(has_text="approve for payment").first.click()
    decision_form(page).get_by_text("OTHER: Other (explain in the note)", exact=True).click()
    paste_over_the_limit(page, "Note", "Record decision")
    shots(page, "exceptions-long-note")
