"""The Traces page and its query console, through AppTest, against the real server."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from streamlit.testing.v1 import AppTest

from components.trace_link import trace_url
from dashboard.hindsight.wire import MemoryRecord
from dashboard.traces.request import TraceRequest
from tests.conftest import APP
from tests.helpers import DEMO_CASES, DEMO_TICKETS, open_page, texts

PAGE = "views/traces.py"
INJECTION = "![x](http://attacker.invalid/p.png) <img src=x onerror=alert(1)> **bold**"


@pytest.fixture(scope="module")
def trace_bank(hindsight):
    bank = f"trace-page-{datetime.now(UTC):%H%M%S%f}"
    hindsight.gateway.ensure_bank(bank)
    texts = [
        "Vendor V06 invoice INV-1007 shows bolts at 0.55 each against a contracted 0.50, a 10% price variance.",
        "Vendor V06 invoice INV-1011 price variance on washers, approved after the contract was checked.",
        "Vendor V07 delivered order PO-553 nine days late; warehouse noted the delay.",
        "Vendor V01 quantity mismatch: invoice bills 20 more units than received.",
        f"Vendor V06 price variance note {INJECTION}",
    ]
    records = [
        MemoryRecord(
            document_id=f"tp-{i}",
            content=t,
            tags=["vendor:" + t.split()[1]],
            timestamp=datetime(2026, 3, 2 + i, tzinfo=UTC),
        )
        for i, t in enumerate(texts)
    ]
    hindsight.gateway.retain(bank, records)
    return bank


def frame_with(at: AppTest, column: str):
    """The first dataframe that has `column` (AppTest does not expose a display dataframe's key)."""
    return next(df.value for df in at.dataframe if column in df.value.columns)


def app(point_app, hindsight, bank: str) -> AppTest:
    point_app(hindsight.env(finance=bank))
    return open_page(PAGE)


def test_console_runs_a_query_and_shows_the_trace(point_app, hindsight, trace_bank):
    at = app(point_app, hindsight, trace_bank)
    assert not at.exception, at.exception
    assert "Run a query above" in at.info[0].value
    assert at.selectbox(key="console_bank").value == trace_bank  # the configured banks only
    assert at.selectbox(key="console_bank").options == [trace_bank, "recall-review-support"]
    at.text_input(key="console_query").input("V06 price variance in March 2026")
    at.text_input(key="console_tags").input("vendor:V06")
    at.selectbox(key="console_match").select("any_strict")
    at.form_submit_button[0].click().run()
    assert not at.exception, at.exception

    assert at.query_params["bank"] == [trace_bank] or at.query_params["bank"] == trace_bank
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Results returned"] == "3"  # the three V06 memories (any_strict excludes untagged)
    assert metrics["Pre-filtered before rerank"] == "0"
    results = frame_with(at, "single_arm")
    assert len(results) == 3 and set(results["returned"]) == {True}
    assert {"semantic_rank", "bm25_rank", "temporal_rank", "semantic_rrf", "single_arm"} <= set(results.columns)
    # memory text only in a dataframe: no markdown element carries it
    assert any(INJECTION in t for t in results["text"])
    assert not any("attacker.invalid" in m.value for m in at.markdown)
    # what-if with the server's settings changes nothing
    assert {m.label: m.value for m in at.metric}["Entered the top k"] == "0"
    assert any("unchanged" in t.value for t in at.text)
    # the export is the trace, stamped
    store = at.session_state["trace_store"]
    assert len(store) == 1
    traced = store.requests()[0]
    assert traced.tags == ("vendor:V06",) and traced.tags_match == "any_strict"


def test_deep_link_opens_a_trace_and_what_if_cap_changes_the_top_k(point_app, hindsight, trace_bank):
    request = TraceRequest(bank=trace_bank, query="price variance invoice", tags_match="any")
    point_app(hindsight.env(finance=trace_bank))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.query_params.update(request.to_query_params())
    at = at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.text_input(key="console_query").value == "price variance invoice"
    # The link alone runs nothing: the request is shown, and a person presses the button.
    assert not at.metric and "trace_store" in at.session_state and len(at.session_state["trace_store"]) == 0
    at.button(key="trace_run").click().run()
    assert not at.exception, at.exception
    fused = int({m.label: m.value for m in at.metric}["Candidates fused"])
    assert fused >= 3

    # keep each text arm's best candidate only, switch the other arms off, compare every candidate
    for source in ("semantic", "bm25"):
        at.number_input(key=f"whatif_cap_{source}").set_value(1)
    for source in ("graph", "temporal"):
        at.number_input(key=f"whatif_weight_{source}").set_value(0.0)
    at.number_input(key="whatif_top_k").set_value(fused)
    at.form_submit_button[1].click().run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    replay_fused = int(metrics["Candidates fused"])
    assert 1 <= replay_fused <= 2
    assert (int(metrics["Left the top k"]), int(metrics["Entered the top k"])) == (fused - replay_fused, 0)
    topk = frame_with(at, "replay_rrf_rank")
    assert "left" in set(topk["status"])
    shares = frame_with(at, "candidates (replay)").set_index("source")
    assert shares.loc["semantic", "candidates (replay)"] == 1


def test_a_bad_deep_link_says_so(point_app, hindsight, trace_bank):
    point_app(hindsight.env(finance=trace_bank))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.query_params.update({"bank": trace_bank, "q": "x", "match": "most"})
    at = at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert "does not name a recall" in at.error[0].value


def test_trace_url_is_the_deep_link():
    url = trace_url(TraceRequest(bank="fin", query="late in March", tags=("vendor:V07",)), base="http://host:8501/")
    assert url == "http://host:8501/traces?bank=fin&q=late+in+March&tag=vendor%3AV07"
    assert json.loads(TraceRequest(bank="b", query="q").key())["bank"] == "b"


def open_linked(point_app, hindsight, demo_banks_read_only, request: TraceRequest, **case: str) -> AppTest:
    point_app(hindsight.env(finance=demo_banks_read_only.finance, support=demo_banks_read_only.support))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.query_params.update({**request.to_query_params(), **case})
    at = at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def test_opened_from_a_case_the_verdict_counts_its_exact_precedents_and_links_back(
    point_app, hindsight, demo_banks_read_only
):
    case = DEMO_CASES[0]
    request = TraceRequest(bank=demo_banks_read_only.finance, query=case.recall_query())  # untagged: every arm competes
    at = open_linked(point_app, hindsight, demo_banks_read_only, request, case=case.id)
    back = next(link for link in at.page_link if link.value.startswith("Back to case"))
    assert back.proto.page.endswith("exceptions") and back.proto.query_string == f"case={case.id}"
    at.button(key="trace_run").click().run()
    assert not at.exception, at.exception

    traced = at.session_state["trace_store"].get(request)
    exact_tags = {f"vendor:{case.vendor_code}", f"type:{case.exception_type}"}
    top = traced.response.results[:10]
    exact_in_top = sum(exact_tags <= set(m.tags) for m in top)
    fused = [c.node_id for c in traced.response.trace.rrf_merged]
    exact_total = sum(exact_tags <= set(traced.labels[n].tags) for n in fused)
    assert exact_total >= 1  # V01's price-variance precedents are in the pool (other vendors may crowd the top)
    sentence = at.info[0].value.replace("\\", "")  # escaped for markdown: read it as the screen shows it
    assert " % of the top-10 score; " in sentence and sentence.split(" supplied ")[0] in {
        "The meaning-match arm (semantic)",
        "The keyword arm (BM25)",
        "The linked-memories arm (graph)",
        "The date arm (temporal)",
    }
    assert (
        f"{exact_in_top} of the top 10 are this case's exact precedents ({exact_total} among all candidates)"
        in sentence
    )
    # candidates by document id, the exact ones marked, no memory id shown as a name
    results = frame_with(at, "candidate")
    assert {m.document_id for m in top} <= set(results["candidate"])
    assert not any(c.startswith("memory ") for c in results["candidate"])  # every candidate was named
    assert results["exact"].sum() == sum(exact_tags <= set(traced.labels[n].tags) for n in results["node_id"])
    assert "Error" not in texts(at) and "Exception" not in texts(at)


def test_opened_from_a_ticket_it_links_back_to_the_ticket(point_app, hindsight, demo_banks_read_only):
    ticket = DEMO_TICKETS[0]
    request = TraceRequest(bank=demo_banks_read_only.support, query=ticket.issue)
    at = open_linked(point_app, hindsight, demo_banks_read_only, request, ticket=ticket.id)
    back = next(link for link in at.page_link if link.value.startswith("Back to ticket"))
    assert back.proto.page.endswith("tickets") and back.proto.query_string == f"ticket={ticket.id}"
    # an id the queue does not hold gives no link and no focus
    at = open_linked(point_app, hindsight, demo_banks_read_only, request, case="E-9999")
    assert not [link for link in at.page_link if link.value.startswith("Back to")]


def test_opened_from_t2004_it_stars_the_old_records_the_ticket_admits_and_why_not_says_whose(
    point_app, hindsight, demo_banks_read_only
):
    """T-2004's page admits SUP-L-001 and SUP-L-002 by their first sentence: the trace of its candidate search stars
    exactly those of the customer's, says how, and "Why not this one?" calls them Ann Lee's by the same rule."""
    from dashboard.support.recall import recall_for_ticket
    from tests.helpers import demo_ticket

    ticket, bank = demo_ticket("T-2004"), demo_banks_read_only.support
    found = recall_for_ticket(
        hindsight.gateway.recall, bank, ticket.customer, ticket.issue, read_document=hindsight.gateway.document
    )
    sent = found.requests[1]  # the candidate search the page links to
    request = TraceRequest(
        bank=bank, query=sent.query, tags=tuple(sent.tags), tags_match=sent.tags_match, max_tokens=sent.max_tokens
    )
    at = open_linked(point_app, hindsight, demo_banks_read_only, request, ticket=ticket.id)
    at.button(key="trace_run").click().run()
    assert not at.exception, at.exception
    results = frame_with(at, "candidate")
    starred = dict(zip(results[results["exact"]]["candidate"], results[results["exact"]]["why starred"], strict=True))
    assert set(starred) == {"SUP-L-001", "SUP-L-002"}, starred  # Ann Lee's only records in the bank, both old
    assert all(why.startswith("by its first sentence") for why in starred.values())
    traced = at.session_state["trace_store"].get(request)
    in_top = sum(1 for m in traced.response.results[:10] if m.document_id in starred)
    assert in_top >= 1 and f"{in_top} of the top 10 are this customer's own records" in at.info[0].value.replace(
        "\\", ""
    )

    at.text_input(key="why_not_search").input("SUP-L-002").run()
    at.button(key="why_not_run").click().run()
    assert not at.exception, at.exception
    assert "SUP-L-002 is Ann Lee's own record, by its first sentence" in texts(at)
