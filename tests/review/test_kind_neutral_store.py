"""Migration 0015 on both engines: the decisions written when the review store named its two kinds (a ticket's
`ticket_action` and `final_response`, an exception's `vendor` column) read back kind-neutral, the standing table and
its triggers keep working with the new columns, and the way back restores what was there."""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from dashboard.delivery.outbox import Outbox
from dashboard.store.db import alembic_config, upgrade

AT = datetime(2026, 11, 30, 9, tzinfo=UTC)
COLUMNS = (
    "bank_id",
    "case_kind",
    "case_id",
    "revision",
    "document_id",
    "reviewer",
    "created_at",
    "state",
    "attempts",
    "next_attempt_at",
    "decided_on",
    "overridden",
    "reason_code",
    "vendor",
)
OLD_TICKET = {
    "case_id": "T-1",
    "case_kind": "ticket",
    "reviewer": "Rita",
    "authenticated": False,
    "outcome": "approve",
    "overridden": False,
    "reason_code": None,
    "note": "",
    "agent_recommendation": "approve",
    "cited_evidence": [],
    "decided_at": AT.isoformat(),
    "ticket_action": "edit_and_approve",
    "final_response": "Refunded, sorry.",
}
OLD_EXCEPTION = {
    "case_id": "E-1",
    "case_kind": "exception",
    "reviewer": "Dana",
    "authenticated": False,
    "outcome": "reject",
    "overridden": True,
    "reason_code": "OTHER",
    "note": "n",
    "agent_recommendation": "approve",
    "cited_evidence": [],
    "decided_at": AT.isoformat(),
    "ticket_action": None,
    "final_response": None,
}


def _old_row(decision: dict, vendor: str | None) -> dict:
    return dict(
        bank_id="b",
        case_kind=decision["case_kind"],
        case_id=decision["case_id"],
        revision=1,
        document_id=f"d-{decision['case_id']}",
        reviewer=decision["reviewer"],
        created_at=AT,
        state="delivered",
        attempts=1,
        next_attempt_at=AT,
        decided_on=AT.date(),
        overridden=decision["overridden"],
        reason_code=decision["reason_code"],
        vendor=vendor,
        decision=decision,
        record={"document_id": f"d-{decision['case_id']}", "content": "c", "tags": [], "metadata": {}},
    )


def test_decisions_written_before_0015_read_back_kind_neutral_and_the_way_back_restores_them(review_engine):
    upgrade(review_engine)
    config = alembic_config(review_engine)
    command.downgrade(config, "0014_review_secrets")
    old = sa.table(
        "review_decisions", *map(sa.column, COLUMNS), sa.column("decision", sa.JSON), sa.column("record", sa.JSON)
    )
    with review_engine.begin() as conn:
        conn.execute(old.insert().values([_old_row(OLD_TICKET, None), _old_row(OLD_EXCEPTION, None)]))
    command.upgrade(config, "head")

    outbox = Outbox(review_engine)
    ticket, exception = outbox.latest_decided("b", "ticket", "T-1"), outbox.latest_decided("b", "exception", "E-1")
    assert (ticket.decision.action, ticket.decision.details, ticket.decision.report_by) == (
        "edit_and_approve",
        {"response": "Refunded, sorry."},
        None,
    )
    assert ticket.decision.action_words == "the drafted response edited, then sent"
    assert (exception.decision.action, exception.decision.details, exception.decision.report_by) == (None, {}, "vendor")
    assert outbox.decision_states("b", "ticket")["T-1"].action == "edit_and_approve"
    # an exception override whose record named no vendor is still counted per case, for the queue to name its vendor
    assert [(c.overridden, c.group, c.case_id) for c in outbox.standing_counts("b", "exception")] == [
        (True, None, "E-1")
    ]

    command.downgrade(config, "0014_review_secrets")
    with review_engine.connect() as conn:
        rows = {r.case_id: r for r in conn.execute(sa.select(old))}
        standing = dict(conn.execute(sa.text("SELECT case_id, ticket_action FROM review_standing_decisions")).all())
    assert (
        rows["T-1"].decision["ticket_action"] == "edit_and_approve"
        and rows["T-1"].decision["final_response"] == "Refunded, sorry."
    )
    assert "action" not in rows["T-1"].decision and rows["E-1"].vendor is None
    assert standing == {"T-1": "edit_and_approve", "E-1": None}
    command.upgrade(config, "head")
