"""The support agent of seed 003, deterministic (no LLM), recalling and retaining through the real gateway.

- `reviewed` and `seed`: the customer's tag first (`any_strict`); only when that is empty, a bank-wide
  recall whose candidates are admitted by the ownership rule alone (dashboard.support.admission). The
  response is drafted from a template over the admitted evidence and retained with the customer's tag
  in the seed's format (`Customer <name> contacted support.` ...), document `agent-<ticket id>`.
- `naive`: the same tagged recall, but its bank-wide fallback's top results are used without the
  ownership rule (the leak seed 003 warns about). It retains nothing, so it cannot spread the leak.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from dashboard.agents.snapshots import RecordingRecall
from dashboard.hindsight.calls import RecallFn, RetainFn
from dashboard.hindsight.wire import MemoryRecord, RecalledMemory
from dashboard.review.agent_runs import AgentRun
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import interaction_text
from dashboard.support.models import Ticket
from dashboard.support.recall import MAX_TOKENS, legacy_query, recall_for_ticket, tagged_query

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


def draft_response(ticket: Ticket, evidence: list[RecalledMemory]) -> tuple[str, list[str]]:
    """(draft, cited refs): the ticket's drafted reply, plus what the history the agent used says."""
    used = evidence[:CITED_IN_DRAFT]
    if not used:
        return ticket.drafted_response, []
    history = "\n".join(f"- {_previous_response(m.text)}" for m in used)
    return f"{ticket.drafted_response}\n\nFrom your earlier contacts with us:\n{history}", [m.document_id or m.id for m in used]


def _naive_evidence(recorder: RecordingRecall, bank_id: str, ticket: Ticket) -> tuple[str, list[RecalledMemory]]:
    tag = customer_tag(ticket.customer)
    tagged = recorder(bank_id, tagged_query(ticket.issue), tags=[tag], tags_match="any_strict", max_tokens=MAX_TOKENS).results
    if tagged:
        return "tagged", tagged
    fallback = recorder(bank_id, legacy_query(ticket.customer, ticket.issue), max_tokens=MAX_TOKENS).results
    return ("bank_wide" if fallback else "none"), fallback[:NAIVE_TOP]


def _evidence(recorder: RecordingRecall, bank_id: str, ticket: Ticket) -> tuple[str, list[RecalledMemory]]:
    found = recall_for_ticket(recorder, bank_id, ticket.customer, ticket.issue)
    admitted = {e.id for e in found.evidence}
    # The evidence as recalled (with metadata), in recall order.
    pool = [m for snap_results in recorder.raw for m in snap_results if m.id in admitted]
    seen, ordered = set(), []
    for m in pool:
        if m.id not in seen:
            seen.add(m.id)
            ordered.append(m)
    return found.path, ordered


class _Recorder(RecordingRecall):
    """RecordingRecall that also keeps the raw results (the draft quotes their text)."""

    def __init__(self, recall: RecallFn):
        super().__init__(recall)
        self.raw: list[list[RecalledMemory]] = []

    def __call__(self, bank_id, query, **kwargs):
        response = super().__call__(bank_id, query, **kwargs)
        self.raw.append(list(response.results))
        return response


def run_support_agent(
    recall: RecallFn, retain: RetainFn | None, bank_id: str, ticket: Ticket, variant: str = "reviewed",
    *, clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> AgentRun:  # fmt: skip
    """One run on one ticket; `retain=None` drafts without retaining. Audit ids are filled in afterwards."""
    if variant not in VARIANTS:
        raise ValueError(f"variant: must be one of {', '.join(VARIANTS)}, got {variant!r}")
    started = clock()
    recorder = _Recorder(recall)
    path, evidence = (_naive_evidence if variant == "naive" else _evidence)(recorder, bank_id, ticket)
    draft, cited = draft_response(ticket, evidence)
    retained = None
    if retain is not None and variant != "naive":
        record = MemoryRecord(
            document_id=agent_document_id(ticket.id), content=interaction_text(ticket.customer, ticket.issue, draft),
            tags=[customer_tag(ticket.customer)],
            metadata={"kind": "interaction", "customer": ticket.customer, "ticket_id": ticket.id, "source": "agent", "variant": variant},
            timestamp=started, context="support response drafted by the agent",
        )  # fmt: skip
        retain(bank_id, [record])
        retained = record.document_id
    return AgentRun(
        run_id=uuid.uuid4().hex, bank_id=bank_id, case_kind="ticket", case_id=ticket.id, agent="support",
        variant=variant, started_at=started, ended_at=clock(), audit_log=False, recalls=recorder.snapshots, cited=cited,
        output={
            "path": path, "draft": draft, "cited": cited, "customer": ticket.customer, "customer_tag": customer_tag(ticket.customer),
            "evidence": [m.document_id or m.id for m in evidence], "evidence_ids": [m.id for m in evidence], "retained": retained,
        },
    )  # fmt: skip
