from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from components.admission import render_decision_state, render_recall
from components.conflict import render_conflict
from components.identity import signed_in_reviewer
from components.review_keys import review_keys
from components.safe_text import md
from components.status_banner import render_evidence_unavailable
from components.then_now import render_then_now
from dashboard.agents.incidents import ownership
from dashboard.app import access, state
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.reporting.overview import latest_per_case
from dashboard.review.outbox import RevisionConflict
from dashboard.support.admission import AmbiguousName
from dashboard.support.decisions import (
    ACTIONS,
    TicketDecisionError,
    interaction_record,
    ticket_decision,
    ticket_evidence_snapshot,
)
from dashboard.support.directory import check_directory
from dashboard.support.models import Customer, Ticket

QUEUE_KEY = "ticket_queue"
FLASH_KEY = "ticket_flash"
CONFLICT_KEY = "ticket_conflict"

st.title("Support tickets")
st.caption(
    "Which past interactions reached each ticket and why each one was allowed in. Tagged history comes first; "
    "old untagged history is admitted only when its first sentence proves the customer owns it."
)

try:
    tickets = load_rows(state.settings().tickets_file, Ticket)
    customers = load_rows(state.settings().customers_file, Customer, id_field="name")
except QueueFileError as exc:
    st.error("The ticket queue or the customer directory could not be loaded:", icon=":material/error:")
    st.text(str(exc))
    st.stop()
for problem in check_directory(customers):
    st.error("Customer directory problem:")
    st.text(problem)

settings = state.settings()
bank = settings.support_bank
outbox = state.outbox()
by_id = {t.id: t for t in tickets}
known = {c.name for c in customers}
latest = latest_per_case(outbox.history("ticket"), {"ticket": bank})  # one read of the log per run


def _status(ticket_id: str) -> str:
    stored = latest.get(("ticket", ticket_id))
    if stored is None:
        return "open"
    action = (stored.decision.ticket_action or stored.decision.outcome).replace("_", " ")
    return f"{action} ({stored.state})"


queue = pd.DataFrame(
    [{"ticket": t.id, "customer": t.customer, "issue": t.issue, "opened": t.opened_on.isoformat(), "status": _status(t.id)}
     for t in tickets]
)  # fmt: skip
event = st.dataframe(queue, key=QUEUE_KEY, on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch")

rows = list(event.selection.rows) if event is not None else []
ticket_id = None
if rows:
    ticket_id = queue.iloc[rows[0]]["ticket"]
    st.query_params["ticket"] = ticket_id  # the address bar becomes a deep link to this ticket
elif st.query_params.get("ticket"):
    ticket_id = st.query_params["ticket"]
    if ticket_id not in by_id:
        st.warning("The link names a ticket that is not in the queue:")
        st.text(ticket_id)
        st.stop()
if ticket_id is None:
    st.info("Select a ticket in the queue to audit its recall.", icon=":material/touch_app:")
    st.stop()

ticket = by_id[ticket_id]
st.divider()
st.header(md(f"Ticket {ticket.id}"))
keys = review_keys(
    list(queue["ticket"]), ticket.id, table_key=QUEUE_KEY, param="ticket", prefix="tic", override_state=(f"ticket_action_{ticket.id}", "override")
)  # fmt: skip
st.text(f"Customer: {ticket.customer}   opened {ticket.opened_on.isoformat()}")
if ticket.customer not in known:
    st.warning("This customer is not in the customer directory.")
st.text("Issue:\n" + ticket.issue)

flash = st.session_state.pop(FLASH_KEY, None)
if flash:
    st.toast(md(flash), icon=":material/check:")

try:
    recall = state.recall_ticket(bank, ticket.customer, ticket.issue)
except AmbiguousName as exc:
    st.error("This customer's name cannot be used for recall:")
    st.text(str(exc))
    st.stop()
except HindsightError as exc:
    render_evidence_unavailable(settings.base_url, exc)
    recall = None

if recall is not None:
    render_recall(recall, bank, key=f"recall_{ticket.id}", ticket_id=ticket.id)
    render_then_now(
        state.then_now(bank, "ticket", ticket.id, recall.evidence),
        lambda r: ownership(r, recall.tag), key=f"then_now_{ticket.id}",
    )  # fmt: skip

st.subheader("Drafted response")
st.text(ticket.drafted_response)

st.subheader("Decision")
stored = outbox.latest_in_bank(bank, "ticket", ticket.id)
render_decision_state(stored)  # a pending one is delivered by the delivery worker
# The revision this page showed: a decision made on it meets any that landed since as a conflict.
seen_key = f"tic_seen_{bank}_{ticket.id}"
seen_revision = st.session_state.get(seen_key, stored.revision if stored else 0)
st.session_state[seen_key] = stored.revision if stored else 0


def _record(decision, record, base_revision: int) -> None:
    if not access.require("decide"):  # the rule, not only the hidden form
        return
    try:
        stored, _report = outbox.submit(
            bank, decision, record, state.gateway().retain, base_revision=base_revision,
            evidence=ticket_evidence_snapshot(recall),
        )  # fmt: skip
    except RevisionConflict as exc:
        st.session_state[CONFLICT_KEY] = {"ticket": ticket.id, "decision": decision, "theirs": exc.theirs}
        st.rerun()
    state.invalidate_ticket_recalls(ticket.customer)
    delivery = "retained into Hindsight" if stored.state == "delivered" else "saved; delivered when Hindsight answers"
    st.session_state[FLASH_KEY] = f"Decision #{stored.id} recorded: {delivery}."
    st.session_state.pop(seen_key, None)
    st.rerun()


conflict = st.session_state.get(CONFLICT_KEY)
if conflict and conflict["ticket"] == ticket.id:
    choice = render_conflict(conflict["theirs"], conflict["decision"], key=f"conflict_{ticket.id}", can_escalate=False)
    if choice is not None:
        st.session_state.pop(CONFLICT_KEY)
        st.session_state.pop(seen_key, None)
        if choice == "replace":
            _record(conflict["decision"], interaction_record(ticket, conflict["decision"]), conflict["theirs"].revision)
        st.rerun()
    st.stop()
if not access.can("decide"):
    st.info(f"Your role ({access.current_role()}) can read this ticket but not decide it.", icon=":material/visibility:")
    st.stop()

reviewer_signed_in = signed_in_reviewer()
if reviewer_signed_in is None:  # outside the form: the Approve key (A) records under it without submitting the form
    reviewer = st.text_input("Reviewer name (required; recorded as unauthenticated)", key="ticket_reviewer", max_chars=120)
    authenticated = False
else:
    reviewer, authenticated = reviewer_signed_in, True
    st.text(f"Signed in as {reviewer}")
with st.form(f"ticket_decision_{ticket.id}", clear_on_submit=False):
    action = st.radio("Action", list(ACTIONS), format_func=ACTIONS.get, key=f"ticket_action_{ticket.id}", horizontal=True)
    response = st.text_area(
        "Response (used by edit-and-approve and override; approve sends the draft as it is)",
        value=ticket.drafted_response, key=f"ticket_response_{ticket.id}", max_chars=8000,
    )  # fmt: skip
    note = st.text_area("Note (required for an override)", key=f"ticket_note_{ticket.id}", max_chars=4000)
    submitted = st.form_submit_button("Record decision", type="primary", icon=":material/gavel:")
if keys.approve and not submitted:  # the A key: approve the drafted response as it is
    submitted, action, note = True, "approve", ""

if submitted:
    try:
        decision = ticket_decision(
            ticket, action=action, reviewer=reviewer, authenticated=authenticated, decided_at=datetime.now(UTC),
            response=response, note=note, cited_evidence=[e.document_id or e.id for e in (recall.evidence if recall else [])],
        )  # fmt: skip
        record = interaction_record(ticket, decision)
    except TicketDecisionError as exc:  # it covers pydantic's ValidationError too, naming the field
        st.error("Not recorded:", icon=":material/error:")
        st.text(str(exc))
    else:
        _record(decision, record, seen_revision)
