"""The per-case flags as plain functions: finance (counts, recommendation, crowd-out), tickets (path, legacy
records named once), incident kinds per case, the queue cells, and the Overview's figures over them. The
results are built with a recall double; test_case_flags.py proves the same flags on the real server."""

from datetime import UTC, date, datetime

from dashboard.agents.incidents import CaseIncidents, Incident, by_case, incident_text, kinds_by_case
from dashboard.finance import queue as exception_queue
from dashboard.finance.flags import FinanceFlags, finance_flags, keep_crowd_out, stored
from dashboard.finance.recall import CaseKey, check_crowd_out, two_stage_recall
from dashboard.reporting import overview
from dashboard.reporting.headline import headline
from dashboard.review.flag_counts import FinanceCounts, IncidentCounts
from dashboard.store.agent_runs import AgentRun
from dashboard.support.flags import TicketFlags, history_used, ticket_flags
from dashboard.support.overview import legacy_summary
from dashboard.support.recall import TicketEvidence, TicketRecall
from tests.finance_helpers import CROWD_QUERY, PROVEN, FakeRecall, crowding_records, precedent, signed
from tests.helpers import DEMO_TICKETS, built_in_overview, exception_case

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def test_finance_flags_count_exact_and_relevant_records_and_carry_the_recommendation_and_crowd_out():
    # VA: 2 rejecting precedents; VB's 12 of the same type rank first and fill a single any_strict pass
    records = [signed(r, "seed", None) for r in crowding_records()]  # the demo seed's, signed: a known origin
    recall = FakeRecall([r for r in records if "vendor:VB" in r.tags] + [r for r in records if "vendor:VA" in r.tags])
    result = two_stage_recall(recall, "b", CaseKey(vendor_code="VA", exception_type="price_variance"), CROWD_QUERY, k=3)
    flags = finance_flags(result, PROVEN)
    assert (flags.k, flags.exact, flags.broader, flags.relevant) == (3, 2, 1, 2)
    assert (flags.action, flags.policy, flags.crowd_out_lost) == (
        "reject",
        "precedent",
        2,
    )  # pass 2 ran: checked for free
    assert flags.exact_ids == [r.id for r in result.exact] and flags.crowd_out == "2 exact precedent(s)"
    assert stored({"recall": flags.model_dump(mode="json")}) == flags  # what the store holds reads back the same
    assert stored(None) is None and stored({"incidents": []}) is None and stored({"recall": {"k": "x"}}) is None


def test_a_recall_made_again_without_the_check_keeps_the_earlier_check_while_the_exact_evidence_is_the_same():
    recall = FakeRecall([precedent(f"P-{i}", "VD", "duplicate_invoice") for i in range(6)])
    key = CaseKey(vendor_code="VD", exception_type="duplicate_invoice")
    unchecked = finance_flags(two_stage_recall(recall, "b", key, "q", k=3))  # pass 1 filled k: no check
    assert unchecked.crowd_out_lost is None and unchecked.crowd_out == "not checked"
    checked = finance_flags(check_crowd_out(recall, two_stage_recall(recall, "b", key, "q", k=3)))
    assert checked.crowd_out_lost == 0 and checked.crowd_out == "none"
    assert keep_crowd_out(unchecked, checked).crowd_out_lost == 0  # the cache expired: the check is not forgotten
    assert keep_crowd_out(unchecked, None).crowd_out_lost is None
    moved = unchecked.model_copy(update={"exact_ids": ["another"]})
    assert keep_crowd_out(moved, checked).crowd_out_lost is None  # other evidence: the old check no longer holds
    assert (
        keep_crowd_out(checked.model_copy(update={"crowd_out_lost": 1}), checked).crowd_out_lost == 1
    )  # a new check wins


def _evidence(ref: str, admitted: bool, verdict: str, tags=()) -> TicketEvidence:
    return TicketEvidence(
        id=ref, document_id=ref, text="t", tags=list(tags), admitted=admitted, verdict=verdict, reason="r"
    )


def test_ticket_flags_name_the_legacy_records_not_the_judgements():
    legacy = TicketRecall(
        customer="Ann Lee",
        tag="customer:ann-lee",
        path="legacy",
        legacy_admitted=[_evidence("SUP-L-001", True, "admitted")],
        legacy_rejected=[
            _evidence("SUP-L-002", False, "other_customer_marker"),
            _evidence("SUP-T-001", False, "tagged_for_other", ["customer:bo"]),
        ],
    )
    flags = ticket_flags(legacy)
    assert (flags.path, flags.admitted, flags.rejected, flags.tagged_candidates) == (
        "legacy",
        ["SUP-L-001"],
        {"SUP-L-002": "other_customer_marker"},
        ["SUP-T-001"],
    )
    assert history_used(flags) == "legacy (1 admitted)" and history_used(None) == ""
    tagged = ticket_flags(
        TicketRecall(customer="Bo", tag="customer:bo", path="tagged", tagged=[_evidence("SUP-T-001", True, "admitted")])
    )
    assert history_used(tagged) == "tagged (1 document)" and history_used(TicketFlags(path="none", tagged=0)) == "none"

    # Ann Leeds' ticket rejects Ann Lee's record and admits her own: each record is counted once
    leeds = TicketFlags(
        path="legacy",
        tagged=0,
        admitted=["SUP-L-002"],
        rejected={"SUP-L-001": "other_customer_marker", "SUP-L-009": "no_marker"},
    )
    none = TicketFlags(path="none", tagged=0, rejected={"SUP-L-009": "no_marker"})
    tickets = [type("T", (), {"id": i})() for i in ("T-1", "T-2", "T-3", "T-4")]
    summary = legacy_summary(tickets, {"T-1": flags, "T-2": leeds, "T-3": none})
    assert (summary.recalled, summary.paths, summary.admitted, summary.rejected) == (3, {"legacy": 2, "none": 1}, 2, 1)
    assert summary.rejected_by_reason == {"no_marker": 1} and summary.tagged_candidates == 1


def _run(case_kind: str, case_id: str) -> AgentRun:
    return AgentRun(
        run_id=case_id,
        bank_id="b",
        case_kind=case_kind,
        case_id=case_id,
        agent="support" if case_kind == "ticket" else "finance",
        variant="naive",
        started_at=T0,
        ended_at=T0,
        audit_log=True,
    )


def _incident(kind: str, case_kind: str, case_id: str) -> Incident:
    return Incident(
        kind=kind,
        case_kind=case_kind,
        case_id=case_id,
        run_id=case_id,
        agent="x",
        variant="naive",
        bank_id="b",
        at=T0,
        summary="s",
    )


def test_incident_kinds_per_case_and_their_queue_cells():
    runs = [_run("exception", "E-1"), _run("exception", "E-2"), _run("ticket", "T-1")]
    found = [
        _incident("crowded_out", "exception", "E-1"),
        _incident("non_relevant_citation", "exception", "E-1"),
        _incident("crowded_out", "exception", "E-1"),
        _incident("other_customer", "ticket", "T-1"),
    ]
    kinds = kinds_by_case(runs, found)
    assert kinds == {
        ("b", "exception", "E-1"): ["crowded_out", "non_relevant_citation"],
        ("b", "exception", "E-2"): [],
        ("b", "ticket", "T-1"): ["other_customer"],
    }
    assert incident_text({"incidents": kinds[("b", "exception", "E-1")]}) == "crowd-out, cites another vendor or type"
    assert (
        incident_text({"incidents": []}) == "none" and incident_text({"recall": {}}) == "" and incident_text(None) == ""
    )
    summary = overview.incident_summary(
        {
            "exception": IncidentCounts(2, 1, (("crowded_out", 1), ("non_relevant_citation", 1))),
            "ticket": IncidentCounts(1, 1, (("other_customer", 1),)),
        },
        found=by_case(runs, found).values(),
    )
    assert (summary.checked, summary.cases, summary.leaks) == (3, 2, 1)
    assert summary.by_kind == {"crowded_out": 1, "non_relevant_citation": 1, "other_customer": 1}


def test_queue_table_shows_the_flags_in_plain_words_and_blank_when_not_measured():
    cases = [exception_case("E-1", "VA"), exception_case("E-2", "VB")]
    flags = FinanceFlags(
        k=5,
        exact=2,
        relevant=2,
        broader=3,
        action="reject",
        confidence=0.67,
        policy="precedent",
        crowd_out_lost=2,
        exact_ids=["a", "b"],
    )
    frame = exception_queue.queue_frame(
        cases, {}, date(2026, 1, 10), {"E-1": {"recall": flags.model_dump(mode="json")}}, {"E-1": "crowd-out"}
    )
    first, second = frame.iloc[0], frame.iloc[1]
    assert (
        first["exact precedents"],
        first["agent recommends"],
        first[exception_queue.PLAIN_SEARCH_MISSES],
        first["incident"],
    ) == (2, "reject (67%)", "2 exact precedent(s)", "crowd-out")
    assert frame["exact precedents"].isna().tolist() == [False, True]
    assert (second["agent recommends"], second[exception_queue.PLAIN_SEARCH_MISSES], second["incident"]) == ("", "", "")


def test_headline_tells_the_story_in_one_line():
    ticket = DEMO_TICKETS[0]
    m = overview.build(
        standing={},
        states={},
        latencies=[],
        **built_in_overview(
            [exception_case("E-1", "VA"), exception_case("E-2", "VB")],
            [ticket],
            ticket_flags={},
            finance=FinanceCounts(
                recalled=1, checked=1, prevented=1, precedents_saved=2, recommendations=(("reject", 1),)
            ),
        ),
        incidents={
            "ticket": IncidentCounts(1, 1, (("other_customer", 1),)),
            "exception": IncidentCounts(1, 1, (("crowded_out", 1),)),
        },
        incident_cases={
            "ticket": [CaseIncidents("ticket", ticket.id, ("other_customer",), ("naive",))],
            "exception": [CaseIncidents("exception", "E-2", ("crowded_out",), ("reviewed",))],
        },
    )
    assert headline(m) == (
        "3 cases (2 exceptions, 1 ticket): 0 decided, 3 open. No decision made in the date range yet. What went wrong: 2 cases "
        "with incidents, 1 of the 2 from the deliberately naive agents the demo runs on a few cases to show what goes wrong (one "
        "broad search, no relevance or ownership check): 1 exception (E-2): a broad recall missed this vendor's precedents; "
        f"1 ticket ({ticket.id}): another customer's records reached the answer."
    )
    assert (m.crowd_out.recalled, m.crowd_out.prevented, m.crowd_out.recommendations, m.crowd_out.no_relevant) == (
        1,
        1,
        {"reject": 1},
        0,
    )
    quiet = overview.build(standing={}, states={}, latencies=[], **built_in_overview([], [], ticket_flags={}))
    assert headline(quiet) == (
        "0 cases (0 exceptions, 0 tickets): 0 decided, 0 open. No decision made in the date range yet. "
        "No agent run is recorded yet: nothing to check for incidents."
    )
