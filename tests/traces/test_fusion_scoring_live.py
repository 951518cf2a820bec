"""The predicted RETURNED order against real servers: the embedded one (default settings) and a second
`hindsight-api` on the same database started with each of the server's fusion knobs."""

from __future__ import annotations

import time
import uuid

import pytest

from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.sibling import SiblingServer
from dashboard.hindsight.wire import RecallTrace
from dashboard.traces.replay import replay
from dashboard.traces.scoring import predict, returned_ids, server_knobs
from tests.lab_data import QUERIES, dated_records

K = 10
ATTEMPTS = 3


@pytest.fixture(scope="module")
def dated_bank(hindsight):
    bank = f"lab-dated-{uuid.uuid4().hex[:8]}"
    hindsight.gateway.ensure_bank(bank)
    hindsight.gateway.retain(bank, dated_records())
    deadline = time.monotonic() + 60
    while hindsight.gateway.bank_stats(bank).get("pending_operations", 0) and time.monotonic() < deadline:
        time.sleep(0.5)
    return bank


def retrieval_lists(trace: RecallTrace) -> dict:
    """Keyed by (arm, fact type): the order of fact types in a trace differs between server processes."""
    return {(r.method_name, r.fact_type): [(h.node_id, h.score) for h in r.results] for r in trace.retrieval_results}


def test_default_settings_predict_the_whole_returned_list_and_differ_from_the_rrf_order(hindsight, dated_bank):
    differs_from_rrf = 0
    for query in QUERIES:
        response = hindsight.gateway.recall(dated_bank, query, trace=True)
        prediction = predict(response.trace)
        assert [c.node_id for c in prediction.returned] == returned_ids(response), query
        assert prediction.from_trace
        differs_from_rrf += [c.node_id for c in prediction.kept[:K]] != returned_ids(response, K)
    assert differs_from_rrf >= 1  # on dated data recency reorders: the RRF order alone is not what comes back
    assert any(hindsight.gateway.recall(dated_bank, q, trace=True).trace.query.temporal_constraint for q in QUERIES)


# Each sibling server costs a cold start (~25 s), so the knobs share two: a per-arm cap alone, and the reranker's
# candidate limit with the BM25 floor. In 1.1.0 the floor gates every text backend, native PostgreSQL included
# (an outer WHERE on the arm's ordered slice): the trace is taken AFTER it, so the what-if needs an ungated trace.
KNOBS = [
    ({"RECALL_MAX_CANDIDATES_PER_SOURCE": "5"}, server_knobs(per_source_cap=5, top_k=K)),
    (
        {"RERANKER_MAX_CANDIDATES": "20", "BM25_MIN_SCORE": "0.5"},
        server_knobs(reranker_max_candidates=20, top_k=K).model_copy(update={"min_bm25": 0.5}),
    ),
]


def gated(lists: dict, min_bm25: float | None) -> dict:
    """The default server's lists as a server with the BM25 floor would have retrieved them."""
    if min_bm25 is None:
        return lists
    return {key: [h for h in hits if key[0] != "bm25" or h[1] >= min_bm25] for key, hits in lists.items()}


@pytest.mark.parametrize(
    ("knobs", "settings"), KNOBS, ids=[",".join(f"{k}={v}" for k, v in knobs.items()) for knobs, _ in KNOBS]
)
def test_a_default_trace_predicts_a_server_started_with_the_knobs(hindsight, dated_bank, knobs, settings):
    changed_by_knob = rrf_only_wrong = gated_hits = 0
    with SiblingServer(hindsight.server, **knobs) as url:
        other = HindsightGateway(url)
        try:
            for query in QUERIES:
                for _ in range(ATTEMPTS):  # both servers must have seen the same retrieval lists
                    trace = hindsight.gateway.recall(dated_bank, query, trace=True).trace
                    got = other.recall(dated_bank, query, trace=True)
                    if gated(retrieval_lists(trace), settings.min_bm25) == retrieval_lists(got.trace):
                        break
                else:
                    pytest.fail(f"{query!r}: the two servers' retrieval lists never matched")
                prediction = predict(trace, settings)
                assert prediction.top_ids(K) == returned_ids(got, K), query
                assert [c.node_id for c in prediction.returned] == returned_ids(got), query
                changed_by_knob += prediction.top_ids(K) != predict(trace).top_ids(K)
                gated_hits += sum(map(len, retrieval_lists(trace).values())) - sum(
                    map(len, retrieval_lists(got.trace).values())
                )
                rrf_only_wrong += [c.node_id for c in replay(trace, settings).kept[:K]] != returned_ids(got, K)
        finally:
            other.close()
    if "BM25_MIN_SCORE" in knobs:
        assert gated_hits > 0  # the floor removed BM25 hits on native PostgreSQL
    assert changed_by_knob >= 1  # the knobs matter on this data, so the check above could fail
    assert rrf_only_wrong >= 1  # and the RRF replay alone would have predicted it wrong
