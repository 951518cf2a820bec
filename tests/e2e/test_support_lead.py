"""A support lead in Chromium at 1440x900: every record found but not used is on screen, and the legacy
records a tagged recall left out are migrated for one customer from the ticket itself."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from playwright.sync_api import Page, expect

from dashboard.support.decisions import interaction_record, ticket_decision
from dashboard.support.recall import recall_for_ticket
from tests.e2e.conftest import WAIT, grid_cells, settled
from tests.helpers import demo_ticket


def test_every_record_found_but_not_used_is_on_screen(app, hindsight, page: Page, shots):
    gateway = hindsight.gateway
    rejected = recall_for_ticket(gateway.recall, app.support_bank, "Ann Lee", demo_ticket("T-2004").issue, read_document=gateway.document).legacy_rejected
    page.goto(f"{app.url}/tickets?ticket=T-2004")
    title = page.get_by_text(f"Records found but not used ({len(rejected)})", exact=True)
    expect(title).to_be_visible(timeout=WAIT)
    settled(page)
    title.evaluate("e => e.scrollIntoView({block: 'start'})")  # the whole table now fits in the 900 px window
    # a grid draws accessibility cells only for the rows it shows: wait until it has drawn every one
    cells = grid_cells(page, *(e.ref for e in rejected))
    assert len(rejected) > 10 and all(e.ref in cells for e in rejected), cells
    shots(page, "tickets-legacy-not-used")


def test_a_lead_migrates_the_legacy_records_a_tagged_recall_left_out(app, hindsight, page: Page, shots):
    ticket = demo_ticket("T-2004")  # approved: Ann Lee now has a tagged record
    decision = ticket_decision(ticket, action="approve", reviewer="Rita", authenticated=False, decided_at=datetime(2026, 11, 13, tzinfo=UTC))
    hindsight.gateway.retain(app.support_bank, [interaction_record(ticket, decision)])

    page.goto(f"{app.url}/tickets?ticket=T-2012")
    sentence = "2 legacy records of this customer were not consulted because a tagged record exists: migrate them."
    expect(page.get_by_text(sentence)).to_be_visible(timeout=WAIT)
    settled(page)
    shots(page, "tickets-legacy-left-out", readme=True)

    page.get_by_text("I have checked these records").click()
    page.get_by_role("button", name="Migrate this customer's legacy records").click()
    expect(page.get_by_text(re.compile(r"Tagged 2 record\(s\) in place"))).to_be_visible(timeout=WAIT)
    expect(page.get_by_text(sentence)).to_have_count(0)
    expect(page.get_by_text("History used (3)", exact=True)).to_be_visible()
    settled(page)
    shots(page, "tickets-legacy-migrated")
