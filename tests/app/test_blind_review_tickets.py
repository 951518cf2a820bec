"""Blind second review on the Tickets page (AppTest, the real server): the sample holds a ticket's first decision
out of memory; the second reviewer's page shows none of it, and their agreeing decision releases it; reviews that
differ go to a lead who sees both, and the lead's decision is the memory."""

from __future__ import annotations

from datetime import UTC, datetime

from dashboard.cli.seed import seed_bank, support_records
from dashboard.review.decisions import Proposal, decision_service
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import interaction_record, ticket_decision
from tests.helpers import demo_ticket, open_page, texts

TICKET = demo_ticket("T-2004")  # in the default tenth sampled for a blind second review


def test_a_sampled_ticket_reaches_memory_only_after_a_blind_agreeing_second_review(hindsight, bank_id, point_app):
    seed_bank(hindsight.gateway, bank_id, support_records())
    outbox = point_app(
        {**hindsight.env(support=bank_id, finance=bank_id + "-fin"), "RECALL_REVIEW_SECOND_REVIEW_SHARE": "0.10"}
    )
    service = decision_service(outbox, hindsight.gateway.retain, second_review_share=0.10)
    decision = ticket_decision(
        TICKET,
        action="approve",
        reviewer="Quincy Firstly",
        authenticated=False,
        decided_at=datetime.now(UTC),
        note="quincy-note-91",
    )
    first = service.decide(
        bank_id,
        "reviewer",
        Proposal(decision=decision, record=interaction_record(TICKET, decision), scope=customer_tag(TICKET.customer)),
    )
    assert first.blind and hindsight.gateway.document(bank_id, first.stored.document_id) is None

    at = open_page("../support/pages/tickets.py", timeout=120, ticket=TICKET.id)
    shown = texts(at)
    assert "Blind second review" in shown and "A blind second review is asked for" in shown
    assert "Quincy" not in shown and "quincy-note-91" not in shown and "Decided (approve)" not in shown

    assert "You cannot decide it here: type your reviewer name first" in texts(at)
    at.text_input(key="ticket_reviewer").input("Rita Second").run()
    next(b for b in at.button if b.label == "Record decision").click().run()
    assert not at.exception, at.exception
    assert "second review recorded; the two decisions agree" in texts(at)
    assert outbox.get(first.stored.id).state == "delivered"
    document = hindsight.gateway.document(bank_id, first.stored.document_id)
    assert document is not None and "Quincy Firstly" in str(document)


def test_a_ticket_whose_reviews_differ_is_settled_by_a_lead_who_sees_both(hindsight, bank_id, point_app):
    seed_bank(hindsight.gateway, bank_id, support_records())
    outbox = point_app(
        {**hindsight.env(support=bank_id, finance=bank_id + "-fin"), "RECALL_REVIEW_SECOND_REVIEW_SHARE": "0.10"}
    )
    service = decision_service(outbox, hindsight.gateway.retain, second_review_share=0.10)

    def proposal(reviewer: str, action: str, note: str) -> Proposal:
        d = ticket_decision(
            TICKET,
            action=action,
            reviewer=reviewer,
            authenticated=False,
            decided_at=datetime.now(UTC),
            response="We refunded the second charge.",
            note=note,
        )
        return Proposal(decision=d, record=interaction_record(TICKET, d), scope=customer_tag(TICKET.customer))

    first = service.decide(bank_id, "reviewer", proposal("Quincy Firstly", "approve", "quincy-note-91"))
    service.second_review(bank_id, "reviewer", proposal("Rita Second", "override", "rita-note-17"))

    at = open_page("../support/pages/tickets.py", timeout=120, ticket=TICKET.id)
    shown = texts(at)
    assert "The reviewers disagree: a lead decides" in shown
    assert "First review: Quincy Firstly" in shown and "quincy-note-91" in shown and "rita-note-17" in shown
    at.text_input(key="ticket_reviewer").input("Rita Second").run()
    assert "You decided this case already" in texts(at)
    at.text_input(key="ticket_reviewer").input("Max Lead").run()
    at.radio(key=f"ticket_action_{TICKET.id}").set_value("edit_and_approve")
    at.text_area(key=f"ticket_response_{TICKET.id}").input("Hi Ann, the duplicate charge is refunded.")
    next(b for b in at.button if b.label == "Record decision").click().run()
    assert not at.exception, at.exception
    assert "the lead's decision" in texts(at)
    assert outbox.get(first.stored.id).state == "superseded"
    document = str(hindsight.gateway.document(bank_id, first.stored.document_id))
    assert "Max Lead" in document and "Quincy Firstly" not in document and "Rita Second" not in document
