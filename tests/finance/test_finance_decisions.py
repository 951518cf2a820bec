"""Reviewer decisions: validation, the retained precedent, and round trips through the outbox to the real server."""

from datetime import UTC, datetime

import pytest

from dashboard.delivery.outbox import Outbox
from dashboard.finance.decisions import REASON_CODES, exception_decision, precedent_record
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.store.errors import DecisionInputError
from tests.conftest import SIGNING_SECRET, signed_as
from tests.finance_helpers import precedent

CASE = ExceptionCase(
    id="E-7001",
    vendor_code="VA",
    vendor_name="Alpha Tools",
    exception_type="price_variance",
    invoice="INV-1",
    po="PO-1",
    invoice_amount=1100.0,
    po_amount=1000.0,
    description="Brackets billed 10% above the PO price.",
    opened_on="2026-11-02",
)
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _review(hindsight, bank_id, outbox, k=5):
    """The case's recommendation, a decision's authority proven by the review store that recorded it."""
    return assess(
        two_stage_recall(hindsight.gateway.recall, bank_id, CaseKey.of(CASE), CASE.recall_query(), k=k),
        outbox.provenance.origin,
    )


def _decide(rec, **kwargs):
    kwargs.setdefault("reviewer", "Dana Reviewer")
    kwargs.setdefault("authenticated", False)
    return exception_decision(CASE, rec, now=lambda: NOW, **kwargs)


# -- validation -----------------------------------------------------------------------------
@pytest.fixture
def approve_rec():
    from dashboard.finance.policy import Recommendation

    return Recommendation(
        action="approve", confidence=0.67, cited=["PREC-1", "PREC-2"], rationale="r", policy="precedent"
    )


def test_a_decision_needs_a_reviewer(approve_rec):
    for reviewer in (None, "", "   "):
        with pytest.raises(DecisionInputError, match="reviewer name is required") as err:
            _decide(approve_rec, reviewer=reviewer, action="accept_recommendation")
        assert err.value.field == "reviewer"


def test_an_override_needs_a_reason_code_from_the_list_and_a_different_outcome(approve_rec):
    with pytest.raises(DecisionInputError, match="needs a reason code") as err:
        _decide(approve_rec, action="override", outcome="reject")
    assert err.value.field == "reason_code"
    with pytest.raises(DecisionInputError, match="Unknown reason code 'BECAUSE'"):
        _decide(approve_rec, action="override", outcome="reject", reason_code="BECAUSE")
    with pytest.raises(DecisionInputError, match="needs an outcome"):
        _decide(approve_rec, action="override", outcome=None, reason_code="PRICE_AGREED")
    with pytest.raises(DecisionInputError, match="already recommends approve"):
        _decide(approve_rec, action="override", outcome="approve", reason_code="PRICE_AGREED")
    with pytest.raises(DecisionInputError, match="OTHER needs a note"):
        _decide(approve_rec, action="override", outcome="reject", reason_code="OTHER")
    assert {
        "PRICE_AGREED",
        "CONTRACT_AMENDMENT",
        "DUPLICATE_CONFIRMED",
        "GOODS_NOT_RECEIVED",
        "TAX_RATE_ERROR",
        "OTHER",
    } <= set(REASON_CODES)


def test_a_note_over_the_limit_is_refused_naming_its_length_and_one_at_the_limit_is_kept(approve_rec):
    with pytest.raises(DecisionInputError, match="The note is 4,001 characters; the limit is 4,000") as err:
        _decide(approve_rec, action="override", outcome="reject", reason_code="OTHER", note="x" * 4001)
    assert err.value.field == "note"
    assert (
        _decide(approve_rec, action="override", outcome="reject", reason_code="OTHER", note="x" * 4000).note
        == "x" * 4000
    )


def test_decision_and_record_carry_what_the_audit_needs(approve_rec):
    decision = _decide(
        approve_rec, action="override", outcome="reject", reason_code="CONTRACT_AMENDMENT", note="Fixed price to 2027"
    )
    assert (decision.outcome, decision.overridden, decision.agent_recommendation) == ("reject", True, "approve")
    assert decision.cited_evidence == ["PREC-1", "PREC-2"] and decision.authenticated is False
    record = precedent_record(CASE, decision, approve_rec)
    assert record.document_id == "decision-E-7001"
    assert record.tags == ["vendor:VA", "type:price_variance", "kind:decision", "source:reviewer"]
    meta = record.metadata
    assert (meta["reviewer"], meta["outcome"], meta["reason_code"], meta["agent_recommendation"]) == (
        "Dana Reviewer",
        "reject",
        "CONTRACT_AMENDMENT",
        "approve",
    )
    assert (meta["cited_evidence"], meta["decided_on"], meta["decided_at"]) == (
        "PREC-1,PREC-2",
        "2026-11-29",
        NOW.isoformat(),
    )
    assert meta["authenticated"] == "false" and meta["note"] == "Fixed price to 2027"


# -- round trips on the real server ---------------------------------------------------------
def test_approve_round_trip_is_recalled_as_an_exact_precedent(hindsight, bank_id, tmp_path):
    hindsight.gateway.retain(
        bank_id,
        [
            signed_as(precedent("PREC-A-1", "VA", "price_variance", "approve", "2025-03-01")),
            precedent("PREC-B-1", "VB", "price_variance", "reject"),
        ],
    )
    outbox = Outbox(tmp_path / "decisions.sqlite3", signing_key=SIGNING_SECRET)
    _, rec = _review(hindsight, bank_id, outbox)
    assert (rec.action, rec.cited) == ("approve", ["PREC-A-1"])
    decision = _decide(rec, action="accept_recommendation")
    stored, report = outbox.submit(bank_id, decision, precedent_record(CASE, decision, rec), hindsight.gateway.retain)
    assert (report.delivered, report.error, stored.state) == (1, None, "delivered")
    assert outbox.latest_per_case(bank_id, "exception")[CASE.id].decision.outcome == "approve"
    assert outbox.latest_per_case("another-bank", "exception") == {}

    result, rec2 = _review(hindsight, bank_id, outbox)
    exact = {e.document_id: e for e in result.exact}
    assert set(exact) == {"PREC-A-1", "decision-E-7001"} and exact["decision-E-7001"].relevant
    assert exact["decision-E-7001"].metadata["reviewer"] == "Dana Reviewer"
    assert rec2.action == "approve" and "decision-E-7001" in rec2.cited


def test_override_then_revision_leaves_one_record_and_the_policy_follows(hindsight, bank_id, tmp_path):
    hindsight.gateway.retain(
        bank_id, [signed_as(precedent("PREC-A-1", "VA", "price_variance", "approve", "2025-03-01"))]
    )
    outbox = Outbox(tmp_path / "decisions.sqlite3", signing_key=SIGNING_SECRET)
    _, rec = _review(hindsight, bank_id, outbox)
    first = _decide(rec, action="override", outcome="reject", reason_code="CONTRACT_AMENDMENT", note="fixed price")
    outbox.submit(bank_id, first, precedent_record(CASE, first, rec), hindsight.gateway.retain)
    result, rec2 = _review(hindsight, bank_id, outbox)
    mine = [e for e in result.exact if e.document_id == "decision-E-7001"]
    assert (
        len(mine) == 1
        and mine[0].metadata["outcome"] == "reject"
        and mine[0].metadata["reason_code"] == "CONTRACT_AMENDMENT"
    )
    # one approve (2025) and one human reject (today): the newer human decision has authority
    assert (rec2.action, rec2.policy, rec2.cited) == ("reject", "human", ["decision-E-7001"])

    revised = _decide(rec2, action="override", outcome="approve", reason_code="PRICE_AGREED")
    stored, report = outbox.submit(bank_id, revised, precedent_record(CASE, revised, rec2), hindsight.gateway.retain)
    assert report.delivered == 1 and stored.decision.outcome == "approve"
    result, rec3 = _review(hindsight, bank_id, outbox)
    mine = [e for e in result.records if e.document_id == "decision-E-7001"]
    assert len(mine) == 1 and mine[0].metadata["outcome"] == "approve"
    docs = hindsight.gateway.list_memories(bank_id, tags=["vendor:VA"], tags_match="any_strict")
    assert sorted(m["document_id"] for m in docs["items"]) == ["PREC-A-1", "decision-E-7001"]
    assert (rec3.action, rec3.policy, rec3.confidence) == ("approve", "human", 1.0)  # the revision replaced the reject
    assert (
        len(outbox.history("exception", CASE.id)) == 2
        and outbox.latest_per_case(bank_id, "exception")[CASE.id].decision.outcome == "approve"
    )


def test_failed_delivery_keeps_the_decision_pending(tmp_path, approve_rec):
    outbox = Outbox(tmp_path / "decisions.sqlite3", signing_key=SIGNING_SECRET)

    def down(bank, records):
        raise ConnectionError("connection refused")

    decision = _decide(approve_rec, action="accept_recommendation")
    stored, report = outbox.submit("fin", decision, precedent_record(CASE, decision, approve_rec), down)
    assert stored.state == "pending" and "connection refused" in report.error and report.still_pending == 1
