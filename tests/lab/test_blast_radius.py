"""Blast radius before a knob changes: the decided cases whose exact evidence or recommendation a what-if would
change, each with its case link: the comparison (pure), the demo queue on the real server, the lab page."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from dashboard import demo_data
from dashboard.delivery.outbox import Outbox
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.lab.ab import CaseDiff, Variant, compare
from dashboard.lab.blast_radius import decided_changes
from dashboard.lab.fix_reach import altered, fix_report
from dashboard.lab.whatif import WhatIf
from dashboard.queue_files import load_rows
from dashboard.traces.request import TraceRequest, fetch_trace
from dashboard.traces.scoring import server_knobs
from dashboard.traces.why_not import explain, load_document
from tests.conftest import APP, shared_demo_of
from tests.finance_helpers import precedent
from tests.helpers import demo_case, record_exception_decision

CASES = load_rows(demo_data.EXCEPTIONS, ExceptionCase)
# With the keyword arm alone, a precedent sharing no word with its case's query has no score left (see
# test_lab_whatif): V12's second precedent says what E-1015 says in other words, so E-1015 loses it.
V12 = [
    precedent(
        "PREC-V12-PRI-01",
        "V12",
        "price_variance",
        "approve",
        text="Brightline Freight linehaul billed above the quoted lane rate: approved.",
    ),
    precedent(
        "PREC-V12-PRI-02",
        "V12",
        "price_variance",
        "reject",
        text="Haulage charges invoiced over agreed route tariff: declined.",
    ),
]
KEYWORDS_ONLY = WhatIf.parse("semantic=0,graph=0,temporal=0")


def _diff(case_id: str, exact_a, exact_b, rec_a="approve", rec_b="approve", kind="exception", error=None) -> CaseDiff:
    return CaseDiff(
        case_id,
        kind,
        gained=sorted(set(exact_b) - set(exact_a)),
        lost=sorted(set(exact_a) - set(exact_b)),
        recommendation_a=rec_a,
        recommendation_b=rec_b,
        legacy_gained=[],
        legacy_lost=[],
        latency_a_ms=0,
        latency_b_ms=0,
        error=error,
        exact_a=exact_a,
        exact_b=exact_b,
    )


def test_only_decided_exceptions_whose_evidence_or_recommendation_changes_are_listed():
    diffs = [
        _diff("E-1", ["P1", "P2"], ["P1", "P3"]),  # decided, evidence changes
        _diff("E-2", ["P1"], ["P1"], "escalate", "approve"),  # decided, recommendation changes
        _diff("E-3", ["P1"], ["P2"]),  # changes, but nobody decided it
        _diff("E-4", ["P1"], ["P1"]),  # decided, unchanged
        _diff("E-5", [], [], error="the recall failed"),  # decided, could not be compared
        _diff("T-1", [], [], None, None, kind="ticket"),
    ]
    changes = decided_changes(diffs, {"E-1", "E-2", "E-4", "E-5", "T-1"})
    assert [c.case_id for c in changes] == ["E-1", "E-2"]
    assert changes[0].link == "/exceptions?case=E-1" and changes[0].sentence == "exact evidence P1, P2 -> P1, P3"
    assert changes[1].sentence == "recommendation escalate -> approve"
    assert changes[0].row()["case"] == "/exceptions?case=E-1"


def _decide(outbox: Outbox, gw, bank: str, *case_ids: str) -> None:
    """Record (not deliver: the bank stays as it is) a reviewer's approval of each case's recommendation."""
    for case_id in case_ids:
        case = demo_case(case_id)
        _, rec = assess(two_stage_recall(gw.recall, bank, CaseKey.of(case), case.recall_query()))
        record_exception_decision(outbox, bank, case, rec)


def test_a_whatif_on_the_demo_queue_lists_the_decided_case_it_changes_and_no_other(hindsight, demo_banks, tmp_path):
    gw = hindsight.gateway
    gw.retain(demo_banks.finance, V12)
    outbox = Outbox(tmp_path / "decisions.sqlite3")
    _decide(outbox, gw, demo_banks.finance, "E-1015", "E-1002")
    decided = outbox.decided_cases(demo_banks.finance, "exception")
    assert decided == {"E-1015", "E-1002"}

    report = compare(
        gw,
        demo_banks.finance,
        demo_banks.support,
        CASES,
        [],
        Variant(name="a"),
        Variant(name="b", kind="whatif", whatif=KEYWORDS_ONLY),
    )
    changes = decided_changes(report.diffs, decided)
    assert [c.case_id for c in changes] == ["E-1015"], [c.sentence for c in changes]
    e1015 = changes[0]
    assert "PREC-V12-PRI-02" in e1015.exact_before and "PREC-V12-PRI-02" not in e1015.exact_after
    assert e1015.link == "/exceptions?case=E-1015" and "exact evidence " in e1015.sentence
    undecided = [d.case_id for d in report.diffs if d.changed and d.case_id not in decided]
    assert not set(undecided) & {c.case_id for c in changes}


def test_the_lab_page_lists_the_decided_cases_a_whatif_would_change_with_links(point_app, hindsight, demo_banks):
    hindsight.gateway.retain(demo_banks.finance, V12)
    outbox = point_app(hindsight.env(finance=demo_banks.finance, support=demo_banks.support))
    _decide(outbox, hindsight.gateway, demo_banks.finance, "E-1015", "E-1002")
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("views/traces.py").run()
    at.text_input(key="console_query").input("price variance for vendor V12")
    at.form_submit_button[0].click().run()
    at.radio(key="ab_kind").set_value("a what-if setting (predicted)").run()
    for arm in ("semantic", "graph", "temporal"):
        at.selectbox(key=f"ab_b_w_{arm}").set_value(0.0).run()
    at.button(key="ab_run").click().run()
    assert not at.exception, at.exception
    texts = [t.value for t in at.text]
    assert "Decided cases B would change: 1" in texts
    assert any(t.startswith("E-1015: exact evidence ") for t in texts)  # what changes, wrapped plain text
    table = next(d.value for d in at.dataframe if "exact before" in d.value.columns)
    assert list(table["case"]) == ["/exceptions?case=E-1015"]
    assert "PREC-V12-PRI-02" in table.iloc[0]["exact before"] and "PREC-V12-PRI-02" not in table.iloc[0]["exact after"]


def test_a_why_not_fix_that_is_a_server_setting_lists_the_decided_cases_it_would_change(hindsight, tmp_path):
    banks = shared_demo_of(hindsight)  # read only: the decisions below are recorded, not delivered
    gw = hindsight.gateway
    case = demo_case("E-1004")
    request = TraceRequest(
        bank=banks.finance, query=case.recall_query(), tags=tuple(case.tags), tags_match="all_strict"
    )
    trace = fetch_trace(gw, request)
    last = max(trace.response.trace.rrf_merged, key=lambda c: c.final_rrf_rank)  # its last exact precedent by fusion
    document = load_document(gw, banks.finance, trace.labels[last.node_id].document_id)
    # A server handing its reranker one candidate loses it (see test_why_not); the fix is a server setting.
    knobs = server_knobs(reranker_max_candidates=1)
    answer = explain(gw, request, document, 5, knobs)
    assert any(c.server_wide for c in answer.changes)
    outbox = Outbox(tmp_path / "decisions.sqlite3")
    queue = [demo_case(i) for i in ("E-1002", "E-1004", "E-1005")]
    report = fix_report(gw, banks.finance, banks.support, queue, [], knobs, answer)
    assert "E-1004" in altered(report)  # one candidate per recall leaves it one exact precedent of several
    _decide(outbox, gw, banks.finance, "E-1004")
    changes = decided_changes(report.diffs, outbox.decided_cases(banks.finance, "exception"))
    assert [c.case_id for c in changes] == ["E-1004"]
    assert len(changes[0].exact_before) < len(changes[0].exact_after) and changes[0].link == "/exceptions?case=E-1004"
