"""The product as people use it: headless Chromium against `streamlit run dashboard/app/main.py` and a real
Hindsight. Keys are pressed, buttons clicked, text waited for (never sleeps); a screenshot per step."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from dashboard.finance.policy import Recommendation
from tests.e2e.conftest import (
    PROBE_CASE,
    PROBE_TEXT,
    XSS_IMG,
    XSS_LINK,
    XSS_REMOTE,
    choose,
    click_button,
    click_when_still,
    decision_form,
    grid_cells,
    heading,
    metric,
    open_select,
    paste_over_the_limit,
    press,
    settled,
    ticket_form,
)
from tests.helpers import demo_case, demo_ticket, record_exception_decision, record_ticket_decision

pytestmark = pytest.mark.browser


def test_review_an_exception_with_keys_approve_then_override(app, page: Page, shots):
    page.goto(f"{app.url}/exceptions?case=E-1002")
    expect(heading(page, "E-1002: V02 price variance")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Exact: this vendor AND this type \(2\)$"))).to_be_visible()
    settled(page)
    shots(page, "exceptions", readme=True)

    # Typing in a field must not fire the shortcuts (J, K, A and O are all in this name).
    name = page.locator('input[aria-label="Reviewer name"]')
    name.fill("")
    name.press_sequentially("Jake Kojak Adams")
    name.press("Tab")
    settled(page)
    expect(name).to_have_value("Jake Kojak Adams")
    expect(heading(page, "E-1002:")).to_be_visible()
    assert "recorded" not in page.inner_text("body")

    press(page, "j")
    expect(page).to_have_url(re.compile(r"case=E-1003"))
    expect(heading(page, "E-1003:")).to_be_visible()
    press(page, "k")
    expect(heading(page, "E-1002:")).to_be_visible()
    expect(page).to_have_url(re.compile(r"case=E-1002"))
    settled(page)

    expect(
        page.get_by_role("button", name="Accept: reject Shortcut A")
    ).to_be_visible()  # the button names what it records
    press(page, "a")  # accept the recommendation (reject): confirmed under the keys, on to the next unreviewed case
    expect(
        page.get_by_text(re.compile(r"E-1002 recorded: reject \(decision #\d+\), saved to the agents' memory"))
    ).to_be_visible()
    expect(heading(page, "E-1003:")).to_be_visible()
    shots(page, "exceptions-approved")
    settled(page)
    press(page, "k")
    expect(heading(page, "E-1002:")).to_be_visible()
    settled(page)
    press(page, "o")  # E-1002 is decided: the form switches to override, and it is a revision of the decision
    settled(page)
    expect(
        page.get_by_text(
            re.compile(
                r"E-1002 is already decided: reject by Jake Kojak Adams, revision 1 .* Override below revises it"
            )
        )
    ).to_be_visible()
    expect(decision_form(page).get_by_role("radio", name="Override")).to_be_checked()
    choose(page, "Override outcome", "approve")
    reason = decision_form(page).get_by_text("PRICE_AGREED: Price change agreed with the vendor", exact=True)
    assert reason.evaluate("e => e.scrollWidth <= e.clientWidth")  # the code and its label read in full, never cut
    reason.click()
    page.locator('textarea[aria-label="Note"]').fill("New price list from 1 Nov")
    page.locator('input[aria-label="Reason for revising (required)"]').fill(
        "Rejected by mistake: the new price list applies"
    )
    click_button(page, "Revise decision")
    expect(
        page.get_by_text(
            re.compile(
                r"E-1002 revised: approve for payment \(revision 2, decision #\d+\), saved to the agents' memory"
            )
        )
    ).to_be_visible()
    expect(
        page.get_by_text(re.compile(r"Decided: approve for payment \(override of reject\) by Jake Kojak Adams"))
    ).to_be_visible()
    settled(page)
    shots(page, "exceptions-overridden")


def test_audit_a_ticket_with_legacy_evidence_and_approve_it(app, page: Page, shots):
    page.goto(f"{app.url}/tickets?ticket=T-2004")
    expect(
        page.get_by_text("This customer has no tagged history yet: old untagged records were searched")
    ).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Old records used \(2\)$"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Records found but not used \(\d+\)$"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Not used because: names another customer \(\d+\)"))).to_be_visible()
    settled(page)
    page.get_by_text("Each record, its text and why it was not used").click()  # folded behind its count: unfolded
    expect(page.get_by_text("not used: names another customer").first).to_be_visible()
    shown = page.inner_text("body")
    assert (
        "SUP-L-001" in shown and "SUP-L-002" in shown and "SUP-L-003" in shown
    )  # record cards: text, not canvas cells

    press(page, "j")
    expect(page.get_by_role("heading", name="T-2005: Ann Leeds")).to_be_visible()
    press(page, "k")
    expect(page.get_by_role("heading", name="T-2004: Ann Lee")).to_be_visible()
    page.locator('input[aria-label="Reviewer name"]').fill("Ada Auditor")
    page.locator('input[aria-label="Reviewer name"]').press("Tab")
    settled(page)
    # A pasted note over the limit is kept up to it, with what was cut shown: the browser drops nothing silently.
    ticket_form(page).get_by_text("Replace it", exact=True).click()
    paste_over_the_limit(page, "Note (required when you replace the draft)", "Record decision")
    shots(page, "tickets-long-note")
    press(page, "a")  # the draft sent as it is (no note): confirmed under the keys, on to the next unreviewed ticket
    expect(
        page.get_by_text(
            re.compile(
                r"T-2004 recorded: the drafted response sent as it is \(decision #\d+\), saved to the agents' memory"
            )
        )
    ).to_be_visible()
    expect(page.get_by_role("heading", name="T-2005: Ann Leeds")).to_be_visible()
    settled(page)
    press(page, "k")
    expect(
        page.get_by_text(
            re.compile(r"Decided: the drafted response sent as it is, decision #\d+: saved to the agents' memory")
        )
    ).to_be_visible()
    settled(page)
    shots(page, "tickets-approved")


def test_open_a_trace_and_change_a_what_if_knob(app, page: Page, shots):
    page.goto(f"{app.url}/exceptions?case=E-1002")
    expect(page.get_by_text("Exact: this vendor AND this type")).to_be_visible()
    settled(page)  # a click during a rerun can land on an element the rerun replaces
    page.get_by_text("How this was recalled").click()
    click_when_still(page, page.get_by_role("link", name="Trace of pass 2 (broader)"))
    expect(page).to_have_url(
        re.compile(r"/traces\?")
    )  # followed: a failure here is a lost click (the report carries the app log and the console)
    expect(page.get_by_role("heading", name="Recall traces")).to_be_visible()
    click_button(page, "Run this recall with a trace")  # a link never runs a recall by itself
    expect(page.get_by_role("tab", name="What-if")).to_be_visible()
    # the verdict in plain words, the case's exact precedents counted, the way back to the case
    expect(
        page.get_by_text(
            re.compile(r"supplied \d+ % of the top-\d+ score; .* of the top \d+ are this case's exact precedents")
        )
    ).to_be_visible()
    expect(page.get_by_role("link", name="Back to case E-1002")).to_be_visible()
    # it opens on the verdict and the charts; the request console and the raw fusion scores are out of the way
    expect(page.get_by_role("tab", name="Charts")).to_have_attribute("aria-selected", "true")
    assert not page.get_by_role("textbox", name="Query", exact=True).is_visible()
    settled(page)
    shots(page, "traces", readme=True)
    page.get_by_role("tab", name="Results").click()
    settled(page)
    shots(page, "traces-results")

    page.get_by_role("tab", name="What-if").click()
    expect(page.get_by_text("Server settings (k=60, no caps, weights 1)")).to_be_visible()
    cap = page.locator('input[aria-label="semantic cap (0 = none)"]')
    cap.fill("1")
    page.locator('input[aria-label="bm25 cap (0 = none)"]').fill("1")
    click_button(page, "Replay")
    expect(page.get_by_text("Server settings (k=60, no caps, weights 1)")).to_have_count(0)
    expect(page.get_by_text(re.compile(r"Top \d+ by RRF, server vs replay: \d+ in, \d+ out"))).to_be_visible()
    settled(page)
    shots(page, "traces-whatif")

    # A/B: B as the what-if "graph arm weight 0", predicted from one trace per recall
    page.get_by_role("tab", name="A/B").click()
    settled(page)  # a tab shown for the first time loads its elements' code
    page.get_by_text("a what-if setting (predicted)").last.click()
    settled(page)  # the choice reruns the page
    open_select(page, "links (graph) weight", last=True)
    page.get_by_role("option", name="0", exact=True).click()
    click_button(page, "Compare A and B")
    expect(page.get_by_text(re.compile(r"^under B \(what-if: graph arm weight 0\): "))).to_be_visible(timeout=120_000)
    expect(
        page.get_by_text(re.compile(r"Check: predicted with the server's settings, (\d+) of \1 recalls"))
    ).to_be_visible()
    settled(page)
    shots(page, "ab", readme=True)

    page.get_by_role("link", name="Back to case E-1002").click()
    expect(page).to_have_url(re.compile(r"/exceptions\?case=E-1002"))
    expect(page.get_by_text("Exact: this vendor AND this type")).to_be_visible()


def _three_decisions(app) -> None:
    """What the audit and overview tests start from, recorded in the app's own outbox: E-1002 approved then
    overridden by Jake, T-2004 approved by Ada. The app delivers them to Hindsight when a page loads."""
    outbox, rec = (
        app.outbox(),
        Recommendation(action="reject", confidence=1.0, cited=[], rationale="r", policy="precedent"),
    )
    case = demo_case("E-1002")
    record_exception_decision(outbox, app.finance_bank, case, rec, reviewer="Jake Kojak Adams")
    record_exception_decision(outbox, app.finance_bank, case, rec, override=True, reviewer="Jake Kojak Adams")
    record_ticket_decision(outbox, app.support_bank, demo_ticket("T-2004"), reviewer="Ada Auditor")


def test_audit_page_lists_the_decisions(app, page: Page, shots):
    _three_decisions(app)
    page.goto(f"{app.url}/audit")
    expect(page.get_by_role("heading", name="Decision audit log")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^3 of 3 decisions$"))).to_be_visible()
    expect(
        page.get_by_text(re.compile(r"^#\d+ T-2004: the drafted response sent as it is")).first
    ).to_be_visible()  # the buttons' words
    expect(page.get_by_text(re.compile(r"^#\d+ E-1002: ")).first).to_be_visible()
    settled(page)  # the whole list drawn before it is read
    shown = page.inner_text("body")  # each decision read in full as text, its note and whether it is stored
    assert len(re.findall(r"#\d+ E-1002: ", shown)) == 2 and len(re.findall(r"#\d+ T-2004: ", shown)) == 1
    assert shown.count("by Jake Kojak Adams, ") == 2 and shown.count("by Ada Auditor, ") == 1
    assert shown.count("Stored in Hindsight? ") == 3 and shown.count("Note: ") == 3
    expect(page.get_by_role("button", name="Export CSV")).to_be_visible()
    settled(page)
    shots(page, "audit", readme=True)


def test_overview_shows_what_reviewers_and_memory_did(app, page: Page, shots):
    _three_decisions(app)
    page.goto(f"{app.url}/overview")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    # nothing pressed: the first load measures the cases no one has recalled yet
    expect(page.get_by_text(re.compile(r"^18 of 18 queued cases measured"))).to_be_visible(timeout=90_000)
    expect(page.get_by_text(re.compile(r"^12 of 12 tickets measured"))).to_be_visible()
    headline = page.get_by_role("heading", name=re.compile(r"^30 cases \(18 exceptions, 12 tickets\): 2 decided"))
    expect(headline).to_be_visible()
    expect(headline).to_contain_text("People overruled the agent on 1 of the 2 decisions made in the date range (50%).")
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()
    expect(
        page.get_by_test_id("stVegaLiteChart").nth(5)
    ).to_be_attached()  # at least six charts, each drawn in its turn
    # the latest decision per case: E-1002 (overridden) and T-2004 (approved)
    expect(metric(page, "Decisions in range")).to_have_text(re.compile(r"^2$"))
    expect(metric(page, "Finance agreement")).to_have_text(re.compile(r"^0%$"))
    expect(metric(page, "Ticket drafts approved")).to_have_text(re.compile(r"^100%$"))
    settled(page)
    shots(page, "overview", readme=True)


def _assert_inert(page: Page, requests: list[str], dialogs: list[str], shown: str) -> None:
    for literal in (XSS_IMG, XSS_LINK, XSS_REMOTE):
        assert literal in shown, f"{literal!r} not shown as text"
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator('a[href^="javascript:"]').count() == 0
    assert page.locator('img[src*="127.0.0.1:9"]').count() == 0
    assert not dialogs and not [u for u in requests if "127.0.0.1:9/" in u]


def test_untrusted_memory_text_renders_as_literal_text(app, page: Page, shots):
    requests, dialogs = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{app.url}/exceptions?case={PROBE_CASE}")
    evidence = page.locator(".st-key-case_evidence")
    expect(evidence.get_by_text(PROBE_TEXT, exact=True)).to_be_visible()  # the evidence cards: text elements
    # the screen flags the hidden markup and quotes it, as literal text too
    expect(
        evidence.get_by_text(re.compile(r"^Set aside, never cited, never a vote: its text hides text in markup"))
    ).to_be_visible()
    settled(page)
    _assert_inert(page, requests, dialogs, evidence.inner_text())
    shots(page, "untrusted-text-exceptions")

    page.get_by_text("How this was recalled").click()  # opening it reruns the case: its traces are drawn only then
    click_when_still(page, page.get_by_role("link", name="Trace of pass 1 (exact)"))
    expect(page.get_by_role("heading", name="Recall traces")).to_be_visible()
    click_button(page, "Run this recall with a trace")
    page.get_by_role("tab", name="What-if").click()  # its top-k table shows each candidate's text
    expect(page.locator("[id^=glide-cell]").filter(has_text=XSS_IMG).first).to_be_attached()
    settled(page)
    _assert_inert(page, requests, dialogs, grid_cells(page))
    shots(page, "untrusted-text-trace")
