"""The API's answers as models, shared by the routes and the client (pydantic only: an agent imports these)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dashboard.review.agent_part import AgentPart


class DecisionOut(BaseModel):
    outcome: str
    action: str | None
    action_words: str | None
    overridden: bool
    reason_code: str | None
    note: str
    reviewer: str
    authenticated: bool
    decided_at: str
    revision: int  # 1 for a first decision; each revision of it (with its reason) the next
    revision_reason: str | None = None  # why the standing decision revised the one before it; None: a first decision
    document_id: str  # the memory it is retained as in the kind's bank
    details: dict[str, str]


class CaseOut(BaseModel):
    kind: str
    case_id: str
    status: str  # open | decided | pending delivery | awaiting second approval | returned | awaiting blind ... | awaiting lead
    final: bool  # a person's decision stands: act on it
    in_memory: bool  # and it is retained in the kind's bank, so the next recall finds it
    decision: DecisionOut | None
    seq: int | None  # its place among the handed-in cases (None: a row of the queue file)
    source: str | None
    agent: AgentPart | None
    case: dict[str, Any]
