"""Fusion replay and trace analysis on the recorded fixtures and on a hand-built flooding trace."""

from __future__ import annotations

import json

import pytest

from dashboard.hindsight.wire import SOURCES, RecallResponse, RecallTrace
from dashboard.traces.analysis import analyse, pre_filtered_count, rows_table
from dashboard.traces.replay import ReplaySettings, diff_top_k, replay, server_candidates, source_lists, source_shares
from tests.conftest import FIXTURES

FIXTURE_FILES = sorted(FIXTURES.glob("*.json"))


def load(path) -> RecallResponse:
    return RecallResponse.model_validate(json.loads(path.read_text()))


def test_there_are_four_fixtures():
    assert [p.name for p in FIXTURE_FILES] == [
        "recall_all_strict.json",
        "recall_any_strict.json",
        "recall_notags.json",
        "rich.json",
    ]


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_default_replay_reproduces_rrf_merged_exactly(path):
    trace = load(path).trace
    result = replay(trace)
    got = [(c.node_id, c.rrf_score, c.source_ranks, c.rrf_rank) for c in result.merged]
    expected = [(c.node_id, c.rrf_score, c.source_ranks.as_dict(), c.final_rrf_rank) for c in trace.rrf_merged]
    assert got == expected  # exact floats, exact order
    assert diff_top_k(trace, result).changed is False


def test_rich_fixture_uses_the_temporal_arm_and_ties_keep_fact_type_order():
    trace = load(FIXTURES / "rich.json").trace
    lists, _ = source_lists(trace)
    assert len(lists["temporal"]) == 2
    assert replay(trace).merged[0].source_ranks == {"semantic": 2, "bm25": 2, "temporal": 1}
    # any_strict: two graph hits tie at the same activation: the trace's order is kept
    any_strict = load(FIXTURES / "recall_any_strict.json").trace
    graph = [h.node_id for r in any_strict.retrieval_results if r.method_name == "graph" for h in r.results]
    assert [h.node_id for h in source_lists(any_strict)[0]["graph"]] == graph


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_analysis_contributions_and_flags(path):
    response = load(path)
    analysis = analyse(response)
    assert len(analysis.rows) == len(response.trace.rrf_merged)
    for row in analysis.rows:
        assert row.contributions == {s: 1.0 / (60 + r) for s, r in row.arm_ranks.items()}
        assert sum(row.contributions.values()) == pytest.approx(row.rrf_score, rel=1e-12)
        assert row.single_arm == (len(row.arm_ranks) == 1)
    assert {r.node_id for r in analysis.rows if r.returned} == {m.id for m in response.results}
    assert analysis.pre_filtered == 0  # small banks: nothing is cut before the reranker
    counts = analysis.counts_by_source()
    details = response.trace.summary.phase("parallel_retrieval").details
    for source in ("semantic", "bm25", "graph", "temporal"):
        assert counts.get(source, 0) == details[f"{source}_count"]
    assert any(p.name == "parallel_retrieval" and p.seconds > 0 for p in analysis.phases)
    assert len(rows_table(analysis)) == len(analysis.rows)


def test_single_arm_flag_on_a_known_fixture():
    analysis = analyse(load(FIXTURES / "recall_notags.json"))
    first = analysis.rows[0]
    assert first.arm_ranks == {"semantic": 1, "bm25": 1} and not first.single_arm
    assert any(r.single_arm for r in analysis.rows)


def test_pre_filtered_is_derived_from_rrf_merged_minus_reranked():
    trace = load(FIXTURES / "recall_notags.json").trace
    cut = trace.model_copy(update={"reranked": trace.reranked[:7]})
    assert pre_filtered_count(trace) == 0
    assert pre_filtered_count(cut) == 3
    # the replay derives the same number from the cap the server applies
    assert len(replay(trace, ReplaySettings(reranker_max_candidates=7)).pre_filtered) == 3


# -- knobs on the recorded traces, against RRF recomputed from the server's own recorded ranks --------
def _rrf_from_server_ranks(trace: RecallTrace, keep, weights: dict[str, float] | None = None) -> dict[str, float]:
    """Each source's hits that `keep(source, node_id, server_rank)` lets through, renumbered 1..n in the
    server's recorded order (`rrf_merged[].source_ranks`), fused as sum of weight / (60 + rank)."""
    recorded = {c.node_id: c.source_ranks.as_dict() for c in trace.rrf_merged}
    scores: dict[str, float] = {}
    for source in SOURCES:
        weight = (weights or {}).get(source, 1.0)
        ranked = sorted((ranks[source], node) for node, ranks in recorded.items() if source in ranks)
        survivors = [node for rank, node in ranked if weight > 0 and keep(source, node, rank)]
        for rank, node in enumerate(survivors, start=1):
            scores[node] = scores.get(node, 0.0) + weight / (60 + rank)
    return scores


def _assert_fused(result, expected: dict[str, float]) -> None:
    got = {c.node_id: c.rrf_score for c in result.merged}
    assert got == pytest.approx(expected, rel=1e-12)
    assert [c.rrf_score for c in result.merged] == sorted(got.values(), reverse=True)
    assert [c.rrf_rank for c in result.merged] == list(range(1, len(got) + 1))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_semantic_gate_on_a_recorded_trace(path):
    trace = load(path).trace
    similarity = {h.node_id: h.score for r in trace.retrieval_results if r.method_name == "semantic" for h in r.results}
    gate = sorted(similarity.values())[len(similarity) // 2]  # the median: about half the semantic hits go
    expected = _rrf_from_server_ranks(trace, lambda source, node, _: source != "semantic" or similarity[node] >= gate)
    assert len(expected) <= len(trace.rrf_merged) and any(score < gate for score in similarity.values())
    _assert_fused(replay(trace, ReplaySettings(min_semantic=gate)), expected)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_caps_and_weights_on_a_recorded_trace(path):
    trace = load(path).trace
    caps = {"semantic": 2, "bm25": 1}
    capped = _rrf_from_server_ranks(trace, lambda source, _, rank: rank <= caps.get(source, rank))
    _assert_fused(replay(trace, ReplaySettings(caps=caps)), capped)
    weights = {"bm25": 0.5, "graph": 0.0}
    weighted = _rrf_from_server_ranks(trace, lambda *_: True, weights)
    _assert_fused(replay(trace, ReplaySettings(weights=weights)), weighted)
    assert weighted != {c.node_id: c.rrf_score for c in trace.rrf_merged}  # the knobs changed something


# -- a hand-built trace where BM25 floods the candidates with weak hits ------------------------------


def flooding_trace() -> RecallTrace:
    def hits(pairs):
        return [{"rank": i, "node_id": n, "text": f"memory {n}", "score": s} for i, (n, s) in enumerate(pairs, 1)]

    return RecallTrace.model_validate(
        {
            "retrieval_results": [
                {
                    "method_name": "semantic",
                    "fact_type": "world",
                    "results": hits([("A", 0.9), ("B", 0.8), ("C", 0.7), ("D", 0.6)]),
                },
                {
                    "method_name": "bm25",
                    "fact_type": "world",
                    "results": hits([("A", 0.9), ("W1", 0.02), ("W2", 0.02), ("W3", 0.02)]),
                },
            ],
        }
    )


def test_default_replay_of_the_flooding_trace_by_hand():
    result = replay(flooding_trace(), ReplaySettings(top_k=4, reranker_max_candidates=5))
    # A: 1/61 + 1/61; B and W1 tie at 1/62 (B was seen first, in the semantic list); C, W2 at 1/63; D, W3 at 1/64
    assert [c.node_id for c in result.merged] == ["A", "B", "W1", "C", "W2", "D", "W3"]
    assert [c.rrf_score for c in result.merged] == [2 / 61, 1 / 62, 1 / 62, 1 / 63, 1 / 63, 1 / 64, 1 / 64]
    assert [c.node_id for c in result.top] == ["A", "B", "W1", "C"]
    # the flooding arm pushes the genuine semantic hit D out of the reranker's 5 candidates
    assert [c.node_id for c in result.pre_filtered] == ["D", "W3"]
    shares = source_shares(result.top)
    assert shares["semantic"]["found"] == 3 and shares["bm25"]["found"] == 2
    total = 2 / 61 + 1 / 62 + 1 / 62 + 1 / 63
    assert shares["bm25"]["score_share"] == pytest.approx((1 / 61 + 1 / 62) / total)


@pytest.mark.parametrize("knobs", [{"min_bm25": 0.1}, {"caps": {"bm25": 1}}], ids=["bm25-gate", "bm25-cap"])
def test_a_gate_or_cap_removes_the_weak_candidates_and_changes_the_top_k(knobs):
    trace = flooding_trace()
    base = ReplaySettings(top_k=4, reranker_max_candidates=5)
    server_like = RecallTrace.model_validate({**trace.model_dump(), "rrf_merged": _as_rrf_merged(replay(trace, base))})
    result = replay(server_like, base.model_copy(update=knobs))
    # BM25 keeps only A (rank 1): A 2/61, then B 1/62, C 1/63, D 1/64
    assert [(c.node_id, c.rrf_score) for c in result.merged] == [
        ("A", 2 / 61),
        ("B", 1 / 62),
        ("C", 1 / 63),
        ("D", 1 / 64),
    ]
    assert result.pre_filtered == []
    diff = diff_top_k(server_like, result)
    assert diff.server == ["A", "B", "W1", "C"] and diff.replay == ["A", "B", "C", "D"]
    assert diff.entered == ["D"] and diff.left == ["W1"]
    before = source_shares(server_candidates(server_like)[:4])
    after = source_shares(result.top)
    assert (before["bm25"]["found"], after["bm25"]["found"]) == (2, 1)
    assert (before["semantic"]["found"], after["semantic"]["found"]) == (3, 4)


def test_weighted_rrf_and_a_semantic_gate():
    trace = flooding_trace()
    weighted = replay(trace, ReplaySettings(weights={"bm25": 0.25}, top_k=4))
    assert [c.node_id for c in weighted.top] == ["A", "B", "C", "D"]
    assert weighted.merged[0].rrf_score == pytest.approx(1 / 61 + 0.25 / 61)
    assert weighted.merged[0].contributions == {"semantic": 1 / 61, "bm25": 0.25 / 61}
    off = replay(trace, ReplaySettings(weights={"bm25": 0}))
    assert [c.node_id for c in off.merged] == ["A", "B", "C", "D"]
    gated = replay(trace, ReplaySettings(min_semantic=0.75))
    assert [h.node_id for h in gated.source_lists["semantic"]] == ["A", "B"]
    assert gated.source_sizes_before == {"semantic": 4, "bm25": 4}
    # C and D lose their only arm; B (seen first) stays ahead of W1 at the same 1/62
    assert [(c.node_id, c.rrf_score) for c in gated.merged] == [
        ("A", 2 / 61),
        ("B", 1 / 62),
        ("W1", 1 / 62),
        ("W2", 1 / 63),
        ("W3", 1 / 64),
    ]


def test_replay_settings_reject_unknown_sources_and_negative_values():
    with pytest.raises(ValueError):
        ReplaySettings(caps={"vector": 3})
    with pytest.raises(ValueError):
        ReplaySettings(weights={"bm25": -1})


def _as_rrf_merged(result):
    return [
        {
            "node_id": c.node_id,
            "text": c.text,
            "rrf_score": c.rrf_score,
            "final_rrf_rank": c.rrf_rank,
            "source_ranks": {f"{s}_rank": r for s, r in c.source_ranks.items()},
        }
        for c in result.merged
    ]
