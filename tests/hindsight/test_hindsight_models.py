"""The recall response and trace models parse every recorded response of Hindsight 1.1.0."""

import json

import pytest

from dashboard.hindsight.wire import RecallResponse, tag_value
from tests.conftest import FIXTURES

FIXTURE_FILES = sorted(FIXTURES.glob("*.json"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_recorded_response_parses(path):
    raw = json.loads(path.read_text())
    response = RecallResponse.model_validate(raw)
    assert [r.id for r in response.results] == [r["id"] for r in raw["results"]]
    trace = response.trace
    assert trace is not None and trace.query.query_text == raw["trace"]["query"]["query_text"]
    assert len(trace.rrf_merged) == len(raw["trace"]["rrf_merged"])
    assert {r.method_name for r in trace.retrieval_results} <= {"semantic", "bm25", "graph", "temporal"}
    for candidate, original in zip(trace.rrf_merged, raw["trace"]["rrf_merged"]):
        assert candidate.source_ranks.as_dict() == {
            k.removesuffix("_rank"): v for k, v in original["source_ranks"].items() if v is not None
        }


def test_tag_value_reads_the_first_tag_with_exactly_that_prefix():
    tags = ["vendorx:V9", "type:price_variance", "vendor:V06", "vendor:V07"]
    assert tag_value(tags, "vendor") == "V06" and tag_value(tags, "type") == "price_variance"
    assert tag_value(tags, "kind") is None and tag_value([], "vendor") is None
