"""A reviewer's decision on a finance exception, and the precedent it is retained as. No Streamlit here.

The retained record has the tags of the seeded precedents (`vendor:`, `type:`, `kind:decision`) plus
`source:reviewer`, and the same `outcome`/`decided_on` metadata: the next recall for that vendor and type
finds it as an exact precedent (its human-decisions pass asks for that tag), and the policy gives the
newest human decision authority over older precedents. Its document id is derived from the exception id: a revised
decision replaces the earlier one and never duplicates it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Literal

from pydantic import ValidationError

from dashboard.finance.models import (
    OUTCOME_WORDS,
    REVIEWER_TAG,
    VENDOR_PREFIX,
    ExceptionCase,
    decision_scope,
    type_tag,
    vendor_tag,
)
from dashboard.finance.policy import Recommendation
from dashboard.finance.recall import TwoStageResult
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.decisions import Proposal
from dashboard.store.agent_part import AgentPart
from dashboard.store.decision import (
    NOTE_MAX_CHARS,
    OUTCOMES,
    EvidenceItem,
    EvidenceSnapshot,
    ReviewerDecision,
    Shown,
    agent_named,
    text_hash,
)
from dashboard.store.errors import DecisionInputError

# AP-style reason codes; an override must give one.
REASON_CODES: dict[str, str] = {
    "PRICE_AGREED": "Price change agreed with the vendor",
    "CONTRACT_AMENDMENT": "Contract or PO amended",
    "WITHIN_TOLERANCE": "Variance within the agreed tolerance",
    "DUPLICATE_CONFIRMED": "Duplicate invoice confirmed",
    "NOT_A_DUPLICATE": "Not a duplicate: a separate delivery",
    "GOODS_NOT_RECEIVED": "Goods or services not received",
    "RECEIPT_CONFIRMED": "Receipt confirmed by the warehouse",
    "QUANTITY_CONFIRMED": "Billed quantity confirmed",
    "TAX_RATE_ERROR": "Wrong tax rate or exemption applied",
    "VENDOR_CREDIT_NOTE": "Vendor to issue a credit note",
    "NEEDS_APPROVER": "Needs a budget holder's approval",
    "OTHER": "Other (explain in the note)",
}
Action = Literal["accept_recommendation", "override"]


def reasons_for(exception_type: str, configured: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, str]:
    """The reason codes (code -> label) offered for this exception type: its configured list
    (RECALL_REVIEW_REASON_CODES), else the configured "default", else the built-in REASON_CODES."""
    configured = configured or {}
    return dict(configured.get(exception_type) or configured.get("default") or REASON_CODES)


def document_id_for(case_id: str) -> str:
    return f"decision-{case_id}"


def case_id_of(document_id: str | None) -> str | None:
    """The case a decision document belongs to (the inverse of document_id_for), or None."""
    return document_id.removeprefix("decision-") if document_id and document_id.startswith("decision-") else None


def exception_decision(
    case: ExceptionCase,
    recommendation: Recommendation,
    *,
    reviewer: str | None,
    authenticated: bool,
    action: Action,
    outcome: str | None = None,
    reason_code: str | None = None,
    note: str = "",
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    reasons: Mapping[str, str] = REASON_CODES,
    agent: AgentPart | None = None,
) -> ReviewerDecision:
    """`reasons`: the codes offered for the case's type (reasons_for); a code outside them is refused. `action` is
    taken on the dashboard's recompute (`recommendation`); `agent`: the part of the agent that handed the case in,
    which the decision is then compared with (ReviewerDecision.against)."""
    reviewer = (reviewer or "").strip()
    if not reviewer:
        raise DecisionInputError("reviewer", "A reviewer name is required to record a decision.")
    note = (note or "").strip()
    reason_code = reason_code or None
    if reason_code is not None and reason_code not in reasons:
        raise DecisionInputError(
            "reason_code", f"Unknown reason code {reason_code!r}; choose one of {', '.join(reasons)}."
        )
    if action == "accept_recommendation":
        final, overridden = recommendation.action, False
    elif action == "override":
        if outcome not in OUTCOMES:
            raise DecisionInputError("outcome", f"An override needs an outcome: one of {', '.join(OUTCOMES)}.")
        if outcome == recommendation.action:
            raise DecisionInputError(
                "outcome",
                f"The agent already recommends {outcome}: approve the recommendation instead of overriding it.",
            )
        if reason_code is None:
            raise DecisionInputError("reason_code", "An override needs a reason code.")
        final, overridden = outcome, True
    else:
        raise DecisionInputError("action", f"Unknown action {action!r}.")
    if reason_code == "OTHER" and not note:
        raise DecisionInputError("note", "Reason OTHER needs a note that explains it.")
    if len(note) > NOTE_MAX_CHARS:
        raise DecisionInputError("note", f"The note is {len(note):,} characters; the limit is {NOTE_MAX_CHARS:,}.")
    try:
        return ReviewerDecision(
            case_id=case.id,
            case_kind="exception",
            reviewer=reviewer,
            authenticated=authenticated,
            outcome=final,
            overridden=overridden,
            reason_code=reason_code,
            note=note,
            agent_recommendation=recommendation.action,
            recompute_recommendation=recommendation.action,
            cited_evidence=list(recommendation.cited),
            decided_at=now(),
            report_by=VENDOR_PREFIX,
            words=OUTCOME_WORDS,
        ).against(agent)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise DecisionInputError(str(err["loc"][0]) if err["loc"] else "decision", err["msg"]) from None


def decided_against(decision: ReviewerDecision) -> str:
    """What the person decided against which agent, for the precedent's text (the next recall reads it): "overriding
    agent ap-agent's recommendation to approve." and, when the dashboard's recompute said otherwise than that agent,
    what it recommended."""
    agent, recommended = agent_named(decision), decision.agent_recommendation
    recompute = decision.recompute_recommendation
    if recommended is None:  # an agent that recommended nothing: compared with the recompute
        how = "overriding" if decision.overridden else "agreeing with"
        return f"{how} the dashboard's recompute ({recompute}); {agent} made no recommendation."
    if decision.overridden:
        verdict = f"overriding {agent}'s recommendation to {recommended}."
    else:
        verdict = f"agreeing with {agent}'s recommendation ({recommended})."
    if decision.agent_name and recompute and recompute != recommended:
        verdict += f" The dashboard's recompute recommended {recompute}."
    return verdict


def precedent_record(
    case: ExceptionCase,
    decision: ReviewerDecision,
    recommendation: Recommendation,
    reasons: Mapping[str, str] = REASON_CODES,
) -> MemoryRecord:
    """The precedent retained into the finance bank for this decision (`reasons`: the labels of its type's codes)."""
    verdict = decided_against(decision)
    code = decision.reason_code
    reason = f" Reason: {reasons.get(code) or REASON_CODES.get(code, code)} ({code})." if code else ""
    note = f" Note: {decision.note}" if decision.note else ""
    text = (
        f"Vendor {case.vendor_code} ({case.vendor_name}) {case.exception_type.replace('_', ' ')} on invoice {case.invoice}, "
        f"exception {case.id}. {case.description} Decision: {decision.outcome}, by reviewer {decision.reviewer} {verdict}"
        f"{reason}{note}"
    )
    return MemoryRecord(
        document_id=document_id_for(case.id),
        content=text,
        tags=[vendor_tag(case.vendor_code), type_tag(case.exception_type), "kind:decision", REVIEWER_TAG],
        metadata={
            "vendor_code": case.vendor_code,
            "exception_type": case.exception_type,
            "outcome": decision.outcome,
            "decided_on": decision.decided_at.date().isoformat(),
            "decided_at": decision.decided_at.isoformat(),
            "exception_id": case.id,
            "reviewer": decision.reviewer,
            "authenticated": str(decision.authenticated).lower(),
            "overridden": str(decision.overridden).lower(),
            "reason_code": decision.reason_code or "",
            "note": decision.note,
            "agent_recommendation": decision.agent_recommendation or "",
            "agent_name": decision.agent_name or "",
            "recompute_recommendation": decision.recompute_recommendation or "",
            "agent_confidence": f"{recommendation.confidence:.2f}",
            "cited_evidence": ",".join(decision.cited_evidence),
            "source": "reviewer",
        },
        timestamp=decision.decided_at,
        context="AP exception decision",
    )


def evidence_snapshot(result: TwoStageResult | None, recommendation: Recommendation) -> EvidenceSnapshot:
    """What the reviewer saw: every precedent shown (id, text hash, relevance) and the recommendation."""
    if result is None:
        return EvidenceSnapshot(available=False, recommendation=recommendation.action)
    items = [
        EvidenceItem(id=e.ref, text_sha256=text_hash(e.text), relevant=e.relevant)
        for e in [*result.exact, *result.broader]
    ]
    return EvidenceSnapshot(available=True, items=items, recommendation=recommendation.action)


def exception_proposal(
    case: ExceptionCase,
    decision: ReviewerDecision,
    recommendation: Recommendation,
    result: TwoStageResult | None,
    reasons: Mapping[str, str] = REASON_CODES,
    *,
    base_revision: int | None = 0,
    shown: Shown | None = None,
) -> Proposal:
    """The one way a finance decision becomes a proposal (the page, bulk approval, the CLI, the tests): its precedent,
    its scope, the evidence it was made on, and the invoice amount the approval limits apply to."""
    return Proposal(
        decision=decision,
        record=precedent_record(case, decision, recommendation, reasons),
        scope=decision_scope(case.vendor_code, case.exception_type),
        base_revision=base_revision,
        evidence=evidence_snapshot(result, recommendation),
        amount=case.invoice_amount,
        shown=shown,
    )
