"""The recall an agent reported with its case, kept as an agent run (store.agent_runs), so the case page's "then
versus now" compares today's evidence with what that agent recalled then, whatever tags it used and whether or not
the bank's audit log is on. Its audit entry ids, when given, let the log's own record of the call stand in."""

from __future__ import annotations

import uuid

from dashboard.review.case_queue import QueuedCase
from dashboard.store.agent_runs import AgentRun, AgentRunStore, RecallSnapshot, ResultRef


def submitted_run(bank_id: str, kind_key: str, case: QueuedCase) -> AgentRun | None:
    """The run a handed-in case's agent reported; None when it reported no recall."""
    agent = case.agent
    if agent is None or agent.recall is None:
        return None
    recall = agent.recall
    snapshot = RecallSnapshot(
        label="submitted",
        query=recall.query or "",
        tags=recall.tags,
        tags_match=recall.tags_match,
        results=[ResultRef(id=doc, document_id=doc) for doc in recall.document_ids],
        audit_id=recall.audit_entry_ids[0] if len(recall.audit_entry_ids) == 1 else None,  # one call, one entry
    )
    output = {"agent_name": agent.name, "recommendation": agent.recommendation, "evidence_ids": list(agent.cited)}
    return AgentRun(
        run_id=f"submitted-{uuid.uuid4().hex}",
        bank_id=bank_id,
        case_kind=case.case_kind,
        case_id=case.case_id,
        agent=kind_key,
        variant="submitted",
        started_at=case.created_at,
        ended_at=case.created_at,
        audit_log=bool(recall.audit_entry_ids),
        recalls=[snapshot],
        output=output,
        cited=list(agent.cited),
    )


def record_submitted_run(runs: AgentRunStore, bank_id: str, kind_key: str, case: QueuedCase) -> None:
    run = submitted_run(bank_id, kind_key, case)
    if run is not None:
        runs.record_run(run)
