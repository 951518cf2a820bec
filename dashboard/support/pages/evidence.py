"""The evidence part of a support ticket's page: what reached the ticket, the customer's legacy history
the recall left out (with a one-customer migration), and the actions on one record.

The Tickets page calls `render_ticket_evidence`; the rules live in `dashboard/support/`, the drawing in
`components/`. Here the role is checked right before each write, and the bank's freshness is moved after it.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from components.safe_text import md
from components.status_banner import plain_error
from dashboard.app import access, curating, labelling, resources
from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.write_facts import asker
from dashboard.review.casework import Casework
from dashboard.review.relevance import RecallContext
from dashboard.support.legacy_history import migrate_customer, not_consulted, tag_for_customer, ticket_records
from dashboard.support.migration import MigrationError
from dashboard.support.models import Customer, Ticket
from dashboard.support.pages import case as ticket_case
from dashboard.support.pages import recalls as ticket_recalls
from dashboard.support.pages.admission_view import render_evidence, render_how_recalled, render_path, render_report
from dashboard.support.pages.legacy_history_view import RecordAction, render_not_consulted, render_record_actions
from dashboard.support.recall import TicketRecall
from dashboard.support.record_flags import FlagError, flag_record, flags_on
from dashboard.support.trust import origins_in_words

OUTCOME_KEY = "ticket_legacy_outcome"  # what the last action did, shown after the rerun
DETAILS_OPEN = "ticket_recall_details_open"  # "How this was recalled": open or not, kept from ticket to ticket


def render_ticket_evidence(ticket: Ticket, recall: TicketRecall, customers: Sequence[Customer], bank: str) -> None:
    key = f"legacy_{ticket.id}"
    render_path(recall)
    _render_outcome(ticket.id)
    skipped = None
    if recall.path == "tagged":
        try:
            skipped = not_consulted(recall, ticket_recalls.legacy_plan(bank, customers))
        except (HindsightError, MigrationError) as exc:
            st.warning("This customer's old untagged records could not be checked:", icon=":material/history:")
            st.text(plain_error(exc))
    if render_not_consulted(skipped, can_migrate=access.can("apply_migration"), key=key) and access.permitted(
        "apply_migration"
    ):
        _write(
            bank,
            ticket,
            lambda: migrate_customer(
                resources.gateway(), bank, customers, ticket.customer, retain=resources.signed_retain("migration")
            ),
        )
    origins = origins_in_words(
        [*recall.evidence, *recall.legacy_rejected],
        resources.outbox().provenance.origin,
        bank,
        asker(resources.gateway(), bank),
    )
    render_evidence(
        recall,
        labelling.card_labels(bank, "ticket", ticket.id, recall_contexts(recall), "ticket_reviewer"),
        origins,
    )
    used = recall.tagged if recall.path == "tagged" else recall.legacy_admitted
    documents = list(dict.fromkeys(e.document_id for e in used if e.document_id))
    curating.record_controls(
        bank, documents, "ticket_reviewer", ticket_case.KEYS.flash, key=f"curate_record_{ticket.id}"
    )

    rows = ticket_records(recall, skipped)
    casework = resources.casework()
    me = access.reviewer("ticket_reviewer")
    action = render_record_actions(
        rows,
        flags_on(casework, bank, [r.key for r in rows]),
        can_flag=access.can("decide"),
        can_tag=access.can("apply_migration"),
        signed_in=me.name if me.signed_in else None,
        key=key,
    )
    if action is not None:
        _act(ticket, action, customers, bank, casework)
    render_how_recalled(recall, bank, ticket.id, key=DETAILS_OPEN)


def _act(ticket: Ticket, action: RecordAction, customers: Sequence[Customer], bank: str, casework: Casework) -> None:
    record = action.record
    if action.kind == "tag":
        if access.permitted("apply_migration"):
            _write(
                bank,
                ticket,
                lambda: tag_for_customer(
                    resources.gateway(),
                    bank,
                    customers,
                    ticket.customer,
                    record.document_id,
                    record.tags,
                    retain=resources.signed_retain("migration"),
                ),
            )
        return
    if not access.permitted("decide"):
        return
    try:
        me = access.reviewer("ticket_reviewer")  # signed in: the provider's person, never what a field said
        flag_record(
            casework,
            bank,
            record.key,
            author=me.person if me.signed_in else action.author,
            ticket_id=ticket.id,
            note=action.note,
        )
    except FlagError as exc:
        st.error("Not flagged:", icon=":material/error:")
        st.text(str(exc))
        return
    st.session_state[OUTCOME_KEY] = {"ticket": ticket.id, "flagged": record.key}
    st.rerun()


def _write(bank: str, ticket: Ticket, run) -> None:
    """Run a migration write; keep its report (or why it was refused) for the next run of the page."""
    try:
        report = run()
    except (MigrationError, HindsightError) as exc:  # TagRefused, DirectoryError, Hindsight down: a message, no write
        st.error("Not done:", icon=":material/block:")
        st.text(plain_error(exc))
        return
    ticket_recalls.migrated(bank)  # every instance's next recall sees the tagged records
    st.session_state[OUTCOME_KEY] = {"ticket": ticket.id, "report": report}
    st.rerun()


def _render_outcome(ticket_id: str) -> None:
    outcome = st.session_state.get(OUTCOME_KEY)
    if not outcome or outcome["ticket"] != ticket_id:
        return
    st.session_state.pop(OUTCOME_KEY)
    if "report" in outcome:
        render_report(outcome["report"])
    else:
        st.success(f"Flagged {md(outcome['flagged'])} for review.", icon=":material/flag:")


def recall_contexts(recall: TicketRecall) -> dict[str, RecallContext]:
    """The tagged recall's (or, on the legacy path, the candidate search's) request, with the records used."""
    request = recall.requests[0] if recall.path == "tagged" or len(recall.requests) < 2 else recall.requests[-1]
    ranked = [e.document_id for e in recall.evidence if e.document_id]
    context = RecallContext(query=request.query, tags=request.tags, tags_match=request.tags_match, ranked=ranked)
    return dict.fromkeys(ranked, context)
