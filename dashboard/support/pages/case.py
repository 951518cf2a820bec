"""The deciding side of a support ticket: its decision state, the form (send the draft, edit it then send, replace
it), a conflict with a decision made meanwhile, a blind second review, and comments. Every input is keyed by the
ticket; a submit carries what the screen showed. Every decision goes through the decision service
(dashboard/app/deciding.py)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import streamlit as st

from components import submission
from components.conflict import render_conflict
from components.decision_form import (
    Drafts,
    clear_if_sent,
    hold_long_note,
    not_sent,
    refill_long_note,
    sending,
    show_long_note,
)
from components.revisions import render_history
from components.safe_text import md
from components.workflow import REVIEWER_LABEL, Slot, auto_advance_toggle, render_comments
from dashboard.app import access, blind_review, deciding, resources
from dashboard.app.agent_part import agent_part_of
from dashboard.store.decision import NOTE_MAX_CHARS, REVISION_REASON_MAX_CHARS, Shown, changed_since_shown
from dashboard.store.errors import AlreadyDecided, DecisionInputError
from dashboard.support.decisions import ACTIONS, ticket_decision, ticket_evidence_snapshot, ticket_proposal
from dashboard.support.kind import SUPPORT
from dashboard.support.models import Ticket
from dashboard.support.pages.admission_view import render_decision_state
from dashboard.support.recall import TicketRecall

KEYS = deciding.QueueKeys(
    flash="ticket_flash", conflict="ticket_conflict", goto="ticket_goto", pending="ticket_submitted"
)
RESPONSE_LABEL, NOTE_LABEL = "Response to send", "Note (required when you replace the draft)"
REVISE_LABEL, REVISE_BUTTON = "Reason for revising (required)", "Revise decision"
SHORT_ACTIONS = {
    "approve": "Send the draft",
    "edit_and_approve": "Send my edit",
    "override": "Replace it",
}  # side by side in the form
FIELD_LABELS = {"reviewer": REVIEWER_LABEL, "response": RESPONSE_LABEL, "note": NOTE_LABEL, "revise": REVISE_LABEL}
DRAFTS = Drafts("ticket_drafts")  # this session's unsent ticket decisions, apart from the finance page's


def action_key(ticket: Ticket) -> str:
    return f"ticket_action_{ticket.id}"


def _keys(ticket: Ticket, *, revising: bool = False) -> dict[str, str]:
    keys = {
        "action": action_key(ticket),
        "response": f"ticket_response_{ticket.id}",
        "note": f"ticket_note_{ticket.id}",
    }
    return {**keys, "revise": f"ticket_revise_{ticket.id}"} if revising else keys


def shown_of(ticket: Ticket, recall: TicketRecall | None) -> Shown:
    """What the ticket's screen shows: the ticket, its drafted response, the evidence (a submit carries it)."""
    return Shown.of(ticket.id, ticket_evidence_snapshot(recall, ticket))


def _form(ticket: Ticket, shown: Shown, why: str | None, revising: int | None = None) -> dict | None:
    """The ticket's form (the reviewer's name is in the header); returns the long note it refused, if any. `revising`:
    the revision of the ticket's standing decision; the form then revises it, and asks why."""
    keys = _keys(ticket, revising=revising is not None)
    fresh = {"action": "approve", "response": ticket.drafted_response, "note": "", "revise": ""}
    clear_if_sent(ticket.id, {key: fresh[name] for name, key in _keys(ticket, revising=True).items()}, DRAFTS)
    DRAFTS.refill(ticket.id, keys, {"action": list(ACTIONS)})
    st.session_state.setdefault(keys["response"], ticket.drafted_response)  # the agent's draft, until edited
    held_note = refill_long_note(ticket.id)
    if revising is not None:
        st.subheader(REVISE_BUTTON)
        st.caption(
            f"Records revision {revising + 1} in place of the decision above, which stays in the ticket's history. "
            "It needs a reason."
        )
    if why:  # a greyed-out button says why
        st.caption(md(f"Record decision is off: {why}."))
    keep = DRAFTS.on_change(ticket.id, keys, fresh)  # its notice: DRAFTS.notice, under the form's feedback
    # Not a st.form: a form sends its fields only with its button, so a half-written decision vanished when a key moved
    # the page on. Each field is sent as it changes and kept as the ticket's draft.
    with st.container(key=f"ticket_decision_{ticket.id}", border=True):
        st.radio(
            "Decision",
            list(ACTIONS),
            format_func=SHORT_ACTIONS.get,
            key=keys["action"],
            horizontal=True,
            label_visibility="collapsed",
            **keep,
        )
        st.text_area(
            RESPONSE_LABEL,
            key=keys["response"],
            max_chars=8000,
            height=120,
            help="The agent's draft. Send my edit or Replace it sends what this box holds.",
            **keep,
        )
        # No max_chars: the browser would drop a longer paste whole; the limit is checked on submit instead.
        st.text_area(NOTE_LABEL, key=keys["note"], height=68, help=f"At most {NOTE_MAX_CHARS:,} characters.", **keep)
        if revising is not None:
            st.text_input(
                REVISE_LABEL,
                key=keys["revise"],
                max_chars=REVISION_REASON_MAX_CHARS,
                placeholder="Why the decision above no longer stands",
                **keep,
            )
        st.button(
            "Record decision" if revising is None else REVISE_BUTTON,
            type="primary",
            key=f"ticket_submit_{ticket.id}",
            icon=":material/gavel:",
            disabled=why is not None,
            on_click=submission.hold,
            args=(KEYS.pending, shown, "form", keys),
        )
    return held_note


def decision_area(
    bank: str,
    ticket: Ticket,
    recall: TicketRecall | None,
    shown: Shown,
    queue: Sequence[str],
    decided: Collection[str],
    blind,
    *,
    header: Slot,
    free: bool,
    me,
    describe: Callable[[str], str | None],
) -> None:
    """The right column; `blind`: the ticket's first decision awaiting a blind second review or a lead, or None."""
    stored = resources.outbox().latest_in_bank(bank, "ticket", ticket.id)
    standing = resources.decisions().standing(bank, "ticket", ticket.id) if blind is None else None
    if blind is None and stored is not None:  # an open ticket says so in its header
        render_decision_state(stored)  # a pending one is delivered by the delivery worker
        render_history(resources.decisions().revisions(bank, "ticket", ticket.id))
    elif blind is not None:  # nothing of the first decision while the second review is blind
        blind_review.blind_heading(blind)
    # The revision this page showed: a decision made on it meets any that landed since as a conflict.
    seen_key = f"tic_seen_{bank}_{ticket.id}"
    seen = st.session_state.get(seen_key, stored.revision if stored else 0)
    st.session_state[seen_key] = stored.revision if stored else 0
    submitted = submission.take(KEYS.pending)

    conflict = deciding.pending_conflict(KEYS, ticket.id)
    if conflict:
        choice = render_conflict(
            conflict["theirs"], conflict["proposal"].decision, key=f"conflict_{ticket.id}", can_escalate=False
        )
        if choice is not None:
            st.session_state.pop(KEYS.conflict)
            st.session_state.pop(seen_key, None)
            if choice == "replace":
                rebased = replace(conflict["proposal"], base_revision=conflict["theirs"].revision)
                refused = deciding.record(
                    bank,
                    rebased,
                    KEYS,
                    queue=queue,
                    decided=decided,
                    describe=describe,
                    revise=deciding.conflict_reason(conflict["theirs"]),
                )
                header.refuse(f"Not recorded: {refused}")
                return
            st.rerun()
        return
    if not access.can("decide"):
        st.info(
            f"Your role ({access.current_role()}) can read this ticket but not decide it.", icon=":material/visibility:"
        )
        if submitted is not None:  # a press this page never offered (a crafted event): said, and nothing recorded
            header.refuse(f"Not recorded: your role ({access.current_role()}) may not decide tickets.")
        return

    why = (
        blind_review.problem_caption(blind, me, free=free)
        if blind is not None
        else (None if free else "someone else holds this ticket (see who above)")
    )
    long_note = _form(ticket, shown, why, revising=None if standing is None else stored.revision)
    form_slot = Slot(f"ticket_form_feedback_{ticket.id}")
    with form_slot.box:
        show_long_note(long_note, where=f"ticket_long_note_{ticket.id}", note_label=NOTE_LABEL)
    DRAFTS.notice(ticket.id, where="ticket")
    auto_advance_toggle()
    render_comments(
        resources.casework(),
        bank,
        "ticket",
        ticket.id,
        me.person,
        lambda: access.permitted("decide"),
        hidden=blind_review.comments_hidden(blind),
    )
    if submitted is not None:
        _record(
            bank,
            ticket,
            recall,
            submitted,
            me,
            seen_key,
            seen,
            blind,
            queue,
            decided,
            describe,
            header if submitted.origin == "key" else form_slot,
            standing,
        )


def _record(
    bank, ticket, recall, submitted, me, seen_key, seen, blind, queue, decided, describe, slot: Slot, standing
) -> None:
    """Record a submit (the form's, or the accept key's: send the draft) through the service; a refusal shows in `slot`.
    `standing`: the ticket's standing decision; only the form's Revise decision, with a reason, changes it."""
    if submitted.shown.case_id != ticket.id:  # pressed as the page moved on: said before its fields are read
        slot.refuse(f"Not recorded: {changed_since_shown(submitted.shown, shown_of(ticket, recall))}")
        return
    revise = submitted.values.get("revise") if submitted.origin == "form" else None
    if standing is not None and revise is not None and not str(revise).strip():  # asked here, to focus the box to fill
        slot.refuse(
            f"Not recorded: {AlreadyDecided(standing).standing_words} Revising it needs a reason.", focus=REVISE_LABEL
        )
        return
    values = submitted.values if submitted.origin == "form" else {"action": "approve"}
    note = str(values.get("note") or "")
    try:
        decision = ticket_decision(
            ticket,
            action=str(values.get("action")),
            reviewer=me.name if me.signed_in else st.session_state.get("ticket_reviewer"),
            authenticated=me.signed_in,
            decided_at=datetime.now(UTC),
            response=str(values.get("response") or ""),
            note=note,
            cited_evidence=[e.ref for e in (recall.evidence if recall else [])],
        ).against(agent_part_of(SUPPORT, ticket.id))
        proposal = ticket_proposal(ticket, decision, recall, base_revision=seen, shown=submitted.shown)
    except DecisionInputError as exc:  # it covers pydantic's ValidationError too, naming the field
        if exc.field == "note" and len(note) > NOTE_MAX_CHARS:
            hold_long_note(ticket.id, note, _keys(ticket)["note"])
            st.rerun()
        slot.refuse(f"Not recorded: {exc.problem}", focus=FIELD_LABELS.get(exc.field))
        return
    st.session_state.pop(seen_key, None)
    draft = sending(ticket.id, DRAFTS)  # recorded, the page reruns and the form starts clean
    if blind is not None:
        refused = deciding.second_review(
            bank, replace(proposal, base_revision=blind.first.revision), KEYS, lead=blind.awaiting_lead
        )
    else:
        refused = deciding.record(
            bank,
            proposal,
            KEYS,
            queue=queue,
            decided=decided,
            describe=describe,
            revise=None if revise is None else str(revise),
        )
    not_sent(ticket.id, draft, DRAFTS)  # refused: everything chosen and typed stays
    slot.refuse(f"Not recorded: {refused}")
