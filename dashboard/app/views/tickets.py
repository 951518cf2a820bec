from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from components.admission import render_decision_state, render_recall
from components.identity import signed_in_reviewer
from components.review_keys import review_keys
from dashboard.app import state
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.reporting.overview import latest_per_case
from dashboard.support.admission import AmbiguousName
from dashboard.support.decisions import ACTIONS, TicketDecisionError, interaction_record, ticket_decision
from dashboard.support.directory import check_directory
from dashboard.support.models import Customer, Ticket

QUEUE_KEY = "ticket_queue"
FLASH_KEY = "ticket_flash"

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
st.header(f"Ticket {ticket.id}")
keys = review_keys(
    list(queue["ticket"]), ticket.id, table_key=QUEUE_KEY, param="ticket", prefix="tic", override_state=(f"ticket_action_{ticket.id}", "override")
)  # fmt: skip
st.text(f"Customer: {ticket.customer}   opened {ticket.opened_on.isoformat()}")
if ticket.customer not in known:
    st.warning("This customer is not in the customer directory.")
st.text("Issue:\n" + ticket.issue)

flash = st.session_state.pop(FLASH_KEY, None)
if flash:
    st.toast(flash, icon=":material/check:")

try:
    recall = state.recall_ticket(bank, ticket.customer, ticket.issue)
except AmbiguousName as exc:
    st.error("This customer's name cannot be used for recall:")
    st.text(str(exc))
    st.stop()
except HindsightError as exc:
    st.error(f"Recall from Hindsight at {settings.base_url} failed.", icon=":material/error:")
    st.text(f"{type(exc).__name__}: {exc}")
    recall = None

if recall is not None:
    render_recall(recall, bank, key=f"recall_{ticket.id}")

st.subheader("Drafted response")
st.text(ticket.drafted_response)

st.subheader("Decision")
stored = latest.get(("ticket", ticket.id))
render_decision_state(stored)  # a pending one is delivered by the app-wide banner's retry

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
        stored, report = outbox.submit(bank, decision, record, state.gateway().retain)
        state.invalidate_ticket_recalls(ticket.customer)
        delivery = "retained into Hindsight" if report.error is None else "saved; delivery will be retried"
        st.session_state[FLASH_KEY] = f"Decision #{stored.id} recorded: {delivery}."
        st.rerun()
