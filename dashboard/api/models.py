"""The API's answers as models, shared by the routes and the client (pydantic only: an agent imports these)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dashboard.store.agent_part import AgentPart

MAX_WAIT_S = 60.0  # the longest a read waits for a final decision (the route's `wait`, the tool's `wait_s`)
MAX_PAGE = 500  # the most cases a page lists


class DecisionOut(BaseModel):
    outcome: str
    action: str | None  # the kind's own action (a ticket's "edit_and_approve"); None for a kind that has none
    action_words: str  # what was decided, in words: the kind's action words, else the outcome's ("approve for payment")
    agent: str | None  # the agent that handed the case in (None: a queue file's case, compared with the recompute)
    agent_recommendation: str | None  # that agent's recommendation
    overridden: bool  # the person decided otherwise than that agent recommended
    recompute_recommendation: str | None  # the dashboard's own recompute (None: a kind that drafts, not recommends)
    agreed_with_recompute: bool | None  # the person decided as the recompute recommended
    reason_code: str | None
    note: str
    reviewer: str
    authenticated: bool
    decided_at: str
    revision: int  # 1 for a first decision; each revision of it (with its reason) the next
    revision_reason: str | None = None  # why the standing decision revised the one before it; None: a first decision
    document_id: str  # the memory it is retained as in the kind's bank
    details: dict[str, str]


class WithdrawalOut(BaseModel):
    by: str
    why: str
    at: str


class CaseOut(BaseModel):
    kind: str
    case_id: str
    status: str  # open | decided | pending delivery | awaiting second approval | returned | awaiting blind ... | awaiting lead | withdrawn
    final: bool  # a person's decision stands: act on it
    in_memory: bool  # and it is retained in the kind's bank, so the next recall finds it
    decision: DecisionOut | None
    seq: int | None  # its place among the handed-in cases (None: a row of the queue file)
    source: str | None
    agent: AgentPart | None
    case: dict[str, Any]
    withdrawal: WithdrawalOut | None = None  # withdrawn by its agent while open: out of the queue, never decided


class ItemResult(BaseModel):
    """One case of a batch: its place in the batch, the status a single submit would have answered, and the case or
    the refusal."""

    index: int
    status: int  # 201 stored, 200 the same case again, 409, 422
    case_id: str | None
    case: CaseOut | None = None
    error: str | None = None
    fields: list[str] = []


class BatchOut(BaseModel):
    results: list[ItemResult]
    stored: int  # 201s
    unchanged: int  # 200s
    refused: int
