"""Blind second review against the real Hindsight: a sampled case's first decision is in no memory until a second
reviewer (someone else) agrees; a disagreement goes to a lead (neither of the two), whose decision is the one the
next recall finds, while both reviewers' decisions stay in the review store's audit and its export."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace

import pytest

from dashboard.access.limits import ApprovalLimits
from dashboard.agents.findings import human_decisions
from dashboard.delivery.outbox import Outbox
from dashboard.finance.decisions import document_id_for
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.reporting.audit_export import audit_rows, to_json
from dashboard.review.decisions import decision_service
from dashboard.review.second_review import selected
from dashboard.store.errors import NotAllowed, Refused
from tests.conftest import signed_as
from tests.finance_helpers import precedent
from tests.helpers import demo_case, exception_proposal, recalled_proposal, run_command

CASE = demo_case("E-1002")  # V02 price variance


def test_the_sample_is_a_stable_share_of_case_ids():
    ids = [f"E-{n}" for n in range(10_000)]
    assert [i for i in ids if selected(i, 0.10)] == [i for i in ids if selected(i, 0.10)]  # no per-process salt
    assert 900 < sum(selected(i, 0.10) for i in ids) < 1100
    assert not any(selected(i, 0.0) for i in ids) and all(selected(i, 1.0) for i in ids)
    assert selected("E-1013", 0.10) and not selected("E-1002", 0.10)  # sha256: the same on every machine


def _bank(hindsight) -> str:
    bank = f"blind-{uuid.uuid4().hex[:8]}"
    hindsight.gateway.ensure_bank(bank)
    hindsight.gateway.retain(
        bank, [signed_as(precedent("PREC-B-1", CASE.vendor_code, CASE.exception_type, "approve", "2025-03-01"))]
    )
    return bank


def _memory_reviewer(hindsight, bank: str) -> str | None:
    """Who decided the case, as the next recall finds its decision (None: not in memory)."""
    result = two_stage_recall(hindsight.gateway.recall, bank, CaseKey.of(CASE), CASE.recall_query())
    own = [e for e in result.exact if e.document_id == document_id_for(CASE.id)]
    doc = hindsight.gateway.document(bank, document_id_for(CASE.id))
    assert bool(own) == (doc is not None)
    return None if doc is None else next(r for r in ("Dana", "Lee", "Max") if f"by reviewer {r} " in own[0].text)


def test_an_agreeing_pair_the_first_decision_reaches_memory_only_after_the_second_review(
    hindsight, tmp_path, scratch_service
):
    bank, service = _bank(hindsight), scratch_service(hindsight.gateway.retain, second_review_share=1.0)
    done = service.decide(
        bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana", note="Checked the contract")
    )
    assert done.blind and done.stored.state == "awaiting_second" and not done.delivered
    assert service.outbox.deliver_due(hindsight.gateway.retain).delivered == 0  # no worker delivers it
    assert _memory_reviewer(hindsight, bank) is None
    assert service.outbox.latest_per_case(bank, "exception") == {} and human_decisions(service.outbox, bank) == []
    with pytest.raises(Refused, match="awaits a blind second review"):
        service.decide(bank, "lead", recalled_proposal(hindsight, bank, CASE, "Lee"))
    with pytest.raises(Refused, match="must be someone else"):
        service.second_review(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, " dana "))
    with pytest.raises(NotAllowed):
        service.second_review(bank, "viewer", recalled_proposal(hindsight, bank, CASE, "Lee"))

    agreed = service.second_review(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Lee"))
    assert agreed.delivered and agreed.stored.decision.reviewer == "Dana"
    assert _memory_reviewer(hindsight, bank) == "Dana"
    assert service.blind_case(bank, "exception", CASE.id) is None
    rows = audit_rows(service.outbox.history(), service.second_reviews.trail([agreed.stored.id]))
    assert [(r.reviewer, r.review_step, r.role, r.delivery, r.provenance) for r in rows] == [
        ("Dana", "first", "reviewer", "delivered", "delivered"),
        ("Lee", "second", "reviewer", "audit only", "audit only: agreed with the first decision"),
    ]


def test_a_disagreement_goes_to_a_lead_whose_decision_is_what_memory_holds(hindsight, tmp_path, scratch_service):
    bank, service = _bank(hindsight), scratch_service(hindsight.gateway.retain, second_review_share=1.0)
    first = service.decide(
        bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana", note="Dana's private note")
    )
    second = service.second_review(
        bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Lee", outcome="reject", note="Lee says no")
    )
    assert second.stored.state == "awaiting_lead" and not second.delivered and _memory_reviewer(hindsight, bank) is None
    with pytest.raises(NotAllowed):
        service.lead_decision(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Max", outcome="escalate"))
    for already in ("Dana", "Lee"):
        with pytest.raises(Refused, match="neither of the two"):
            service.lead_decision(bank, "lead", recalled_proposal(hindsight, bank, CASE, already, outcome="escalate"))

    lead = service.lead_decision(bank, "lead", recalled_proposal(hindsight, bank, CASE, "Max", outcome="escalate"))
    assert lead.delivered and lead.stored.decision.outcome == "escalate"
    assert _memory_reviewer(hindsight, bank) == "Max"  # the next recall finds the lead's decision, not the others
    assert service.outbox.latest_per_case(bank, "exception")[CASE.id].decision.reviewer == "Max"
    assert service.outbox.get(first.stored.id).state == "superseded"
    history = service.outbox.history()
    exported = audit_rows(history, service.second_reviews.trail([h.id for h in history]))
    assert [(r.reviewer, r.outcome, r.review_step, r.role, r.provenance) for r in exported] == [
        ("Max", "escalate", "lead", "lead", "the lead's decision: delivered"),
        ("Dana", "approve", "first", "reviewer", "superseded by the lead Max"),
        ("Lee", "reject", "second", "reviewer", "superseded by the lead Max"),
    ]
    assert "Dana's private note" in to_json(exported) and "Lee says no" in to_json(exported)  # in our audit only
    with pytest.raises(Refused, match="no decision awaiting"):
        service.lead_decision(bank, "lead", recalled_proposal(hindsight, bank, CASE, "Kim", outcome="reject"))


def test_a_leads_decision_above_their_approval_limit_waits_for_a_second_approver(hindsight, tmp_path, scratch_service):
    bank, service = _bank(hindsight), scratch_service(hindsight.gateway.retain, second_review_share=1.0)
    service.limits = ApprovalLimits({"lead": CASE.invoice_amount - 1})
    service.decide(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana"))
    service.second_review(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Lee", outcome="reject"))
    over_limit = replace(
        recalled_proposal(hindsight, bank, CASE, "Max", outcome="escalate"), amount=CASE.invoice_amount
    )
    lead = service.lead_decision(bank, "lead", over_limit)
    assert lead.stored.state == "awaiting_approval" and lead.held_because and not lead.delivered
    assert _memory_reviewer(hindsight, bank) is None  # neither reviewer's nor the lead's decision is in memory
    with pytest.raises(Refused, match="someone else|different"):
        service.second_approval(bank, "lead", "exception", CASE.id, "Max", confirm=True)
    confirmed = service.second_approval(
        bank, "reviewer", "exception", CASE.id, "Ann", confirm=True
    )  # no reviewer limit
    assert confirmed.delivered and _memory_reviewer(hindsight, bank) == "Max"


def test_the_export_command_carries_every_reviewers_decision_with_its_provenance(monkeypatch, capsys, tmp_path):
    from dashboard.cli import main
    from dashboard.finance.policy import Recommendation
    from dashboard.store.db import make_engine

    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    outbox = Outbox(make_engine(None, tmp_path))  # the store the command opens from the same settings
    service = decision_service(outbox, None, second_review_share=1.0)
    rec = Recommendation(action="approve", confidence=0.8, cited=[], rationale="r", policy="precedent")
    service.decide("fin", "reviewer", exception_proposal(CASE, rec, "Dana", note="first"))
    service.second_review("fin", "reviewer", exception_proposal(CASE, rec, "Lee", "reject", note="second"))
    service.lead_decision("fin", "lead", exception_proposal(CASE, rec, "Max", "escalate", note="lead"))
    assert main(["export-audit", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["reviewer"], r["role"], r["review_step"], r["note"], r["delivery"], r["provenance"]) for r in rows] == [
        ("Max", "lead", "lead", "lead", "pending", "the lead's decision: pending"),
        ("Dana", "reviewer", "first", "first", "superseded", "superseded by the lead Max"),
        ("Lee", "reviewer", "second", "second", "audit only", "superseded by the lead Max"),
    ]
    assert all(r["decided_at"] for r in rows)


def test_agreement_and_calibration_are_counted_in_sql_on_both_engines(review_engine):
    from dashboard.finance.policy import Recommendation

    outbox = Outbox(review_engine)
    service = decision_service(outbox, None, second_review_share=1.0)
    sure = Recommendation(action="approve", confidence=0.95, cited=[], rationale="r", policy="precedent")
    unsure = Recommendation(action="approve", confidence=0.4, cited=[], rationale="r", policy="precedent")
    for case_id, rec, second in (("E-1001", sure, "approve"), ("E-1002", unsure, "reject")):
        case = demo_case(case_id)
        service.decide("fin", "reviewer", exception_proposal(case, rec, "Dana"))
        service.second_review("fin", "reviewer", exception_proposal(case, rec, "Lee", second))
    service.lead_decision("fin", "lead", exception_proposal(demo_case("E-1002"), unsure, "Max", "escalate"))
    assert sorted(service.agreement_counts()) == [
        ("Dana", "Lee", "approve", "approve", 1),
        ("Dana", "Lee", "approve", "reject", 1),
    ]
    # E-1001: Dana's approve stands (0.95, kept); E-1002: the lead's escalate (0.4, an override)
    assert service.calibration_counts("fin", "exception") == {">=0.9": (1, 1), "<0.5": (1, 0)}


def test_the_decide_command_obeys_the_sample(hindsight, bank_id, monkeypatch, capsys):
    sampled = {"RECALL_REVIEW_SECOND_REVIEW_SHARE": "0.10"}  # E-1013 is in the default tenth
    argv = ("decide", "--case", "E-1013", "--outcome", "escalate", "--reviewer", "Dana", "--json")
    code, out, err = run_command(monkeypatch, capsys, hindsight, bank_id, *argv, env=sampled)
    assert code == 0, err
    assert (
        json.loads(out)["state"] == "awaiting_second"
        and hindsight.gateway.document(bank_id, document_id_for("E-1013")) is None
    )
    code, _out, err = run_command(
        monkeypatch, capsys, hindsight, bank_id, *argv, env=sampled
    )  # not decided again meanwhile
    assert code != 0 and "awaits a blind second review" in err


def test_a_lead_decision_that_loses_the_race_for_its_step_leaves_nothing_written(
    hindsight, tmp_path, monkeypatch, scratch_service
):
    """The lead's decision and the step that settles the first are one transaction: when another lead's step lands
    first, the lead's decision is not left behind in the log (it was, when the two were separate writes)."""
    bank, service = _bank(hindsight), scratch_service(hindsight.gateway.retain, second_review_share=1.0)
    service.decide(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana"))
    service.second_review(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Lee", outcome="reject"))
    written = len(service.outbox.history())
    monkeypatch.setattr(type(service.second_reviews), "_step_on", lambda *args: False)  # another lead settled it first
    with pytest.raises(Refused, match="settled by another lead meanwhile"):
        service.lead_decision(bank, "lead", recalled_proposal(hindsight, bank, CASE, "Max", outcome="escalate"))
    assert len(service.outbox.history()) == written and _memory_reviewer(hindsight, bank) is None
    assert service.blind_case(bank, "exception", CASE.id).awaiting_lead  # still the lead's to settle
