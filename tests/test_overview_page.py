"""The Overview: metrics core on plain data, and the page through AppTest (unreachable server; real server)."""

import uuid
from datetime import UTC, date, datetime

import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import demo_data
from dashboard.cli.seed import finance_records, seed_bank, support_records
from dashboard.finance.decisions import exception_decision, precedent_record
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.queue_files import load_rows
from dashboard.reporting import overview as overview_metrics
from dashboard.reporting.recall_log import RecallLog
from dashboard.review.outbox import Outbox
from dashboard.support.models import Ticket
from tests.conftest import APP, free_port

PAGE = "views/overview.py"
CASES = load_rows(demo_data.EXCEPTIONS, ExceptionCase)
TICKETS = load_rows(demo_data.TICKETS, Ticket)


def _decide(outbox: Outbox, bank: str, case: ExceptionCase, rec, *, override: bool, when: datetime, reason: str = "PRICE_AGREED"):
    decision = exception_decision(
        case, rec, reviewer="Dana", authenticated=False, action="override" if override else "approve_recommendation",
        outcome=("approve" if rec.action != "approve" else "reject") if override else None,
        reason_code=reason if override else None, note="n", now=lambda: when,
    )  # fmt: skip
    outbox.record(bank, decision, precedent_record(case, decision, rec))


def test_metrics_core_counts_latest_decision_per_case_in_range(tmp_path):
    from dashboard.finance.policy import Recommendation

    outbox = Outbox(tmp_path / "d.sqlite3")
    rec = Recommendation(action="reject", confidence=0.7, cited=[], rationale="r", policy="precedent")
    e1, e2 = CASES[0], CASES[1]
    _decide(outbox, "fin", e1, rec, override=False, when=datetime(2026, 11, 1, 9, tzinfo=UTC))
    _decide(outbox, "fin", e1, rec, override=True, when=datetime(2026, 11, 2, 9, tzinfo=UTC))  # revised: replaces the first
    _decide(outbox, "fin", e2, rec, override=False, when=datetime(2026, 11, 5, 9, tzinfo=UTC))
    _decide(outbox, "other-bank", e2, rec, override=True, when=datetime(2026, 11, 5, 9, tzinfo=UTC))  # not this bank
    log = RecallLog(samples=3)
    for ms in (10, 20, 30, 40):
        log.add_latency("finance two-stage", ms)
    m = overview_metrics.build(
        history=outbox.history(), bank_for={"exception": "fin", "ticket": "sup"}, cases=CASES, tickets=TICKETS,
        finance_results={}, ticket_results={}, latencies=log.latencies(),
    )  # fmt: skip
    fin = next(a for a in m.agreement if a.kind == "exception")
    assert (m.decisions_in_range, fin.decisions, fin.approved, fin.overridden, fin.rate) == (2, 2, 1, 1, 0.5)
    assert [(o.vendor, o.reason_code, o.count) for o in m.overrides] == [(e1.vendor_code, "PRICE_AGREED", 1)]
    assert m.queues[0].pending_delivery == 2 and m.queues[0].open == len(CASES) - 2 and m.queues[1].open == len(TICKETS)
    assert [(s.kind, s.count, s.p50_ms, s.max_ms) for s in m.latency] == [("finance two-stage", 3, 30.0, 40.0)]  # bounded sample
    only_e2 = overview_metrics.build(
        history=outbox.history(), bank_for={"exception": "fin", "ticket": "sup"}, cases=CASES, tickets=TICKETS,
        finance_results={}, ticket_results={}, latencies=[], start=date(2026, 11, 3), end=date(2026, 11, 30),
    )  # fmt: skip
    assert only_e2.decisions_in_range == 1 and only_e2.overrides == []


def test_crowd_out_summary_says_what_was_not_computed(hindsight, bank_id):
    seed_bank(hindsight.gateway, bank_id, finance_records())
    by_id = {c.id: c for c in CASES}
    results = {}
    for case_id in ("E-1001", "E-1002"):  # E-1001: V01 fills k (pass 2 skipped); E-1002: pass 2 runs
        case = by_id[case_id]
        results[case_id], _ = assess(two_stage_recall(hindsight.gateway.recall, bank_id, CaseKey.of(case), case.recall_query()))
    summary = overview_metrics.crowd_out_summary(CASES, results)
    assert (summary.recalled, summary.checked, summary.unchecked_pass2_skipped) == (2, 1, 1)
    states = {row["case"]: row["state"] for row in summary.per_case}
    assert states["E-1001"] == "pass 2 skipped, not checked" and states["E-1002"] in ("crowd-out prevented", "no crowd-out")


def _texts(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.subheader, *at.caption, *at.info, *at.warning, *at.error, *at.text])


def test_overview_renders_when_hindsight_is_unreachable_and_nothing_is_decided(monkeypatch, tmp_path):
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECALL_REVIEW_API_PORT", str(free_port()))  # nothing listens there
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    text = _texts(at)
    assert "Queue status" in text and "No decision in this date range yet." in text and "Coverage unavailable" in text
    assert {m.label: m.value for m in at.metric}["Decisions in range"] == "0"
    assert at.button(key="overview_recall_all").disabled


def test_overview_with_recalls_and_decisions(hindsight, point_app):
    fin, sup = f"fin-{uuid.uuid4().hex[:8]}", f"sup-{uuid.uuid4().hex[:8]}"
    seed_bank(hindsight.gateway, fin, finance_records())
    seed_bank(hindsight.gateway, sup, support_records())
    outbox = point_app(hindsight.env(finance=fin, support=sup))
    case = next(c for c in CASES if c.id == "E-1002")
    _, rec = assess(two_stage_recall(hindsight.gateway.recall, fin, CaseKey.of(case), case.recall_query()))
    _decide(outbox, fin, case, rec, override=True, when=datetime.now(UTC), reason="CONTRACT_AMENDMENT")

    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    at.button(key="overview_recall_all").click().run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Decisions in range"] == "1" and metrics["Finance agreement"] == "0%"
    assert metrics["Recall p50"].endswith(" ms")
    admitted, rejected = (int(x) for x in metrics["Legacy admitted / rejected"].split(" / "))
    assert admitted >= 2 and rejected >= 1
    text = _texts(at)
    assert f"{len(CASES)} of {len(CASES)} queued cases recalled" in text and f"{len(TICKETS)} of {len(TICKETS)} tickets recalled" in text
    assert "No finance override" not in text and "Coverage unavailable" not in text
    assert len(at.get("plotly_chart")) >= 6
