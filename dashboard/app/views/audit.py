from datetime import datetime

import pandas as pd
import streamlit as st

from components.curation import render_curation_log
from components.status_banner import plain_error
from components.webhook_deliveries import render_webhook_deliveries
from components.when import local_time
from dashboard.app import access, case_figures, resources, vouching
from dashboard.app.refused_decisions import show_refused
from dashboard.kinds import bank_of, cases_of
from dashboard.queue_files import QueueFileError
from dashboard.reporting.audit_export import HIDDEN, AuditFilter, audit_rows, to_csv, to_json
from dashboard.reporting.headline import figures_words

st.title("Decision audit log")
st.caption(
    "Every reviewer decision, newest first, and whether it is stored in Hindsight yet. A revised decision is a new row: nothing is overwritten."
)

DELIVERY = {
    "pending": "waiting to be stored",
    "delivered": "stored in Hindsight",
    "superseded": "replaced by a newer decision",
    "failed": "refused by Hindsight",
    "discarded": "discarded by a lead",
    "awaiting_approval": "held: above the reviewer's limit, awaiting a second approval",
    "returned": "held, then rejected by the second approver",
    "awaiting_second": "held: awaiting a blind second review",
    "awaiting_lead": "held: the two reviews differ, awaiting a lead",
    "audit only": "a blind second review, kept in the audit only",
}
STORED = {
    "pending": "not yet, waiting to be stored",
    "delivered": "yes",
    "superseded": "replaced by a newer decision",
    "failed": "no, refused by Hindsight",
    "discarded": "no, discarded by a lead",
    "awaiting_second": "no, held for a blind second review",
    "awaiting_lead": "no, held for a lead",
    "audit only": "no, a blind second review kept in the audit",
}


def decision_text(r) -> str:
    """One decision read in full: what was decided, over what, why, by whom, when, whether it is stored, its note.
    A first decision awaiting its blind second review says none of it (its fields are hidden: blind_until_reviewed)."""
    if r.outcome == HIDDEN:
        when = local_time(datetime.fromisoformat(r.decided_at))
        return (
            f"#{r.audit_id} {r.case_id}: a first decision, {when}; who decided what is hidden until the blind second review. "
            f"Stored in Hindsight? {STORED.get(r.delivery, r.delivery)}"
        )
    how = (
        f"overrode the agent's {r.agent_recommendation_words or r.agent_recommendation}"
        if r.overridden
        else "as the agent recommended"
    )
    reason = f", reason {r.reason_code}" if r.reason_code else ""
    when = local_time(datetime.fromisoformat(r.decided_at))
    who = f"{r.reviewer} (subject {r.reviewer_subject} at {r.reviewer_issuer})" if r.reviewer_subject else r.reviewer
    who += f" as {r.role}" if r.role else ""
    revised = f"\nRevision {r.revision}, revised because: {r.revision_reason}" if r.revision_reason else ""
    return (
        f"#{r.audit_id} {r.case_id}: {r.decision} ({how}{reason}), by {who}, {when}. "
        f"Stored in Hindsight? {STORED.get(r.delivery, r.delivery)}\nNote: {r.note or '(none)'}{revised}"
    )


curation = resources.curation()
step = render_curation_log(curation.history(), can_manage=access.can("manage_deliveries"))
if step is not None and access.permitted("manage_deliveries"):
    action, event_id = step
    done = curation.retry_failed(event_id) if action == "retry" else curation.discard_failed(event_id)
    if done and action == "retry":
        resources.deliver_now()
    st.rerun()
vouching.section()

outbox = resources.outbox()
history = outbox.history()
settings = resources.settings()
for kind in resources.kinds():  # the same figures as the Overview's, counted by the same function
    try:
        ids = [row.id for row in cases_of(settings, kind)]
    except QueueFileError:
        st.caption(f"{kind.title}: the queue file could not be loaded (the Overview says why).")
        continue
    st.text(
        f"{kind.title}: {len(ids)} cases, {figures_words(case_figures.queue_figures(bank_of(settings, kind), kind.name, ids))}."
    )
rows = audit_rows(
    history, resources.decisions().second_reviews.trail([e.id for e in history]), case_figures.log_statuses(history)
)
if not rows:
    st.info("No decisions recorded yet.", icon=":material/info:")
    st.stop()

show_refused([entry for entry in history if entry.state == "failed"], outbox)

with st.container(horizontal=True):
    kinds = st.multiselect("Case kind", sorted({r.case_kind for r in rows}), key="audit_kinds")
    reviewers = st.multiselect("Reviewer", sorted({r.reviewer for r in rows}), key="audit_reviewers")
    deliveries = st.multiselect(
        "Stored in Hindsight?", list(DELIVERY), format_func=DELIVERY.get, key="audit_deliveries"
    )
    days = sorted(r.decided_at[:10] for r in rows)
    period = st.date_input(
        "Decided between", value=(pd.Timestamp(days[0]).date(), pd.Timestamp(days[-1]).date()), key="audit_period"
    )

start, end = period if isinstance(period, tuple) and len(period) == 2 else (None, None)
kept = [
    r
    for r in rows
    if AuditFilter(case_kinds=kinds, reviewers=reviewers, deliveries=deliveries, start=start, end=end).keeps(r)
]
# Plain headers on screen; the exports keep the field names.
HEADERS = {
    "audit_id": "decision #",
    "decided_at": "decided at",
    "authenticated": "signed in",
    "case_kind": "kind",
    "case_id": "case",
    "overridden": "overrode the agent",
    "reason_code": "reason",
    "agent_recommendation": "agent recommended",
    "cited_evidence": "evidence cited",
    "decided_on_evidence": "evidence seen",
    "bank_id": "memory store",
    "document_id": "stored as",
    "delivery": "stored in Hindsight?",
    "attempts": "delivery attempts",
    "last_error": "last delivery error",
    "delivered_at": "stored at",
    "case_status": "the case now",
}
frame = pd.DataFrame([r.model_dump() for r in kept])
if "delivery" in frame:
    frame["delivery"] = frame["delivery"].map(lambda d: DELIVERY.get(d, d))
if "last_error" in frame:
    frame["last_error"] = frame["last_error"].map(lambda e: plain_error(e) if e else "")
for column in ("decided_at", "delivered_at"):  # readable times, not ISO strings
    if column in frame:
        frame[column] = pd.to_datetime(frame[column], errors="coerce", utc=True)
times = {
    c: st.column_config.DatetimeColumn(HEADERS[c], format="D MMM YYYY, HH:mm") for c in ("decided_at", "delivered_at")
}
st.caption(f"{len(kept)} of {len(rows)} decisions")
st.subheader("Each decision, its note, and whether it is stored in Hindsight")
for r in kept:  # read in full, wrapped: the grid below cuts a long note
    st.text(decision_text(r))
st.subheader("As a table (sort, export)")
st.dataframe(frame, hide_index=True, width="stretch", key="audit_table", column_config={**HEADERS, **times})
with st.container(horizontal=True):
    st.download_button("Export CSV", to_csv(kept), "recall-review-audit.csv", "text/csv", icon=":material/download:")
    st.download_button(
        "Export JSON", to_json(kept), "recall-review-audit.json", "application/json", icon=":material/download:"
    )

steps = resources.decisions().approvals.log()
if steps:
    st.subheader("Second approvals")
    st.caption(
        "Every step of the decisions held above their reviewer's approval limit, newest first: who, in which role, when."
    )
    st.dataframe(
        pd.DataFrame(steps),
        hide_index=True,
        width="stretch",
        key="audit_approvals",
        column_config={
            "decision_id": "decision #",
            "bank_id": "memory bank",
            "case_id": "case",
            "actor": "by",
            "limit": "their limit",
            "at": "at",
        },
    )

redeliver = render_webhook_deliveries(resources.webhooks().deliveries(), can_redeliver=access.can("manage_deliveries"))
if redeliver is not None and access.permitted("manage_deliveries"):
    resources.redeliver_webhook(redeliver)
    st.rerun()
