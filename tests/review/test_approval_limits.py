"""Approval limits and four-eyes release: a decision above its reviewer's limit is held out of memory (the real
Hindsight does not hold its document) until a different approver whose limit covers the amount confirms it;
a rejection returns the case to the queue. Two decision services on one PostgreSQL review store play two
app instances; the `decide` command does the same."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest

from dashboard.access.limits import ApprovalLimits, in_words
from dashboard.agents.findings import human_decisions
from dashboard.delivery.outbox import Outbox
from dashboard.finance.decisions import document_id_for, exception_decision, precedent_record
from dashboard.finance.models import ExceptionCase
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.review.decisions import Proposal, decision_service
from dashboard.store.db import make_engine
from dashboard.store.errors import NotAllowed, Refused
from tests.conftest import review_database
from tests.finance_helpers import precedent
from tests.helpers import built_in_overview, demo_case, recalled_proposal, run_command, service_on

LIMITS = ApprovalLimits({"reviewer": 10_000, "lead": 50_000, "Dana": 20_000})
CASE = ExceptionCase(
    id="E-8001",
    vendor_code="VL",
    vendor_name="Large Orders Ltd",
    exception_type="price_variance",
    invoice="INV-8",
    po="PO-8",
    invoice_amount=42_000.0,
    po_amount=40_000.0,
    description="Turbine parts billed 5% above the PO price.",
    opened_on="2026-11-02",
)


# -- the rule -----------------------------------------------------------------------------------
def test_a_named_reviewer_wins_over_the_role_and_a_role_without_entry_has_no_limit():
    assert LIMITS.limit_for(" dana ", "reviewer").amount == 20_000  # the name, not the role's 10,000
    assert LIMITS.limit_for("Lee", "reviewer").amount == 10_000 and LIMITS.limit_for("Lee", "lead").amount == 50_000
    assert ApprovalLimits({"reviewer": 1}).limit_for("Lee", "lead").amount is None
    assert LIMITS.covers("Dana", "reviewer", 20_000) and not LIMITS.covers("Dana", "reviewer", 20_000.01)
    assert (
        in_words("Dana", LIMITS.limit_for("Dana", "reviewer"), 42_000)
        == "Dana's own limit is 20,000.00; this invoice is 42,000.00, above it."
    )


# -- two instances on one store, the real server ----------------------------------------------------------


def _in_memory(hindsight, bank: str, case: ExceptionCase) -> bool:
    """Whether the case's decision is among the exact precedents the next recall finds."""
    result = two_stage_recall(hindsight.gateway.recall, bank, CaseKey.of(case), case.recall_query())
    return document_id_for(case.id) in [e.document_id for e in result.exact]


def test_above_the_limit_memory_holds_nothing_until_a_different_eligible_approver_confirms(live, tmp_path):
    bank_id = f"limits-{uuid.uuid4().hex[:8]}"  # in both server modes: the decision is one document, several facts when extracted
    live.gateway.ensure_bank(bank_id)
    live.gateway.retain(bank_id, [precedent("PREC-L-1", "VL", "price_variance", "approve", "2025-03-01")])
    live.settle(bank_id)
    with review_database(live.settings) as url:
        first, second = (
            service_on(make_engine(url, tmp_path / "a"), live.gateway.retain, limits=LIMITS),
            service_on(make_engine(url, tmp_path / "b"), live.gateway.retain, limits=LIMITS),
        )
        done = first.decide(bank_id, "reviewer", recalled_proposal(live, bank_id, CASE, "Dana"))
        assert done.stored.state == "awaiting_approval" and not done.delivered and done.report.delivered == 0
        assert done.held_because == "Dana's own limit is 20,000.00; this invoice is 42,000.00, above it."
        # no instance delivers it, and nothing reads it as a human decision
        assert second.outbox.deliver_due(live.gateway.retain).delivered == 0
        assert live.gateway.document(bank_id, document_id_for(CASE.id)) is None and not _in_memory(live, bank_id, CASE)
        assert (
            second.outbox.latest_per_case(bank_id, "exception") == {} and human_decisions(second.outbox, bank_id) == []
        )
        # nobody decides it again meanwhile, on either instance
        with pytest.raises(Refused, match="awaits a second approval"):
            second.decide(bank_id, "lead", recalled_proposal(live, bank_id, CASE, "Lee"))

        with pytest.raises(Refused, match="the second approver must be someone else"):
            second.second_approval(bank_id, "lead", "exception", CASE.id, " dana ", confirm=True)
        with pytest.raises(Refused, match="The reviewer role's limit is 10,000.00"):
            second.second_approval(bank_id, "reviewer", "exception", CASE.id, "Lee", confirm=True)
        with pytest.raises(NotAllowed):
            second.second_approval(bank_id, "viewer", "exception", CASE.id, "Lee", confirm=True)
        assert live.gateway.document(bank_id, document_id_for(CASE.id)) is None

        confirmed = second.second_approval(bank_id, "lead", "exception", CASE.id, "Lee", confirm=True)
        live.settle(bank_id)
        assert confirmed.delivered and _in_memory(live, bank_id, CASE)
        assert first.outbox.latest_per_case(bank_id, "exception")[CASE.id].decision.reviewer == "Dana"
        with pytest.raises(Refused, match="no decision awaiting"):  # confirmed once, on whichever instance
            first.second_approval(bank_id, "lead", "exception", CASE.id, "Kim", confirm=True)
        (trail,) = first.approvals.trail(
            bank_id, "exception", CASE.id
        )  # the audit of every step: who, role, limit, when
        assert [(s.step, s.actor, s.role, s.limit) for s in trail.steps] == [
            ("proposed", "Dana", "reviewer", 20_000),
            ("confirmed", "Lee", "lead", 50_000),
        ]
        assert trail.steps[0].at <= trail.steps[1].at and trail.stored.state == "delivered"


def test_a_rejected_second_approval_returns_the_case_to_the_queue_naming_both(tmp_path):
    from dashboard.finance.policy import Recommendation

    outbox = Outbox(tmp_path / "store.sqlite3")
    service = decision_service(outbox, None, limits=LIMITS)
    rec = Recommendation(action="approve", confidence=0.9, cited=["P-1"], rationale="r", policy="precedent")

    def proposal(reviewer: str, base: int) -> Proposal:
        decision = exception_decision(
            CASE,
            rec,
            reviewer=reviewer,
            authenticated=False,
            action="accept_recommendation",
            now=lambda: datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
        )
        return Proposal(
            decision=decision,
            record=precedent_record(CASE, decision, rec),
            scope="s",
            base_revision=base,
            amount=CASE.invoice_amount,
        )

    recorded, skipped = service.decide_many("fin", "reviewer", [proposal("Dana", 0)])  # bulk approval holds it too
    assert skipped == [] and recorded[0].stored.state == "awaiting_approval"
    service.second_approval("fin", "lead", "exception", CASE.id, "Lee", confirm=False, note="PO amendment missing")
    held = service.held("fin", "exception", CASE.id)
    assert (
        held.stored.state == "returned"
        and outbox.pending_count() == 0
        and outbox.latest_per_case("fin", "exception") == {}
    )
    assert (
        held.summary().startswith("Dana decided approve on 42,000.00 at ") and "; Lee rejected it at " in held.summary()
    )
    assert held.settled.note == "PO amendment missing"
    assert [(s["step"], s["actor"], s["case_id"]) for s in service.approvals.log()] == [
        ("rejected", "Lee", CASE.id),
        ("proposed", "Dana", CASE.id),
    ]
    # back in the queue: the next decision is made on the case's current revision; a lead's limit covers it
    again = service.decide("fin", "lead", proposal("Lee", held.stored.revision))
    assert (
        again.stored.state == "pending"
        and again.held_because is None
        and service.held("fin", "exception", CASE.id) is None
    )


def test_the_decide_command_holds_then_releases_on_a_second_approval(hindsight, demo_banks, monkeypatch, capsys):
    case = demo_case("E-1001")  # 5,120.00
    document = document_id_for(case.id)
    monkeypatch.setenv("RECALL_REVIEW_APPROVAL_LIMITS", json.dumps({"reviewer": 1000, "Lee": 10000}))
    monkeypatch.setenv("RECALL_REVIEW_ROLE", "reviewer")
    with review_database(hindsight.settings) as url:
        monkeypatch.setenv("RECALL_REVIEW_DATABASE_URL", url)

        def decide(*argv: str) -> tuple[int, str, str]:
            return run_command(monkeypatch, capsys, hindsight, demo_banks.finance, "decide", "--case", case.id, *argv)

        code, out, err = decide("--outcome", "reject", "--reason", "CONTRACT_AMENDMENT", "--reviewer", "Dana", "--json")
        assert code == 0, err
        payload = json.loads(out)
        assert (
            payload["state"] == "awaiting_approval"
            and "limit is 1,000.00; this invoice is 5,120.00, above it" in payload["held_because"]
        )
        assert hindsight.gateway.document(demo_banks.finance, document) is None

        code, _, err = decide("--second-approval", "confirm", "--reviewer", "Dana")
        assert code == 1 and "the second approver must be someone else" in err
        code, _, err = decide("--second-approval", "confirm", "--outcome", "approve", "--reviewer", "Lee")
        assert code == 2 and "--outcome" in err
        assert hindsight.gateway.document(demo_banks.finance, document) is None

        code, out, err = decide("--second-approval", "confirm", "--reviewer", "Lee", "--json")
        assert code == 0, err
        assert json.loads(out)["state"] == "delivered"
        assert hindsight.gateway.document(demo_banks.finance, document) is not None


def test_the_overview_lists_approvals_waiting_with_their_age_and_counts_no_held_decision(tmp_path):
    from datetime import timedelta

    from dashboard.finance.policy import Recommendation
    from dashboard.reporting import overview
    from dashboard.reporting.headline import headline

    outbox = Outbox(tmp_path / "store.sqlite3")
    service = decision_service(outbox, None, limits=LIMITS)
    rec = Recommendation(action="approve", confidence=0.9, cited=[], rationale="r", policy="precedent")
    decision = exception_decision(CASE, rec, reviewer="Dana", authenticated=False, action="accept_recommendation")
    service.decide(
        "fin",
        "reviewer",
        Proposal(
            decision=decision, record=precedent_record(CASE, decision, rec), scope="s", amount=CASE.invoice_amount
        ),
    )
    (waiting,) = service.approvals.waiting(limit=1)
    held = {c: h.status for c, h in service.approvals.held("fin", "exception").items()}
    metrics = overview.build(
        standing={"exception": outbox.standing_counts("fin", "exception")},
        states={"exception": outbox.decision_states("fin", "exception")},
        held={"exception": held},
        **built_in_overview([CASE], [], ticket_flags={}),
        latencies=[],
        waiting=[waiting],
        now=waiting.proposed.at + timedelta(hours=5),
    )
    assert metrics.decisions_in_range == 0 and (
        metrics.queues[0].open,
        metrics.queues[0].decided,
        metrics.queues[0].held_for_approver,
    ) == (0, 0, 1)
    assert [(w.case_id, w.proposer, w.amount, w.limit, w.age_hours) for w in metrics.approvals_waiting] == [
        (CASE.id, "Dana", 42_000, 20_000, 5.0)
    ]
    assert "1 case (1 exception, 0 tickets): 0 decided, 1 held (1 for a second approver), 0 open." in headline(metrics)
