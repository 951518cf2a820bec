"""The deciding side of a support ticket: its decision state, the form (approve, edit and approve, override),
a conflict with a decision made meanwhile, and comments. Every decision goes through the decision service
(dashboard/app/deciding.py)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import streamlit as st

from components.admission import render_decision_state
from components.conflict import render_conflict
from components.decision_form import hold_long_note, long_note
from components.safe_text import md
from components.workflow import auto_advance_toggle, flash, render_comments
from dashboard.app import access, blind_review, deciding, resources
from dashboard.review.decision import NOTE_MAX_CHARS
from dashboard.review.decisions import Proposal
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import ACTIONS, TicketDecisionError, interaction_record, ticket_decision, ticket_evidence_snapshot
from dashboard.support.models import Ticket
from dashboard.support.recall import TicketRecall

KEYS = deciding.QueueKeys(flash="ticket_flash", conflict="ticket_conflict", goto="ticket_goto")


def _note_key(ticket: Ticket) -> str:
    return f"ticket_note_{ticket.id}"


def _form(ticket: Ticket, me, free: bool, why: str = "someone else holds this ticket (see who above)") -> tuple[bool, str, str, str, str | None, bool]:
    """(submitted, action, response, note, reviewer, signed in): the name field outside the form, so the
    Approve key (A) records under it without submitting the form."""
    if me.signed_in:
        st.text(f"Signed in as {me.name}")
        reviewer = me.name
    else:
        reviewer = st.text_input("Reviewer name (required; recorded as unauthenticated)", key="ticket_reviewer", max_chars=120)
    long_note(ticket.id)
    if not free:  # a greyed-out button says why
        st.caption(md(f"Record decision is off: {why}."))
    with st.form(f"ticket_decision_{ticket.id}", clear_on_submit=False):
        action = st.radio("Action", list(ACTIONS), format_func=ACTIONS.get, key=f"ticket_action_{ticket.id}", horizontal=True)
        response = st.text_area(
            "Response (used by edit-and-approve and override; approve sends the draft as it is)",
            value=ticket.drafted_response, key=f"ticket_response_{ticket.id}", max_chars=8000,
        )
        # No max_chars: the browser would drop a longer paste whole; the limit is checked on submit instead.
        note = st.text_area("Note (required for an override)", key=_note_key(ticket), help=f"At most {NOTE_MAX_CHARS:,} characters.")
        submitted = st.form_submit_button("Record decision", type="primary", icon=":material/gavel:", disabled=not free)
    return submitted, action, response, note, reviewer, me.signed_in


def decision_area(
    bank: str, ticket: Ticket, recall: TicketRecall | None, queue: Sequence[str], decided: Collection[str],
    *, free: bool, approve_key: bool, me,
) -> None:
    st.subheader("Decision")
    stored = resources.outbox().latest_in_bank(bank, "ticket", ticket.id)
    blind = resources.decisions().blind_case(bank, "ticket", ticket.id)
    if blind is None:
        render_decision_state(stored)  # a pending one is delivered by the delivery worker
    else:  # nothing of the first decision while the second review is blind
        blind_review.blind_heading(blind)
    flash(KEYS.flash)  # the last decision's confirmation, here beside the form: a toast would lie over its fields
    # The revision this page showed: a decision made on it meets any that landed since as a conflict.
    seen_key = f"tic_seen_{bank}_{ticket.id}"
    seen = st.session_state.get(seen_key, stored.revision if stored else 0)
    st.session_state[seen_key] = stored.revision if stored else 0

    conflict = deciding.pending_conflict(KEYS, ticket.id)
    if conflict:
        choice = render_conflict(conflict["theirs"], conflict["proposal"].decision, key=f"conflict_{ticket.id}", can_escalate=False)
        if choice is not None:
            st.session_state.pop(KEYS.conflict)
            st.session_state.pop(seen_key, None)
            if choice == "replace":
                rebased = replace(conflict["proposal"], base_revision=conflict["theirs"].revision)
                deciding.record(bank, rebased, KEYS, queue=queue, decided=decided, what="decision")
            st.rerun()
        return
    if not access.can("decide"):
        st.info(f"Your role ({access.current_role()}) can read this ticket but not decide it.", icon=":material/visibility:")
        return

    why = blind_review.problem_caption(blind, me, free=free) if blind is not None else None
    submitted, action, response, note, reviewer, signed_in = _form(ticket, me, free and why is None, why or "someone else holds this ticket (see who above)")
    auto_advance_toggle()
    render_comments(resources.casework(), bank, "ticket", ticket.id, me.name, lambda: access.permitted("decide"),
                    hidden=blind_review.comments_hidden(blind))
    if approve_key and not submitted and free:  # the A key: approve the drafted response as it is
        submitted, action, note = True, "approve", ""
    if not submitted:
        return
    try:
        decision = ticket_decision(
            ticket, action=action, reviewer=reviewer, authenticated=signed_in, decided_at=datetime.now(UTC),
            response=response, note=note, cited_evidence=[e.ref for e in (recall.evidence if recall else [])],
        )
        record = interaction_record(ticket, decision)
    except TicketDecisionError as exc:  # it covers pydantic's ValidationError too, naming the field
        if exc.field == "note" and len(note) > NOTE_MAX_CHARS:
            hold_long_note(ticket.id, note, _note_key(ticket))
            st.rerun()
        st.error("Not recorded:", icon=":material/error:")
        st.text(str(exc))
        return
    st.session_state.pop(seen_key, None)
    proposal = Proposal(
        decision=decision, record=record, scope=customer_tag(ticket.customer), base_revision=seen,
        evidence=ticket_evidence_snapshot(recall),
    )
    if blind is not None:
        deciding.second_review(bank, replace(proposal, base_revision=blind.first.revision), KEYS, lead=blind.awaiting_lead)
        return
    deciding.record(bank, proposal, KEYS, queue=queue, decided=decided, what=f"decision ({decision.ticket_action.replace('_', ' ')})")
