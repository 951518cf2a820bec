"""Whom a decision is compared with (pure): the agent that handed the case in when there is one, the recompute kept
apart; the memory text and the summary name that agent."""

from __future__ import annotations

from dashboard.finance.decisions import exception_decision, precedent_record
from dashboard.finance.policy import Recommendation
from dashboard.store.agent_part import AgentPart
from dashboard.store.decision import compared, decision_summary
from tests.helpers import exception_case

RECOMPUTE = Recommendation(action="reject", confidence=0.7, cited=[], rationale="r", policy="precedent")
CASE = exception_case("E-9001", "V02")


def _decided(action: str, agent: AgentPart | None, outcome: str | None = None):
    return exception_decision(
        CASE,
        RECOMPUTE,
        reviewer="Dana",
        authenticated=False,
        action=action,
        outcome=outcome,
        reason_code="PRICE_AGREED" if action == "override" else None,
        agent=agent,
    )


def test_the_agent_that_handed_the_case_in_is_the_one_compared():
    approves = AgentPart(name="ap-agent", recommendation="approve")
    rejected = _decided("accept_recommendation", approves)  # the person took the recompute's reject
    assert compared(rejected) == {
        "agent": "ap-agent",
        "agent_recommendation": "approve",
        "overridden": True,
        "recompute_recommendation": "reject",
        "agreed_with_recompute": True,
    }
    assert (
        "Decision: reject, by reviewer Dana overriding agent ap-agent's recommendation to approve."
        in precedent_record(CASE, rejected, RECOMPUTE).content
    )
    assert decision_summary(rejected).startswith(
        "Outcome: reject, an override of agent ap-agent's approve for payment."
    )
    approved = _decided("override", approves, "approve")
    assert (approved.overridden, approved.agreed_with_recompute) == (False, False)
    assert (
        "agreeing with agent ap-agent's recommendation (approve). The dashboard's recompute recommended reject."
        in precedent_record(CASE, approved, RECOMPUTE).content
    )
    assert decision_summary(approved).startswith("Outcome: approve for payment, as agent ap-agent recommended.")


def test_without_an_agent_or_its_recommendation_the_recompute_is_compared():
    from_file = _decided("override", None, "approve")
    assert compared(from_file) == {
        "agent": None,
        "agent_recommendation": "reject",
        "overridden": True,
        "recompute_recommendation": "reject",
        "agreed_with_recompute": False,
    }
    assert "overriding the agent's recommendation to reject." in precedent_record(CASE, from_file, RECOMPUTE).content
    silent = _decided("override", AgentPart(name="quiet-agent"), "approve")
    assert (silent.agent_name, silent.agent_recommendation, silent.overridden) == ("quiet-agent", None, True)
    assert (
        "by reviewer Dana overriding the dashboard's recompute (reject); agent quiet-agent made no recommendation."
        in precedent_record(CASE, silent, RECOMPUTE).content
    )
