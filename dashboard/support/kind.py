"""Support tickets as a queue kind (review.queue_kind.QueueKind): recall by the customer's tag, the legacy fallback
admitted only by the ownership rule, and the interaction a decision on the drafted response is retained as. Its pages
live beside it (support/pages/: the ticket queue and the migration to tags, on top of this domain); this is what the shared rooms and `decide --kind support` use. A ticket's override says why
in its note: it offers no reason codes (KindBase.reasons).

A ticket's decision is on its draft: "approve" sends it (edited, when a `response` detail differs from it); "reject"
replaces it with the reviewer's own `response`, with a note saying why."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dashboard.demo_data import SUPPORT_HISTORY, TICKETS
from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.wire import MemoryRecord
from dashboard.queue_files import load_rows, shared_rows
from dashboard.review.decisions import Proposal
from dashboard.review.queue_kind import CaseView, Choice, EvidenceRecord, KindPage
from dashboard.review.tag_scoped import KindBase
from dashboard.store.errors import DecisionInputError
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import ticket_decision, ticket_proposal
from dashboard.support.models import Customer, SupportInteraction, Ticket
from dashboard.support.recall import TicketEvidence, TicketRecall, recall_for_ticket


def segments_of(ids: set[str], tickets: Sequence[Ticket], customers: Sequence[Customer]) -> dict[str, dict[str, str]]:
    """Each of these tickets' customer segment, where the directory gives one."""
    segment = {c.name: c.segment for c in customers if c.segment}
    return {t.id: {"segment": segment[t.customer]} for t in tickets if t.id in ids and t.customer in segment}


def _shown(item: TicketEvidence) -> EvidenceRecord:
    return EvidenceRecord(ref=item.ref, text=item.text, tags=item.tags, relevant=item.admitted, why=item.reason)


def evidence_records(found: TicketRecall) -> list[EvidenceRecord]:
    """The ticket's records as any kind's page judges them, each admitted or not with its reason (what an agent's
    citations are held against)."""
    items = found.tagged if found.path == "tagged" else [*found.legacy_admitted, *found.legacy_rejected]
    return [_shown(item) for item in items]


PAGES = Path(__file__).parent / "pages"  # its page scripts, named by path: the domain never imports them


class SupportKind(KindBase):
    name, key, title, nouns = "ticket", "support", "Support tickets", ("ticket", "tickets")
    icon, url_path, page = ":material/support_agent:", "tickets", PAGES / "tickets.py"
    pages_package = "dashboard.support.pages"
    case_param = "ticket"  # its page opens a ticket by `?ticket=<id>`
    more_pages = (KindPage(PAGES / "migration.py", "Migration to tags", ":material/label:", "migration"),)
    default_bank, default_cases = "recall-review-support", TICKETS
    holds, report_by = "support interactions", None  # a ticket's overrides are not grouped
    outcomes = {"approve": "send the draft", "reject": "replace the draft with my own response"}
    kind_fields = ("response",)
    model = Ticket

    @property
    def seed(self) -> list[MemoryRecord]:
        """The demo support history (demo_data/support_history.csv) `python -m dashboard seed` retains: tagged
        interactions, and legacy ones with no tags or metadata, their owner only in their text."""
        records = []
        for item in load_rows(SUPPORT_HISTORY, SupportInteraction):
            if item.tagged:
                tags, metadata = [customer_tag(item.customer)], {"kind": "interaction", "customer": item.customer}
            else:
                tags, metadata = [], {}
            records.append(MemoryRecord(document_id=item.id, content=item.text, tags=tags, metadata=metadata))
        return records

    def columns(self, ticket: Ticket) -> dict[str, object]:
        return {"customer": ticket.customer, "issue": ticket.issue}

    def describe(self, ticket: Ticket) -> str:
        return f"{ticket.id}, {ticket.customer}"

    def label_groups(self, ids: set[str], tickets: Sequence[Ticket], settings) -> dict[str, dict[str, str]]:
        """A ticket's customer segment (the customer directory's, RECALL_REVIEW_CUSTOMERS_FILE)."""
        return segments_of(ids, tickets, shared_rows(settings.customers_file, Customer, id_field="name"))

    def scope(self, ticket: Ticket) -> str:
        return customer_tag(ticket.customer)

    def focus(self, ticket: Ticket) -> tuple[tuple[str, ...], str]:
        return (customer_tag(ticket.customer),), ticket.customer

    def recall(self, recall: RecallFn, bank_id: str, ticket: Ticket, origin: Callable | None = None) -> CaseView:
        found = recall_for_ticket(recall, bank_id, ticket.customer, ticket.issue)
        exact, broader = (
            (found.tagged, []) if found.path == "tagged" else ([], [*found.legacy_admitted, *found.legacy_rejected])
        )
        return CaseView(
            case_id=ticket.id,
            exact=[_shown(e) for e in exact],
            broader=[_shown(e) for e in broader],
            rationale=f"Drafted response: {ticket.drafted_response}",
            native=found,
        )

    def propose(
        self, ticket: Ticket, view: CaseView, choice: Choice, reasons: Mapping[str, str] | None = None
    ) -> Proposal:
        response = choice.details.get("response")
        if choice.outcome not in self.outcomes:
            raise DecisionInputError(
                "outcome",
                f"a ticket's draft is approved or rejected (replaced with a response), not {choice.outcome!r}",
            )
        action = (
            "override"
            if choice.outcome == "reject"
            else ("edit_and_approve" if response and response != ticket.drafted_response else "approve")
        )
        decision = ticket_decision(
            ticket,
            action=action,
            reviewer=choice.reviewer,
            authenticated=choice.authenticated,
            decided_at=choice.decided_at,
            response=response,
            note=choice.note,
            cited_evidence=[e.ref for e in view.native.evidence] if view.native else [],
        ).against(choice.agent)
        return ticket_proposal(ticket, decision, view.native, base_revision=choice.base_revision, shown=choice.shown)


SUPPORT = SupportKind()
