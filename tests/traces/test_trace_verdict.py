"""The trace's one-line verdict and candidate labels: pure logic on recorded and constructed traces."""

from __future__ import annotations

import json

import pytest

from dashboard.hindsight.wire import RecallResponse
from dashboard.traces.analysis import analyse
from dashboard.traces.labels import CandidateLabel, chart_name, display_name, label_candidates
from dashboard.traces.request import case_of_link
from dashboard.traces.verdict import CaseFocus, dominant_tag, plain_tag, verdict
from tests.conftest import FIXTURES


def flooded_response() -> RecallResponse:
    """Ten returned: graph ranks all of them 1..10, semantic only the two V01 ones (ranks 1, 2)."""
    ids = [f"m{i:02d}" for i in range(12)]
    results = [
        {
            "id": n,
            "text": f"t{i}",
            "document_id": f"P-{i:03d}",
            "tags": ["vendor:V01", "type:price_variance"] if i < 2 else ["vendor:VQB2", "type:late_delivery"],
        }
        for i, n in enumerate(ids[:10])
    ]
    merged = []
    for i, n in enumerate(ids):
        ranks = {"graph_rank": i + 1} if i < 10 else {"bm25_rank": 1}
        if i < 2:
            ranks["semantic_rank"] = i + 1
        score = sum(1 / (60 + r) for r in ranks.values())
        merged.append(
            {"node_id": n, "text": f"t{i}", "rrf_score": score, "source_ranks": ranks, "final_rrf_rank": i + 1}
        )
    trace = {"query": {"query_text": "q"}, "retrieval_results": [], "rrf_merged": merged, "reranked": []}
    return RecallResponse.model_validate({"results": results, "trace": trace})


def test_the_verdict_names_the_flooding_arm_and_what_the_top_is_about():
    response = flooded_response()
    analysis = analyse(response)
    labels = label_candidates(
        response,
        lambda limit, offset: {
            "items": [
                {"id": "m10", "document_id": "P-010", "tags": ["vendor:V01", "type:price_variance"]},
                {"id": "m11", "document_id": "P-011", "tags": ["vendor:V09"]},
            ],
            "total": 2,
        },
    )
    graph = sum(1 / (60 + r) for r in range(1, 11))
    semantic = 1 / 61 + 1 / 62
    result = verdict(response, analysis, labels)
    assert (result.top_n, result.arm, result.tag, result.tag_count) == (10, "graph", "vendor:VQB2", 8)
    assert result.arm_share == pytest.approx(graph / (graph + semantic))
    assert result.sentence() == (
        f"The linked-memories arm (graph) supplied {graph / (graph + semantic) * 100:.0f} % of the top-10 score; "
        "8 of the top 10 are vendor VQB2."
    )
    focus = CaseFocus(kind="case", id="E-1", exact_tags=("vendor:V01", "type:price_variance"))
    with_case = verdict(response, analysis, labels, focus)
    # m10 (not returned) is exact too: it counts among all candidates, not in the top
    assert (with_case.exact_in_top, with_case.exact_total) == (2, 3)
    assert with_case.sentence(focus).endswith(
        "; 2 of the top 10 are this case's exact precedents (3 among all candidates)."
    )


def test_the_verdict_on_a_recorded_trace_and_on_nothing():
    response = RecallResponse.model_validate(json.loads((FIXTURES / "rich.json").read_text()))
    analysis = analyse(response)
    labels = label_candidates(response, lambda limit, offset: pytest.fail("every candidate was returned: no listing"))
    result = verdict(response, analysis, labels, n=3)
    assert result.top_n == 3 and result.tag == "vendor:V06" and result.tag_count == 3
    semantic = 1 / 62 + 1 / 63 + 1 / 61
    temporal = 1 / 61 + 1 / 62
    bm25 = 1 / 62 + 1 / 61 + 1 / 63  # the same as semantic: the tie goes to the arm fused first
    assert result.arm == "semantic" and result.arm_share == pytest.approx(semantic / (semantic + bm25 + temporal))
    empty = RecallResponse.model_validate({"results": [], "trace": {"rrf_merged": []}})
    assert verdict(empty, analyse(empty), {}).sentence() == "The recall returned nothing."


def test_labels_are_looked_up_page_by_page_only_while_some_are_unnamed():
    response = flooded_response()
    pages = []

    def list_page(limit, offset):
        pages.append(offset)
        items = (
            [{"id": "x", "document_id": "other"}] * 3
            if offset == 0
            else [{"id": "m10", "document_id": "P-010", "tags": []}, {"id": "m11"}]
        )
        return {"items": items, "total": 100}

    labels = label_candidates(response, list_page)
    assert pages == [0, 3] and labels["m10"].document_id == "P-010" and labels["m11"].document_id is None
    assert display_name("m10", labels) == "P-010" and display_name("m11", labels) == "memory m11"
    assert display_name("0123456789abcdef", {}) == "memory 01234567"


def test_chart_names_cannot_carry_markup():
    labels = {"n": CandidateLabel(document_id='<a href="http://x.invalid">P-1</a>')}
    name = chart_name("n", labels)
    assert "<" not in name and ">" not in name and '"' not in name and name.startswith("?a href??http://x.invalid??P-1")


def test_small_helpers():
    assert plain_tag("type:price_variance") == "of type price variance" and plain_tag("urgent") == "urgent"
    assert plain_tag("vendor:V02") == "vendor V02"
    assert dominant_tag([("type:a", "vendor:V1"), ("type:a", "vendor:V2"), ("type:a", "vendor:V1")]) == ("vendor:V1", 2)
    # no vendor holds half of the list: what they all share says more
    spread = [
        ("type:a", "vendor:V1"),
        ("type:a", "vendor:V2"),
        ("type:a", "vendor:V3"),
        ("type:a", "vendor:V1"),
        ("type:a",),
    ]
    assert dominant_tag(spread) == ("type:a", 5)
    assert dominant_tag([("type:a", "vendor:V1"), ("type:b", "vendor:V1")]) == ("vendor:V1", 2)
    # a tag the whole pool holds says nothing about the top
    top = [("kind:d", "type:a", "vendor:V1"), ("kind:d", "type:a", "vendor:V2"), ("kind:d", "type:a", "vendor:V3")]
    assert dominant_tag(top) == ("type:a", 3)  # a vendor, customer or type says more than kind:...
    assert dominant_tag([("kind:d", "x"), ("kind:d",)], [("kind:d", "x"), ("kind:d",), ("y",)]) == ("kind:d", 2)
    assert dominant_tag([("kind:d", "x"), ("kind:d",)], [("kind:d", "x"), ("kind:d",), ("kind:d",)]) == ("x", 1)
    assert dominant_tag([("type:a",), ("type:b",), ("type:a",)]) == ("type:a", 2) and dominant_tag([]) == (None, 0)
    assert case_of_link({"case": "E-1001", "bank": "b"}) == ("case", "E-1001")
    assert case_of_link({"ticket": ["T-1", "T-2"]}) == ("ticket", "T-2")
    assert case_of_link({"bank": "b"}) is None and case_of_link({"case": "x" * 65}) is None
    focus = CaseFocus(kind="case", id="E", exact_tags=("vendor:V1", "type:a"))
    assert focus.is_exact(CandidateLabel(tags=("type:a", "vendor:V1", "kind:decision")))
    assert not focus.is_exact(CandidateLabel(tags=("vendor:V1",))) and not focus.is_exact(None)


def test_charts_name_candidates_by_document_mark_exact_ones_and_count_in_whole_numbers():
    from components.trace_view import _count_axis, contribution_figure, rank_path_figure

    response = flooded_response()
    analysis = analyse(response)
    labels = label_candidates(response, lambda limit, offset: {"items": [], "total": 0})
    exact = {"m00", "m01"}
    bars = contribution_figure(analysis, labels, exact)
    names = list(bars.data[0].x)
    assert names[:3] == ["#1 P-000 ★", "#2 P-001 ★", "#3 P-002"] and "#11 memory m10" in names
    assert {b.name for b in bars.data} == {"meaning match", "linked memories", "keywords"}  # plain arm names
    paths = rank_path_figure(analysis, labels, exact)
    assert paths.layout.yaxis.tickformat == "d" and paths.data[0].name == "#1 P-000 ★"
    assert list(paths.data[0].x) == ["meaning match", "keywords", "linked memories", "dates", "fused", "final"]
    assert _count_axis(3) == {"tickformat": "d", "dtick": 1, "rangemode": "tozero"} and _count_axis(28)["dtick"] == 5
