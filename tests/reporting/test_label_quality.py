"""Relevance labels without a server: the store keeps every click and counts the latest per reviewer, a document
is relevant when most of its reviewers say so, and the label figures per week, vendor, type and segment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.agents.labelled_cases import LabelledCase, labelled_case
from dashboard.finance.kind import FINANCE
from dashboard.reporting.label_quality import case_attributes, label_quality, week_of
from dashboard.review.relevance import RecallContext, RelevanceLabels, case_verdicts
from dashboard.store.agent_runs import AgentRun, AgentRunStore, RecallSnapshot, ResultRef
from dashboard.store.db import make_engine
from dashboard.store.errors import LabelInputError, NotAllowed
from dashboard.support.kind import segments_of
from dashboard.support.models import Customer
from dashboard.traces.ranking import rank_figures
from tests.helpers import demo_case, demo_ticket

CASE = ("fin", "exception", "E-1002")


def test_rank_figures_over_documents():
    figures = rank_figures(["a", "b", "c", "d"], {"b", "d", "z"}, k=3)
    assert (figures.precision, figures.reciprocal_rank, figures.hit, figures.top_k) == (1 / 3, 1 / 2, True, 3)
    miss = rank_figures(["a", "b"], {"c"}, k=5)
    assert (miss.precision, miss.reciprocal_rank, miss.hit, miss.top_k) == (0.0, 0.0, False, 2)
    assert rank_figures([], {"c"}, k=5).precision == 0.0


def test_every_click_is_kept_the_latest_per_reviewer_counts_and_most_reviewers_decide(tmp_path):
    store = RelevanceLabels(make_engine(None, tmp_path))
    exact = RecallContext(
        query="q", tags=["vendor:V02", "type:price_variance"], tags_match="all_strict", ranked=["d1", "d2", "d3"]
    )

    def label(document: str, value: str, who: str, context: RecallContext | None = exact) -> None:
        store.record(*CASE, document, value, role="reviewer", reviewer=who, context=context)

    label("d1", "relevant", "Dana")
    label("d1", "wrong", "Dana")  # a change of mind: a new row
    label("d1", "relevant", "Lee")
    label("d1", "relevant", "Kim")
    label("d2", "relevant", "Dana")
    label("d2", "not_relevant", "Lee")  # one of two: no majority
    label(
        "d3", "relevant", "Dana", RecallContext(query="q", tags=["vendor:V02"], tags_match="any_strict", ranked=["d3"])
    )
    assert len(store.history()) == 7
    latest = store.latest()
    assert len(latest) == 6 and ("d1", "Dana", "wrong") in {(x.document_id, x.reviewer, x.label) for x in latest}
    assert {d: x.label for d, x in store.mine(CASE, "Dana").items()} == {
        "d1": "wrong",
        "d2": "relevant",
        "d3": "relevant",
    }

    [verdict] = case_verdicts(latest)
    assert verdict.votes == {"d1": (2, 3), "d2": (1, 2), "d3": (1, 1)}
    assert verdict.relevant == ["d1", "d3"]
    assert verdict.context().tags_match == "all_strict"  # the request most labelled documents came from


def test_a_viewer_cannot_label_and_a_bad_input_names_its_field(tmp_path):
    store = RelevanceLabels(make_engine(None, tmp_path))
    with pytest.raises(NotAllowed, match="decide needs reviewer"):
        store.record(*CASE, "d1", "relevant", role="viewer", reviewer="Vic")
    with pytest.raises(LabelInputError, match="^label: "):
        store.record(*CASE, "d1", "great", role="reviewer", reviewer="Dana")
    with pytest.raises(LabelInputError, match="^reviewer: "):
        store.record(*CASE, "d1", "relevant", role="reviewer", reviewer="  ")
    assert store.history() == []


def _case(kind: str, case_id: str, ranked: list[str], relevant: list[str], when: datetime) -> LabelledCase:
    return LabelledCase(
        bank_id="b",
        case_kind=kind,
        case_id=case_id,
        source="agent run",
        query="q",
        tags=[],
        tags_match="any",
        ranked=ranked,
        relevant=relevant,
        labelled=sorted(set(ranked) | set(relevant)),
        labels=len(ranked),
        labelled_at=when,
    )


def test_label_quality_per_week_vendor_type_and_segment():
    monday = datetime(2026, 11, 30, 9, tzinfo=UTC)
    customers = [Customer(name="Maria Gonzalez", segment="enterprise")]
    cases = [
        _case("exception", "E-1002", ["a", "b", "c"], ["b"], monday + timedelta(days=2)),  # V02: p 1/3, rr 1/2, hit
        _case("exception", "E-1013", ["d", "e"], ["x"], monday),  # V02: p 0, rr 0, miss
        _case("ticket", "T-2001", ["f"], ["f"], monday + timedelta(days=1)),  # enterprise: p 1, rr 1, hit
        _case("exception", "E-1001", ["g"], ["g"], monday - timedelta(days=3)),  # the week before
    ]
    queued = [demo_case("E-1002"), demo_case("E-1013"), demo_case("E-1001"), demo_case("E-1005")]
    tickets = [demo_ticket("T-2001"), demo_ticket("T-2002")]
    attributes = case_attributes(
        {
            "exception": lambda ids: FINANCE.label_groups(ids, queued),
            "ticket": lambda ids: segments_of(ids, tickets, customers),
        },
        cases,
    )
    assert set(attributes) == {
        ("exception", "E-1002"),
        ("exception", "E-1013"),
        ("exception", "E-1001"),
        ("ticket", "T-2001"),
    }  # the labelled only
    rows = label_quality(cases, attributes, k=5)
    this_week = {(r.by, r.group): r for r in rows if r.week == week_of(monday)}
    everything = this_week[("all", "all")]
    assert (everything.cases, everything.evidence_at_k, everything.relevant) == (3, 2, 3)
    assert everything.precision_at_k == pytest.approx((1 / 3 + 0 + 1) / 3)
    assert everything.mrr == pytest.approx((1 / 2 + 0 + 1) / 3)
    v02 = this_week[("vendor", "V02")]
    assert (v02.cases, v02.evidence_at_k, v02.precision_at_k, v02.mrr) == (
        2,
        1,
        pytest.approx(1 / 6),
        pytest.approx(1 / 4),
    )
    assert (this_week[("type", "price_variance")].cases, this_week[("type", "missing_receipt")].evidence_at_k) == (1, 0)
    assert this_week[("segment", "enterprise")].mrr == 1.0
    assert rows[0].week == week_of(monday) and rows[0].by == "all"  # newest week first, "all" first in a week
    assert [r.cases for r in rows if r.week == week_of(monday - timedelta(days=3))] == [1, 1, 1]


def _snapshot(label: str, tags_match: str, documents: list[str]) -> RecallSnapshot:
    results = [ResultRef(id=d, document_id=d) for d in documents]
    return RecallSnapshot(label=label, query="q", tags=["vendor:V02"], tags_match=tags_match, results=results)


def test_a_cases_request_is_the_agents_recall_that_returned_most_relevant_documents_else_the_dashboards(tmp_path):
    engine = make_engine(None, tmp_path)
    labels, runs = RelevanceLabels(engine), AgentRunStore(engine)
    shown = RecallContext(query="shown", tags=["vendor:V02"], tags_match="all_strict", ranked=["d1", "d2"])
    for document, value in (("d1", "relevant"), ("d3", "not_relevant"), ("d4", "not_relevant")):
        labels.record(*CASE, document, value, role="reviewer", reviewer="Dana", context=shown)
    [verdict] = case_verdicts(labels.latest())
    case = labelled_case(runs, verdict)
    assert (case.source, case.query, case.ranked, case.relevant) == ("dashboard", "shown", ["d1", "d2"], ["d1"])

    now = datetime.now(UTC)
    exact, broader = (
        _snapshot("exact", "all_strict", ["d1", "d2"]),
        _snapshot("broader", "any_strict", ["d3", "d4", "d1"]),
    )
    run = AgentRun(
        run_id="r1",
        bank_id="fin",
        case_kind="exception",
        case_id="E-1002",
        agent="finance",
        variant="reviewed",
        started_at=now,
        ended_at=now,
        audit_log=False,
        recalls=[exact, broader],
    )
    runs.record_run(run)
    case = labelled_case(
        runs, verdict
    )  # both returned the one relevant document: the earlier recall, though the other has more labelled
    assert (case.source, case.tags_match, case.ranked) == ("agent run", "all_strict", ["d1", "d2"])
