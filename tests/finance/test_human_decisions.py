"""A reviewer's decision reaches the next recall for its vendor and type, whatever the
number of older precedents; the recommendation follows the latest human decision; a case never cites
its own decision. Pure logic on a recall double, then the loop on the real server."""

from datetime import UTC, datetime

from dashboard.cli.seed import finance_records
from dashboard.delivery.outbox import Outbox
from dashboard.finance.decisions import document_id_for, exception_decision, precedent_record
from dashboard.finance.models import REVIEWER_TAG, ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.hindsight.wire import MemoryRecord
from tests.conftest import SIGNING_SECRET, signed_as
from tests.finance_helpers import PROVEN, FakeRecall, precedent, signed


def _case(case_id: str, vendor: str = "V01", etype: str = "price_variance") -> ExceptionCase:
    return ExceptionCase(
        id=case_id,
        vendor_code=vendor,
        vendor_name="Northwind Industrial Supply",
        exception_type=etype,
        invoice=f"INV-{case_id}",
        po="PO-1",
        invoice_amount=5120.0,
        po_amount=4980.0,
        description="Steel brackets billed at 10.24 per unit against PO 9.96, a 2.8% variance.",
        opened_on="2026-11-02",
    )


def _human(doc: str, vendor: str, outcome: str, decided_at: str, etype: str = "price_variance") -> MemoryRecord:
    """A reviewer's decision as this dashboard records it: signed (only a signed one has a reviewer's authority)."""
    record = precedent(doc, vendor, etype, outcome, decided_at[:10])
    return signed(
        record.model_copy(
            update={
                "tags": [*record.tags, REVIEWER_TAG],
                "metadata": {
                    **record.metadata,
                    "source": "reviewer",
                    "decided_at": decided_at,
                    "reviewer": "Dana",
                    "overridden": "true",
                    "agent_recommendation": "approve",
                },
            }
        )
    )


KEY = CaseKey(vendor_code="VA", exception_type="price_variance")
OLD = [
    signed(precedent(f"P{i}", "VA", "price_variance", "approve", f"2025-06-{i + 1:02d}"), "seed", None)
    for i in range(12)
]


def test_a_human_decision_ranked_last_is_first_in_the_exact_evidence_and_decides():
    ranking = OLD + [_human("decision-E-1", "VA", "reject", "2026-11-29T10:00:00+00:00")]
    recall = FakeRecall(ranking)
    result, rec = assess(two_stage_recall(recall, "bank", KEY, "q", k=5, own_document="decision-E-2"), PROVEN)
    assert len(recall.calls) == 2 and recall.calls[1][1][-1] == REVIEWER_TAG
    assert result.exact[0].document_id == "decision-E-1" and result.exact[0].human and len(result.exact) == 5
    assert rec.action == "reject" and rec.policy == "human" and rec.cited == ["decision-E-1"]
    assert "Latest human decision" in rec.rationale and "decision-E-1" in rec.rationale and "12" not in rec.cited


def test_the_seed_recall_misses_it_and_follows_the_older_precedents():
    ranking = OLD + [_human("decision-E-1", "VA", "reject", "2026-11-29T10:00:00+00:00")]
    result, rec = assess(two_stage_recall(FakeRecall(ranking), "bank", KEY, "q", k=5, decisions_first=False), PROVEN)
    assert "decision-E-1" not in [e.document_id for e in result.exact] and rec.action == "approve"


def test_the_newest_human_decision_wins_over_an_older_one():
    ranking = OLD + [
        _human("decision-E-1", "VA", "reject", "2026-11-20T10:00:00+00:00"),
        _human("decision-E-3", "VA", "escalate", "2026-11-29T10:00:00+00:00"),
    ]
    result, rec = assess(two_stage_recall(FakeRecall(ranking), "bank", KEY, "q", k=5), PROVEN)
    assert [e.document_id for e in result.exact[:2]] == ["decision-E-3", "decision-E-1"]
    assert rec.action == "escalate" and rec.confidence == 0.5 and "1 older human decision(s) differ" in rec.rationale


def test_a_precedent_decided_after_the_human_decision_brings_back_the_vote():
    ranking = [_human("decision-E-1", "VA", "reject", "2025-01-01T10:00:00+00:00")] + OLD
    _, rec = assess(two_stage_recall(FakeRecall(ranking), "bank", KEY, "q", k=5), PROVEN)
    assert rec.policy == "precedent" and rec.action == "approve"


def test_a_case_never_cites_its_own_decision():
    ranking = [_human("decision-E-1", "VA", "reject", "2026-11-29T10:00:00+00:00")] + OLD[:2]
    result, rec = assess(
        two_stage_recall(FakeRecall(ranking), "bank", KEY, "q", k=5, own_document="decision-E-1"), PROVEN
    )
    assert "decision-E-1" not in [e.document_id for e in result.records]
    assert result.own_decision is not None and result.own_decision.document_id == "decision-E-1"
    assert "decision-E-1" not in rec.cited and rec.action == "approve"


def test_a_retained_decision_carries_the_reviewer_tag():
    case = _case("E-1")
    _, rec = assess(two_stage_recall(FakeRecall(OLD), "bank", KEY, "q"), PROVEN)
    decision = exception_decision(case, rec, reviewer="Dana", authenticated=False, action="accept_recommendation")
    record = precedent_record(case, decision, rec)
    assert REVIEWER_TAG in record.tags and "kind:decision" in record.tags and record.document_id == "decision-E-1"


# -- the loop on the real server -----------------------------------------------------------------
def test_an_override_reaches_the_next_case_past_twelve_precedents_real_server(hindsight, bank_id, tmp_path):
    seeded = [r for r in finance_records() if "vendor:V01" in r.tags and "type:price_variance" in r.tags]
    assert len(seeded) == 12 and all(r.metadata["outcome"] == "approve" for r in seeded)
    hindsight.gateway.retain(bank_id, [signed_as(r) for r in seeded])  # as `python -m dashboard seed` writes them
    first, second = _case("E-1001"), _case("E-1101")
    recall, outbox = hindsight.gateway.recall, Outbox(tmp_path / "d.sqlite3", signing_key=SIGNING_SECRET)

    def review(case):  # a decision's authority is proven by the store that recorded it
        result = two_stage_recall(
            recall, bank_id, CaseKey.of(case), case.recall_query(), own_document=document_id_for(case.id)
        )
        return assess(result, outbox.provenance.origin)

    _, before = review(second)
    assert before.action == "approve"
    _, rec = review(first)
    decision = exception_decision(
        first,
        rec,
        reviewer="Dana",
        authenticated=False,
        action="override",
        outcome="escalate",
        reason_code="NEEDS_APPROVER",
        now=lambda: datetime.now(UTC),
    )
    stored, report = outbox.submit(bank_id, decision, precedent_record(first, decision, rec), hindsight.gateway.retain)
    assert stored.state == "delivered" and report.error is None

    result, after = review(second)
    assert result.exact[0].document_id == "decision-E-1001" and result.exact[0].relevant and len(result.exact) == 5
    assert after.action == "escalate" and after.policy == "human" and after.cited == ["decision-E-1001"]
    assert "decision-E-1001" in after.rationale and "12 older precedent" not in after.rationale  # only k are recalled

    own, own_rec = review(first)  # the overridden case itself: its decision is shown apart, never cited
    assert own.own_decision is not None and own.own_decision.document_id == "decision-E-1001"
    assert "decision-E-1001" not in [e.document_id for e in own.records] and "decision-E-1001" not in own_rec.cited
