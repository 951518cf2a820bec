"""Support tickets: the queue, and for the ticket opened which past interactions reached it and why, its
drafted response and the lead's decision on it."""

from __future__ import annotations

from datetime import date

import pandas as pd
import streamlit as st

from components.review_keys import review_keys
from components.safe_text import md
from components.status_banner import render_evidence_unavailable
from components.then_now import render_then_now
from components.when import local_day
from components.workflow import age_badge, claim_controls, flash, keep_selection, unknown_link
from dashboard.agents.incidents import incident_text, ownership
from dashboard.app import access, audit, resources, ticket_case, ticket_recalls
from dashboard.app.ticket_evidence import render_ticket_evidence
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.support.admission import AmbiguousName
from dashboard.support.directory import check_directory
from dashboard.support.flags import history_used
from dashboard.support.flags import stored as stored_ticket_flags
from dashboard.support.models import Customer, Ticket

QUEUE_KEY = "ticket_queue"


def _status(latest: dict, ticket_id: str) -> str:
    stored = latest.get(ticket_id)
    if stored is None:
        return "open"
    return f"{(stored.ticket_action or stored.outcome).replace('_', ' ')} ({stored.state})"


def queue_table(bank: str, tickets: list[Ticket], latest: dict, decided: set[str]) -> str | None:
    """The queue (flags from the review store); returns the ticket to open: selected, else deep-linked."""
    flags = resources.casework().flags(bank, "ticket")  # measured as tickets are recalled, kept in the store
    queue = pd.DataFrame(
        [{"ticket": t.id, "customer": t.customer, "issue": t.issue, "opened": t.opened_on, "status": _status(latest, t.id),
          "history used": history_used(stored_ticket_flags(flags.get(t.id))), "incident": incident_text(flags.get(t.id))}
         for t in tickets]
    )
    ids = [t.id for t in tickets]
    keep_selection(QUEUE_KEY, "ticket", ids, decided, ticket_case.KEYS.goto, open_first=False)
    event = st.dataframe(queue, key=QUEUE_KEY, on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch",
                         column_config={"opened": st.column_config.DateColumn(format="D MMM YYYY")})
    rows = list(event.selection.rows) if event is not None else []
    if rows:
        st.query_params["ticket"] = ids[rows[0]]  # the address bar becomes a deep link to this ticket
        return ids[rows[0]]
    return st.query_params.get("ticket")


def page() -> None:
    st.title("Support tickets")
    st.caption(
        "Which past interactions reached each ticket and why each one was allowed in. Tagged history comes first; "
        "old untagged history is admitted only when its first sentence proves the customer owns it."
    )
    settings = resources.settings()
    try:
        tickets = load_rows(settings.tickets_file, Ticket)
        customers = load_rows(settings.customers_file, Customer, id_field="name")
    except QueueFileError as exc:
        st.error("The ticket queue or the customer directory could not be loaded:", icon=":material/error:")
        st.text(str(exc))
        return
    for problem in check_directory(customers):
        st.error("Customer directory problem:")
        st.text(problem)
    bank = settings.support_bank
    latest = resources.outbox().decision_states(bank, "ticket")  # one indexed query per run
    me = access.reviewer("ticket_reviewer")
    by_id = {t.id: t for t in tickets}
    decided = set(latest)
    ticket_id = queue_table(bank, tickets, latest, decided)
    if ticket_id is None or ticket_id not in by_id:
        flash(ticket_case.KEYS.flash)  # the last decision's confirmation, when no ticket is open
    if ticket_id is not None and ticket_id not in by_id:
        unknown_link("ticket", ticket_id, list(by_id), decided, goto_key=ticket_case.KEYS.goto)
        return
    if ticket_id is None:
        st.info("Select a ticket in the queue to audit its recall.", icon=":material/touch_app:")
        return

    ticket = by_id[ticket_id]
    st.divider()
    st.header(md(f"Ticket {ticket.id}"))
    with st.container(horizontal=True, vertical_alignment="center"):
        age_badge((date.today() - ticket.opened_on).days, settings.sla_days)
        free = claim_controls(resources.casework(), bank, "ticket", ticket.id, me.name, lambda: access.permitted("decide"))
    keys = review_keys(
        [t.id for t in tickets], ticket.id, table_key=QUEUE_KEY, param="ticket", prefix="tic",
        override_state=(f"ticket_action_{ticket.id}", "override"), decided=decided, can_decide=free and access.can("decide"),
    )
    st.text(f"Customer: {ticket.customer}   opened {local_day(ticket.opened_on)}")
    if ticket.customer not in {c.name for c in customers}:
        st.warning("This customer is not in the customer directory.")
    st.text("Issue:\n" + ticket.issue)

    try:
        recall = ticket_recalls.recall_ticket(bank, ticket.customer, ticket.issue)
    except AmbiguousName as exc:
        st.error("This customer's name cannot be used for recall:")
        st.text(str(exc))
        return
    except HindsightError as exc:
        render_evidence_unavailable(settings.base_url, exc)
        recall = None
    evidence = st.container()  # filled after the form: a decision reruns the page before this ticket's evidence is drawn again
    st.subheader("Drafted response")
    st.text(ticket.drafted_response)
    ticket_case.decision_area(bank, ticket, recall, [t.id for t in tickets], decided, free=free, approve_key=keys.approve, me=me)
    if recall is not None:
        with evidence:
            render_ticket_evidence(ticket, recall, customers, bank)
            render_then_now(audit.then_now(bank, "ticket", ticket.id, recall.evidence), lambda r: ownership(r, recall.tag))


page()
