"""A reviewer's decision on a case, the vocabulary every room shares with the review store."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from pydantic import Field

from dashboard.strict import StrictModel

Outcome = Literal["approve", "reject", "escalate"]
OUTCOMES: tuple[str, ...] = Outcome.__args__
NOTE_MAX_CHARS = 4000  # a reviewer's note; a longer paste is refused with what was cut shown, never dropped


class ReviewerDecision(StrictModel):
    """A reviewer's approve/override of an agent recommendation; retained back as memory."""

    case_id: str = Field(min_length=1)
    case_kind: Literal["exception", "ticket"]
    reviewer: str = Field(min_length=1, max_length=120)
    authenticated: bool
    outcome: Outcome
    overridden: bool
    reason_code: str | None = None
    note: str = Field(default="", max_length=NOTE_MAX_CHARS)
    agent_recommendation: Outcome | None = None
    cited_evidence: list[str] = Field(default_factory=list)
    decided_at: datetime
    # Support tickets: what the reviewer did with the drafted response, and the response that was approved.
    ticket_action: Literal["approve", "edit_and_approve", "override"] | None = None
    final_response: str | None = Field(default=None, max_length=8000)


class EvidenceItem(StrictModel):
    """One piece of evidence as the reviewer saw it: which memory, a hash of its text, and how it was flagged."""

    id: str = Field(max_length=200)
    text_sha256: str = Field(max_length=64)
    relevant: bool | None = None


class EvidenceSnapshot(StrictModel):
    """What the reviewer saw when deciding, kept with the decision ("decided on this evidence")."""

    available: bool  # False: recorded while Hindsight (or the cached recall) was unavailable
    items: list[EvidenceItem] = Field(default_factory=list)
    recommendation: Outcome | None = None
    agent_audit_entry: str | None = Field(default=None, max_length=200)  # the agent's recall in Hindsight's audit log


class Hold(StrictModel):
    """Why a decision waits for a second approver: its amount is above its reviewer's approval limit."""

    role: str = Field(max_length=20)  # the proposer's role
    amount: float
    limit: float | None
    scope: str = Field(max_length=200)  # what recalls its release changes (as Proposal.scope)


TICKET_ACTIONS = {"approve": "the drafted response approved as it is", "edit_and_approve": "the drafted response edited, then approved",
                  "override": "an override: the drafted response replaced"}


def decision_summary(d: ReviewerDecision, reasons: Mapping[str, str] | None = None) -> str:
    """What was decided, in a reviewer's words: the outcome, override or not, the reason (with its label from
    `reasons`) and the note, e.g. "Outcome: approve, an override of the agent's reject. Reason: ... Note: ..."."""
    if d.ticket_action:
        what = f"Action: {TICKET_ACTIONS[d.ticket_action]}."
    elif d.overridden:
        what = f"Outcome: {d.outcome}, an override of the agent's {d.agent_recommendation or 'recommendation'}."
    else:
        what = f"Outcome: {d.outcome}, as the agent recommended."
    label = (reasons or {}).get(d.reason_code or "")
    reason = f" Reason: {d.reason_code}" + (f" ({label})." if label else ".") if d.reason_code else ""
    return f"{what}{reason} Note: {d.note or 'none'}"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def conflict_escalation(mine: ReviewerDecision, theirs: ReviewerDecision, decided_at: datetime) -> ReviewerDecision:
    """Two reviewers disagree on one case: record an escalation that names both instead of picking one."""
    note = f"Escalated: conflicting decisions by {theirs.reviewer} ({theirs.outcome}) and {mine.reviewer} ({mine.outcome})."
    if mine.note:
        note = f"{note} {mine.note}"
    return mine.model_copy(
        update={
            "outcome": "escalate", "overridden": mine.agent_recommendation not in (None, "escalate"),
            "reason_code": mine.reason_code or ("OTHER" if mine.case_kind == "exception" else None),
            "note": note[:NOTE_MAX_CHARS], "decided_at": decided_at,
        }
    )
