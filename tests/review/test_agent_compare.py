"""Where the submitting agent and the dashboard's recompute differ, in words (review/agent_compare.py)."""

from dashboard.review.agent_compare import differences
from dashboard.review.queue_kind import EvidenceRecord
from dashboard.store.agent_part import AgentPart

WORDS = {"approve": "approve for payment", "reject": "reject", "escalate": "escalate"}
EVIDENCE = [
    EvidenceRecord(ref="PREC-V02-PRI-01", text="t", relevant=True, why="same vendor and type"),
    EvidenceRecord(ref="PREC-V02-PRI-02", text="t", relevant=True, why="same vendor and type"),
    EvidenceRecord(ref="PREC-V11-PRI-01", text="t", relevant=False, why="another vendor's precedent"),
]


def test_agreement_says_nothing():
    agent = AgentPart(name="ap", recommendation="approve", cited=["PREC-V02-PRI-01", "PREC-V02-PRI-02"])
    assert differences(agent, "approve", EVIDENCE, WORDS) == []


def test_each_difference_in_words():
    agent = AgentPart(
        name="ap", recommendation="reject", cited=["PREC-V11-PRI-01", "PREC-V09-DUP-03", "PREC-V02-PRI-01"]
    )
    assert differences(agent, "approve", EVIDENCE, WORDS) == [
        "The agent recommends reject (reject); the dashboard's recompute recommends approve (approve for payment).",
        "The agent cited PREC-V11-PRI-01, another vendor's precedent.",
        "The agent cited PREC-V09-DUP-03, which the dashboard's recall did not return.",
        "The agent did not cite PREC-V02-PRI-02: relevant by the dashboard's rule.",
    ]


def test_an_agent_that_cites_nothing_is_not_told_what_it_left_out():
    assert differences(AgentPart(name="ap", recommendation="approve"), "approve", EVIDENCE, WORDS) == []
