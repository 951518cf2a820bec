"""A bad trace request is explained in one plain sentence naming the field, never pydantic's dump ("1 validation
error for TraceRequest ... https://errors.pydantic.dev/..."): the rule on each kind of fault, and the Traces page
(AppTest, no server needed) for an empty query typed into the console and a deep link with a bad field."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dashboard.processes import free_port
from dashboard.traces.request import TraceRequest
from dashboard.traces.request_problem import request_problem
from tests.helpers import open_page

PAGE = "views/traces.py"


def _problem(**fields) -> str:
    with pytest.raises(ValidationError) as caught:
        TraceRequest(**{"bank": "b", "query": "q", **fields})
    return request_problem(caught.value)


def test_each_fault_is_one_plain_sentence_naming_the_field():
    assert _problem(query="") == "Query is empty: fill it in to trace a recall."
    assert _problem(bank="") == "Bank is empty: fill it in to trace a recall."
    assert _problem(query="x" * 4001) == "Query is 4,001 characters long; a trace takes at most 4,000."
    assert _problem(max_tokens=0) == "max_tokens must be at least 1."
    assert (
        _problem(tags_match="some") == "tags_match must be one of 'any', 'all', 'any_strict', 'all_strict' or 'exact'."
    )
    assert (
        _problem(budget="high")
        == "Budget: budget 'high' is above what a trace may cost here; use one of ['low', 'mid']."
    )
    for sentence in (_problem(query=""), _problem(max_tokens=0), _problem(types=("nope",))):
        assert "validation error" not in sentence and "pydantic" not in sentence and "\n" not in sentence


@pytest.fixture
def no_server(monkeypatch, tmp_path):
    """The page with nothing listening where Hindsight would be: a bad request is refused before any call."""
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECALL_REVIEW_API_PORT", str(free_port()))
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_trace_this_recall_with_an_empty_query_names_the_query_field(no_server):
    at = open_page(PAGE)
    at.text_input(key="console_query").input("   ")
    at.form_submit_button[0].click().run()
    assert not at.exception, at.exception
    assert _errors(at) == ["This query cannot be traced. Query is empty: fill it in to trace a recall."]
    assert not [c for c in at.code if "validation error" in c.value or "pydantic" in c.value]


def test_a_link_with_a_bad_field_names_it(no_server):
    at = open_page(PAGE, bank="recall-review-finance", q="price variance", max_tokens="0")
    assert _errors(at)[0] == "This link does not name a recall that can be traced. max\\_tokens must be at least 1."
    assert not [c for c in at.code if "validation error" in c.value]
