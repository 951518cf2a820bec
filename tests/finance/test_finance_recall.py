"""Two-stage recall, relevance flags, crowd-out check and the guard: a double, then the real server in both
modes (verbatim, and extracting: each document as several rewritten facts). The document is the precedent."""

import pytest

from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import MAX_TOKENS_CAP, CaseKey, InvalidCase, check_crowd_out, two_stage_recall
from dashboard.hindsight.documents import group
from dashboard.hindsight.wire import RecalledMemory
from tests.finance_helpers import CROWD_QUERY, FakeRecall, crowding_records, precedent

A = CaseKey(vendor_code="VA", exception_type="price_variance", vendor_name="Alpha Tools")
QUERY = "price variance for vendor VA Alpha Tools steel brackets billed above the PO price"


# -- with a double: exact call counts and orderings --------------------------------------
def test_pass2_runs_when_pass1_is_short_and_its_response_is_reused_for_crowd_out():
    # The single any_strict ranking puts four B records above A's only record.
    ranking = [precedent(f"B{i}", "VB", "price_variance") for i in range(4)] + [
        precedent("A0", "VA", "price_variance", "reject")
    ]
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
    ranking = [
        precedent("A0", "VA", "price_variance"),
        precedent("B0", "VB", "price_variance"),
        precedent("A1", "VA", "tax_mismatch"),
    ]
    result = two_stage_recall(FakeRecall(ranking), "bank", A, QUERY, k=5)
    ids = [e.id for e in result.records]
    assert len(ids) == len(set(ids)) == 3
    assert [e.pass_ for e in result.records] == ["exact", "broader", "broader"]


def test_a_document_of_several_facts_is_one_precedent_with_one_vote():
    # an extracting server returns each document as several facts: counted, voted and cited once
    ranking = [
        precedent("A0", "VA", "price_variance", "reject"),
        precedent("A1", "VA", "price_variance", "approve", "2025-05-01"),
    ]
    ranking += [precedent(f"B{i}", "VB", "price_variance") for i in range(3)]
    result, rec = assess(two_stage_recall(FakeRecall(ranking, facts=3), "bank", A, QUERY, k=4))
    assert [e.ref for e in result.exact] == ["A0", "A1"] and [e.ref for e in result.broader] == ["B0", "B1"]
    assert [len(e.facts) for e in result.records] == [3, 3, 3, 3]
    assert result.exact[0].text == ranking[0].content  # the original text, the facts beneath it
    assert [f.text for f in result.exact[0].extracted_facts] == [f"Fact {n} of A0, as rewritten" for n in range(3)]
    assert rec.votes == {"reject": 1, "approve": 1} and rec.cited == ["A0", "A1"]  # one vote each, cited once
    assert result.pass1.returned == 2 and result.pass1.facts == 6
    assert result.crowd_out.single_pass_ids == ["A0", "A1", "B0", "B1"]


def test_an_observation_is_never_a_precedent_and_never_takes_a_slot():
    ranking = [precedent(f"A{i}", "VA", "price_variance", "reject") for i in range(2)]
    summary = RecalledMemory(id="o1", type="observation", text="VA price variances are usually rejected", tags=A.tags)
    result, rec = assess(two_stage_recall(FakeRecall(ranking, observations=[summary]), "bank", A, QUERY, k=2))
    assert [e.ref for e in result.exact] == ["A0", "A1"] and [o.ref for o in result.observations] == ["o1"]
    assert rec.votes == {"reject": 2} and "o1" not in rec.cited
    # a pass 1 holding only an observation is short of k: pass 2 runs
    lone = assess(two_stage_recall(FakeRecall(ranking[:1], observations=[summary]), "bank", A, QUERY, k=2))[0]
    assert lone.pass2 is not None and [e.ref for e in lone.exact] == ["A0"]


def test_an_observation_derived_from_the_case_s_own_decision_is_dropped_like_the_decision():
    ranking = [
        precedent("decision-E-1", "VA", "price_variance", "approve"),
        precedent("A0", "VA", "price_variance", "reject"),
    ]
    fact = RecalledMemory(id="f-own", document_id="decision-E-1", text="E-1 was approved")
    own = RecalledMemory(id="o-own", type="observation", text="E-1 approved", tags=A.tags, source_fact_ids=["f-own"])
    other = RecalledMemory(id="o-other", type="observation", text="VA rejected", tags=A.tags, source_fact_ids=["f-a0"])
    sources = {"f-own": fact, "f-a0": RecalledMemory(id="f-a0", document_id="A0", text="A0 rejected")}
    recall = FakeRecall(ranking, facts=2, observations=[own, other], sources=sources)
    result = two_stage_recall(recall, "bank", A, QUERY, k=5, own_document="decision-E-1")
    assert result.own_decision.ref == "decision-E-1" and [e.ref for e in result.records] == ["A0"]
    assert [o.ref for o in result.observations] == ["o-other"] and result.observations[0].source_documents == ["A0"]


def test_a_pass_cut_by_its_token_budget_before_k_documents_asks_again_with_more():
    ranking = [
        precedent(f"A{i}", "VA", "price_variance", text=f"A{i} " + "long precedent text " * 80) for i in range(6)
    ]

    class Budgeted(FakeRecall):  # the server stops adding facts when the next would overrun max_tokens
        def __call__(self, bank_id, query, **kwargs):
            response = super().__call__(bank_id, query, **kwargs)
            kept, used = [], 0
            for m in response.results:
                size = len(m.text) // 4 + 1
                if used + size <= kwargs["max_tokens"]:
                    kept.append(m)
                    used += size
            return response.model_copy(update={"results": kept})

    recall = Budgeted(ranking)
    result = two_stage_recall(recall, "bank", A, QUERY, k=5)
    assert [e.ref for e in result.exact] == [f"A{i}" for i in range(5)]
    assert result.pass1.max_tokens > 1500 and result.pass1.max_tokens <= MAX_TOKENS_CAP
    assert [c[0] for c in recall.calls][:2] == ["all_strict", "all_strict"]  # the same pass again, with room


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
        ExceptionCase(
            id="E-1",
            vendor_code="V01",
            vendor_name="X",
            exception_type="late_fee",
            invoice="I",
            po="P",
            invoice_amount=1,
            po_amount=1,
            description="d",
            opened_on="2026-01-01",
        )


# -- the real server ----------------------------------------------------------------------
def _recall(live, bank_id, key=A, k=5, query=QUERY):
    # the recall's mechanics on an AP system's precedents (unsigned): counted as votes, not escalated as untrusted
    return assess(two_stage_recall(live.gateway.recall, bank_id, key, query, k=k), untrusted_decides=True)


def _retain(live, bank_id, records):
    live.gateway.retain(bank_id, records)
    live.settle(bank_id)


def _single_pass(live, bank_id, query, k, **kwargs) -> list[str]:
    """An independent single any_strict pass: its top k documents."""
    return [
        d.ref
        for d in group(live.gateway.recall(bank_id, query, tags=A.tags, tags_match="any_strict", **kwargs)).documents
    ][:k]


@pytest.mark.parametrize(("richer", "k", "lost"), [(4, 5, 0), (10, 5, 1), (4, 3, 1), (10, 3, 1)])
def test_seed_scenario_exact_match_is_never_crowded_out(hindsight, bank_id, richer, k, lost):
    b_records = [
        precedent(
            f"PREC-B-{i}",
            "VB",
            "price_variance",
            "approve",
            f"2025-07-{i + 1:02d}",
            text=f"Vendor VB Beta Supply price variance: steel brackets billed above the PO price, case {i}. Decision: approve.",
        )
        for i in range(richer)
    ]
    a_record = precedent(
        "PREC-A-0",
        "VA",
        "price_variance",
        "reject",
        "2025-05-01",
        text="Alpha Tools invoice INV-1 differs from its order. Always reject this vendor's price variances.",
    )
    _retain(hindsight, bank_id, [*b_records, a_record])

    result, rec = _recall(hindsight, bank_id, k=k)
    assert result.records[0].document_id == "PREC-A-0" and result.records[0].pass_ == "exact"
    assert len(result.records) == k and len({e.id for e in result.records}) == k
    assert [e.relevant for e in result.records] == [True] + [False] * (k - 1)
    assert all(e.document_id.startswith("PREC-B-") for e in result.broader)
    # the recommendation cites A's record only, never the richer vendor's history
    assert (rec.action, rec.cited, rec.policy) == ("reject", ["PREC-A-0"], "precedent")
    # crowd-out: consistent with an independent single any_strict pass
    single = _single_pass(hindsight, bank_id, QUERY, k)
    assert result.crowd_out.reused_pass2 and result.calls == 2
    assert result.crowd_out.single_pass_ids == single
    # with 4 richer records and k=5 a single pass still reaches A's record; otherwise it loses it
    assert ("PREC-A-0" not in single) == bool(lost) and result.crowd_out.lost == lost


@pytest.mark.parametrize("k", [2, 3, 5])
def test_a_single_pass_crowds_out_the_exact_precedents_and_two_stage_keeps_them_real_server(hindsight, bank_id, k):
    """VB's twelve near-identical records worded like the query outrank VA's two in one any_strict pass."""
    _retain(hindsight, bank_id, crowding_records())
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
    p = result.pass1
    single = _single_pass(hindsight, bank_id, CROWD_QUERY, k, max_tokens=p.max_tokens, budget=p.budget, types=p.types)
    assert [d[:8] for d in single] == ["PREC-VB-"] * k  # the single pass really lost them
    assert result.crowd_out.single_pass_ids == single
    assert (result.crowd_out.lost, result.crowd_out.exact_in_result, result.crowd_out.crowded_out) == (2, 2, True)


def test_two_stage_counts_documents_on_both_servers(live, bank_id):
    """The same records on each server: exact documents, votes and confidence are the same, whatever the
    server made of each document (one verbatim memory, or several extracted facts)."""
    bank = f"{bank_id}-{live.mode}"
    records = [
        precedent(f"A{i}", "VA", "price_variance", "reject" if i < 2 else "approve", f"2025-08-{i + 1:02d}")
        for i in range(3)
    ]
    records += [precedent(f"B{i}", "VB", "price_variance") for i in range(4)]
    _retain(live, bank, records)
    result, rec = _recall(live, bank, k=5)
    assert sorted(e.ref for e in result.exact) == ["A0", "A1", "A2"] and len(result.records) == 5
    assert len({e.ref for e in result.records}) == 5  # no document twice
    assert (rec.action, rec.confidence, rec.votes) == ("reject", 0.67, {"reject": 2, "approve": 1})
    assert all(e.text.startswith("Vendor V") for e in result.records)  # the original text, in both modes
    facts = [len(e.facts) for e in result.exact]
    assert facts == [1, 1, 1] if live.mode == "verbatim" else all(n >= 1 for n in facts) and result.pass1.facts >= 3
    assert not any(o.ref in rec.cited for o in result.observations)


def test_pass2_skipped_when_exact_fills_k_real_server(hindsight, bank_id):
    records = [precedent(f"A{i}", "VA", "price_variance", "approve", f"2025-08-{i + 1:02d}") for i in range(4)]
    records += [precedent(f"B{i}", "VB", "price_variance") for i in range(3)]
    _retain(hindsight, bank_id, records)
    result, rec = _recall(hindsight, bank_id, k=3)
    assert result.pass2_skipped and result.calls == 2 and result.crowd_out is None and result.decisions.returned == 0
    assert len(result.exact) == 3 and result.broader == [] and all(e.relevant for e in result.exact)
    assert rec.action == "approve" and rec.confidence == 1.0 and len(rec.cited) == 3
    checked = check_crowd_out(hindsight.gateway.recall, result)
    assert checked.calls == 3 and checked.crowd_out.exact_in_result == 3


def test_relevance_flags_for_every_record_real_server(hindsight, bank_id):
    _retain(
        hindsight,
        bank_id,
        [
            precedent("A-pv", "VA", "price_variance"),
            precedent("A-tax", "VA", "tax_mismatch"),
            precedent("B-pv", "VB", "price_variance"),
            precedent("C-qty", "VC", "quantity_mismatch"),
        ],
    )
    result, _ = _recall(hindsight, bank_id, k=10)
    flags = {e.document_id: (e.relevant, e.pass_) for e in result.records}
    assert flags == {"A-pv": (True, "exact"), "A-tax": (False, "broader"), "B-pv": (False, "broader")}


def test_guard_escalates_when_nothing_relevant_comes_back(hindsight, bank_id):
    _retain(hindsight, bank_id, [precedent(f"B{i}", "VB", "price_variance") for i in range(3)])
    result, rec = _recall(hindsight, bank_id, k=5)
    assert len(result.records) == 3 and not any(e.relevant for e in result.records)
    assert (rec.action, rec.confidence, rec.cited, rec.policy) == ("escalate", 0.0, [], "guard")
    assert "3 record(s) were recalled" in rec.rationale and "none concern vendor VA (Alpha Tools)" in rec.rationale
