"""The I/O around the pure incident and then-vs-now rules: what they need from the store, the outbox
and (for the crowd-out proof and "now") one recall each. No Streamlit here."""

from __future__ import annotations

from dashboard.agents.incidents import (
    INCIDENTS_KEY,
    HumanDecision,
    Incident,
    incidents_for,
    kinds_by_case,
    runs_needing_proof,
)
from dashboard.agents.snapshots import evidence_ref
from dashboard.agents.then_now import ThenNow, then_vs_now
from dashboard.finance.models import type_tag, vendor_tag
from dashboard.finance.recall import LEAN_BUDGET, max_tokens_for
from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.documents import group
from dashboard.review.agent_runs import AgentRun, AgentRunStore, AuditRecall
from dashboard.review.casework import Casework


def entries_of(store: AgentRunStore, runs: list[AgentRun]) -> dict[str, AuditRecall]:
    found = {}
    for run in runs:
        for audit_id in run.audit_ids:
            entry = store.entry(audit_id)
            if entry is not None:
                found[audit_id] = entry
    return found


def human_decisions(outbox, bank_id: str) -> list[HumanDecision]:
    """The reviewers' exception decisions in this bank, from the review store (newest revision per case); one
    awaiting a second approval (or returned by it) is not a human decision the agent should have seen."""
    latest = {}
    for stored in outbox.history("exception"):  # newest first
        if stored.bank_id == bank_id and not stored.held:
            latest.setdefault(stored.case_id, stored)
    return [
        HumanDecision(
            document_id=s.document_id, case_id=s.case_id, decided_at=s.decision.decided_at,
            vendor_code=s.record.metadata.get("vendor_code", ""), exception_type=s.record.metadata.get("exception_type", ""),
        )
        for s in latest.values()
    ]


def exact_proof(recall: RecallFn, bank_id: str, vendor: str, etype: str, query: str, k: int = 5) -> list[str]:
    """One all_strict recall on vendor + type: the exact precedents that exist (documents, best first)."""
    response = recall(
        bank_id, query, tags=[vendor_tag(vendor), type_tag(etype)], tags_match="all_strict",
        max_tokens=max_tokens_for(k), budget=LEAN_BUDGET,
    )
    return [d.ref for d in group(response).documents]


def find_incidents(gateway, store: AgentRunStore, outbox, runs: list[AgentRun]) -> list[Incident]:
    proofs = {}
    for bank, vendor, etype in runs_needing_proof(runs):
        run = next(r for r in runs if r.bank_id == bank and r.output.get("vendor_code") == vendor and r.output.get("exception_type") == etype)
        query = next(s.query for s in run.recalls)
        proofs[(bank, vendor, etype)] = exact_proof(gateway.recall, bank, vendor, etype, query, int(run.output.get("k", 5)))
    decisions = [d for bank in {r.bank_id for r in runs} for d in human_decisions(outbox, bank)]
    return incidents_for(runs, entries=entries_of(store, runs), exact_ids=proofs, decisions=decisions)


def store_incident_kinds(casework: Casework, runs: list[AgentRun], incidents: list[Incident]) -> None:
    """Keep each case's incident kinds beside its flags ([] for a case whose runs had none), so the queues and
    the Overview show them without checking again."""
    by_bank: dict[tuple[str, str], dict[str, dict]] = {}
    for (bank, kind, case_id), kinds in kinds_by_case(runs, incidents).items():
        by_bank.setdefault((bank, kind), {})[case_id] = {INCIDENTS_KEY: kinds}
    for (bank, kind), flags in by_bank.items():
        casework.put_many_flags(bank, kind, flags)


def case_then_now(store: AgentRunStore, run: AgentRun | None, now_results, audit_log_on: bool) -> ThenNow:
    """`now_results`: the evidence rows (documents) today's recall gives the case."""
    runs = [run] if run is not None else []
    return then_vs_now(run, entries_of(store, runs), [evidence_ref(e) for e in now_results], audit_log_on)
