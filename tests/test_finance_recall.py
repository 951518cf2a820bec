"""Two-stage recall, relevance flags, crowd-out check and the guard: a double, then the real server."""

import pytest

from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, InvalidCase, check_crowd_out, two_stage_recall
from tests.finance_helpers import CROWD_QUERY, FakeRecall, crowding_records, precedent

A = CaseKey(vendor_code="VA", exception_type="price_variance", vendor_name="Alpha Tools")
QUERY = "price variance for vendor VA Alpha Tools steel brackets billed above the PO price"


# -- with a double: exact call counts and orderings --------------------------------------
def test_pass2_runs_when_pass1_is_short_and_its_response_is_reused_for_crowd_out():
    # The single any_strict ranking puts four B records above A's only record.
    ranking = [precedent(f"B{i}", "VB", "price_variance") for i in range(4)] + [precedent("A0", "VA", "price_variance", "reject")]
    recall = FakeRecall(ranking)
    result = two_stage_recall(recall, "bank", A, QUERY, k=3)
    assert [e.document_id for e in result.exact] == ["A0"]
    assert [e.document_id for e in result.broader] == ["B0", "B1"]
    assert [e.rank for e in result.records] == [1, 2, 3]
    assert [c[0] for c in recall.calls] == ["all_strict", "any_strict"] and result.calls == 2
    assert not result.pass2_skipped and result.pass2_skipped_reason() is None
    # the single pass's top 3 is B0, B1, B2: A0 would have been lost, and no third call was made
    assert result.crowd_out.lost == 1 and result.crowd_out.reused_pass2
    assert check_crowd_out(recall, result) is result and len(recall.calls) == 2


def test_pass2_is_skipped_when_pass1_fills_k_and_crowd_out_is_checked_only_on_demand():
    ranking = [precedent(f"B{i}", "VB", "price_variance") for i in range(6)] + [
        precedent(f"A{i}", "VA", "price_variance") for i in range(5)
    ]
    recall = FakeRecall(ranking)
    result = two_stage_recall(recall, "bank", A, QUERY, k=5)
    # pass 1 filled k: the second call is the human-decisions pass, not the broader one
    assert result.pass2_skipped and "pass 1" in result.pass2_skipped_reason() and result.calls == 2
    assert recall.calls[1] == ("all_strict", ("vendor:VA", "type:price_variance", "source:reviewer"))
    assert [e.document_id for e in result.exact] == [f"A{i}" for i in range(5)] and result.broader == []
    assert result.crowd_out is None and len(recall.calls) == 2
    checked = check_crowd_out(recall, result)
    assert len(recall.calls) == 3 and checked.calls == 3 and not checked.crowd_out.reused_pass2
    assert checked.crowd_out.lost == 5  # the single pass's top 5 are all B's


def test_no_record_appears_twice():
    ranking = [precedent("A0", "VA", "price_variance"), precedent("B0", "VB", "price_variance"), precedent("A1", "VA", "tax_mismatch")]
    result = two_stage_recall(FakeRecall(ranking), "bank", A, QUERY, k=5)
    ids = [e.id for e in result.records]
    assert len(ids) == len(set(ids)) == 3
    assert [e.pass_ for e in result.records] == ["exact", "broader", "broader"]


def test_relevance_comes_from_tags_and_metadata_never_from_text():
    misleading = precedent("B-mentions-A", "VB", "price_variance", text="Vendor VA price variance (really about VA).")
    same_vendor_other_type = precedent("A-tax", "VA", "tax_mismatch")
    inconsistent = precedent("A-bad-meta", "VA", "price_variance")
    inconsistent.metadata["vendor_code"] = "VB"
    metadata_only = precedent("A-meta", "VA", "price_variance")
    metadata_only.tags = ["vendor:VA"]  # reached by pass 2; type only in metadata
    ranking = [precedent("A0", "VA", "price_variance"), misleading, same_vendor_other_type, inconsistent, metadata_only]
    result, _ = assess(two_stage_recall(FakeRecall(ranking), "bank", A, QUERY, k=10))
    flags = {e.document_id: e.relevant for e in result.records}
    assert flags == {"A0": True, "A-bad-meta": False, "B-mentions-A": False, "A-tax": False, "A-meta": True}


def test_bad_input_names_the_field():
    with pytest.raises(InvalidCase, match="^vendor: is required"):
        CaseKey.parse("", "price_variance")
    with pytest.raises(InvalidCase, match="^type: unknown exception type 'late_fee'"):
        CaseKey.parse("V01", "late_fee")
    with pytest.raises(InvalidCase, match="^vendor: vendor code 'v 1'"):
        CaseKey.parse("v 1", "price_variance")
    with pytest.raises(InvalidCase, match="^k: "):
        two_stage_recall(FakeRecall([]), "bank", A, QUERY, k=0)
    with pytest.raises(ValueError, match="exception_type"):
        ExceptionCase(id="E-1", vendor_code="V01", vendor_name="X", exception_type="late_fee", invoice="I", po="P",
                      invoice_amount=1, po_amount=1, description="d", opened_on="2026-01-01")  # fmt: skip


# -- the real server ----------------------------------------------------------------------
def _recall(hindsight, bank_id, key=A, k=5, query=QUERY):
    return assess(two_stage_recall(hindsight.gateway.recall, bank_id, key, query, k=k))


@pytest.mark.parametrize(("richer", "k", "lost"), [(4, 5, 0), (10, 5, 1), (4, 3, 1), (10, 3, 1)])
def test_seed_scenario_exact_match_is_never_crowded_out(hindsight, bank_id, richer, k, lost):
    b_records = [
        precedent(f"PREC-B-{i}", "VB", "price_variance", "approve", f"2025-07-{i + 1:02d}",
                  text=f"Vendor VB Beta Supply price variance: steel brackets billed above the PO price, case {i}. Decision: approve.")
        for i in range(richer)
    ]  # fmt: skip
    a_record = precedent("PREC-A-0", "VA", "price_variance", "reject", "2025-05-01",
                         text="Alpha Tools invoice INV-1 differs from its order. Always reject this vendor's price variances.")  # fmt: skip
    hindsight.gateway.retain(bank_id, [*b_records, a_record])

    result, rec = _recall(hindsight, bank_id, k=k)
    assert result.records[0].document_id == "PREC-A-0" and result.records[0].pass_ == "exact"
    assert len(result.records) == k and len({e.id for e in result.records}) == k
    assert [e.relevant for e in result.records] == [True] + [False] * (k - 1)
    assert all(e.document_id.startswith("PREC-B-") for e in result.broader)
    # the recommendation cites A's record only, never the richer vendor's history
    assert (rec.action, rec.cited, rec.policy) == ("reject", ["PREC-A-0"], "precedent")
    # crowd-out: consistent with an independent single any_strict pass
    single = hindsight.gateway.recall(bank_id, QUERY, tags=A.tags, tags_match="any_strict").results[:k]
    assert result.crowd_out.reused_pass2 and result.calls == 2
    assert result.crowd_out.single_pass_ids == [m.id for m in single]
    # with 4 richer records and k=5 a single pass still reaches A's record; otherwise it loses it
    assert ("PREC-A-0" not in [m.document_id for m in single]) == bool(lost) and result.crowd_out.lost == lost


@pytest.mark.parametrize("k", [2, 3, 5])
def test_a_single_pass_crowds_out_the_exact_precedents_and_two_stage_keeps_them_real_server(hindsight, bank_id, k):
    """VB's twelve near-identical records worded like the query outrank VA's two in one any_strict pass."""
    hindsight.gateway.retain(bank_id, crowding_records())
    result, rec = _recall(hindsight, bank_id, k=k, query=CROWD_QUERY)
    mine = {"PREC-VA-0", "PREC-VA-1"}
    assert {e.document_id for e in result.exact} == mine and all(e.relevant for e in result.exact)
    assert [e.document_id[:8] for e in result.broader] == ["PREC-VB-"] * (k - 2)
    assert rec.action == "reject" and set(rec.cited) == mine  # decided on VA's own history only
    if k == 2:  # pass 1 filled k: pass 2 asked for human decisions; the check is one more call, made on demand
        assert result.crowd_out is None and result.calls == 2
        result = check_crowd_out(hindsight.gateway.recall, result)
        assert not result.crowd_out.reused_pass2 and result.calls == 3
    else:
        assert result.crowd_out.reused_pass2 and result.calls == 2
    single = hindsight.gateway.recall(
        bank_id, CROWD_QUERY, tags=A.tags, tags_match="any_strict", max_tokens=result.pass1.max_tokens,
        budget=result.pass1.budget, types=result.pass1.types,
    ).results[:k]  # fmt: skip
    assert [m.document_id[:8] for m in single] == ["PREC-VB-"] * k  # the single pass really lost them
    assert result.crowd_out.single_pass_ids == [m.id for m in single]
    assert (result.crowd_out.lost, result.crowd_out.exact_in_result, result.crowd_out.crowded_out) == (2, 2, True)


def test_pass2_skipped_when_exact_fills_k_real_server(hindsight, bank_id):
    records = [precedent(f"A{i}", "VA", "price_variance", "approve", f"2025-08-{i + 1:02d}") for i in range(4)]
    records += [precedent(f"B{i}", "VB", "price_variance") for i in range(3)]
    hindsight.gateway.retain(bank_id, records)
    result, rec = _recall(hindsight, bank_id, k=3)
    assert result.pass2_skipped and result.calls == 2 and result.crowd_out is None and result.decisions.returned == 0
    assert len(result.exact) == 3 and result.broader == [] and all(e.relevant for e in result.exact)
    assert rec.action == "approve" and rec.confidence == 1.0 and len(rec.cited) == 3
    checked = check_crowd_out(hindsight.gateway.recall, result)
    assert checked.calls == 3 and checked.crowd_out.exact_in_result == 3


def test_relevance_flags_for_every_record_real_server(hindsight, bank_id):
    hindsight.gateway.retain(bank_id, [
        precedent("A-pv", "VA", "price_variance"),
        precedent("A-tax", "VA", "tax_mismatch"),
        precedent("B-pv", "VB", "price_variance"),
        precedent("C-qty", "VC", "quantity_mismatch"),
    ])  # fmt: skip
    result, _ = _recall(hindsight, bank_id, k=10)
    flags = {e.document_id: (e.relevant, e.pass_) for e in result.records}
    assert flags == {"A-pv": (True, "exact"), "A-tax": (False, "broader"), "B-pv": (False, "broader")}


def test_guard_escalates_when_nothing_relevant_comes_back(hindsight, bank_id):
    hindsight.gateway.retain(bank_id, [precedent(f"B{i}", "VB", "price_variance") for i in range(3)])
    result, rec = _recall(hindsight, bank_id, k=5)
    assert len(result.records) == 3 and not any(e.relevant for e in result.records)
    assert (rec.action, rec.confidence, rec.cited, rec.policy) == ("escalate", 0.0, [], "guard")
    assert "3 record(s) were recalled" in rec.rationale and "none concern vendor VA (Alpha Tools)" in rec.rationale
