"""The stakeholder's journey: one review store with a decision above its reviewer's approval limit
(RECALL_REVIEW_APPROVAL_LIMITS), first decisions held for a blind second review (RECALL_REVIEW_SECOND_REVIEW_SHARE),
a case whose two reviews differ awaiting the lead, and one decision that stands. Home, the Overview, the Audit log and
its CSV and JSON exports give the same decided / held / awaiting figures, none of them names who decided the cases
still awaiting their blind second review, and nothing a reader needs is cut at 1440x900."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Page, expect

from dashboard.access.limits import ApprovalLimits
from dashboard.finance.policy import Recommendation
from dashboard.review.decisions import Proposal, decision_service
from dashboard.review.figures import CaseFigures, figures_of
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import interaction_record, ticket_decision
from tests.e2e.conftest import heading, metric, settled
from tests.helpers import DEMO_CASES, DEMO_TICKETS, demo_case, demo_ticket, exception_proposal

pytestmark = pytest.mark.browser
LIMIT, SHARE = 10_000, 0.10
OVER_LIMIT = demo_case("E-1004")  # 14,250.00, above a reviewer's 10,000; not in the sampled tenth
BLIND, LEAD = demo_case("E-1013"), demo_case("E-1009")  # both in the tenth sampled for a blind second review
DECIDED = demo_case("E-1001")  # 5,120.00, not sampled: a decision that stands
BLIND_TICKET = demo_ticket("T-2004")  # sampled too
FIRST, FIRST_NOTE = (
    "Quincy Firstly",
    "quincy-note-3b7e",
)  # who decided the cases still awaiting their blind second review
REC = Recommendation(action="approve", confidence=0.9, cited=[], rationale="r", policy="precedent")
EXCEPTIONS = CaseFigures(cases=18, open=14, decided=1, held_for_approver=1, held_for_blind_review=1, awaiting_lead=1)
TICKETS = CaseFigures(cases=12, open=11, held_for_blind_review=1)
OVERFLOWING = """table => [...table.querySelectorAll('th, td')].filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.innerText)
    .concat(table.scrollWidth > table.parentElement.clientWidth + 1 ? ['(the table is wider than the page)'] : [])"""


@pytest.fixture
def app_env() -> dict[str, str]:
    return {
        "RECALL_REVIEW_APPROVAL_LIMITS": json.dumps({"reviewer": LIMIT}),
        "RECALL_REVIEW_SECOND_REVIEW_SHARE": str(SHARE),
    }


def _every_kind_of_hold(app, hindsight) -> None:
    """Recorded by the decision service on the app's own store, with the app's rules: what the pages must count."""
    outbox = app.outbox()
    service = decision_service(
        outbox, hindsight.gateway.retain, limits=ApprovalLimits({"reviewer": LIMIT}), second_review_share=SHARE
    )

    def decide(case, who: str, outcome: str | None = None, note: str = ""):
        proposal = replace(exception_proposal(case, REC, who, outcome, note), amount=case.invoice_amount)
        return service.decide(app.finance_bank, "reviewer", proposal)

    assert decide(OVER_LIMIT, "Dana").held_because
    assert decide(BLIND, FIRST, "reject", FIRST_NOTE).blind
    assert decide(LEAD, "Dana", "reject").blind  # the second review is given: no longer blind
    assert (
        service.second_review(app.finance_bank, "reviewer", exception_proposal(LEAD, REC, "Lee")).stored.state
        == "awaiting_lead"
    )
    assert decide(DECIDED, "Dana").delivered
    decision = ticket_decision(
        BLIND_TICKET,
        action="approve",
        reviewer=FIRST,
        authenticated=False,
        decided_at=datetime.now(UTC),
        note=FIRST_NOTE,
    )
    assert service.decide(
        app.support_bank,
        "reviewer",
        Proposal(
            decision=decision,
            record=interaction_record(BLIND_TICKET, decision),
            scope=customer_tag(BLIND_TICKET.customer),
        ),
    ).blind


def _words(f: CaseFigures) -> str:
    """How every page says a queue's figures, e.g. "1 decided, 3 held (1 for a second approver, ...), 14 open."."""
    held = [
        f"{count} {what}"
        for count, what in (
            (f.held_for_approver, "for a second approver"),
            (f.held_for_blind_review, "for a blind second review"),
            (f.awaiting_lead, "awaiting the lead"),
        )
        if count
    ]
    return f"{f.decided} decided, {f.held} held ({', '.join(held)}), {f.open} open."


def _sentence(name: str, f: CaseFigures) -> str:
    """How the Overview's queue status and the Audit log name them."""
    return f"{name}: {f.cases} cases, {_words(f)}"


def _exported(rows: list[dict]) -> tuple[CaseFigures, CaseFigures]:
    """The figures an export says: each case's status now (its rows' case_status), the cases with no row open."""
    status = {(r["case_kind"], r["case_id"]): r["case_status"] for r in rows}
    figures = []
    for kind, queue in (("exception", DEMO_CASES), ("ticket", DEMO_TICKETS)):
        counted = Counter(s for (k, _), s in status.items() if k == kind)
        counted["open"] += len(queue) - sum(counted.values())
        figures.append(figures_of(counted))
    return figures[0], figures[1]


def test_home_the_overview_the_audit_log_and_its_exports_give_the_same_figures(app, hindsight, page: Page, shots):
    _every_kind_of_hold(app, hindsight)

    page.goto(app.url)
    expect(heading(page, "Where the agents' memories are kept")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^each record kept word for word")).first).to_be_visible()
    settled(page)
    table = page.get_by_test_id("stTable").locator("table")
    assert table.evaluate(OVERFLOWING) == []  # no label or cell cut at 1440x900 (a grid cut how texts are kept)
    for f in (EXCEPTIONS, TICKETS):
        expect(page.get_by_text(_words(f), exact=True)).to_be_visible()
    shots(page, "stakeholder-home")

    page.goto(f"{app.url}/overview")
    headline = page.get_by_role("heading", name=re.compile(r"^30 cases \(18 exceptions, 12 tickets\): "))
    expect(headline).to_contain_text(
        "1 decided, 4 held (1 for a second approver, 2 for a blind second review, 1 awaiting the lead), 25 open.",
        timeout=120_000,
    )  # the first visit measures the queue first
    for label, value in (
        ("Decided", 1),
        ("Held for a second approver", 1),
        ("Held for a blind second review", 2),
        ("Awaiting the lead", 1),
    ):
        expect(metric(page, label)).to_have_text(str(value))
    for name, f in (("Finance exceptions", EXCEPTIONS), ("Support tickets", TICKETS)):
        expect(page.get_by_text(_sentence(name, f), exact=True)).to_be_visible()
    expect(
        page.get_by_text(
            "4 held (1 for a second approver, 2 for a blind second review, 1 awaiting the lead).", exact=True
        )
    ).to_be_visible()
    settled(page)
    overview = page.content()  # the whole DOM, hidden parts too
    assert FIRST not in overview and FIRST_NOTE not in overview
    shots(page, "stakeholder-overview")

    page.goto(f"{app.url}/audit")
    for name, f in (("Finance exceptions", EXCEPTIONS), ("Support tickets", TICKETS)):
        expect(page.get_by_text(_sentence(name, f), exact=True)).to_be_visible()
    expect(
        page.get_by_text(
            re.compile(f"^#\\d+ {BLIND.id}: a first decision, .*hidden until the blind second review")
        ).first
    ).to_be_visible()
    settled(page)
    audit = page.content()
    assert FIRST not in audit and FIRST_NOTE not in audit
    shots(page, "stakeholder-audit")
    exported = {}
    for button in ("Export CSV", "Export JSON"):
        with page.expect_download() as download:
            page.get_by_role("button", name=button).click()
        exported[button] = open(download.value.path(), encoding="utf-8").read()
    assert _exported(list(csv.DictReader(io.StringIO(exported["Export CSV"])))) == (EXCEPTIONS, TICKETS)
    assert _exported(json.loads(exported["Export JSON"])) == (EXCEPTIONS, TICKETS)
    for text in exported.values():
        assert FIRST not in text and FIRST_NOTE not in text  # blind means blind in the exports too
