"""Live traces from the real Hindsight server: the replay must equal its rrf_merged exactly."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dashboard.hindsight.wire import MemoryRecord
from dashboard.traces.analysis import analyse
from dashboard.traces.replay import ReplaySettings, diff_top_k, replay
from dashboard.traces.request import TraceRequest, fetch_trace

VENDORS = ["V01", "V02", "V06", "V07"]
KINDS = [
    ("price_variance", "invoice {inv} shows unit price above the contract price, a {p}% price variance"),
    ("late_delivery", "order PO-{inv} was delivered {p} days late; the warehouse noted the delay"),
    ("quantity_mismatch", "invoice {inv} bills {p} more units than the goods receipt shows"),
]


def records() -> list[MemoryRecord]:
    out = []
    for i in range(36):
        vendor = VENDORS[i % len(VENDORS)]
        kind, template = KINDS[i % len(KINDS)]
        month = 1 + i % 6
        out.append(
            MemoryRecord(
                document_id=f"live-{i:02d}",
                content=f"Vendor {vendor} " + template.format(inv=1000 + i, p=2 + i % 9) + f" (2026-{month:02d}).",
                tags=[f"vendor:{vendor}", f"type:{kind}"],
                timestamp=datetime(2026, month, 3 + i % 20, 9, 0, tzinfo=UTC),
            )
        )
    return out


QUERIES = [
    TraceRequest(bank="-", query="price variance above contract price"),
    TraceRequest(bank="-", query="which vendor delivered late?", budget="low"),
    TraceRequest(bank="-", query="V06 price variance", tags=("vendor:V06",), tags_match="any_strict"),
    TraceRequest(
        bank="-",
        query="invoice units goods receipt",
        tags=("vendor:V01", "type:quantity_mismatch"),
        tags_match="all_strict",
    ),
    TraceRequest(bank="-", query="price variance in March 2026"),  # names a date: the temporal arm runs
    TraceRequest(bank="-", query="late deliveries between February 2026 and April 2026", types=("world",)),
]


@pytest.fixture(scope="module")
def live_bank(hindsight):
    bank = f"trace-live-{datetime.now(UTC):%H%M%S%f}"
    hindsight.gateway.ensure_bank(bank)
    hindsight.gateway.retain(bank, records())
    return bank


@pytest.mark.parametrize("request_", QUERIES, ids=lambda r: r.query[:30])
def test_replay_equals_the_live_servers_rrf_merged(hindsight, live_bank, request_):
    traced = fetch_trace(hindsight.gateway, request_.model_copy(update={"bank": live_bank}))
    trace = traced.response.trace
    assert trace is not None and trace.rrf_merged, "the server returned no fused candidates"
    result = replay(trace)
    got = [(c.node_id, c.rrf_score, c.source_ranks, c.rrf_rank) for c in result.merged]
    expected = [(c.node_id, c.rrf_score, c.source_ranks.as_dict(), c.final_rrf_rank) for c in trace.rrf_merged]
    assert got == expected
    assert not diff_top_k(trace, result).changed
    analysis = analyse(traced.response)
    assert analysis.pre_filtered == len(result.pre_filtered) == 0
    assert {r.node_id for r in analysis.rows if r.returned} == {m.id for m in traced.response.results}


def test_a_query_that_names_a_date_runs_the_temporal_arm(hindsight, live_bank):
    traced = fetch_trace(hindsight.gateway, TraceRequest(bank=live_bank, query="price variance in March 2026"))
    trace = traced.response.trace
    lists = [r for r in trace.retrieval_results if r.method_name == "temporal"]
    assert lists and sum(len(r.results) for r in lists) > 0
    assert any("temporal_rank" in c.source_ranks.model_dump(exclude_none=True) for c in trace.rrf_merged)
    assert [c.node_id for c in replay(trace).merged] == [c.node_id for c in trace.rrf_merged]
    assert analyse(traced.response).temporal_ran


def test_live_reranker_cap_prefilters_like_the_server_would(hindsight, live_bank):
    """With a small reranker cap the replay cuts exactly the tail of the server's RRF order."""
    trace = fetch_trace(
        hindsight.gateway, TraceRequest(bank=live_bank, query="price variance above contract price")
    ).response.trace
    n = len(trace.rrf_merged)
    assert n > 5
    result = replay(trace, ReplaySettings(reranker_max_candidates=5))
    assert [c.node_id for c in result.kept] == [c.node_id for c in trace.rrf_merged[:5]]
    assert len(result.pre_filtered) == n - 5
