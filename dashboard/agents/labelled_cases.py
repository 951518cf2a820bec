"""The reviewers' relevance labels as labelled cases, for the evidence bench and the Overview: per labelled
case, the recall request the agent made (as Hindsight's audit log recorded it, else as the agent run did) or,
without an agent run, the one the dashboard made for the case; the expected documents are those most of their
reviewers call relevant.

Of a run's several recalls (the finance agent's exact and broader passes), the one that returned most of the
documents labelled relevant is the case's request (ties: the earlier one). Plain Python.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from dashboard.review.relevance import CaseVerdict, RecallContext, RelevanceLabels, case_verdicts
from dashboard.store.agent_runs import AgentRunStore, RecallSnapshot
from dashboard.traces.evidence import EvidenceCase

Source = Literal["audit log", "agent run", "dashboard"]


class LabelledCase(BaseModel):
    bank_id: str
    case_kind: str
    case_id: str
    source: Source  # where its request comes from
    query: str
    tags: list[str]
    tags_match: str
    ranked: list[str]  # the documents that request returned, best first
    relevant: list[str]
    labelled: list[str]  # every document a reviewer labelled
    labels: int
    labelled_at: datetime

    def evidence_case(self) -> EvidenceCase:
        return EvidenceCase(
            query=self.query, tags=self.tags, tags_match=self.tags_match, expected_document_ids=self.relevant
        )


def _documents(snapshot: RecallSnapshot) -> list[str]:
    return [r.document_id for r in snapshot.results if r.kind == "document" and r.document_id]


def _from_run(store: AgentRunStore, verdict: CaseVerdict) -> tuple[Source, RecallContext] | None:
    run = store.latest_run(verdict.case_kind, verdict.case_id, verdict.bank_id)
    if run is None or not run.recalls:
        return None
    relevant = set(verdict.relevant)
    snapshot = max(run.recalls, key=lambda s: len(relevant & set(_documents(s))))  # ties: the earlier recall
    entry = store.entry(snapshot.audit_id) if snapshot.audit_id else None
    if entry is not None:
        ranked = [r.document_id for r in entry.results if r.kind == "document" and r.document_id]
        return "audit log", RecallContext(
            query=entry.query, tags=entry.tags, tags_match=entry.tags_match, ranked=ranked
        )
    return "agent run", RecallContext(
        query=snapshot.query, tags=snapshot.tags, tags_match=snapshot.tags_match, ranked=_documents(snapshot)
    )


def labelled_case(store: AgentRunStore, verdict: CaseVerdict) -> LabelledCase | None:
    """The case with its request; None when neither an agent run nor the dashboard recorded one."""
    found = _from_run(store, verdict)
    if found is None:
        context = verdict.context()
        if context is None:
            return None
        found = ("dashboard", context)
    source, context = found
    return LabelledCase(
        bank_id=verdict.bank_id,
        case_kind=verdict.case_kind,
        case_id=verdict.case_id,
        source=source,
        query=context.query or "",
        tags=context.tags,
        tags_match=context.tags_match or "any",
        ranked=context.ranked,
        relevant=verdict.relevant,
        labelled=sorted(verdict.votes),
        labels=len(verdict.labels),
        labelled_at=verdict.labelled_at,
    )


def labelled_cases(store: AgentRunStore, verdicts: list[CaseVerdict]) -> list[LabelledCase]:
    return [c for c in (labelled_case(store, v) for v in verdicts) if c is not None]


def from_store(labels: RelevanceLabels, runs: AgentRunStore, bank_id: str | None = None) -> list[LabelledCase]:
    """Every labelled case of the review store (of one bank, if given)."""
    return labelled_cases(runs, case_verdicts(labels.latest(bank_id)))


def review_set(cases: list[LabelledCase]) -> tuple[list[EvidenceCase], list[LabelledCase]]:
    """(the bench's cases, the labelled cases they are) for the cases with a document labelled relevant."""
    kept = [c for c in cases if c.relevant and c.query]
    return [c.evidence_case() for c in kept], kept
