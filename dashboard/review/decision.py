"""A reviewer's decision on a case, the vocabulary every room shares with the review store."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from dashboard.strict import StrictModel

Outcome = Literal["approve", "reject", "escalate"]
OUTCOMES: tuple[str, ...] = Outcome.__args__


class ReviewerDecision(StrictModel):
    """A reviewer's approve/override of an agent recommendation; retained back as memory."""

    case_id: str = Field(min_length=1)
    case_kind: Literal["exception", "ticket"]
    reviewer: str = Field(min_length=1, max_length=120)
    authenticated: bool
    outcome: Outcome
    overridden: bool
    reason_code: str | None = None
    note: str = Field(default="", max_length=4000)
    agent_recommendation: Outcome | None = None
    cited_evidence: list[str] = Field(default_factory=list)
    decided_at: datetime
    # Support tickets: what the reviewer did with the drafted response, and the response that was approved.
    ticket_action: Literal["approve", "edit_and_approve", "override"] | None = None
    final_response: str | None = Field(default=None, max_length=8000)
