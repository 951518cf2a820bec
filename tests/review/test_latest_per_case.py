"""The newest decision per case, read in one query on both engines of the review store: in full, or as the state
and outcome a queue row shows."""

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from benches.scale import latest_in_history
from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.approvals import Approvals
from dashboard.store.db import make_engine
from dashboard.store.decision import Hold, ReviewerDecision
from dashboard.store.schema import approvals as approvals_table
from dashboard.store.schema import decisions
from dashboard.store.standing import DecisionState


def _decide(
    outbox: Outbox,
    bank: str,
    case_id: str,
    outcome: str,
    *,
    kind: str = "exception",
    hold: Hold | None = None,
    action: str | None = None,
) -> int:
    decision = ReviewerDecision(
        case_id=case_id,
        case_kind=kind,
        reviewer="Dana",
        authenticated=False,
        outcome=outcome,
        overridden=action == "override",
        action=action,
        decided_at=datetime(2026, 12, 3, tzinfo=UTC),
    )
    return outbox.record(
        bank, decision, MemoryRecord(document_id=f"decision-{case_id}", content=outcome, tags=[]), hold=hold
    )


def test_the_newest_decision_per_case_skips_held_ones_other_banks_and_other_kinds(review_engine):
    outbox = Outbox(review_engine)
    _decide(outbox, "fin", "E-1", "approve")
    newest = _decide(outbox, "fin", "E-1", "reject")
    _decide(
        outbox, "fin", "E-1", "approve", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01")
    )
    _decide(outbox, "fin", "E-2", "escalate")
    _decide(outbox, "other-bank", "E-3", "approve")
    _decide(outbox, "fin", "T-1", "approve", kind="ticket")
    _decide(
        outbox, "fin", "E-4", "approve", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01")
    )

    latest = outbox.latest_per_case("fin", "exception")

    assert {case: stored.decision.outcome for case, stored in latest.items()} == {"E-1": "reject", "E-2": "escalate"}
    assert latest["E-1"].id == newest
    # the same answer as reading the whole log in Python, which is what it replaces
    by_log = latest_in_history(outbox.history("exception"), {"exception": "fin"})
    assert {case: stored.id for (_kind, case), stored in by_log.items()} == {
        case: stored.id for case, stored in latest.items()
    }


def test_a_queue_reads_each_cases_newest_state_and_outcome_as_the_full_read_has_them(review_engine):
    outbox = Outbox(review_engine)
    delivered = _decide(outbox, "fin", "E-2", "escalate")
    outbox.deliver_due(lambda bank, records: None)
    _decide(outbox, "fin", "E-1", "approve")
    _decide(outbox, "fin", "E-1", "reject")
    _decide(
        outbox, "fin", "E-1", "approve", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01")
    )
    _decide(
        outbox, "fin", "E-3", "approve", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01")
    )
    _decide(outbox, "fin", "T-1", "approve", kind="ticket", action="override")

    states = outbox.decision_states("fin", "exception")

    assert states == {"E-1": DecisionState("pending", "reject"), "E-2": DecisionState("delivered", "escalate")}
    assert states == {
        case: DecisionState(s.state, s.decision.outcome)
        for case, s in outbox.latest_per_case("fin", "exception").items()
    }
    assert outbox.decision_states("fin", "ticket") == {"T-1": DecisionState("pending", "approve", "override")}
    # the page builds in full only the open case's decision: the newest one that is not held
    assert outbox.latest_decided("fin", "exception", "E-1").decision.outcome == "reject"
    assert outbox.latest_decided("fin", "exception", "E-2").id == delivered
    assert (
        outbox.latest_decided("fin", "exception", "E-3") is None
        and outbox.latest_decided("other", "exception", "E-1") is None
    )


def test_the_newest_decision_per_case_is_indexed(review_engine):
    Outbox(review_engine)  # migrates
    indexes = {ix["name"]: ix["column_names"] for ix in sa.inspect(review_engine).get_indexes("review_decisions")}
    assert indexes["ix_review_decisions_case_latest"] == ["bank_id", "case_kind", "case_id", "state", "id"]


def _reads(engine) -> list[str]:
    """The SELECTs sent on `engine` from now on."""
    seen: list[str] = []
    sa.event.listen(
        engine,
        "before_cursor_execute",
        lambda conn, cursor, statement, *args: (
            seen.append(statement) if statement.lstrip().startswith("SELECT") else None
        ),
    )
    return seen


def test_the_queue_states_are_read_again_only_after_the_log_changed_on_any_instance(
    review_engine, review_store_url, tmp_path
):
    page, other = Outbox(review_engine), Outbox(make_engine(review_store_url, tmp_path / "store"))  # two app instances
    first = _decide(other, "fin", "E-1", "approve")
    assert page.decision_states("fin", "exception") == {"E-1": DecisionState("pending", "approve")}
    reads = _reads(review_engine)

    again = page.decision_states("fin", "exception")

    assert again == {"E-1": DecisionState("pending", "approve")} and len(reads) == 1  # the log's version alone
    other.deliver_due(lambda bank, records: None)  # a state change, on the other instance
    assert page.decision_states("fin", "exception") == {"E-1": DecisionState("delivered", "approve")}
    _decide(other, "fin", "E-2", "reject", hold=Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01"))
    held = page.decision_states("fin", "exception")
    assert "E-2" not in held
    approvals = Approvals(other.engine)  # a second approval releases it: held -> pending
    assert approvals.settle(approvals.held("fin", "exception")["E-2"], "Max", "lead", None, confirm=True)
    assert page.decision_states("fin", "exception")["E-2"] == DecisionState("pending", "reject")
    with other.engine.begin() as conn:  # a delete (a lead's clean-up by hand) moves it too
        conn.execute(sa.delete(approvals_table))
        conn.execute(sa.delete(decisions).where(decisions.c.id != first))
    assert page.decision_states("fin", "exception") == {"E-1": DecisionState("delivered", "approve")}
    with pytest.raises(TypeError):
        held["E-9"] = DecisionState("pending", "approve")  # shared by every caller: read-only
    other.engine.dispose()


def test_the_held_cases_are_read_again_only_after_the_log_or_its_steps_changed(
    review_engine, review_store_url, tmp_path
):
    page, other = Approvals(review_engine), Outbox(make_engine(review_store_url, tmp_path / "store"))
    hold = Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01")
    _decide(other, "fin", "E-1", "approve", hold=hold)
    _decide(other, "fin", "E-2", "approve", hold=hold)
    first = page.held("fin", "exception")
    assert [(c, h.status) for c, h in first.items()] == [
        ("E-1", "awaiting second approval"),
        ("E-2", "awaiting second approval"),
    ]
    reads = _reads(review_engine)

    assert list(page.held("fin", "exception")) == ["E-1", "E-2"] and len(reads) == 1  # the log's version alone
    Approvals(other.engine).settle(page.held("fin", "exception")["E-1"], "Max", "lead", None, confirm=False)  # returned
    returned = page.held("fin", "exception")["E-1"]
    assert returned.status == "returned" and [s.step for s in returned.steps] == ["proposed", "rejected"]
    assert page.held("fin", "exception")["E-2"] is first["E-2"]  # unchanged: kept, not read whole again
    with other.engine.begin() as conn:  # a step alone deleted (by hand) moves it too
        conn.execute(sa.delete(approvals_table).where(approvals_table.c.step == "rejected"))
    assert [s.step for s in page.held("fin", "exception")["E-1"].steps] == ["proposed"]
    other.engine.dispose()


def test_a_case_is_held_only_while_its_newest_decision_is(review_engine):
    approvals, outbox = Approvals(review_engine), Outbox(review_engine)
    hold = Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01")
    _decide(outbox, "fin", "E-1", "approve", hold=hold)
    _decide(outbox, "fin", "E-1", "reject")  # decided again since: no longer held
    _decide(outbox, "fin", "E-2", "approve")
    newest = _decide(outbox, "fin", "E-2", "reject", hold=hold)
    _decide(outbox, "fin", "T-2", "approve", kind="ticket", hold=hold)  # another kind
    _decide(outbox, "other", "E-3", "approve", hold=hold)  # another bank

    held = approvals.held("fin", "exception")

    assert {case: h.stored.id for case, h in held.items()} == {"E-2": newest}
    assert approvals.held("fin", "exception", "E-1") == {} and list(approvals.held("fin", "exception", "E-2")) == [
        "E-2"
    ]
