"""The incident rules and the then-vs-now diff as plain functions (runs built by hand; the same rules
run against the real server in test_agents_live)."""

from datetime import UTC, datetime, timedelta

from dashboard.agents.incidents import (
    HumanDecision,
    crowded_out,
    incidents_for,
    newer_human_missing,
    no_relevant_no_escalation,
    non_relevant_citation,
    other_customer,
)
from dashboard.agents.then_now import diff, then_vs_now
from dashboard.store.agent_runs import AgentRun, AuditRecall, RecallSnapshot, ResultRef

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def ref(doc, vendor="VA", etype="price_variance", **kw) -> ResultRef:
    return ResultRef(id=doc, document_id=doc, tags=[f"vendor:{vendor}", f"type:{etype}"], **kw)


def finance_run(results, cited, action="approve", label="exact", evidence=None, audit_id=None) -> AgentRun:
    return AgentRun(
        run_id="r1",
        bank_id="b",
        case_kind="exception",
        case_id="E-1",
        agent="finance",
        variant="naive",
        started_at=T0,
        ended_at=T0,
        audit_log=True,
        cited=cited,
        recalls=[RecallSnapshot(label=label, query="q", results=results, audit_id=audit_id)],
        output={
            "action": action,
            "vendor_code": "VA",
            "exception_type": "price_variance",
            "k": 3,
            "evidence": evidence
            if evidence is not None
            else [{"ref": r.ref, "relevant": r.tags[0] == "vendor:VA"} for r in results],
        },
    )


def test_citing_another_vendors_precedent_is_an_incident_and_a_relevant_one_is_not():
    run = finance_run([ref("A1"), ref("B1", vendor="VB")], cited=["A1", "B1"])
    found = non_relevant_citation(run)
    assert found is not None and found.records == ["B1"] and "VB" not in found.summary and "B1" in found.summary
    assert non_relevant_citation(finance_run([ref("A1"), ref("B1", vendor="VB")], cited=["A1"])) is None


def test_crowd_out_needs_the_all_strict_proof():
    run = finance_run([ref("B1", vendor="VB"), ref("B2", vendor="VB"), ref("A1")], cited=[], label="single")
    found = crowded_out(run, ["A1", "A2", "A3"])
    assert found is not None and found.records == ["A2", "A3"] and "held 1" in found.summary
    assert crowded_out(run, ["A1"]) is None  # the only exact precedent made the top k
    two_stage = finance_run([ref("A1")], cited=[], label="exact")
    assert crowded_out(two_stage, ["A1", "A2"]) is None  # no single-pass recall to blame


def test_no_relevant_precedent_must_escalate():
    run = finance_run([ref("B1", vendor="VB")], cited=["B1"], action="approve")
    assert no_relevant_no_escalation(run) is not None
    assert no_relevant_no_escalation(finance_run([ref("B1", vendor="VB")], cited=[], action="escalate")) is None


def test_a_newer_human_decision_missing_from_the_evidence():
    run = finance_run([ref("A1")], cited=["A1"])
    before = HumanDecision(
        document_id="decision-E-9",
        case_id="E-9",
        vendor_code="VA",
        exception_type="price_variance",
        decided_at=T0 - timedelta(hours=1),
    )
    after = before.model_copy(update={"decided_at": T0 + timedelta(hours=1)})
    own = before.model_copy(update={"case_id": "E-1", "document_id": "decision-E-1"})
    other = before.model_copy(update={"vendor_code": "VB"})
    assert newer_human_missing(run, [before]).records == ["decision-E-9"]
    assert newer_human_missing(run, [after, own, other]) is None


def test_other_customer_records_in_a_bank_wide_recall_and_whether_the_answer_used_them():
    mine = ResultRef(id="m1", document_id="SUP-1", owner="customer:ann-lee")
    theirs = ResultRef(id="m2", document_id="SUP-2", owner="customer:ann-leeds", marker_name="Ann Leeds")
    nobody = ResultRef(id="m3", document_id="SUP-3")
    run = AgentRun(
        run_id="s1",
        bank_id="b",
        case_kind="ticket",
        case_id="T-1",
        agent="support",
        variant="naive",
        started_at=T0,
        ended_at=T0,
        audit_log=True,
        cited=["SUP-2"],
        recalls=[
            RecallSnapshot(label="tagged", query="q", tags=["customer:ann-lee"]),
            RecallSnapshot(label="bank_wide", query="q", results=[mine, theirs, nobody], audit_id="a1"),
        ],
        output={
            "customer": "Ann Lee",
            "customer_tag": "customer:ann-lee",
            "cited": ["SUP-2"],
            "evidence_ids": ["m1", "m2", "m3"],
        },
    )
    found = other_customer(run)
    assert found.records == ["SUP-2", "SUP-3"] and found.used_in_answer == ["SUP-2"] and "Ann Leeds" in found.summary
    # judged on what the audit log says the recall returned, when it is known
    logged = AuditRecall(entry_id="a1", bank_id="b", started_at=T0, query="q", results=[mine])
    assert other_customer(run, {"a1": logged}) is None
    admitted_only = run.model_copy(update={"output": {**run.output, "evidence_ids": ["m1"]}})
    assert other_customer(admitted_only) is None  # candidates rejected by the ownership rule are no incident
    assert [i.kind for i in incidents_for([run])] == ["other_customer"]


def test_then_vs_now_diff_and_the_labelled_recompute():
    then = [ref("A1"), ref("A2")]
    now = [ref("decision-E-2"), ref("A1")]
    appeared, left = diff(then, now)
    assert [r.ref for r in appeared] == ["decision-E-2"] and [r.ref for r in left] == ["A2"]
    run = finance_run(then, cited=["A1"], audit_id="a1")
    entries = {"a1": AuditRecall(entry_id="a1", bank_id="b", started_at=T0, query="q", results=then)}
    view = then_vs_now(run, entries, now, audit_log_on=True)
    assert view.source == "audit" and [r.ref for r in view.appeared] == ["decision-E-2"]
    assert then_vs_now(run, {}, now, audit_log_on=True).source == "agent_run"
    off = then_vs_now(run, entries, now, audit_log_on=False)
    assert off.source == "recompute" and off.then == [] and "audit log is off" in off.note
