"""The I/O around the pure incident and then-vs-now rules: what they need from the store, the outbox
and (for the crowd-out proof and "now") one recall each. No Streamlit here."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from dashboard.agents.incidents import (
    INCIDENTS_KEY,
    HumanDecision,
    Incident,
    by_case,
    incidents_for,
    runs_needing_proof,
)
from dashboard.agents.snapshots import evidence_ref
from dashboard.agents.then_now import ThenNow, then_vs_now
from dashboard.finance.models import type_tag, vendor_tag
from dashboard.finance.recall import LEAN_BUDGET, max_tokens_for
from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.documents import group
from dashboard.review.casework import Casework
from dashboard.review.incident_cases import VARIANTS
from dashboard.store.agent_runs import AgentRun, AgentRunStore, AuditRecall
from dashboard.store.db import as_utc
from dashboard.trust.origin import OriginOf


def entries_of(store: AgentRunStore, runs: list[AgentRun]) -> dict[str, AuditRecall]:
    found = {}
    for run in runs:
        for audit_id in run.audit_ids:
            entry = store.entry(audit_id)
            if entry is not None:
                found[audit_id] = entry
    return found


def human_decisions(outbox, bank_id: str) -> list[HumanDecision]:
    """The reviewers' exception decisions in this bank that reached memory, from the review store (newest revision per
    case), each with when memory first held its document. One held for a second approval or review, or never
    delivered, is not a human decision the agent could have seen."""
    latest, first_stored = {}, {}
    for stored in outbox.history("exception"):  # newest first
        if stored.bank_id != bank_id or stored.held:
            continue
        latest.setdefault(stored.case_id, stored)
        if stored.delivered_at is not None:  # the oldest delivery of the case's document wins
            first_stored[stored.case_id] = stored.delivered_at
    return [
        HumanDecision(
            document_id=s.document_id,
            case_id=s.case_id,
            decided_at=s.decision.decided_at,
            in_memory_since=first_stored[s.case_id],
            vendor_code=s.record.metadata.get("vendor_code", ""),
            exception_type=s.record.metadata.get("exception_type", ""),
        )
        for s in latest.values()
        if s.case_id in first_stored
    ]


def exact_proof(recall: RecallFn, bank_id: str, vendor: str, etype: str, query: str, k: int = 5) -> list[str]:
    """One all_strict recall on vendor + type: the exact precedents that exist (documents, best first)."""
    response = recall(
        bank_id,
        query,
        tags=[vendor_tag(vendor), type_tag(etype)],
        tags_match="all_strict",
        max_tokens=max_tokens_for(k),
        budget=LEAN_BUDGET,
    )
    return [d.ref for d in group(response).documents]


def created_at(gateway, bank_id: str, document_ids: Iterable[str]) -> dict[str, datetime]:
    """document id -> when the bank holds it since (the server's created_at), for the documents it still holds."""
    found = {}
    for document_id in dict.fromkeys(document_ids):
        stored = gateway.document(bank_id, document_id)
        if stored is not None and stored.created_at:
            found[document_id] = as_utc(datetime.fromisoformat(stored.created_at))
    return found


def find_incidents(gateway, store: AgentRunStore, outbox, runs: list[AgentRun]) -> list[Incident]:
    proofs, created = {}, {}
    for bank, vendor, etype in runs_needing_proof(runs):
        run = next(
            r
            for r in runs
            if r.bank_id == bank and r.output.get("vendor_code") == vendor and r.output.get("exception_type") == etype
        )
        query = next(s.query for s in run.recalls)
        proofs[(bank, vendor, etype)] = exact_proof(
            gateway.recall, bank, vendor, etype, query, int(run.output.get("k", 5))
        )
        created |= created_at(
            gateway, bank, proofs[(bank, vendor, etype)]
        )  # a proof is made now: what existed at each run?
    decisions = [d for bank in {r.bank_id for r in runs} for d in human_decisions(outbox, bank)]
    return incidents_for(runs, entries=entries_of(store, runs), exact_ids=proofs, decisions=decisions, created=created)


def store_incident_kinds(casework: Casework, runs: list[AgentRun], incidents: list[Incident]) -> None:
    """Keep each case's incident kinds beside its flags ([] for a case whose runs had none), and the agent variants
    behind them, so the queues and the Overview show them without checking again."""
    by_bank: dict[tuple[str, str], dict[str, dict]] = {}
    for (bank, kind, case_id), found in by_case(runs, incidents).items():
        by_bank.setdefault((bank, kind), {})[case_id] = {
            INCIDENTS_KEY: list(found.kinds),
            VARIANTS: list(found.variants),
        }
    for (bank, kind), flags in by_bank.items():
        casework.put_many_flags(bank, kind, flags)


def case_then_now(
    store: AgentRunStore, run: AgentRun | None, now_results, audit_log_on: bool, origin: OriginOf | None = None
) -> ThenNow:
    """`now_results`: the evidence rows (documents) today's recall gives the case; `origin`: the check of a record's
    signature, so each says who wrote it."""
    runs = [run] if run is not None else []
    return then_vs_now(run, entries_of(store, runs), [evidence_ref(e, origin) for e in now_results], audit_log_on)
