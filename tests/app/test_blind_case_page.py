"""A case under blind second review on its own page (AppTest, the real server): its first reviewer cannot claim it (a
claim would name them to the second reviewer), the second reviewer's accept key gives the blind decision, and the
lead sees that the case awaits a lead, never "Open: no reviewer decision yet", with both decisions and the reason
labels configured for the case."""

from __future__ import annotations

import json

from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.review.decisions import decision_service
from dashboard.store.decision import OUTCOMES
from tests.conftest import PROVEN
from tests.helpers import demo_case, exception_proposal, open_page, texts

CASE = demo_case("E-1013")  # in the default tenth sampled for a blind second review
CONFIGURED = {"default": {"CONTRACT_AMENDMENT": "PO amended by procurement (configured label)", "OTHER": "Other"}}


def test_a_blind_case_is_blind_in_its_claim_takes_the_accept_key_and_shows_the_lead_what_it_awaits(
    hindsight, point_app, demo_banks
):
    env = hindsight.env(finance=demo_banks.finance, support=demo_banks.support)
    outbox = point_app(
        {**env, "RECALL_REVIEW_SECOND_REVIEW_SHARE": "0.10", "RECALL_REVIEW_REASON_CODES": json.dumps(CONFIGURED)}
    )
    service = decision_service(outbox, None, second_review_share=0.10)
    _, rec = assess(
        two_stage_recall(hindsight.gateway.recall, demo_banks.finance, CaseKey.of(CASE), CASE.recall_query()), PROVEN
    )
    first = next(o for o in OUTCOMES if o != rec.action)  # an override, with its reason CONTRACT_AMENDMENT
    assert service.decide(
        demo_banks.finance, "reviewer", exception_proposal(CASE, rec, "Dana", first, "dana-note")
    ).blind

    at = open_page("../finance/pages/exceptions.py", case=CASE.id)
    at.text_input(key="reviewer_name").input("Dana").run()
    assert at.button(key="claim_exception_button").disabled  # her claim would name her to the second reviewer
    at.text_input(key="reviewer_name").input("Lee").run()
    assert not at.button(key="claim_exception_button").disabled and "dana-note" not in texts(at)

    at.button(key="exc_accept").click().run()  # A: the recommendation, as Lee's blind decision
    assert not at.exception, at.exception
    assert f"{CASE.id}: second review recorded; the two decisions differ, so a lead decides." in texts(at)
    second = service.blind_case(demo_banks.finance, "exception", CASE.id)
    assert second.awaiting_lead and (second.second.decision.reviewer, second.second.decision.outcome) == (
        "Lee",
        rec.action,
    )

    at.text_input(key="reviewer_name").input("Max").run()
    shown = texts(at)
    assert "Awaiting a lead: two reviewers decided this case differently." in shown
    assert "Open: no reviewer decision yet" not in shown
    assert (
        "Reason: CONTRACT_AMENDMENT (PO amended by procurement (configured label))." in shown and "dana-note" in shown
    )
