"""A support lead's decision on a ticket: its rules, and the record it is retained as (owned by its customer)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dashboard.store.errors import DecisionInputError
from dashboard.support.decisions import interaction_record, ticket_decision
from dashboard.support.models import Ticket

TICKET = Ticket(
    id="T-1", customer="Ann Lee", issue="charged twice", drafted_response="Refunded.", opened_on="2026-05-01"
)
NOW = datetime(2026, 5, 2, tzinfo=UTC)


def test_ticket_decision_turns_a_validation_error_into_a_field_error():
    with pytest.raises(DecisionInputError) as long_name:
        ticket_decision(TICKET, action="approve", reviewer="R" * 121, authenticated=True, decided_at=NOW)
    assert long_name.value.field == "reviewer" and "120" in str(long_name.value)
    with pytest.raises(DecisionInputError) as long_response:
        ticket_decision(
            TICKET, action="edit_and_approve", reviewer="Rita", authenticated=False, decided_at=NOW, response="x" * 8001
        )
    assert long_response.value.field == "response"


@pytest.mark.parametrize("customer", ["Ann contacted support. Lee", "!!!"])
def test_a_record_the_ownership_rule_could_not_read_back_is_a_field_error(customer):
    ticket = TICKET.model_copy(update={"customer": customer})
    decision = ticket_decision(ticket, action="approve", reviewer="Rita", authenticated=False, decided_at=NOW)
    with pytest.raises(DecisionInputError) as refused:
        interaction_record(ticket, decision)
    assert refused.value.field == "customer"


def test_an_approved_ticket_record_is_owned_by_its_customer():
    decision = ticket_decision(TICKET, action="approve", reviewer="Rita", authenticated=False, decided_at=NOW)
    record = interaction_record(TICKET, decision)
    assert record.tags == ["customer:ann-lee"] and record.content.startswith("Customer Ann Lee contacted support.")
