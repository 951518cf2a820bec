"""Support tickets, read like the finance page: the queue in a panel, then one ticket at a time with its keys, its
incidents, what reached it (the records used first, the ones found but not used folded behind their count) beside
the drafted response and the decision on it."""

from __future__ import annotations

from datetime import date

import pandas as pd
import streamlit as st

from components.review_keys import Accept, review_keys
from components.safe_text import md
from components.status_banner import render_evidence_unavailable
from components.then_now import render_then_now
from components.when import local_day
from components.workflow import Slot, age_badge, claim_controls, flash, keep_selection, reviewer_field, unknown_link
from dashboard.agents.incidents import INCIDENTS_KEY, KIND_LABELS, banner, incident_text, ownership
from dashboard.app import access, audit, blind_review, resources
from dashboard.app.agent_part import agent_part_of, show_agent_part
from dashboard.app.case_figures import figures_from, statuses_from
from dashboard.hindsight.errors import HindsightError
from dashboard.kinds import cases_of
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.reporting.headline import figures_words
from dashboard.support.admission import AmbiguousName
from dashboard.support.directory import check_directory
from dashboard.support.flags import history_used
from dashboard.support.flags import stored as stored_ticket_flags
from dashboard.support.kind import SUPPORT, evidence_records
from dashboard.support.models import Customer, Ticket
from dashboard.support.pages import case as ticket_case
from dashboard.support.pages import recalls as ticket_recalls
from dashboard.support.pages.case import SHORT_ACTIONS
from dashboard.support.pages.evidence import render_ticket_evidence

QUEUE_KEY, QUEUE_OPEN = "ticket_queue", "ticket_queue_open"


def _decision(latest: dict, ticket_id: str) -> str:
    """The ticket's standing decision in the form's words (a held one is not a decision yet: its status says so)."""
    stored = latest.get(ticket_id)
    return SHORT_ACTIONS.get(stored.action or "", stored.outcome) if stored else ""


def queue_panel(bank: str, tickets: list[Ticket], latest: dict, status: dict[str, str], flags: dict) -> list[int]:
    """The queue in a panel (its table drawn only while it is open); returns the table's selected rows."""
    ids = [t.id for t in tickets]
    panel = st.expander(
        "Queue: every ticket, its history and incidents", icon=":material/list:", key=QUEUE_OPEN, on_change="rerun"
    )
    if not panel.open:  # the table is not drawn: the address bar says which ticket is open, not a stale row
        st.session_state.pop(QUEUE_KEY, None)
    keep_selection(QUEUE_KEY, "ticket", ids, latest, ticket_case.KEYS.goto)
    if not panel.open:
        return []
    with panel:
        drafts = set(ticket_case.DRAFTS.cases())  # this session's unsent drafts, marked beside the status
        queue = pd.DataFrame(
            [
                {
                    "ticket": t.id,
                    "customer": t.customer,
                    "issue": t.issue,
                    "opened": t.opened_on,
                    "status": f"{status[t.id]}, unsent draft" if t.id in drafts else status[t.id],
                    "decision": _decision(latest, t.id),
                    "history used": history_used(stored_ticket_flags(flags.get(t.id))),
                    "incident": incident_text(flags.get(t.id)),
                }
                for t in tickets
            ]
        )
        event = st.dataframe(
            queue,
            key=QUEUE_KEY,
            on_select="rerun",
            selection_mode="single-row",
            hide_index=True,
            width="stretch",
            column_config={
                "opened": st.column_config.DateColumn(format="D MMM YYYY"),
                "issue": st.column_config.TextColumn(width="medium"),
                "incident": st.column_config.TextColumn(width="medium"),
            },
        )
    return list(event.selection.rows)


def page() -> None:
    st.title("Support tickets")
    settings = resources.settings()
    try:
        tickets = list(cases_of(settings, SUPPORT))  # the queue file's rows, then the tickets agents handed in
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
    flags = resources.casework().flags(bank, "ticket")  # measured as tickets are recalled, kept in the store
    by_id = {t.id: t for t in tickets}
    held, blind = resources.decisions().held_cases(bank, "ticket"), resources.decisions().blind_cases(bank, "ticket")
    status = statuses_from(by_id, latest, held, blind)
    drafts = [t for t in ticket_case.DRAFTS.cases() if t in by_id]
    st.caption(
        f"{len(tickets)} tickets: {figures_words(figures_from(by_id, latest, held, blind))}."
        + (f" Unsent drafts, kept for this session: {md(', '.join(drafts))}." if drafts else "")
    )
    rows = queue_panel(bank, tickets, latest, status, flags)
    if rows:
        st.query_params["ticket"] = tickets[rows[0]].id  # the address bar becomes a deep link to this ticket
    ticket_id = st.query_params.get("ticket")
    if ticket_id not in by_id:
        flash(ticket_case.KEYS.flash)  # the last decision's confirmation, when no ticket is open
    if ticket_id is not None and ticket_id not in by_id:
        unknown_link("ticket", ticket_id, list(by_id), latest, goto_key=ticket_case.KEYS.goto)
        return
    if ticket_id is None:
        st.info("No ticket in the queue.", icon=":material/inbox:")
        return
    ticket_view(
        bank,
        by_id[ticket_id],
        tickets,
        customers,
        latest,
        status[ticket_id],
        blind.get(ticket_id),
        flags.get(ticket_id),
    )


def _header(
    bank: str, ticket: Ticket, tickets: list[Ticket], latest: dict, status: str, blind, me, accept: Accept
) -> tuple[bool, Slot]:
    """Id and customer, age, status, claim, the keys and, under them, the place for what the last action said."""
    with st.container(key="ticket_header"):
        st.header(md(f"{ticket.id}: {ticket.customer}"))
        with st.container(horizontal=True, vertical_alignment="center"):
            st.text(f"opened {local_day(ticket.opened_on)}")
            age_badge((date.today() - ticket.opened_on).days, resources.settings().sla_days)
            decision = _decision(latest, ticket.id)  # a held decision names nothing: its status says it is held
            st.badge(
                f"{status}: {decision}" if decision else status,
                color="green" if decision else ("orange" if status != "open" else "blue"),
            )
            if ticket_case.DRAFTS.of(ticket.id):  # chosen or typed here, not sent: kept for this session
                st.badge("unsent draft", color="violet", icon=":material/edit_note:")
            reviewer_field(me, "ticket_reviewer")
            free = claim_controls(
                resources.casework(),
                bank,
                "ticket",
                ticket.id,
                me.person,
                lambda: access.permitted("decide"),
                cannot_claim=blind_review.cannot_claim(blind, me),
            )
        review_keys(
            [t.id for t in tickets],
            ticket.id,
            table_key=QUEUE_KEY,
            param="ticket",
            prefix="tic",
            accept=accept,
            override_state=(ticket_case.action_key(ticket), "override"),
            decided=latest,
            can_decide=access.can("decide"),
            why_not=None if free else "someone else holds it (see who above)",
        )
        slot = Slot("ticket_feedback")
    flash(ticket_case.KEYS.flash, slot)
    return free, slot


def _incidents(bank: str, ticket: Ticket, case_flags: dict | None, recall) -> None:
    """The ticket's own incidents, on the ticket: whose run each came from, and whether the records this page uses are
    among those it concerns (the agents' recorded runs, checked as the Incidents page checks them)."""
    kinds = (case_flags or {}).get(INCIDENTS_KEY) or []
    if not kinds:
        return
    try:
        found = audit.case_incidents(bank, "ticket", ticket.id)
    except HindsightError:
        found = []
    used = {e.document_id or e.ref for e in recall.evidence} if recall is not None else set()
    for incident in found:
        said = banner(incident, used)
        (st.error if said.affected else st.warning)(md(said.sentence), icon=":material/report:")
    for kind in sorted(set(kinds) - {i.kind for i in found}):  # kept by the last check, not found again now
        st.warning(
            f"Incident: {KIND_LABELS.get(kind, kind)}, in an agent's recorded run on this ticket.",
            icon=":material/report:",
        )
    if kinds:
        st.page_link(
            "views/incidents.py", label="What the agent recalled and answered", icon=":material/arrow_forward:"
        )


def ticket_view(
    bank: str,
    ticket: Ticket,
    tickets: list[Ticket],
    customers: list[Customer],
    latest: dict,
    status: str,
    blind,
    case_flags: dict | None,
) -> None:
    """One ticket: `blind`, its first decision awaiting a blind second review or a lead (None: not blind)."""
    me = access.reviewer("ticket_reviewer")
    try:
        recall = ticket_recalls.recall_ticket(bank, ticket.customer, ticket.issue)
        recall_error = None
    except AmbiguousName as exc:
        st.error("This customer's name cannot be used for recall:")
        st.text(str(exc))
        return
    except HindsightError as exc:
        recall, recall_error = None, exc
    shown = ticket_case.shown_of(ticket, recall)
    free, header = _header(
        bank,
        ticket,
        tickets,
        latest,
        status,
        blind,
        me,
        Accept("Send the draft", ticket_case.KEYS.pending, shown, "send the draft"),
    )
    left, right = st.columns([3, 2], gap="large")
    with left:
        _incidents(bank, ticket, case_flags, recall)
        st.text("Issue:\n" + ticket.issue)
        show_agent_part(
            SUPPORT, agent_part_of(SUPPORT, ticket.id), None, evidence_records(recall) if recall is not None else []
        )
        if ticket.customer not in {c.name for c in customers}:
            st.warning("This customer is not in the customer directory.")
        evidence = (
            st.container()
        )  # filled after the form: a decision reruns the page before this ticket's evidence is drawn again
    with right:
        ticket_case.decision_area(
            bank,
            ticket,
            recall,
            shown,
            [t.id for t in tickets],
            latest,
            blind,
            header=header,
            free=free,
            me=me,
            describe={t.id: f"{t.id}, {t.customer}" for t in tickets}.get,
        )
    with evidence:
        if recall is None:
            render_evidence_unavailable(resources.settings().base_url, recall_error)
            return
        render_ticket_evidence(ticket, recall, customers, bank)
        render_then_now(audit.then_now(bank, "ticket", ticket.id, recall.evidence), lambda r: ownership(r, recall.tag))


page()
