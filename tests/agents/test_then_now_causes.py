"""Then != now, explained, on the real server in both modes: every document that entered or left an agent's evidence
since its recall carries its cause (a retain after the recall; a four-eyes invalidation; a legacy -> tags migration),
and "cause unknown" is left only where nothing explains the change (a document removed straight in Hindsight)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from dashboard import demo_data
from dashboard.agents.cause_inputs import explained
from dashboard.agents.causes import CauseKind
from dashboard.agents.findings import case_then_now
from dashboard.agents.runner import run_exception, run_ticket
from dashboard.agents.support_agent import run_support_agent
from dashboard.agents.then_now import ThenNow, then_vs_now
from dashboard.cli.seed import finance_records, seed_bank, support_records
from dashboard.delivery.outbox import Outbox
from dashboard.finance.decisions import document_id_for, exception_decision, precedent_record
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.queue_files import load_rows
from dashboard.review.curation import Curation
from dashboard.store.agent_runs import AgentRunStore, ResultRef
from dashboard.support import migration
from dashboard.support.models import Customer
from tests.helpers import demo_ticket, exception_case

CUSTOMERS = load_rows(demo_data.CUSTOMERS, Customer, id_field="name")
# E-1101 shares vendor and type with the decided E-1001 (see test_agents_live): twelve V01 price-variance precedents.
DECIDED = exception_case("E-1001", "V01", description="Copper cable drums invoiced after a tariff change on metals.")
CASE = exception_case("E-1101", "V01", description="Steel brackets billed at 10.24 per unit against PO 9.96.")


@pytest.fixture
def stores(tmp_path):
    outbox = Outbox(tmp_path / "decisions.sqlite3")
    return outbox, AgentRunStore(outbox.engine), Curation(outbox.engine)


def _finance_bank(live) -> str:
    bank = f"causes-{uuid.uuid4().hex[:8]}-{live.mode}"
    live.gateway.ensure_bank(bank)
    live.gateway.enable_audit_log(bank)
    v01 = [r for r in finance_records() if "vendor:V01" in r.tags and "type:price_variance" in r.tags]
    live.gateway.retain(bank, v01)
    live.settle(bank)
    return bank


def _case_view(gw, store: AgentRunStore, curation: Curation, bank: str) -> ThenNow:
    """Then vs now for E-1101, as its page builds it: today's two-stage evidence, curation, causes."""
    now = two_stage_recall(
        gw.recall, bank, CaseKey.of(CASE), CASE.recall_query(), own_document=document_id_for(CASE.id)
    )
    view = case_then_now(store, store.latest_run("exception", CASE.id, bank), now.records, True)
    statuses = curation.statuses(bank, view.documents())
    return explained(gw, statuses, view.with_curation(statuses))


def _said(view: ThenNow) -> list[str]:
    return [f"{c.document_id} {c.change}: {c.kind.value}. {c.sentence}" for c in view.causes]


def _kinds(view: ThenNow) -> dict[str, CauseKind]:
    assert len(view.causes) == len(view.appeared) + len(view.left)
    assert {c.document_id for c in view.causes} == {r.ref for r in [*view.appeared, *view.left]}
    assert all(c.sentence for c in view.causes)
    return {c.document_id: c.kind for c in view.causes}


def test_a_decision_retained_after_the_recall_is_named_as_the_cause(live, stores):
    outbox, store, curation = stores
    gw = live.gateway
    bank = _finance_bank(live)
    run = run_exception(gw, store, bank, CASE, "reviewed")
    assert run.output["bank_config"]["audit_log_enabled"] is True  # the config then, kept with the run

    key, own = CaseKey.of(DECIDED), document_id_for(DECIDED.id)
    _, rec = assess(two_stage_recall(gw.recall, bank, key, DECIDED.recall_query(), own_document=own))
    decision = exception_decision(
        DECIDED,
        rec,
        reviewer="Dana",
        authenticated=False,
        action="override",
        outcome="reject",
        reason_code="CONTRACT_AMENDMENT",
        now=lambda: datetime.now(UTC),
    )
    outbox.submit(bank, decision, precedent_record(DECIDED, decision, rec), gw.retain)
    live.settle(bank)

    view = _case_view(gw, store, curation, bank)
    kinds = _kinds(view)
    assert kinds["decision-E-1001"] == CauseKind.RETAINED_AFTER, _said(view)
    cause = next(c for c in view.causes if c.document_id == "decision-E-1001")
    assert cause.change == "appeared" and "after the agent's recall on" in cause.sentence
    assert CauseKind.UNKNOWN not in kinds.values(), _said(view)  # whatever else changed, the decision explains it


def test_four_eyes_invalidation_is_named_and_a_removal_outside_the_dashboard_is_the_only_unknown(live, stores):
    outbox, store, _ = stores
    gw = live.gateway
    curation = Curation(outbox.engine, curate=gw.set_document_state)
    bank = _finance_bank(live)
    run = run_exception(gw, store, bank, CASE, "reviewed")
    retired, removed = [e["ref"] for e in run.output["evidence"]][:2]

    proposal = curation.propose(
        bank, retired, role="reviewer", proposer="Dana", reason="superseded by the 2026 contract", label="outdated"
    )
    _, report = curation.approve(proposal.id, role="lead", lead="Lee")
    assert report.delivered == 1
    live.settle(bank)  # extracting: the observations built from its facts are pruned
    view = _case_view(gw, store, curation, bank)
    kinds = _kinds(view)
    assert kinds[retired] == CauseKind.INVALIDATED
    assert "Invalidated by Lee on" in next(c.sentence for c in view.causes if c.document_id == retired)
    assert CauseKind.UNKNOWN not in kinds.values(), _said(view)  # what moved up took the freed place

    assert gw.delete_document(bank, removed)  # someone removes a precedent straight in Hindsight: no log says why
    live.settle(bank)
    view = _case_view(gw, store, curation, bank)
    kinds = _kinds(view)
    assert kinds[retired] == CauseKind.INVALIDATED
    assert [doc for doc, kind in kinds.items() if kind == CauseKind.UNKNOWN] == [removed], _said(view)


def _support_now(gw, bank: str, ticket) -> list[ResultRef]:
    """The reviewed support agent's evidence today, drafted without recording or retaining."""
    run = run_support_agent(gw.recall, None, bank, ticket, "reviewed", read_document=gw.document)
    return [ResultRef(id=ref, document_id=ref) for ref in run.output["evidence"]]


def test_a_legacy_to_tags_migration_is_named_for_the_records_it_moved_off_the_fallback(live, stores):
    _, store, curation = stores
    gw = live.gateway
    bank = f"causes-sup-{uuid.uuid4().hex[:8]}-{live.mode}"
    seed_bank(gw, bank, support_records())
    live.settle(bank)
    ticket = demo_ticket("T-2004")  # Ann Lee: only untagged history, admitted by the ownership rule
    run = run_ticket(gw, store, bank, ticket, "reviewed", retain=False)
    assert run.output["path"] == "legacy" and {"SUP-L-001", "SUP-L-002"} <= set(run.output["evidence"])

    # half a migration: one of her records now carries her tag, so the tagged recall answers and the fallback
    # is not made
    report = migration.apply(gw, bank, CUSTOMERS, only=lambda c: c.document_id == "SUP-L-001", scope="one document")
    assert report.converted == ["SUP-L-001"]
    live.settle(bank)
    view = then_vs_now(run, {}, _support_now(gw, bank, ticket), True)
    view = explained(gw, curation.statuses(bank, view.documents()), view)
    kinds = _kinds(view)
    assert "SUP-L-002" in kinds and kinds["SUP-L-002"] == CauseKind.MIGRATED, _said(view)
    assert "SUP-L-001 migrated to tags" in next(c.sentence for c in view.causes if c.document_id == "SUP-L-002")
    assert CauseKind.UNKNOWN not in kinds.values(), _said(view)


def test_a_bank_config_changed_since_the_recall_is_named(hindsight, stores):
    _, store, curation = stores
    gw = hindsight.gateway
    bank = _finance_bank(hindsight)
    run_exception(gw, store, bank, CASE, "reviewed")
    # two candidates per arm cannot fill k=5 from V01's twelve price-variance precedents (see test_lab_ab)
    gw.update_bank_config(bank, recall_budget_fixed_mid=2)
    view = _case_view(gw, store, curation, bank)
    kinds = _kinds(view)
    assert view.left and set(kinds.values()) == {CauseKind.CONFIG_CHANGED}, _said(view)
    assert all("recall_budget_fixed_mid: " in c.sentence and "-> 2" in c.sentence for c in view.causes), _said(view)
