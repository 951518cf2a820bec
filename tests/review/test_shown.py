"""A decision is recorded only on what its reviewer's screen showed: the decision service refuses, in words, a
decision whose case, recommendation (or drafted response) or evidence changed by the time it is recorded."""

from __future__ import annotations

import pytest

from dashboard.finance.decisions import evidence_snapshot, exception_decision, precedent_record
from dashboard.finance.policy import Recommendation
from dashboard.review.decisions import Proposal
from dashboard.store.decision import EvidenceItem, EvidenceSnapshot, Shown, changed_since_shown
from dashboard.store.errors import Refused
from dashboard.support.decisions import ticket_evidence_snapshot
from tests.helpers import demo_case, demo_ticket

CASE = demo_case("E-1007")
REJECT = Recommendation(action="reject", confidence=1.0, cited=["P-1"], rationale="r", policy="precedent")
SEEN = EvidenceSnapshot(
    available=True, items=[EvidenceItem(id="P-1", text_sha256="a" * 64, relevant=True)], recommendation="reject"
)


def _proposal(rec: Recommendation, evidence: EvidenceSnapshot, shown: Shown | None) -> Proposal:
    decision = exception_decision(CASE, rec, reviewer="Dana", authenticated=False, action="accept_recommendation")
    return Proposal(
        decision=decision, record=precedent_record(CASE, decision, rec), scope="s", evidence=evidence, shown=shown
    )


def test_a_decision_on_what_the_screen_still_shows_is_recorded(tmp_path, scratch_service):
    service = scratch_service()
    done = service.decide("fin", "reviewer", _proposal(REJECT, SEEN, Shown.of(CASE.id, SEEN)))
    assert done.stored.decision.outcome == "reject" and done.stored.evidence == SEEN


@pytest.mark.parametrize(
    ("now", "shown", "why"),
    [
        (
            SEEN,
            Shown.of("E-1006", SEEN),
            "This decision was made on E-1006, but E-1007 is open now. Nothing was recorded",
        ),
        (
            SEEN.model_copy(update={"recommendation": "approve"}),
            Shown.of(CASE.id, SEEN),
            "The agent's recommendation on E-1007 changed since it was shown (reject then, approve for payment now)",
        ),
        (
            SEEN.model_copy(
                update={"items": [*SEEN.items, EvidenceItem(id="decision-E-1001", text_sha256="b" * 64, relevant=True)]}
            ),
            Shown.of(CASE.id, SEEN),
            "The evidence on E-1007 changed since it was shown",
        ),
        (
            SEEN.model_copy(update={"items": [SEEN.items[0].model_copy(update={"text_sha256": "c" * 64})]}),
            Shown.of(CASE.id, SEEN),
            "The evidence on E-1007 changed since it was shown",
        ),
    ],
)
def test_a_decision_whose_case_changed_underneath_it_is_refused_and_nothing_is_written(
    tmp_path, now, shown, why, scratch_service
):
    service = scratch_service()
    rec = REJECT.model_copy(update={"action": now.recommendation})
    with pytest.raises(Refused, match=why.replace("(", r"\(").replace(")", r"\)")):
        service.decide("fin", "reviewer", _proposal(rec, now, shown))
    assert service.outbox.history() == []


def test_bulk_acceptance_skips_a_case_that_changed_since_the_confirmation_listed_it(tmp_path, scratch_service):
    service = scratch_service()
    changed = SEEN.model_copy(update={"items": []})
    recorded, skipped = service.decide_many("fin", "reviewer", [_proposal(REJECT, changed, Shown.of(CASE.id, SEEN))])
    assert (recorded, skipped) == ([], [CASE.id]) and service.outbox.history() == []


def test_a_ticket_shows_its_drafted_response_and_a_new_draft_is_a_change():
    ticket = demo_ticket("T-2004")
    then = Shown.of(ticket.id, ticket_evidence_snapshot(None, ticket))
    redrafted = ticket.model_copy(update={"drafted_response": "Another draft."})
    why = changed_since_shown(then, Shown.of(ticket.id, ticket_evidence_snapshot(None, redrafted)))
    assert why == "The drafted response on T-2004 changed since it was shown. Nothing was recorded: read it again."
    assert changed_since_shown(then, Shown.of(ticket.id, ticket_evidence_snapshot(None, ticket))) is None


def test_the_finance_snapshot_carries_the_recommendation_shown():
    assert Shown.of(CASE.id, evidence_snapshot(None, REJECT)).recommendation == "reject"
