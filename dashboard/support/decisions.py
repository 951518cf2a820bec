"""A support lead's decision on a ticket's drafted response, and the memory retained from it.

- approve: the drafted response as it is (outcome approve);
- edit_and_approve: the reviewer's edited version of the draft (outcome approve, not an override);
- override: the draft is rejected and the reviewer's own response replaces it (outcome reject,
  overridden, a note saying why is required).

The retained record uses the customer's tag (the same `customer_tag` as recall) and the legacy text
format, so the next recall for that customer takes the tagged path:

    Customer <name> contacted support.\\n\\nCurrent issue:\\n<issue>\\n\\nSupport response:\\n<response>

Its document id is derived from the ticket (`ticket-T-2004`): a revised decision replaces the memory,
it never duplicates it. No Streamlit here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import ValidationError

from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.decisions import Proposal
from dashboard.store.decision import (
    DETAIL_MAX_CHARS,
    EvidenceItem,
    EvidenceSnapshot,
    ReviewerDecision,
    Shown,
    text_hash,
)
from dashboard.store.errors import DecisionInputError
from dashboard.support.admission import has_marker_at_start, marker
from dashboard.support.customers import customer_tag
from dashboard.support.models import Ticket
from dashboard.support.recall import TicketRecall

TicketAction = Literal["approve", "edit_and_approve", "override"]
ACTIONS: dict[str, str] = {  # what each choice records, in the words of the buttons and the confirmation
    "approve": "Send the draft as it is",
    "edit_and_approve": "Send my edit of the draft",
    "override": "Replace the draft with my own response",
}
ACTION_WORDS: dict[str, str] = {  # what was done, as the Audit log, the export and the confirmations say it
    "approve": "the drafted response sent as it is",
    "edit_and_approve": "the drafted response edited, then sent",
    "override": "the draft replaced by the reviewer's own response",
}


def sent_response(decision: ReviewerDecision) -> str | None:
    """The response a ticket's decision sent (its own detail), None on a decision of another kind."""
    return decision.details.get("response")


def document_id_for(ticket_id: str) -> str:
    return f"ticket-{ticket_id}"


def interaction_text(customer: str, issue: str, response: str) -> str:
    return f"{marker(customer)}\n\nCurrent issue:\n{issue.strip()}\n\nSupport response:\n{response.strip()}"


def ticket_decision(
    ticket: Ticket,
    *,
    action: str,
    reviewer: str,
    authenticated: bool,
    decided_at: datetime,
    response: str | None = None,
    note: str = "",
    cited_evidence: list[str] | None = None,
) -> ReviewerDecision:
    reviewer = (reviewer or "").strip()
    if not reviewer:
        raise DecisionInputError("reviewer", "a reviewer name is required")
    if action not in ACTIONS:
        raise DecisionInputError("action", f"must be one of {', '.join(ACTIONS)}")
    text = (response or "").strip()
    if action == "approve":
        text = ticket.drafted_response
    elif not text:
        raise DecisionInputError("response", "the response must not be empty")
    elif action == "override" and not note.strip():
        raise DecisionInputError("note", "an override needs a note saying why the draft was replaced")
    if len(text) > DETAIL_MAX_CHARS:
        raise DecisionInputError(
            "response", f"the response is {len(text):,} characters; the limit is {DETAIL_MAX_CHARS:,}"
        )
    try:
        return ReviewerDecision(
            case_id=ticket.id,
            case_kind="ticket",
            reviewer=reviewer,
            authenticated=authenticated,
            outcome="reject" if action == "override" else "approve",
            overridden=action == "override",
            note=note.strip(),
            agent_recommendation="approve",
            cited_evidence=list(cited_evidence or []),
            decided_at=decided_at,
            action=action,
            action_words=ACTION_WORDS[action],
            details={"response": text},
        )
    except ValidationError as exc:  # e.g. a reviewer name or a response over its length limit
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else "decision"
        raise DecisionInputError(field, err["msg"]) from None


def interaction_record(ticket: Ticket, decision: ReviewerDecision) -> MemoryRecord:
    """The memory retained for an approved (or overriding) response, tagged for the ticket's customer."""
    content = interaction_text(ticket.customer, ticket.issue, sent_response(decision) or ticket.drafted_response)
    try:  # the ownership rule that reads the record back must own it, and the name must make a tag
        owned, tag = has_marker_at_start(content, ticket.customer), customer_tag(ticket.customer)
    except ValueError as exc:  # AmbiguousName, or a name without a letter or digit
        raise DecisionInputError("customer", str(exc)) from None
    if not owned:
        raise DecisionInputError(
            "customer", f"the retained text would not be read back as {ticket.customer!r}'s history"
        )
    return MemoryRecord(
        document_id=document_id_for(ticket.id),
        content=content,
        tags=[tag],
        metadata={
            "kind": "interaction",
            "customer": ticket.customer,
            "ticket_id": ticket.id,
            "reviewer": decision.reviewer,
            "authenticated": str(decision.authenticated).lower(),
            "action": decision.action or "",
            "decided_at": decision.decided_at.isoformat(),
            "source": "reviewer",
        },
        timestamp=decision.decided_at,
        context="support ticket response approved by a reviewer",
    )


def ticket_evidence_snapshot(recall: TicketRecall | None, ticket: Ticket) -> EvidenceSnapshot:
    """What the reviewer saw: the evidence allowed into the ticket (id, text hash), or that there was none, and the
    drafted response."""
    draft = text_hash(ticket.drafted_response)
    if recall is None:
        return EvidenceSnapshot(available=False, draft_sha256=draft)
    items = [
        EvidenceItem(id=e.document_id or e.id, text_sha256=text_hash(e.text), relevant=e.admitted)
        for e in recall.evidence
    ]
    return EvidenceSnapshot(available=True, items=items, draft_sha256=draft)


def ticket_proposal(
    ticket: Ticket,
    decision: ReviewerDecision,
    recall: TicketRecall | None,
    *,
    base_revision: int | None = 0,
    shown: Shown | None = None,
) -> Proposal:
    """The one way a ticket's decision becomes a proposal (the page, the CLI): the interaction it is retained as,
    under the customer's tag, and the evidence it was made on. DecisionInputError when the record would not be
    read back as the customer's."""
    return Proposal(
        decision=decision,
        record=interaction_record(ticket, decision),
        scope=customer_tag(ticket.customer),
        base_revision=base_revision,
        evidence=ticket_evidence_snapshot(recall, ticket),
        shown=shown,
    )
