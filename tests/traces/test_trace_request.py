"""TraceRequest deep links and the bounded trace store (no server)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from dashboard.hindsight.wire import RecallResponse
from dashboard.traces.request import TracedRecall, TraceRequest, TraceStore, fetch_trace, reachable
from tests.conftest import FIXTURES


def test_query_params_round_trip():
    req = TraceRequest(
        bank="fin",
        query="price variance, V06",
        tags=("vendor:V06", "type:price_variance"),
        tags_match="all_strict",
        budget="low",
        max_tokens=2048,
        types=("world",),
    )
    params = req.to_query_params()
    assert params["tag"] == ["vendor:V06", "type:price_variance"] and params["match"] == "all_strict"
    assert TraceRequest.from_query_params(params) == req
    minimal = TraceRequest(bank="b", query="q")
    assert minimal.to_query_params() == {"bank": "b", "q": "q"}
    assert TraceRequest.from_query_params({"bank": "b", "q": "q"}) == minimal


def test_from_query_params_without_a_recall_or_with_a_bad_one():
    assert TraceRequest.from_query_params({}) is None
    assert TraceRequest.from_query_params({"bank": "b"}) is None
    with pytest.raises(ValueError):
        TraceRequest.from_query_params({"bank": "b", "q": "q", "match": "most"})
    with pytest.raises(ValueError):
        TraceRequest.from_query_params({"bank": "b", "q": "q", "type": ["opinion"]})


def test_a_link_cannot_ask_for_an_expensive_trace_or_another_bank():
    with pytest.raises(ValueError, match="max_tokens"):
        TraceRequest.from_query_params({"bank": "b", "q": "salary", "max_tokens": "1000000"})
    with pytest.raises(ValueError, match="budget"):
        TraceRequest.from_query_params({"bank": "b", "q": "salary", "budget": "high"})
    request = TraceRequest.from_query_params({"bank": "hr-private", "q": "salary"})
    assert not reachable(request, ("fin", "sup")) and reachable(request, ("hr-private",))


class FakeGateway:
    def __init__(self):
        self.calls = []
        self.response = RecallResponse.model_validate(json.loads((FIXTURES / "rich.json").read_text()))

    def recall(self, bank_id, query, **kwargs):
        self.calls.append((bank_id, query, kwargs))
        return self.response


def test_fetch_sends_the_same_request_with_trace_and_stamps_the_time():
    gw = FakeGateway()
    req = TraceRequest(bank="fin", query="q", tags=("vendor:V06",), tags_match="all_strict")
    stamp = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    traced = fetch_trace(gw, req, now=lambda: stamp)
    assert traced.fetched_at == stamp
    assert gw.calls == [
        (
            "fin",
            "q",
            {
                "tags": ["vendor:V06"],
                "tags_match": "all_strict",
                "budget": "mid",
                "max_tokens": 4096,
                "trace": True,
                "types": None,
            },
        )
    ]
    exported = json.loads(traced.export_json())
    assert exported["request"]["bank"] == "fin" and exported["fetched_at"].startswith("2026-05-01T12:00")
    assert exported["response"]["trace"]["rrf_merged"][0]["rrf_score"] == traced.response.trace.rrf_merged[0].rrf_score
    assert TracedRecall.model_validate_json(traced.export_json()) == traced


def test_store_is_a_bounded_lru_and_fetches_only_on_a_miss():
    gw = FakeGateway()
    store = TraceStore(capacity=3)
    reqs = [TraceRequest(bank="b", query=f"q{i}") for i in range(5)]
    for r in reqs[:3]:
        store.get_or_fetch(gw, r)
    store.get_or_fetch(gw, reqs[0])  # a hit: no new call, and q0 becomes the most recent
    assert len(gw.calls) == 3
    store.get_or_fetch(gw, reqs[3])  # evicts q1, the least recently used
    assert len(store) == 3 and reqs[1] not in store and reqs[0] in store
    assert [r.query for r in store.requests()] == ["q3", "q0", "q2"]
    store.get_or_fetch(gw, reqs[0], refresh=True)
    assert len(gw.calls) == 5
