"""A decided case is decided: a second decision on it is refused, naming the standing one; changing it is a revision,
asked for explicitly with a reason, which passes the controls a first decision does (role, claim, approval limit, blind
review) and records revision N+1. Every revision is kept: the case's history, the audit export, the API's answer. The
next recall finds the standing revision in the real Hindsight."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dashboard.access.limits import ApprovalLimits
from dashboard.finance.decisions import document_id_for
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.reporting.audit_export import audit_rows, to_csv
from dashboard.store.errors import AlreadyDecided, NotAllowed, Refused, RevisionConflict
from tests.conftest import signed_as
from tests.finance_helpers import precedent
from tests.helpers import demo_case, recalled_proposal

CASE = demo_case("E-1002")  # V02 price variance
REASON = "The amended contract arrived after the first decision"


@pytest.fixture
def bank(hindsight, bank_id) -> str:
    """A fresh bank holding one precedent of the case (deleted after the test: `bank_id`)."""
    hindsight.gateway.retain(
        bank_id, [signed_as(precedent("PREC-R-1", CASE.vendor_code, CASE.exception_type, "approve", "2025-03-01"))]
    )
    return bank_id


def _memory_reviewer(hindsight, bank: str) -> str | None:
    """Who decided the case, as the next recall finds its decision (None: not in memory)."""
    result = two_stage_recall(hindsight.gateway.recall, bank, CaseKey.of(CASE), CASE.recall_query())
    own = [e for e in result.exact if e.document_id == document_id_for(CASE.id)]
    return None if not own else next(r for r in ("Dana", "Lee", "Max") if f"by reviewer {r} " in own[0].text)


def _seen(hindsight, bank: str, reviewer: str, outcome: str | None = None, *, revision: int = 1, note: str = ""):
    """A proposal made on the case's page as it showed revision `revision` (a press of A, or the form)."""
    return replace(recalled_proposal(hindsight, bank, CASE, reviewer, outcome, note), base_revision=revision)


def test_a_second_decision_on_a_decided_case_is_refused_and_a_revision_with_its_reason_replaces_it(
    hindsight, bank, scratch_service
):
    service = scratch_service(hindsight.gateway.retain)
    first = service.decide(
        bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana", "escalate", note="Check the contract")
    )
    assert first.delivered and _memory_reviewer(hindsight, bank) == "Dana"

    # A stray A (made on the decided case), the CLI (no revision seen): refused, naming the standing decision
    for base in (1, None):
        with pytest.raises(
            AlreadyDecided,
            match=rf"E-1002 is already decided: escalate by Dana, revision 1 \(decision #{first.stored.id}\)",
        ):
            service.decide(bank, "reviewer", _seen(hindsight, bank, "Dana", revision=base))
    # made while the case was still open: the conflict screen, where the reviewer compares both
    with pytest.raises(RevisionConflict):
        service.decide(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Lee"))
    with pytest.raises(Refused, match="Revising it needs a reason"):
        service.decide(bank, "reviewer", _seen(hindsight, bank, "Lee"), revise="   ")
    with pytest.raises(Refused, match="the limit is 500"):
        service.decide(bank, "reviewer", _seen(hindsight, bank, "Lee"), revise="x" * 501)
    assert [r.revision for r in service.revisions(bank, "exception", CASE.id)] == [1]  # nothing recorded
    assert _memory_reviewer(hindsight, bank) == "Dana"

    revised = service.decide(bank, "reviewer", _seen(hindsight, bank, "Lee"), revise=f"  {REASON} ")
    assert revised.delivered and revised.stored.revision == 2 and revised.stored.decision.revision_reason == REASON
    assert _memory_reviewer(hindsight, bank) == "Lee"  # the next recall finds the revision (one document, replaced)
    assert service.standing(bank, "exception", CASE.id).id == revised.stored.id
    history = service.revisions(bank, "exception", CASE.id)
    assert [
        (r.revision, r.decision.reviewer, r.decision.outcome, r.decision.note, r.decision.revision_reason)
        for r in history
    ] == [(1, "Dana", "escalate", "Check the contract", None), (2, "Lee", "approve", "", REASON)]
    rows = audit_rows(service.outbox.history(), {})
    assert [(r.revision, r.reviewer, r.revision_reason) for r in rows] == [(2, "Lee", REASON), (1, "Dana", "")]
    assert REASON in to_csv(rows) and "Check the contract" in to_csv(rows)
    # and revision 2 stands just as firmly: a third needs its own reason
    with pytest.raises(AlreadyDecided, match="approve for payment by Lee, revision 2"):
        service.decide(bank, "reviewer", _seen(hindsight, bank, "Dana", "reject", revision=2))


def test_a_revision_of_an_undecided_case_is_refused(hindsight, bank, scratch_service):
    service = scratch_service(hindsight.gateway.retain)
    with pytest.raises(Refused, match="has no standing decision to revise"):
        service.decide(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana"), revise=REASON)
    assert service.revisions(bank, "exception", CASE.id) == []


def test_a_revision_passes_the_controls_of_a_first_decision(hindsight, bank, scratch_service):
    """Role, claim and approval limit: a revision above the reviewer's limit waits for a second approver, and the
    decision before it stands (in memory too) until one confirms it."""
    service = scratch_service(hindsight.gateway.retain, limits=ApprovalLimits({"reviewer": 1.0}))
    first = service.decide(bank, "lead", recalled_proposal(hindsight, bank, CASE, "Dana"))  # a lead: no limit set
    assert first.delivered
    with pytest.raises(NotAllowed):
        service.decide(bank, "viewer", _seen(hindsight, bank, "Lee", "reject"), revise=REASON)
    service.casework.claim(bank, "exception", CASE.id, "Max")
    with pytest.raises(Refused, match="claimed by Max"):
        service.decide(bank, "reviewer", _seen(hindsight, bank, "Lee", "reject"), revise=REASON)
    service.casework.release(bank, "exception", CASE.id, "Max")

    held = service.decide(bank, "reviewer", _seen(hindsight, bank, "Lee", "reject"), revise=REASON)
    assert held.stored.state == "awaiting_approval" and held.stored.revision == 2 and held.held_because
    assert (
        service.standing(bank, "exception", CASE.id).id == first.stored.id
        and _memory_reviewer(hindsight, bank) == "Dana"
    )
    with pytest.raises(Refused, match="awaits a second approval"):
        service.decide(bank, "lead", _seen(hindsight, bank, "Max", "escalate", revision=2), revise="another reason")
    confirmed = service.second_approval(bank, "lead", "exception", CASE.id, "Max", confirm=True)
    assert confirmed.delivered and _memory_reviewer(hindsight, bank) == "Lee"
    assert [(r.revision, r.decision.reviewer, r.held) for r in service.revisions(bank, "exception", CASE.id)] == [
        (1, "Dana", False),
        (2, "Lee", False),
    ]


def test_a_revision_of_a_sampled_case_waits_for_its_blind_second_review(hindsight, bank, scratch_service):
    service = scratch_service(hindsight.gateway.retain, second_review_share=1.0)
    service.decide(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana"))
    service.second_review(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Lee"))  # agreed: Dana's stands
    assert _memory_reviewer(hindsight, bank) == "Dana"

    revised = service.decide(bank, "reviewer", _seen(hindsight, bank, "Max", "reject"), revise=REASON)
    assert revised.blind and revised.stored.state == "awaiting_second" and revised.stored.revision == 2
    assert (
        service.standing(bank, "exception", CASE.id).decision.reviewer == "Dana"
        and _memory_reviewer(hindsight, bank) == "Dana"
    )
    agreed = service.second_review(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Lee", "reject"))
    assert (
        agreed.delivered
        and agreed.stored.decision.revision_reason == REASON
        and _memory_reviewer(hindsight, bank) == "Max"
    )
