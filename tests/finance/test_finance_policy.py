"""The deterministic precedent policy (no server): votes, ties, conflicts, confidence, citations."""

from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from tests.finance_helpers import FakeRecall, precedent

KEY = CaseKey(vendor_code="VA", exception_type="price_variance", vendor_name="Alpha Tools")


def _rec(records, k=10):
    # the vote's arithmetic on an AP system's precedents (unsigned): counted, not escalated as untrusted (test_trust_origin)
    return assess(two_stage_recall(FakeRecall(records), "bank", KEY, "q", k=k), untrusted_decides=True)[1]


def test_majority_with_full_support_cites_the_agreeing_precedents_newest_first():
    rec = _rec(
        [
            precedent("A1", "VA", "price_variance", "approve", "2025-01-01"),
            precedent("A2", "VA", "price_variance", "approve", "2025-03-01"),
            precedent("A3", "VA", "price_variance", "approve", "2025-02-01"),
            precedent("A4", "VA", "price_variance", "reject", "2025-04-01"),
            precedent("B1", "VB", "price_variance", "reject", "2025-05-01"),
        ]
    )
    assert (rec.action, rec.policy, rec.cited) == ("approve", "precedent", ["A2", "A3", "A1"])
    assert rec.confidence == 0.75 and rec.votes == {"approve": 3, "reject": 1}
    assert (
        "3 of 4 relevant precedent(s)" in rec.rationale
        and "1 other record(s)" in rec.rationale
        and "B1" not in rec.cited
    )


def test_one_precedent_is_weaker_than_three():
    assert _rec([precedent("A1", "VA", "price_variance", "reject")]).confidence == 0.33


def test_conflict_escalates_and_cites_all():
    rec = _rec(
        [
            precedent("A1", "VA", "price_variance", "approve", "2025-01-01"),
            precedent("A2", "VA", "price_variance", "reject", "2025-02-01"),
        ]
    )
    assert (rec.action, rec.policy, rec.confidence) == ("escalate", "conflict", 0.33)
    assert rec.cited == ["A2", "A1"] and "conflict" in rec.rationale


def test_relevant_records_without_an_outcome_are_a_guard():
    unknown = precedent("A1", "VA", "price_variance")
    del unknown.metadata["outcome"]
    rec = _rec([unknown])
    assert (rec.action, rec.confidence, rec.policy) == (
        "escalate",
        0.0,
        "guard",
    ) and "none records an outcome" in rec.rationale


def test_empty_recall_is_a_guard():
    rec = _rec([])
    assert (rec.action, rec.confidence, rec.cited) == ("escalate", 0.0, [])
    assert (
        "0 record(s) were recalled but none concern vendor VA (Alpha Tools) with a price variance exception"
        in rec.rationale
    )
