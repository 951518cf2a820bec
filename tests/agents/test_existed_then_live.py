"""Judged on what existed then, against the real server: the demo's naive agent runs on E-1002 (Acme Fasteners, two
price-variance precedents); a reviewer then decides another Acme price variance, and memory holds that decision from
after the run. The incident check's proof (an all_strict recall made now) returns the decision too, yet the run's
crowd-out counts only the two precedents that existed when it ran, and no newer-decision incident blames it; its
then-vs-now calls the decision new since then, and nothing its recall returned then."""

from __future__ import annotations

import uuid

import pytest

from dashboard.agents.cause_inputs import explained
from dashboard.agents.findings import case_then_now, find_incidents
from dashboard.agents.runner import run_exception
from dashboard.cli.seed import finance_records
from dashboard.delivery.outbox import Outbox
from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.hindsight.wire import RecalledMemory
from dashboard.store.agent_runs import AgentRunStore
from tests.helpers import demo_case, exception_proposal

CASE = demo_case("E-1002")  # V02 price variance: the naive agent's crowd-out in the demo
LATER = ExceptionCase(**{**CASE.model_dump(), "id": "E-9002"})  # another Acme price variance, decided after the run


@pytest.fixture
def audited_bank(hindsight) -> str:
    bank = f"test-then-{uuid.uuid4().hex[:8]}"
    hindsight.gateway.ensure_bank(bank)
    hindsight.gateway.enable_audit_log(bank)
    hindsight.gateway.retain(bank, finance_records())
    return bank


def test_a_run_is_judged_on_the_precedents_that_existed_when_it_recalled(hindsight, audited_bank, tmp_path):
    gw = hindsight.gateway
    outbox = Outbox(tmp_path / "store.sqlite3")
    store = AgentRunStore(outbox.engine)
    naive = run_exception(gw, store, audited_bank, CASE, "naive")
    existing = [r.ref for r in two_stage_recall(gw.recall, audited_bank, CaseKey.of(CASE), CASE.recall_query()).exact]
    assert len(existing) == 2  # the demo's two Acme price-variance precedents

    _, rec = assess(two_stage_recall(gw.recall, audited_bank, CaseKey.of(LATER), LATER.recall_query()))
    proposal = exception_proposal(LATER, rec, "Dana")
    stored, _ = outbox.submit(audited_bank, proposal.decision, proposal.record, gw.retain)
    assert outbox.get(stored.id).state == "delivered"
    later = document_id_for(LATER.id)

    found = [i for i in find_incidents(gw, store, outbox, [naive]) if i.run_id == naive.run_id]
    (crowd,) = [i for i in found if i.kind == "crowded_out"]
    assert f"while {len(existing)} existed then" in crowd.summary and later not in crowd.records, crowd.summary
    assert "newer_human_missing" not in {i.kind for i in found}

    now = two_stage_recall(
        gw.recall, audited_bank, CaseKey.of(CASE), CASE.recall_query(), own_document=document_id_for(CASE.id)
    )
    memories = [
        RecalledMemory(id=r.id, text=r.text, tags=r.tags, document_id=r.document_id, metadata=r.metadata)
        for r in now.records
    ]
    view = explained(gw, {}, case_then_now(store, naive, memories, True))
    assert later in view.new_since and view.now_mark(later) == "new since then"
    assert not set(view.new_since) & view.recalled_then()  # a record is never both "then" and "new since then"
    assert all(view.now_mark(r.ref) != "new since then" for r in view.appeared if r.ref in view.recalled_then())
