"""The Overview: metrics core on plain data, and the page through AppTest (unreachable server; real server,
figures on the first load from the review store's flags, and the same figures after a restart)."""

from datetime import UTC, date, datetime, timedelta

import pytest
import streamlit as st

from dashboard.app import resources
from dashboard.delivery.outbox import Outbox
from dashboard.finance import overview as finance_overview
from dashboard.finance.decisions import document_id_for, exception_decision, precedent_record
from dashboard.finance.flags import keep
from dashboard.finance.policy import Recommendation, assess
from dashboard.finance.recall import DEFAULT_K, CaseKey, check_crowd_out, two_stage_recall
from dashboard.processes import free_port
from dashboard.reporting import overview as overview_metrics
from dashboard.reporting.overview import p95
from dashboard.reporting.recall_log import RecallLog
from dashboard.review.casework import Casework
from dashboard.store.db import upgrade
from dashboard.support.recall import recall_for_ticket
from tests.finance_helpers import CROWD_QUERY, crowding_records, precedent
from tests.helpers import DEMO_CASES as CASES
from tests.helpers import DEMO_TICKETS as TICKETS
from tests.helpers import built_in_overview, exception_case, open_page, record_exception_decision, texts

PAGE = "views/overview.py"


def _decisions_of(outbox: Outbox) -> dict:
    """What the page hands build() of the decision log: the standing decisions counted, and each case's newest state."""
    banks = {"exception": "fin", "ticket": "sup"}
    return {
        "standing": {kind: outbox.standing_counts(bank, kind) for kind, bank in banks.items()},
        "states": {kind: outbox.decision_states(bank, kind) for kind, bank in banks.items()},
    }


def test_metrics_core_counts_latest_decision_per_case_in_range(review_engine):
    outbox = Outbox(review_engine)
    rec = Recommendation(action="reject", confidence=0.7, cited=[], rationale="r", policy="precedent")
    e1, e2 = CASES[0], CASES[1]
    record_exception_decision(outbox, "fin", e1, rec, override=False, when=datetime(2026, 11, 1, 9, tzinfo=UTC))
    record_exception_decision(
        outbox, "fin", e1, rec, override=True, when=datetime(2026, 11, 2, 9, tzinfo=UTC)
    )  # revised: replaces the first
    record_exception_decision(outbox, "fin", e2, rec, override=False, when=datetime(2026, 11, 5, 9, tzinfo=UTC))
    record_exception_decision(
        outbox, "other-bank", e2, rec, override=True, when=datetime(2026, 11, 5, 9, tzinfo=UTC)
    )  # not this bank
    log = RecallLog(samples=3)
    for ms in (10, 20, 30, 40):
        log.add_latency("finance two-stage", ms)
    m = overview_metrics.build(
        **_decisions_of(outbox), **built_in_overview(CASES, TICKETS, ticket_flags={}), latencies=log.latencies()
    )
    fin = next(a for a in m.agreement if a.kind == "exception")
    assert (m.decisions_in_range, fin.decisions, fin.approved, fin.overridden, fin.rate) == (2, 2, 1, 1, 0.5)
    assert [(o.group, o.reason_code, o.count) for o in m.overrides] == [(e1.vendor_code, "PRICE_AGREED", 1)]
    assert [(d.day, d.approved, d.overridden) for d in m.daily] == [
        (date(2026, 11, 2), 0, 1),
        (date(2026, 11, 5), 1, 0),
    ]
    assert overview_metrics.first_decision_day(_decisions_of(outbox)["standing"]) == date(2026, 11, 2)
    assert m.queues[0].pending_delivery == 2 and m.queues[0].open == len(CASES) - 2 and m.queues[1].open == len(TICKETS)
    assert [(s.kind, s.count, s.p50_ms, s.max_ms) for s in m.latency] == [
        ("finance two-stage", 3, 30.0, 40.0)
    ]  # bounded sample
    only_e2 = overview_metrics.build(
        **_decisions_of(outbox),
        **built_in_overview(CASES, TICKETS, ticket_flags={}),
        latencies=[],
        start=date(2026, 11, 3),
        end=date(2026, 11, 30),
    )
    assert only_e2.decisions_in_range == 1 and only_e2.overrides == []


def test_an_override_without_a_vendor_tag_is_counted_under_the_queues_vendor(review_engine):
    outbox = Outbox(review_engine)
    rec = Recommendation(action="reject", confidence=0.7, cited=[], rationale="r", policy="precedent")
    case = CASES[0]
    decision = exception_decision(
        case,
        rec,
        reviewer="Dana",
        authenticated=False,
        action="override",
        outcome="approve",
        reason_code="PRICE_AGREED",
        note="n",
        now=lambda: datetime(2026, 11, 1, 9, tzinfo=UTC),
    )
    untagged = precedent_record(case, decision, rec).model_copy(update={"tags": ["kind:decision"]})
    outbox.record("fin", decision, untagged)
    m = overview_metrics.build(**_decisions_of(outbox), **built_in_overview(CASES, [], ticket_flags={}), latencies=[])
    assert [(o.group, o.reason_code, o.count) for o in m.overrides] == [(case.vendor_code, "PRICE_AGREED", 1)]


def _kept(review_engine, bank: str, results: dict) -> Casework:
    """The cases' finance flags written to the review store as a recall writes them."""
    upgrade(review_engine)
    casework = Casework(review_engine)
    keep(casework, bank, results)
    return casework


def test_crowd_out_summary_says_what_was_and_was_not_computed(hindsight, bank_id, review_engine):
    records = crowding_records()  # VA: 2 precedents a single pass loses to VB's 12
    records += [precedent(f"VC-{i}", "VC", "tax_mismatch") for i in range(2)]  # alone with its type
    records += [precedent(f"VD-{i}", "VD", "duplicate_invoice") for i in range(6)]  # fills k
    hindsight.gateway.retain(bank_id, records)
    crowded, alone = exception_case("E-A", "VA"), exception_case("E-C", "VC", "tax_mismatch")
    full, never = exception_case("E-D", "VD", "duplicate_invoice"), exception_case("E-E", "VE")
    gone = exception_case("E-GONE", "VA")  # measured once, then dropped from the queue: it counts no more
    recall = hindsight.gateway.recall
    results = {
        c.id: two_stage_recall(recall, bank_id, CaseKey.of(c), CROWD_QUERY, k=3) for c in (crowded, alone, full, gone)
    }
    casework = _kept(review_engine, bank_id, results)
    queue = [crowded, alone, full, never]

    def summary():
        flags = casework.queue_flags(bank_id, "exception", [c.id for c in queue])
        assert flags.unmeasured == ["E-E"] and flags.extra == ["E-GONE"]
        return finance_overview.crowd_out_summary(queue, flags.finance(), flags.missed(finance_overview.MISSED_LISTED))

    first = summary()
    assert (first.cases, first.recalled, first.checked, first.unchecked_pass2_skipped) == (4, 3, 2, 1)
    assert (first.prevented, first.precedents_saved) == (1, 2)
    assert [(r["case"], r["exact precedents"], r["lost by a single pass"]) for r in first.missed_cases] == [
        ("E-A", 2, 2)
    ]
    assert finance_overview.crowd_out_states(first) == {
        "saved by the two-step search": 1,
        "nothing lost either way": 1,
        "not checked": 1,
    }
    keep(
        casework, bank_id, {"E-D": check_crowd_out(recall, results["E-D"])}
    )  # the check was asked for: now it is known
    again = summary()
    assert (again.checked, again.unchecked_pass2_skipped, again.prevented) == (3, 0, 1)


def test_overview_renders_when_hindsight_is_unreachable_and_nothing_is_decided(monkeypatch, tmp_path):
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECALL_REVIEW_API_PORT", str(free_port()))  # nothing listens there
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = open_page(PAGE)
    text = texts(at)
    assert "Queue status" in text and "No decision in this date range yet." in text and "Coverage unavailable" in text
    assert {m.label: m.value for m in at.metric}["Decisions in range"] == "0"
    assert at.button(key="overview_recall_all").disabled


def _crowd_caption(at) -> str:
    return next(c.value for c in at.caption if "queued cases measured" in c.value)


def _missed(at) -> set[str]:
    """The cases listed as ones a plain search misses (display-only dataframes have no key in AppTest: found by its
    columns); none listed when there are none."""
    frames = [d.value for d in at.dataframe if "lost by a single pass" in d.value.columns]
    return {case for frame in frames for case in frame["case"]}


def _figures(at) -> tuple[dict[str, str], str, set[str]]:
    return {m.label: m.value for m in at.metric}, texts(at), _missed(at)


def test_overview_shows_figures_on_first_load_and_after_a_restart(
    hindsight, point_app, demo_banks, review_store_url, tmp_path, monkeypatch
):
    gw, fin, sup = hindsight.gateway, demo_banks.finance, demo_banks.support
    from dashboard.store.db import make_engine

    outbox = point_app(
        hindsight.env(finance=fin, support=sup), Outbox(make_engine(review_store_url, tmp_path / "store"))
    )
    case = next(c for c in CASES if c.id == "E-1002")
    _, rec = assess(two_stage_recall(gw.recall, fin, CaseKey.of(case), case.recall_query()))
    record_exception_decision(
        outbox, fin, case, rec, override=True, when=datetime.now(UTC), reason="CONTRACT_AMENDMENT"
    )

    at = open_page(PAGE, timeout=180)  # no button pressed: the first load measures every case no one has measured
    assert outbox.pending_count() == 0
    # what the page must show, computed here with the same recalls on the same bank
    expected = {
        c.id: two_stage_recall(
            gw.recall, fin, CaseKey.of(c), c.recall_query(), k=DEFAULT_K, own_document=document_id_for(c.id)
        )
        for c in CASES
    }
    skipped = {cid for cid, r in expected.items() if r.pass2_skipped}
    assert 0 < len(skipped) < len(CASES)  # the crowd-out check matters on the demo queue
    caught = {cid for cid, r in expected.items() if r.crowd_out is not None and r.crowd_out.crowded_out}
    admitted, rejected = set(), set()
    for t in TICKETS:
        found = recall_for_ticket(gw.recall, sup, t.customer, t.issue)
        admitted |= {e.document_id or e.id for e in found.legacy_admitted}
        rejected |= {e.document_id or e.id for e in found.legacy_rejected if not e.tags}
    rejected -= admitted
    assert admitted and rejected

    metrics, text, missed = _figures(at)
    n = len(CASES)
    assert metrics["Decisions in range"] == "1" and metrics["Finance agreement"] == "0%"
    assert metrics["Exceptions saved"] == str(len(caught)) and len(caught) >= 1
    assert metrics["Old support records used for their customer"] == str(len(admitted))  # records, not judgements
    used = next(m for m in at.metric if m.label == "Old support records used for their customer")
    assert f"{len(rejected)} more were found but set aside" in used.proto.help
    assert (
        f"{n + len(TICKETS)} cases ({n} exceptions, {len(TICKETS)} tickets): 1 decided, {n + len(TICKETS) - 1} open."
        in text
    )
    assert "People overruled the agent on 1 of the 1 decision made in the date range (100%)." in text
    assert f"{n} of {n} queued cases measured" in text and f"{len(TICKETS)} of {len(TICKETS)} tickets measured" in text
    assert f"{len(skipped)} case(s) were not checked: their exact precedents alone filled the list" in _crowd_caption(
        at
    )
    assert missed == caught
    assert "Coverage unavailable" not in text and "n/a" not in text
    assert len(at.get("vega_lite_chart")) >= 6

    # A restart: new process caches, and Hindsight unreachable, so nothing can be recalled: the same figures, from the store.
    monkeypatch.setenv("RECALL_REVIEW_API_PORT", str(free_port()))
    st.cache_resource.clear()
    st.cache_data.clear()
    again = open_page(PAGE, timeout=120)
    metrics2, text2, missed2 = _figures(again)
    assert {k: v for k, v in metrics2.items() if k != "Support records with a customer tag"} == {
        k: v for k, v in metrics.items() if k != "Support records with a customer tag"
    }
    assert missed2 == missed and f"{n} of {n} queued cases measured" in text2
    assert "No recall made by this server process since it started" in text2


def test_overview_recall_all_with_the_crowd_out_check_measures_every_case(hindsight, point_app, demo_banks_read_only):
    gw, fin = hindsight.gateway, demo_banks_read_only.finance
    point_app(hindsight.env(finance=fin, support=demo_banks_read_only.support))
    at = open_page(PAGE, timeout=180)
    today = date.today()
    assert at.date_input(key="overview_period").value == (
        today - timedelta(days=30),
        today,
    )  # nothing decided: the last 30 days
    checked = {
        c.id: check_crowd_out(
            gw.recall, two_stage_recall(gw.recall, fin, CaseKey.of(c), c.recall_query(), k=DEFAULT_K)
        ).crowd_out
        for c in CASES
    }
    at.checkbox(key="overview_check_all").check().run()
    at.button(key="overview_recall_all").click().run()
    assert not at.exception, at.exception
    n = len(CASES)
    assert (
        f"{n} checked against one search over this vendor or this type, which lets other records outrank the exact precedents. 0 case(s) were not checked"
        in _crowd_caption(at)
    )
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Exceptions saved"] == str(sum(co.crowded_out for co in checked.values()))
    assert _missed(at) == {cid for cid, co in checked.items() if co.crowded_out}


def test_p95_interpolates_between_samples():
    assert p95([7.0]) == 7.0
    assert p95(list(range(1, 101))) == pytest.approx(95.05)
    assert p95([10.0, 20.0]) == pytest.approx(19.5)


def test_a_bank_the_server_does_not_know_is_not_measured_on_each_visit(hindsight, point_app, demo_banks_read_only):
    """The support bank not created yet: the page says so and measures the exceptions, and no visit asks for its tickets."""
    point_app(hindsight.env(finance=demo_banks_read_only.finance, support="no-such-support-bank"))
    at = open_page(PAGE, timeout=180)
    assert not at.exception, at.exception
    text = texts(at)
    assert "no-such-support-bank: not reachable" in text
    assert (
        f"{len(CASES)} of {len(CASES)} queued cases measured" in text
        and f"0 of {len(TICKETS)} tickets measured" in text
    )
    assert {s.kind for s in resources.recall_log().latencies()} == {
        "finance"
    }  # not one ticket recall refused by the server
