"""A reviewer's decision on a case, the vocabulary every room shares with the review store."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator

from dashboard.store.agent_part import AgentPart
from dashboard.store.identity import ISSUER_MAX, SUBJECT_MAX, Person
from dashboard.strict import StrictModel

Outcome = Literal["approve", "reject", "escalate"]  # the outcomes the built-in kinds decide; a kind may have its own
OUTCOMES: tuple[str, ...] = Outcome.__args__
OUTCOME = r"^[a-z][a-z_]{0,29}$"  # any kind's outcome, as the review store keeps it
# The words of a decision recorded before decisions carried their kind's (`ReviewerDecision.words`): only the built-in
# kinds decided then, and of theirs only finance's outcomes have words of their own (a ticket's are its action words).
RECORDED_BEFORE_WORDS: dict[str, str] = {"approve": "approve for payment", "reject": "reject", "escalate": "escalate"}
REVISION_REASON_MAX_CHARS = 500  # why a standing decision is revised
NOTE_MAX_CHARS = 4000  # a reviewer's note; a longer paste is refused with what was cut shown, never dropped
DETAIL_MAX_CHARS = 8000  # one field of a kind's own (a ticket's sent response)
CASE_KIND = r"^[a-z][a-z0-9_]{0,19}$"  # a queue kind's name as the review store keeps it


class ReviewerDecision(StrictModel):
    """A reviewer's approve/override of an agent recommendation; retained back as memory."""

    case_id: str = Field(min_length=1)
    case_kind: str = Field(pattern=CASE_KIND)  # the queue kind's name (dashboard.kinds); this room names none
    reviewer: str = Field(min_length=1, max_length=120)
    authenticated: bool
    # Signed in: who the OpenID provider said the reviewer is (its `sub` at its `iss`); None for a typed name.
    reviewer_subject: str | None = Field(default=None, max_length=SUBJECT_MAX)
    reviewer_issuer: str | None = Field(default=None, max_length=ISSUER_MAX)
    # The role the decision was made with (the decision service sets it); None on decisions recorded before it was kept.
    role: str | None = Field(default=None, max_length=20)
    outcome: str = Field(pattern=OUTCOME)
    overridden: bool
    reason_code: str | None = None
    note: str = Field(default="", max_length=NOTE_MAX_CHARS)
    # The recommendation the decision is compared with: the agent's that handed the case in (`agent_name`), else the
    # dashboard's own recompute (a queue file's case). `overridden` is whether the person decided otherwise than it.
    agent_recommendation: str | None = Field(default=None, pattern=OUTCOME)
    agent_name: str | None = Field(default=None, max_length=120)  # None: the dashboard's own agent (its recompute)
    recompute_recommendation: str | None = Field(
        default=None, pattern=OUTCOME
    )  # the dashboard's; None: a kind that drafts
    cited_evidence: list[str] = Field(default_factory=list)
    decided_at: datetime
    # What a kind records beyond an outcome, each validated by the kind that builds the decision: its own action (a
    # ticket's "edit_and_approve"), what was decided as its button said it, and fields of its own (a ticket's response).
    action: str | None = Field(default=None, max_length=40)
    action_words: str | None = Field(default=None, max_length=200)
    details: dict[str, str] = Field(default_factory=dict, max_length=20)
    # Why the reviewer revised the case's standing decision (Revise decision, `decide --revise`); None: a first decision.
    revision_reason: str | None = Field(default=None, max_length=REVISION_REASON_MAX_CHARS)
    # The tag its kind groups overrides by in the Overview (finance: "vendor"); None: the kind does not group them.
    report_by: str | None = Field(default=None, max_length=40)
    # Its kind's outcomes in its own words (QueueKind.outcomes), so every room says the outcome and the agent's
    # recommendation as the kind's buttons do; empty on a decision recorded before they were kept.
    words: dict[str, str] = Field(default_factory=dict, max_length=20)

    def said(self, outcome: str | None, absent: str = "none") -> str:
        """`outcome` in its kind's words ("credit" -> "accept the dispute: ask for a credit note")."""
        if outcome is None:
            return absent
        return (self.words or RECORDED_BEFORE_WORDS).get(outcome, outcome)

    @property
    def person(self) -> Person:
        return Person(self.reviewer, subject=self.reviewer_subject, issuer=self.reviewer_issuer)

    def by(self, person: Person) -> ReviewerDecision:
        """This decision as `person`'s: their name, and their subject and issuer when signed in."""
        return self.model_copy(
            update={
                "reviewer": person.name,
                "authenticated": person.signed_in,
                "reviewer_subject": person.subject,
                "reviewer_issuer": person.issuer,
            }
        )

    @property
    def agreed_with_recompute(self) -> bool | None:
        """Whether the person decided as the dashboard's recompute recommended; None where it recommends no outcome."""
        return None if self.recompute_recommendation is None else self.outcome == self.recompute_recommendation

    def against(self, agent: AgentPart | None) -> ReviewerDecision:
        """This decision compared with the agent that handed its case in: `overridden` says whether the person decided
        otherwise than that agent recommended; the recompute's recommendation stays beside it. Without an agent part
        (a queue file's case), or from an agent that recommended no outcome, it stays compared with the recompute."""
        if agent is None:
            return self
        if agent.recommendation is None:  # nothing of its own to override: `overridden` stays the recompute's
            return self.model_copy(update={"agent_name": agent.name, "agent_recommendation": None})
        return self.model_copy(
            update={
                "agent_name": agent.name,
                "agent_recommendation": agent.recommendation,
                "overridden": self.outcome != agent.recommendation,
            }
        )

    @field_validator("details")
    @classmethod
    def _details_bounded(cls, details: dict[str, str]) -> dict[str, str]:
        for name, value in details.items():
            if not name or len(name) > 40 or len(value) > DETAIL_MAX_CHARS:
                raise ValueError(
                    f"details: {name[:40]!r} must be named (40 characters at most) and {DETAIL_MAX_CHARS:,} characters at most"
                )
        return details


class EvidenceItem(StrictModel):
    """One piece of evidence as the reviewer saw it: which memory, a hash of its text, and how it was flagged."""

    id: str = Field(max_length=200)
    text_sha256: str = Field(max_length=64)
    relevant: bool | None = None


class EvidenceSnapshot(StrictModel):
    """What the reviewer saw when deciding, kept with the decision ("decided on this evidence")."""

    available: bool  # False: recorded while Hindsight (or the cached recall) was unavailable
    items: list[EvidenceItem] = Field(default_factory=list)
    recommendation: str | None = Field(default=None, pattern=OUTCOME)
    draft_sha256: str | None = Field(default=None, max_length=64)  # a ticket: the drafted response shown
    agent_audit_entry: str | None = Field(default=None, max_length=200)  # the agent's recall in Hindsight's audit log

    def fingerprint(self) -> str:
        """One hash of the evidence (which records, their texts, their flags), to tell "the same" from "changed"."""
        parts = sorted(f"{item.id}\t{item.text_sha256}\t{item.relevant}" for item in self.items)
        return text_hash(f"{self.available}\n" + "\n".join(parts))


class Shown(StrictModel):
    """What the screen showed when the reviewer acted: its case, the agent's recommendation (or drafted response),
    and the evidence. The decision service refuses a decision whose case shows otherwise by the time it is recorded."""

    case_id: str = Field(min_length=1, max_length=200)
    recommendation: str | None = Field(default=None, max_length=200)  # an outcome, or "draft <hash>" for a ticket
    evidence: str = Field(max_length=64)  # EvidenceSnapshot.fingerprint()

    @classmethod
    def of(cls, case_id: str, evidence: EvidenceSnapshot) -> Shown:
        draft = f"draft {evidence.draft_sha256[:16]}" if evidence.draft_sha256 else None
        return cls(case_id=case_id, recommendation=evidence.recommendation or draft, evidence=evidence.fingerprint())


def changed_since_shown(shown: Shown, now: Shown, words: Mapping[str, str] | None = None) -> str | None:
    """Why a decision made on the screen `shown` may not be recorded against the case as it is `now`, in a
    reviewer's words (`words`: the kind's outcomes, QueueKind.outcomes); None when the case still shows what the
    screen showed."""
    if shown.case_id != now.case_id:
        return (
            f"This decision was made on {shown.case_id}, but {now.case_id} is open now. Nothing was recorded: "
            f"open {shown.case_id} to decide it."
        )
    if shown.recommendation != now.recommendation:
        if (now.recommendation or "").startswith("draft "):
            return f"The drafted response on {now.case_id} changed since it was shown. Nothing was recorded: read it again."
        said = words if words is not None else RECORDED_BEFORE_WORDS
        then, since = (said.get(r or "", r or "none") for r in (shown.recommendation, now.recommendation))
        return (
            f"The agent's recommendation on {now.case_id} changed since it was shown ({then} then, {since} now). "
            "Nothing was recorded: read the case again."
        )
    if shown.evidence != now.evidence:
        return f"The evidence on {now.case_id} changed since it was shown. Nothing was recorded: read the case again."
    return None


class Hold(StrictModel):
    """Why a decision waits for a second approver: its amount is above its reviewer's approval limit."""

    role: str = Field(max_length=20)  # the proposer's role
    amount: float
    limit: float | None
    scope: str = Field(max_length=200)  # what recalls its release changes (as Proposal.scope)


def outcome_words(d: ReviewerDecision) -> str:
    """The decision as its reviewer chose it: its kind's action words when it has them ("the drafted response sent
    as it is"), else its outcome ("approve for payment")."""
    return d.action_words or d.said(d.outcome)


def compared(d: ReviewerDecision) -> dict:
    """Whom the decision is compared with, as the API and the webhook report it: the agent that handed the case in (None:
    the dashboard's own), its recommendation and whether the person overrode it; apart, the dashboard's recompute and
    whether the person agreed with it."""
    return {
        "agent": d.agent_name,
        "agent_recommendation": d.agent_recommendation,
        "overridden": d.overridden,
        "recompute_recommendation": d.recompute_recommendation,
        "agreed_with_recompute": d.agreed_with_recompute,
    }


def agent_named(d: ReviewerDecision) -> str:
    """The agent a decision is compared with: "agent ap-agent" for a case it handed in, "the agent" for the dashboard's own."""
    return f"agent {d.agent_name}" if d.agent_name else "the agent"


def decision_summary(d: ReviewerDecision, reasons: Mapping[str, str] | None = None) -> str:
    """What was decided, in a reviewer's words: the outcome, override or not, the reason (with its label from
    `reasons`, the codes configured for the case) and the note, e.g. "Outcome: approve for payment, an override of
    the agent's reject. Reason: ... Note: ..."."""
    if d.action:  # a kind's own action (a ticket's draft sent, edited or replaced)
        what = f"Action: {outcome_words(d)}."
    elif d.overridden:
        agent = d.said(d.agent_recommendation, "recommendation")
        what = f"Outcome: {outcome_words(d)}, an override of {agent_named(d)}'s {agent}."
    else:
        what = f"Outcome: {outcome_words(d)}, as {agent_named(d)} recommended."
    label = (reasons or {}).get(d.reason_code or "")
    reason = f" Reason: {d.reason_code}" + (f" ({label})." if label else ".") if d.reason_code else ""
    revised = f" Revised because: {d.revision_reason}" if d.revision_reason else ""
    return f"{what}{reason} Note: {d.note or 'none'}{revised}"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def conflict_escalation(
    mine: ReviewerDecision, theirs: ReviewerDecision, decided_at: datetime, reason_code: str | None = None
) -> ReviewerDecision:
    """Two reviewers disagree on one case: record an escalation that names both instead of picking one (`reason_code`:
    the kind's code for it when the reviewer gave none and an override needs one)."""
    note = f"Escalated: conflicting decisions by {theirs.reviewer} ({theirs.outcome}) and {mine.reviewer} ({mine.outcome})."
    if mine.note:
        note = f"{note} {mine.note}"
    return mine.model_copy(
        update={
            "outcome": "escalate",
            "overridden": mine.agent_recommendation not in (None, "escalate"),
            # said as its kind says "escalate" (its words), not as the outcome it replaces was
            "action_words": mine.action_words if mine.action else None,
            "reason_code": mine.reason_code or reason_code,
            "note": note[:NOTE_MAX_CHARS],
            "decided_at": decided_at,
        }
    )
