"""Judged on what existed then: an agent run is compared only with records that existed when it recalled. Nothing
retained later counts against it (the crowd-out proof is a recall made now; a human decision counts from the moment
memory held it), and then-vs-now never calls a record "new since then" that a recall of the run returned. Pure rules
on runs built by hand, and the review store's human decisions (SQLite); tests/agents/test_existed_then_live.py runs the
same against the real server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboard.agents.findings import human_decisions
from dashboard.agents.incidents import HumanDecision, existed_then, incidents_for, newer_human_missing
from dashboard.agents.then_now import then_vs_now
from dashboard.delivery.outbox import Outbox
from dashboard.store.agent_runs import AgentRun, AuditRecall, RecallSnapshot, ResultRef
from tests.helpers import numbered_decision

T0 = datetime(2026, 12, 1, 5, 15, tzinfo=UTC)  # the agent's run
BEFORE, AFTER = T0 - timedelta(days=30), T0 + timedelta(minutes=5)


def ref(doc: str, vendor: str = "VA") -> ResultRef:
    return ResultRef(id=doc, document_id=doc, tags=[f"vendor:{vendor}", "type:price_variance"])


def single_pass_run(results: list[ResultRef], evidence: list[str] | None = None) -> AgentRun:
    """A naive finance run at T0: one broad recall, its top 3 taken as evidence."""
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
        cited=[],
        recalls=[RecallSnapshot(label="single", query="q", results=results, audit_id="a1")],
        output={
            "action": "approve",
            "vendor_code": "VA",
            "exception_type": "price_variance",
            "k": 3,
            "evidence": [
                {"ref": r, "relevant": True}
                for r in (evidence if evidence is not None else [x.ref for x in results][:3])
            ],
        },
    )


def test_a_precedent_retained_after_the_run_does_not_count_against_its_crowd_out():
    run = single_pass_run([ref("B1", "VB"), ref("B2", "VB"), ref("A1")])  # 1 of the exact precedents made its top 3
    proof = {("b", "VA", "price_variance"): ["decision-E-9", "A1", "A2"]}  # the all_strict recall made now
    created = {"decision-E-9": AFTER, "A1": BEFORE, "A2": BEFORE}
    (crowd,) = [i for i in incidents_for([run], exact_ids=proof, created=created) if i.kind == "crowded_out"]
    assert (
        crowd.records == ["A2"] and "while 2 existed then" in crowd.summary
    )  # not "3 existed": the decision came at 05:20
    only_later = {"decision-E-9": AFTER, "A1": BEFORE, "A2": AFTER}
    assert not [i for i in incidents_for([run], exact_ids=proof, created=only_later) if i.kind == "crowded_out"]
    assert existed_then(["X", "A1"], {"A1": BEFORE}, T0) == ["A1"]  # a creation not read is not proof it existed


def test_a_human_decision_counts_from_when_memory_held_it_not_from_when_it_was_made():
    run = single_pass_run([ref("A1")])
    held_then_released = HumanDecision(
        document_id="decision-E-9",
        case_id="E-9",
        vendor_code="VA",
        exception_type="price_variance",
        decided_at=T0 - timedelta(hours=1),
        in_memory_since=AFTER,
    )  # held for a second review
    assert newer_human_missing(run, [held_then_released]) is None
    in_memory = held_then_released.model_copy(update={"in_memory_since": T0 - timedelta(minutes=30)})
    assert newer_human_missing(run, [in_memory]).records == ["decision-E-9"]


def test_the_stores_human_decisions_are_those_delivered_with_their_first_delivery(tmp_path):
    outbox = Outbox(tmp_path / "store.sqlite3")
    delivered_at = []

    def retain(bank, records):
        delivered_at.append(datetime.now(UTC))

    for i in (1, 2):
        decision, memory = numbered_decision(i)
        memory = memory.model_copy(
            update={"metadata": {"vendor_code": f"V{i:02d}", "exception_type": "price_variance"}}
        )
        outbox.record("fin", decision, memory)
    outbox.deliver_due(retain, only_id=1)  # decision 2 is still waiting to be stored: no agent could have seen it
    (found,) = human_decisions(outbox, "fin")
    assert found.case_id == "E-0001" and found.in_memory_since == outbox.get(1).delivered_at
    assert found.in_memory_since >= found.decided_at


def test_then_now_calls_new_only_what_did_not_exist_and_was_not_recalled_then():
    # the run's recall returned A1..A4 and kept A1, A2 (k=2); now the evidence is A1, A3 (recalled then, not used),
    # A5 (held then, not recalled) and the reviewer's decision D (retained after the run)
    then = [ref("A1"), ref("A2"), ref("A3"), ref("A4")]
    run = single_pass_run(then, evidence=["A1", "A2"])
    entries = {"a1": AuditRecall(entry_id="a1", bank_id="b", started_at=T0, query="q", results=then)}
    view = then_vs_now(run, entries, [ref("A1"), ref("A3"), ref("A5"), ref("D")], audit_log_on=True)
    view = view.with_created(
        {"A1": BEFORE, "A3": AFTER, "A5": BEFORE, "D": AFTER}
    )  # A3 retained again since: dated anew
    assert [r.ref for r in view.appeared] == ["A3", "A5", "D"] and [r.ref for r in view.left] == ["A2"]
    assert view.new_since == ["D"]
    assert not set(view.new_since) & view.recalled_then()  # never both "then" and "new since then"
    assert [view.now_mark(r) for r in ("A1", "A3", "A5", "D")] == [
        "",
        "recalled then, not used by the agent",
        "existed then, not recalled",
        "new since then",
    ]
    unknown = then_vs_now(run, entries, [ref("A5")], audit_log_on=True)  # the creation times could not be read
    assert unknown.now_mark("A5") == "not in the agent's evidence then"
