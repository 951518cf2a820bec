"""The newest decision per case, read in one query on both engines of the review store: in full, or as the state
and outcome a queue row shows."""

from datetime import UTC, datetime

import sqlalchemy as sa

from dashboard.hindsight.wire import MemoryRecord
from dashboard.reporting.overview import latest_in_history
from dashboard.review.decision import Hold, ReviewerDecision
from dashboard.review.outbox import DecisionState, Outbox


def _decide(outbox: Outbox, bank: str, case_id: str, outcome: str, *, kind: str = "exception", hold: Hold | None = None,
            ticket_action: str | None = None) -> int:
    decision = ReviewerDecision(case_id=case_id, case_kind=kind, reviewer="Dana", authenticated=False, outcome=outcome,
                                overridden=ticket_action == "override", ticket_action=ticket_action,
                                decided_at=datetime(2026, 12, 3, tzinfo=UTC))
    return outbox.record(bank, decision, MemoryRecord(document_id=f"decision-{case_id}", content=outcome, tags=[]), hold=hold)


def test_the_newest_decision_per_case_skips_held_ones_other_banks_and_other_kinds(review_engine):
    outbox = Outbox(review_engine)
    _decide(outbox, "fin", "E-1", "approve")
    newest = _decide(outbox, "fin", "E-1", "reject")
    _decide(outbox, "fin", "E-1", "approve", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01"))
    _decide(outbox, "fin", "E-2", "escalate")
    _decide(outbox, "other-bank", "E-3", "approve")
    _decide(outbox, "fin", "T-1", "approve", kind="ticket")
    _decide(outbox, "fin", "E-4", "approve", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01"))

    latest = outbox.latest_per_case("fin", "exception")

    assert {case: stored.decision.outcome for case, stored in latest.items()} == {"E-1": "reject", "E-2": "escalate"}
    assert latest["E-1"].id == newest
    # the same answer as reading the whole log in Python, which is what it replaces
    by_log = latest_in_history(outbox.history("exception"), {"exception": "fin"})
    assert {case: stored.id for (_kind, case), stored in by_log.items()} == {case: stored.id for case, stored in latest.items()}


def test_a_queue_reads_each_cases_newest_state_and_outcome_as_the_full_read_has_them(review_engine):
    outbox = Outbox(review_engine)
    delivered = _decide(outbox, "fin", "E-2", "escalate")
    outbox.deliver_due(lambda bank, records: None)
    _decide(outbox, "fin", "E-1", "approve")
    _decide(outbox, "fin", "E-1", "reject")
    _decide(outbox, "fin", "E-1", "approve", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01"))
    _decide(outbox, "fin", "E-3", "approve", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01"))
    _decide(outbox, "fin", "T-1", "approve", kind="ticket", ticket_action="override")

    states = outbox.decision_states("fin", "exception")

    assert states == {"E-1": DecisionState("pending", "reject"), "E-2": DecisionState("delivered", "escalate")}
    assert states == {case: DecisionState(s.state, s.decision.outcome) for case, s in outbox.latest_per_case("fin", "exception").items()}
    assert outbox.decision_states("fin", "ticket") == {"T-1": DecisionState("pending", "approve", "override")}
    # the page builds in full only the open case's decision: the newest one that is not held
    assert outbox.latest_decided("fin", "exception", "E-1").decision.outcome == "reject"
    assert outbox.latest_decided("fin", "exception", "E-2").id == delivered
    assert outbox.latest_decided("fin", "exception", "E-3") is None and outbox.latest_decided("other", "exception", "E-1") is None


def test_the_newest_decision_per_case_is_indexed(review_engine):
    Outbox(review_engine)  # migrates
    indexes = {ix["name"]: ix["column_names"] for ix in sa.inspect(review_engine).get_indexes("review_decisions")}
    assert indexes["ix_review_decisions_case_latest"] == ["bank_id", "case_kind", "case_id", "state", "id"]
