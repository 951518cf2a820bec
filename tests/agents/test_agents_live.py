"""The reference agents on the real server, the audit log synced into the review store,
incidents, then vs now."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest

from dashboard.agents.audit_sync import sync_bank
from dashboard.agents.findings import case_then_now, find_incidents
from dashboard.agents.runner import run_exception, run_ticket
from dashboard.cli.seed import finance_records, support_records
from dashboard.delivery.outbox import Outbox
from dashboard.finance.decisions import document_id_for, exception_decision, precedent_record
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.store.agent_runs import AgentRunStore
from dashboard.support.models import Ticket
from tests.conftest import PROVEN, seeded

ANN_LEE = Ticket(
    id="T-2004",
    customer="Ann Lee",
    issue="I was charged twice for the annual plan.",
    drafted_response="Hi Ann, I have refunded the duplicate charge.",
    opened_on="2026-11-12",
)
ANN_LEE_OWN = {"SUP-L-001", "SUP-L-002"}  # the only records the ownership rule admits for Ann Lee


def _case(
    case_id: str,
    vendor: str,
    etype: str = "price_variance",
    name: str = "Northwind Industrial Supply",
    description: str = "Steel brackets billed at 10.24 per unit against PO 9.96, a 2.8% variance.",
) -> ExceptionCase:
    return ExceptionCase(
        id=case_id,
        vendor_code=vendor,
        vendor_name=name,
        exception_type=etype,
        invoice=f"INV-{case_id}",
        po="PO-1",
        invoice_amount=5120.0,
        po_amount=4980.0,
        description=description,
        opened_on="2026-11-02",
    )


@pytest.fixture
def stores(tmp_path):
    outbox = Outbox(tmp_path / "decisions.sqlite3")
    return outbox, AgentRunStore(outbox.engine)


@pytest.fixture
def audited_bank(hindsight):
    bank = f"test-audit-{uuid.uuid4().hex[:8]}"
    hindsight.gateway.ensure_bank(bank)
    hindsight.gateway.enable_audit_log(bank)
    return bank


def _kinds(incidents, run):
    return {i.kind for i in incidents if i.run_id == run.run_id}


def test_naive_support_agent_leaks_another_customers_record_and_the_seed_agent_does_not(
    hindsight, audited_bank, stores
):
    outbox, store = stores
    gw = hindsight.gateway
    gw.retain(audited_bank, support_records())
    naive = run_ticket(gw, store, audited_bank, ANN_LEE, "naive", retain=False)
    seed = run_ticket(gw, store, audited_bank, ANN_LEE, "seed", retain=False)
    assert naive.audit_log and len(naive.audit_ids) == len(naive.recalls) == 2  # tagged (empty), then bank-wide
    assert [s.label for s in naive.recalls] == ["tagged", "bank_wide"]
    # the seed run sent the same two requests a moment later: each run has its own entries
    assert len(seed.audit_ids) == len(seed.recalls) == 2 and not set(seed.audit_ids) & set(naive.audit_ids)

    incidents = find_incidents(gw, store, outbox, [naive, seed])
    leak = [i for i in incidents if i.run_id == naive.run_id and i.kind == "other_customer"]
    assert len(leak) == 1 and leak[0].records and not set(leak[0].records) & ANN_LEE_OWN
    assert set(leak[0].used_in_answer) <= set(leak[0].records) and leak[0].audit_ids == naive.audit_ids
    assert "Ann Lee" in leak[0].summary
    assert _kinds(incidents, seed) == set()
    assert set(seed.output["evidence"]) <= ANN_LEE_OWN and seed.output["path"] == "legacy"
    # what the audit log recorded is what the agent saw
    entry = store.entry(naive.audit_ids[1])
    assert entry.tags == [] and [r.id for r in entry.results] == [r.id for r in naive.recalls[1].results]


def test_naive_finance_agent_is_crowded_out_and_the_seed_agent_is_not(hindsight, audited_bank, stores):
    outbox, store = stores
    gw = hindsight.gateway
    gw.retain(audited_bank, finance_records())
    case = _case(
        "E-1002",
        "V02",
        name="Acme Fasteners",
        description="Hex bolts billed at 0.49 per unit against a contracted 0.45, a 7.7% variance.",
    )
    naive = run_exception(gw, store, audited_bank, case, "naive")
    seed = run_exception(gw, store, audited_bank, case, "seed")
    assert [s.label for s in naive.recalls] == ["single"] and [s.label for s in seed.recalls] == ["exact", "broader"]
    incidents = find_incidents(gw, store, outbox, [naive, seed])
    crowd = [i for i in incidents if i.run_id == naive.run_id and i.kind == "crowded_out"]
    assert len(crowd) == 1 and crowd[0].records
    assert "non_relevant_citation" in _kinds(incidents, naive)  # other vendors' precedents decided
    assert _kinds(incidents, seed) == set()
    assert all(e["relevant"] for e in seed.output["evidence"] if e["ref"] in seed.cited)


def test_then_vs_now_after_a_decision_shows_the_decision_and_the_seed_agent_missed_it(hindsight, audited_bank, stores):
    outbox, store = stores
    gw = hindsight.gateway
    # signed as the demo seed's, with this store's key: records of unknown origin would be escalated, not approved
    gw.retain(
        audited_bank,
        [
            outbox.provenance.sign(r, "seed")
            for r in finance_records()
            if "vendor:V01" in r.tags and "type:price_variance" in r.tags
        ],
    )
    # The decided case shares its vendor and type with E-1101 but none of its description, so for E-1101's
    # query the decision ranks below the twelve older precedents (the seed's k=5 misses it by text, not by ties).
    first = _case("E-1001", "V01", description="Copper cable drums invoiced after a tariff change on imported metals.")
    second = _case("E-1101", "V01")
    before = run_exception(gw, store, audited_bank, second, "reviewed")
    assert before.output["action"] == "approve" and before.audit_log and len(before.audit_ids) == 2

    _, rec = assess(
        two_stage_recall(
            gw.recall, audited_bank, CaseKey.of(first), first.recall_query(), own_document=document_id_for(first.id)
        )
    )
    decision = exception_decision(
        first,
        rec,
        reviewer="Dana",
        authenticated=False,
        action="override",
        outcome="reject",
        reason_code="CONTRACT_AMENDMENT",
        now=lambda: datetime.now(UTC),
    )
    outbox.submit(audited_bank, decision, precedent_record(first, decision, rec), gw.retain)

    now = two_stage_recall(
        gw.recall, audited_bank, CaseKey.of(second), second.recall_query(), own_document=document_id_for(second.id)
    )
    view = case_then_now(
        store, store.latest_run("exception", "E-1101"), [m for m in _memories(gw, audited_bank, now)], True
    )
    assert view.source == "audit" and "audit log recorded" in view.note
    assert "decision-E-1001" in [r.ref for r in view.appeared] and "decision-E-1001" not in [
        r.ref for t in view.then for r in t.results
    ]

    seed = run_exception(gw, store, audited_bank, second, "seed")  # the seed's recall: 12 older precedents fill k
    after = run_exception(gw, store, audited_bank, second, "reviewed")
    incidents = find_incidents(gw, store, outbox, [before, seed, after])
    assert "newer_human_missing" in _kinds(incidents, seed) and _kinds(incidents, after) == set()
    assert after.output["action"] == "reject" and after.cited == ["decision-E-1001"]
    assert _kinds(incidents, before) == set()  # the decision came after that run


def _memories(gw, bank, result):
    """The recalled memories behind a two-stage result, as a page's "now" column lists them."""
    from dashboard.hindsight.wire import RecalledMemory

    return [
        RecalledMemory(id=r.id, text=r.text, tags=r.tags, document_id=r.document_id, metadata=r.metadata)
        for r in result.records
    ]


def test_audit_log_off_gives_a_labelled_recompute(hindsight, bank_id, stores):
    _, store = stores
    gw = hindsight.gateway
    gw.retain(bank_id, finance_records()[:6])
    assert not gw.audit_log_enabled(bank_id)
    run = run_exception(gw, store, bank_id, _case("E-1001", "V01"), "reviewed")
    assert run.audit_log is False and run.audit_ids == []
    view = case_then_now(store, run, [], gw.audit_log_enabled(bank_id))
    assert view.source == "recompute" and "audit log is off" in view.note and view.then == []
    assert sync_bank(gw, store, bank_id).listed == 0


def test_sync_is_incremental_and_keeps_no_text(hindsight, audited_bank, stores):
    _, store = stores
    gw = hindsight.gateway
    # signed as the seed's: with ten records of unknown origin the run would ask the server about bursts, and its
    # recalls for that are in the bank's audit log too (hindsight/write_facts.py)
    gw.retain(audited_bank, [seeded(r) for r in finance_records()[:10]])
    run = run_exception(gw, store, audited_bank, _case("E-1001", "V01"), "seed", origin=PROVEN)
    again = sync_bank(gw, store, audited_bank)
    assert again.fetched == 0 and again.listed >= len(run.recalls)  # the run already fetched its entries' bodies once
    gw.recall(audited_bank, "tax mismatch", tags=["type:tax_mismatch"], tags_match="any_strict")
    import time

    for _ in range(25):
        report = sync_bank(gw, store, audited_bank)
        if report.added:
            break
        time.sleep(0.2)
    assert report.added == 1 and report.fetched == 1
    stored = store.entries(audited_bank)
    assert len(stored) == len(run.recalls) + 1
    assert all(len(r.text_hash) == 64 for e in stored for r in e.results)
    assert "text" not in json.dumps([e.model_dump(mode="json") for e in stored]).replace("text_hash", "")


def test_agent_command_prints_the_run_with_its_audit_ids(hindsight, audited_bank, monkeypatch, capsys, tmp_path):
    from dashboard.cli import main

    hindsight.gateway.retain(audited_bank, finance_records())
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    for key, value in hindsight.env(finance=audited_bank).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    assert main(["agent", "finance", "--case", "E-1002", "--variant", "naive", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["case_id"] == "E-1002" and run["variant"] == "naive" and len(run["audit_ids"]) == 1
    assert run["output"]["action"] in ("approve", "reject", "escalate") and run["recalls"][0]["label"] == "single"
    assert main(["audit-recalls", "--bank", audited_bank, "--since", "2000-01-01", "--incidents", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["audit_log_enabled"] and run["audit_ids"][0] in [r["entry_id"] for r in report["recalls"]]
    assert "crowded_out" in {i["kind"] for i in report["incidents"] if i["run_id"] == run["run_id"]}
    assert main(["agent", "finance", "--case", "E-404", "--json"]) == 2
    assert "--case" in capsys.readouterr().err


def test_decide_command_closes_the_loop_for_the_next_case(hindsight, audited_bank, monkeypatch, capsys, tmp_path):
    """decide on E-1001 (V01 price variance, 12 approving precedents) -> the agent on the next V01 price variance case follows it."""
    from dashboard.cli import main

    hindsight.gateway.retain(audited_bank, finance_records())
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    for key, value in hindsight.env(finance=audited_bank).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    assert main(["decide", "--case", "E-1001", "--outcome", "reject", "--reviewer", "Dana", "--json"]) == 2
    assert "--reason" in capsys.readouterr().err  # an override needs a reason code; nothing stored
    code = main(
        [
            "decide",
            "--case",
            "E-1001",
            "--outcome",
            "reject",
            "--reason",
            "CONTRACT_AMENDMENT",
            "--reviewer",
            "Dana",
            "--json",
        ]
    )
    decided = json.loads(capsys.readouterr().out)
    assert (
        code == 0
        and decided["state"] == "delivered"
        and decided["overridden"]
        and decided["document_id"] == "decision-E-1001"
    )

    outbox = Outbox(tmp_path / "decisions.sqlite3")
    store = AgentRunStore(outbox.engine)
    run = run_exception(
        hindsight.gateway, store, audited_bank, _case("E-1101", "V01"), "reviewed", PROVEN
    )  # the deployment's key
    assert run.output["action"] == "reject" and run.cited == ["decision-E-1001"] and run.output["evidence"][0]["human"]
    own = run_exception(hindsight.gateway, store, audited_bank, _case("E-1001", "V01"), "reviewed")
    assert "decision-E-1001" not in [e["ref"] for e in own.output["evidence"]]  # never its own decision
