"""A support lead in Chromium at 1440x900: every record found but not used reads in full once unfolded, and the legacy
records a tagged recall left out are migrated for one customer from the ticket itself."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from playwright.sync_api import Page, expect

from dashboard.support.decisions import interaction_record, ticket_decision
from dashboard.support.recall import recall_for_ticket
from tests.e2e.conftest import VIEWPORT, WAIT, click_button, settled
from tests.helpers import demo_ticket


def _words(text: str) -> str:
    return " ".join(text.split())  # the page wraps lines; compare the words


def test_every_record_found_but_not_used_reads_in_full(app, hindsight, page: Page, shots):
    gateway = hindsight.gateway
    rejected = recall_for_ticket(
        gateway.recall, app.support_bank, "Ann Lee", demo_ticket("T-2004").issue, read_document=gateway.document
    ).legacy_rejected
    page.goto(f"{app.url}/tickets?ticket=T-2004")
    title = page.get_by_text(f"Records found but not used ({len(rejected)})", exact=True)
    expect(title).to_be_visible(timeout=WAIT)
    settled(page)
    page.get_by_text("Each record, its text and why it was not used").click()  # folded behind the count and its summary
    expect(page.get_by_text(f"Why: {rejected[-1].reason}", exact=True).first).to_be_visible()
    # Wrapped text in the DOM, not canvas cells: every id, every reason and every record text, in full.
    shown = _words(page.inner_text("body"))
    assert len(rejected) > 10
    for e in rejected:
        assert e.ref in shown and _words(f"Why: {e.reason}") in shown and _words(e.text) in shown, e.ref
    long_reason = max((e.reason for e in rejected if "ownership not proven" in e.reason), key=len)
    record = max((e.text for e in rejected), key=len)
    for text in (f"Why: {long_reason}", record.splitlines()[0]):
        line = page.get_by_text(text, exact=False).first
        line.scroll_into_view_if_needed()
        box = line.bounding_box()
        assert box is not None and box["x"] + box["width"] <= VIEWPORT["width"], (
            text
        )  # wrapped within the page, never cut off
    shots(page, "tickets-legacy-not-used")


def test_a_lead_migrates_the_legacy_records_a_tagged_recall_left_out(app, hindsight, page: Page, shots):
    ticket = demo_ticket("T-2004")  # approved: Ann Lee now has a tagged record
    decision = ticket_decision(
        ticket, action="approve", reviewer="Rita", authenticated=False, decided_at=datetime(2026, 11, 13, tzinfo=UTC)
    )
    hindsight.gateway.retain(app.support_bank, [interaction_record(ticket, decision)])

    page.goto(f"{app.url}/tickets?ticket=T-2012")
    sentence = "2 legacy records of this customer were not consulted because a tagged record exists: migrate them."
    expect(page.get_by_text(sentence)).to_be_visible(timeout=WAIT)
    settled(page)
    shots(page, "tickets-legacy-left-out", readme=True)

    page.get_by_text("I have checked these records").click()
    click_button(page, "Migrate this customer's legacy records")
    expect(page.get_by_text(re.compile(r"Tagged 2 record\(s\) in place"))).to_be_visible(timeout=WAIT)
    expect(page.get_by_text(sentence)).to_have_count(0)
    expect(page.get_by_text("History used (3)", exact=True)).to_be_visible()
    settled(page)
    shots(page, "tickets-legacy-migrated")
