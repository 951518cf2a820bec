"""Post-fusion scoring (the returned order) on the recorded fixtures and on hand-built traces."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from dashboard.hindsight.wire import RecallResponse, RecallTrace
from dashboard.traces.replay import ReplaySettings
from dashboard.traces.scoring import ScoringSettings, predict, proximity, recency_signal, returned_ids, server_knobs
from tests.conftest import FIXTURES

FIXTURE_FILES = sorted(FIXTURES.glob("*.json"))


def load(path) -> RecallResponse:
    return RecallResponse.model_validate(json.loads(path.read_text()))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_prediction_equals_the_recorded_returned_order_and_scores(path):
    response = load(path)
    prediction = predict(response.trace)
    assert [c.node_id for c in prediction.returned] == returned_ids(response)
    recorded = {r.node_id: r.rerank_score for r in response.trace.reranked}
    assert all(c.score == recorded[c.node_id] for c in prediction.scored)  # bit-exact floats
    assert prediction.from_trace


def _hit(node, rank, score, date):
    return {"rank": rank, "node_id": node, "text": f"memory {node}", "score": score, "event_date": date}


def dated_trace(temporal_window=None) -> RecallTrace:
    """Semantic finds a (old), b, c (recent); the temporal arm finds c and d; no reranked components."""
    lists = [
        {
            "method_name": "semantic",
            "fact_type": "world",
            "results": [
                _hit("a", 1, 0.9, "2018-01-01T00:00:00Z"),
                _hit("b", 2, 0.8, "2025-06-01T00:00:00Z"),
                _hit("c", 3, 0.7, "2026-01-01T00:00:00Z"),
            ],
        },
        {
            "method_name": "temporal",
            "fact_type": "world",
            "results": [_hit("d", 1, 0.9, "2024-03-16T00:00:00Z"), _hit("c", 2, 0.2, "2026-01-01T00:00:00Z")],
        },
    ]
    trace = {
        "query": {
            "query_text": "q",
            "timestamp": "2026-01-02T00:00:00Z",
            "budget": 300,
            "max_tokens": 4096,
            "temporal_constraint": temporal_window,
        },
        "retrieval_results": lists,
    }
    return RecallTrace.model_validate(trace)


def test_recency_moves_a_recent_memory_above_an_older_one_with_a_better_rrf_rank():
    fillers = [_hit(f"f{i}", i + 3, 0.5, "2022-01-01T00:00:00Z") for i in range(18)]
    trace = RecallTrace.model_validate(
        {
            "query": {"query_text": "q", "timestamp": "2026-01-02T00:00:00Z", "budget": 300, "max_tokens": 4096},
            "retrieval_results": [
                {
                    "method_name": "semantic",
                    "fact_type": "world",
                    "results": [
                        _hit("a", 1, 0.9, "2018-01-01T00:00:00Z"),
                        _hit("b", 2, 0.8, "2025-06-01T00:00:00Z"),
                        *fillers,
                    ],
                }
            ],
        }
    )
    prediction = predict(trace)
    assert [c.node_id for c in prediction.kept[:2]] == ["a", "b"]
    assert prediction.top_ids(2) == ["b", "a"]
    assert {c.node_id: c.recency for c in prediction.scored}["a"] == 0.1  # eight years old: the linear floor
    assert not prediction.from_trace  # no reranked components in this trace: scored from dates


def test_temporal_proximity_counts_only_when_the_temporal_arm_is_the_candidates_first():
    window = {"start": "2024-03-01T00:00:00", "end": "2024-03-31T23:59:59"}
    prediction = predict(dated_trace(window))
    assert [c.node_id for c in prediction.kept] == ["c", "a", "d", "b"]  # c: two arms
    by_id = {c.node_id: c for c in prediction.scored}
    assert by_id["c"].temporal == 0.5  # semantic is c's first arm: its copy carries no proximity
    expected = proximity(
        datetime(2024, 3, 16, tzinfo=UTC),
        (datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 3, 31, 23, 59, 59, tzinfo=UTC)),
    )
    assert by_id["d"].temporal == pytest.approx(expected) and expected > 0.9
    # Switching semantic off makes the temporal arm c's first: its proximity (from its date) now counts.
    off = predict(dated_trace(window), ReplaySettings(weights={"semantic": 0}))
    assert {c.node_id: c.temporal for c in off.scored}["c"] == 0.0  # 2026 is outside March 2024


def test_reranker_cut_with_strategy_boosts_promotes_the_boosted_arm():
    trace = dated_trace()
    plain = predict(trace, ReplaySettings(reranker_max_candidates=2))
    assert [c.node_id for c in plain.kept] == ["c", "a"]
    boosted = predict(
        trace, ReplaySettings(reranker_max_candidates=2), ScoringSettings(strategy_boosts={"temporal": "high"})
    )
    assert [c.node_id for c in boosted.kept] == ["c", "d"]


def test_signals_and_knob_settings():
    assert recency_signal(0, ScoringSettings()) == 1.0
    assert recency_signal(365 / 2, ScoringSettings()) == pytest.approx(0.5)
    assert recency_signal(90, ScoringSettings(recency_decay="exponential")) == pytest.approx(0.5)
    assert recency_signal(10, ScoringSettings(recency_decay="none")) == 0.5
    knobs = server_knobs(per_source_cap=5, reranker_max_candidates=20)
    assert knobs.caps == {"semantic": 5, "bm25": 5, "graph": 5, "temporal": 5} and knobs.reranker_max_candidates == 20
    with pytest.raises(ValueError, match="strategy_boosts"):
        ScoringSettings(strategy_boosts={"vector": "high"})


def test_the_token_budget_skips_a_fact_that_does_not_fit_and_keeps_going():
    trace = dated_trace()
    trace.query.max_tokens = 3  # each text "memory x" is 2 tokens
    prediction = predict(trace)
    assert len(prediction.returned) == 1
