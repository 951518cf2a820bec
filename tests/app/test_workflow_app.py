"""The queue workflow through AppTest against the real server and the demo banks: next unreviewed, auto-advance,
claims, bulk acceptance and comments, on Finance exceptions (and the shared pieces on Support tickets)."""

import re

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.app import background
from dashboard.finance.pages import recalls as finance_recalls
from dashboard.finance.policy import Recommendation
from dashboard.review.casework import Casework
from dashboard.review.workflow import age_label, next_unreviewed, sla_state
from tests.helpers import (
    DEMO_CASES,
    QUEUE_OPEN,
    demo_case,
    demo_ticket,
    open_page,
    record_exception_decision,
    record_ticket_decision,
)

EXC, TIC = "../finance/pages/exceptions.py", "../support/pages/tickets.py"
REC = Recommendation(action="reject", confidence=1.0, cited=[], rationale="r", policy="precedent")


@pytest.fixture
def app(hindsight, point_app, demo_banks):
    outbox = point_app(hindsight.env(finance=demo_banks.finance, support=demo_banks.support, prefetch=True))
    return outbox, demo_banks, Casework(outbox.engine)


def _case(at: AppTest) -> str:
    value = at.query_params["case"]
    return value[0] if isinstance(value, list) else value


def _click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    return at


def _name(at: AppTest, name: str, key: str = "reviewer_name") -> AppTest:
    at.text_input(key=key).input(name).run()
    assert not at.exception, at.exception
    return at


def _notices(at: AppTest) -> str:
    """The confirmations, inline beside the form (never toasts: a toast lies over the form's fields)."""
    assert not at.toast
    return "\n".join(e.value for e in [*at.success, *at.warning, *at.error])


def test_next_unreviewed_rules():
    ids = ["a", "b", "c", "d"]
    assert next_unreviewed(ids, "a", {"b", "c"}) == "d"
    assert next_unreviewed(ids, "d", {"b"}) == "a"  # wraps round
    assert next_unreviewed(ids, "a", {"b", "c", "d"}) is None  # the case on screen is never the answer
    assert next_unreviewed(ids, None, {"a"}) == "b"
    assert [sla_state(d, 5) for d in (3, 4, 5, 6)] == ["on time", "due", "due", "overdue"]
    assert age_label(28, 5) == "28 days open, overdue (SLA 5 days)" and age_label(1, 5) == "1 day open"


def test_first_open_case_opens_and_next_unreviewed_skips_decided_cases(app):
    outbox, banks, _work = app
    for case_id in ("E-1001", "E-1003", "E-1004"):
        record_exception_decision(outbox, banks.finance, demo_case(case_id), REC)
    at = open_page(EXC, timeout=120)
    assert _case(at) == "E-1002"  # no link: the first case without a decision opens, with its evidence
    assert any(h.value.startswith("E-1002:") for h in at.header)
    assert any("Exact: this vendor AND this type (2)" == s.value for s in at.subheader)
    started = list(background.background().started)  # the rest of the queue: one background job, started after the case
    assert [queue for (_bank, queue, _k, _stride, _generation) in started] == [
        finance_recalls.queue_fingerprint([c.id for c in DEMO_CASES])
    ]
    at = _click(at, "exc_next_open")
    assert _case(at) == "E-1005" and any(h.value.startswith("E-1005:") for h in at.header)
    at = _click(at, "exc_prev")
    assert _case(at) == "E-1004"  # J / K still walk every case; N skips the decided ones
    again = background.background().started[len(started) :]  # clicks and reruns never start it again; only a new
    assert all(job[-1] > started[-1][-1] for job in again)  # freshness generation does (a decision delivered meanwhile)
    assert len(set(background.background().started)) == len(background.background().started)


def test_with_background_recall_off_a_case_open_recalls_that_case_only(hindsight, point_app, demo_banks_read_only):
    point_app(hindsight.env(finance=demo_banks_read_only.finance))  # background recall off
    at = _name(open_page(EXC, timeout=120, case="E-1002", state=QUEUE_OPEN), "Bea Bulk")
    assert background.background().started == []
    assert any(c.value.startswith("17 open case(s) not recalled yet (background recall is off)") for c in at.caption), (
        at.caption
    )
    at = _click(at, "bulk_open")  # only what was opened is offered: E-1002, not well supported (the queue has several)
    assert [e.value for e in at.error] == ["No open case has a well-supported recommendation at hand yet."]


def test_a_decision_advances_to_the_next_unreviewed_case(app):
    outbox, banks, _work = app
    record_exception_decision(outbox, banks.finance, demo_case("E-1006"), REC)
    at = _name(open_page(EXC, timeout=120, case="E-1005"), "Kay Reviewer")
    at = _click(at, "exc_accept")
    assert outbox.latest("exception", "E-1005").decision.reviewer == "Kay Reviewer"
    assert "E-1005 recorded: reject" in _notices(at) and "Now E-1007: V04" in _notices(at)
    assert _case(at) == "E-1007" and any(h.value.startswith("E-1007:") for h in at.header)  # E-1006 was decided

    at.toggle(key="auto_advance").set_value(False).run()
    at = _click(at, "exc_accept")
    assert outbox.latest("exception", "E-1007") is not None and _case(at) == "E-1007"


def test_a_case_claimed_by_another_reviewer_cannot_be_decided(app):
    outbox, banks, work = app
    at = _name(open_page(EXC, timeout=120, case="E-1002"), "Dana")
    work.claim(banks.finance, "exception", "E-1002", "Olga Other")  # while Dana's page still shows it free
    at = _click(at, "exc_accept")  # the stale page's Approve: the claim is seen before anything is written
    assert outbox.latest("exception", "E-1002") is None
    assert any("Claimed by Olga Other until" in w.value for w in at.warning)
    assert at.button(key="decision_submit_E-1002").disabled
    at = _click(at, "exc_accept")  # the key stays live on a held case: pressed again, it says why it records nothing
    assert outbox.latest("exception", "E-1002") is None
    assert "Not recorded: E-1002: someone else holds it (see who above)." in [w.value for w in at.warning]

    at = _click(_name(open_page(EXC, timeout=120, state=QUEUE_OPEN, case="E-1003"), "Dana"), "claim_exception_button")
    assert work.holder_of(banks.finance, "exception", "E-1003").holder == "Dana"
    other = _name(open_page(EXC, timeout=120, case="E-1003"), "Olga Other")
    assert any("Claimed by Dana until" in w.value for w in other.warning)
    other = _click(other, "exc_accept")
    assert "Not recorded: E-1003: someone else holds it (see who above)." in [w.value for w in other.warning]
    assert outbox.latest("exception", "E-1003") is None
    at.toggle(key="exceptions_my_queue").set_value(True).run()
    assert list(at.dataframe(key="exception_queue").value["case"]) == ["E-1003"]

    at = _click(at, "exc_accept")  # the holder decides; the claim is released with the decision
    assert outbox.latest("exception", "E-1003").decision.reviewer == "Dana"
    assert work.holder_of(banks.finance, "exception", "E-1003") is None


def test_bulk_acceptance_records_one_decision_per_case(app):
    outbox, banks, work = app
    work.claim(banks.finance, "exception", "E-1001", "Olga Other")  # held by someone else: left out
    at = _name(open_page(EXC, timeout=120, state=QUEUE_OPEN), "Bea Bulk")
    for _ in range(10):  # the queue is recalled in the background: wait for it (no timing asserted), not rerunning
        if not any("still being recalled" in c.value for c in at.caption):  # the page meanwhile: each run would
            break  # hold the background back for QUIET_S
        background.background().drain(timeout=120)
        at.run()
    at = _click(at, "bulk_open")
    listing = re.compile(r"(E-\d{4}: .+, (approve for payment|reject|escalate)\n?)+")
    lines = [t.value for t in at.text if listing.fullmatch(t.value)]  # the dialog's list of cases
    assert len(lines) == 1, [t.value for t in at.text]
    expected = [line.split(":")[0] for line in lines[0].splitlines()]
    count = len(expected)
    assert count >= 2, expected
    assert "E-1001" not in expected
    at.button(key="bulk_open").click()
    at.button(key="exceptions_bulk_confirmed_yes").click().run()  # the dialog's button, in the opener's run
    assert not at.exception, at.exception
    history = outbox.history("exception")
    assert sorted(s.decision.case_id for s in history) == sorted(expected)  # one decision per case
    for stored in history:
        assert stored.decision.reviewer == "Bea Bulk" and not stored.decision.overridden
        assert stored.evidence is not None and stored.evidence.available and stored.evidence.items  # its own snapshot
        assert {i.id for i in stored.evidence.items if i.relevant}
    assert f"{count} decision(s) recorded, one per case" in _notices(at)


def test_comments_are_kept_and_shown_as_plain_text(hindsight, point_app, demo_banks_read_only):
    banks = demo_banks_read_only
    work = Casework(point_app(hindsight.env(finance=banks.finance, support=banks.support)).engine)
    at = _name(open_page(EXC, timeout=120, case="E-1002"), "Cy Commenter")
    body = "Call the vendor first. ![x](http://127.0.0.1:9/p.png) **not bold**"
    at.text_area(key="comment_body_exception").input(body)
    at.button(key="FormSubmitter:comment_form_exception_E-1002-Comment").click().run()
    assert not at.exception, at.exception
    assert [(c.author, c.body) for c in work.comments(banks.finance, "exception", "E-1002")] == [("Cy Commenter", body)]
    assert body in [t.value for t in at.text]  # a text element: literal, never markdown
    assert "Comments (1)" in [e.label for e in at.expander]


def test_tickets_share_next_unreviewed_claims_and_comments(app):
    outbox, banks, work = app
    record_ticket_decision(outbox, banks.support, demo_ticket("T-2002"))
    at = open_page(TIC, timeout=120, ticket="T-2001")
    at = _click(at, "tic_next_open")
    assert at.query_params["ticket"] in ("T-2003", ["T-2003"])
    at = _name(at, "Ada", key="ticket_reviewer")
    work.claim(banks.support, "ticket", "T-2003", "Olga Other")
    at = _click(at, "tic_accept")  # stale page: the claim is seen before anything is written
    assert outbox.latest("ticket", "T-2003") is None
    assert any("Claimed by Olga Other" in w.value for w in at.warning)
    at = _click(at, "tic_accept")  # pressed on the page that shows the claim: said, nothing recorded
    assert "Not recorded: T-2003: someone else holds it (see who above)." in [w.value for w in at.warning]
    assert outbox.latest("ticket", "T-2003") is None
    at = _click(at, "tic_next_open")  # T-2004: free; approving it opens the next unreviewed ticket
    at = _click(at, "tic_accept")
    assert outbox.latest("ticket", "T-2004").decision.reviewer == "Ada"
    assert at.query_params["ticket"] in ("T-2005", ["T-2005"])
