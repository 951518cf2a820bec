"""The support agent of seed 003, deterministic (no LLM), recalling and retaining through the real gateway.

- `reviewed` and `seed`: the customer's tag first (`any_strict`); only when that is empty, a bank-wide
  recall whose candidate documents are admitted by the ownership rule alone (dashboard.support.admission),
  on their original text. The response is drafted from a template over the admitted documents' original
  text and retained with the customer's tag in the seed's format (`Customer <name> contacted support.`
  ...), document `agent-<ticket id>`. Observations that mix in another customer's records are excluded and
  named in the run's output.
- Untrusted records inform, never decide: with `origin` (the review store's check), a record of unknown origin is never
  quoted in the draft; the run names it (`unknown_origin`) and says the ticket needs a person (`escalated`).
- `naive`: the same tagged recall, but its bank-wide fallback's top documents are used without the
  ownership rule (the leak seed 003 warns about). It retains nothing, so it cannot spread the leak.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from dashboard.agents.snapshots import RecordingRecall
from dashboard.hindsight.calls import RecallFn, RetainFn
from dashboard.hindsight.documents import group
from dashboard.hindsight.wire import MemoryRecord
from dashboard.store.agent_runs import AgentRun
from dashboard.support.admission import Admission, Verdict
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import interaction_text
from dashboard.support.models import Ticket
from dashboard.support.recall import (
    MAX_TOKENS,
    ReadDocument,
    TicketEvidence,
    check_observations,
    legacy_query,
    recall_for_ticket,
    tagged_query,
)
from dashboard.trust.origin import OriginOf

VARIANTS = ("reviewed", "seed", "naive")
NAIVE_TOP = 3  # results of the bank-wide fallback the naive agent takes as history
CITED_IN_DRAFT = 2


def agent_document_id(ticket_id: str) -> str:
    return f"agent-{ticket_id}"


def _previous_response(text: str) -> str:
    """The support response of a retained interaction (or the record's first line), one line, short."""
    _, found, after = text.partition("Support response:")
    line = " ".join((after if found else text).split())
    return line[:200]


def draft_response(ticket: Ticket, evidence: list[TicketEvidence]) -> tuple[str, list[str]]:
    """(draft, cited refs): the ticket's drafted reply, plus what the documents the agent used say (their
    original text, never a rewritten fact)."""
    used = [e for e in evidence if e.kind == "document"][:CITED_IN_DRAFT]
    if not used:
        return ticket.drafted_response, []
    history = "\n".join(f"- {_previous_response(e.text)}" for e in used)
    return f"{ticket.drafted_response}\n\nFrom your earlier contacts with us:\n{history}", [e.ref for e in used]


def _naive_evidence(
    recall: RecallFn, bank_id: str, ticket: Ticket, read_document: ReadDocument | None
) -> tuple[str, list[TicketEvidence], list[TicketEvidence]]:
    """The seed's warning: whatever the tagged recall returns (observations too), else the bank-wide fallback's
    top documents, taken as history with no ownership rule. The observations are judged on the side, only
    to report what the naive agent let through."""
    tag = customer_tag(ticket.customer)
    tagged = group(
        recall(bank_id, tagged_query(ticket.issue), tags=[tag], tags_match="any_strict", max_tokens=MAX_TOKENS)
    )
    taken = Admission(verdict=Verdict.ADMITTED, reason="taken without the ownership rule (naive)")
    if tagged.documents or tagged.observations:
        checked = check_observations(bank_id, ticket.customer, tagged.observations, read_document)
        evidence = [TicketEvidence.of_document(d, taken) for d in tagged.documents]
        return "tagged", evidence + [o.model_copy(update={"admitted": True}) for o in checked], checked
    fallback = group(recall(bank_id, legacy_query(ticket.customer, ticket.issue), max_tokens=MAX_TOKENS))
    found = fallback.documents[:NAIVE_TOP]
    return ("bank_wide" if found else "none"), [TicketEvidence.of_document(d, taken) for d in found], []


def _evidence(
    recall: RecallFn, bank_id: str, ticket: Ticket, read_document: ReadDocument | None
) -> tuple[str, list[TicketEvidence], list[TicketEvidence]]:
    found = recall_for_ticket(recall, bank_id, ticket.customer, ticket.issue, read_document=read_document)
    return found.path, found.evidence, found.observations


def run_support_agent(
    recall: RecallFn,
    retain: RetainFn | None,
    bank_id: str,
    ticket: Ticket,
    variant: str = "reviewed",
    *,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    read_document: ReadDocument | None = None,
    origin: OriginOf | None = None,
) -> AgentRun:
    """One run on one ticket; `retain=None` drafts without retaining. Audit ids are filled in afterwards. `origin`:
    the check of a record's signature, so the run says who wrote each record it recalled."""
    if variant not in VARIANTS:
        raise ValueError(f"variant: must be one of {', '.join(VARIANTS)}, got {variant!r}")
    started = clock()
    recorder = RecordingRecall(recall, origin=origin)
    path, evidence, observations = (_naive_evidence if variant == "naive" else _evidence)(
        recorder, bank_id, ticket, read_document
    )
    unknown = (
        []
        if variant == "naive" or origin is None
        else [
            e.ref
            for e in evidence
            if e.kind == "document"
            and origin(e.document_id, e.tags, e.metadata, bank=bank_id, text=e.text if e.verbatim else None).kind
            == "unknown"
        ]
    )
    draft, cited = draft_response(ticket, [e for e in evidence if e.ref not in unknown])
    used = {e.ref for e in evidence}
    retained = None
    if retain is not None and variant != "naive":
        record = MemoryRecord(
            document_id=agent_document_id(ticket.id),
            content=interaction_text(ticket.customer, ticket.issue, draft),
            tags=[customer_tag(ticket.customer)],
            metadata={
                "kind": "interaction",
                "customer": ticket.customer,
                "ticket_id": ticket.id,
                "source": "agent",
                "variant": variant,
            },
            timestamp=started,
            context="support response drafted by the agent",
        )
        retain(bank_id, [record])
        retained = record.document_id
    return AgentRun(
        run_id=uuid.uuid4().hex,
        bank_id=bank_id,
        case_kind="ticket",
        case_id=ticket.id,
        agent="support",
        variant=variant,
        started_at=started,
        ended_at=clock(),
        audit_log=False,
        recalls=recorder.snapshots,
        cited=cited,
        output={
            "path": path,
            "draft": draft,
            "cited": cited,
            "customer": ticket.customer,
            "customer_tag": customer_tag(ticket.customer),
            "evidence": [e.ref for e in evidence],
            "retained": retained,
            # records nobody here wrote: read by a person, never quoted in the reply
            "unknown_origin": unknown,
            "escalated": bool(unknown),
            "mixing_observations": [  # observations that carry another customer's records, and whether they were used
                {
                    "ref": o.ref,
                    "reason": o.reason,
                    "sources": sorted({c.document_id or c.fact_id for c in o.sources}),
                    "used": o.ref in used,
                }
                for o in observations
                if o.verdict == Verdict.OBSERVATION_MIXES.value
            ],
        },
    )
