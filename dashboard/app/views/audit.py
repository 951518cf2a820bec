import pandas as pd
import streamlit as st

from dashboard.app import state
from dashboard.review.audit_export import AuditFilter, audit_row, to_csv, to_json

st.title("Decision audit log")
st.caption("Every reviewer decision, append-only, with its delivery into Hindsight. Newest first.")

rows = [audit_row(entry) for entry in state.outbox().history()]
if not rows:
    st.info("No decisions recorded yet.", icon=":material/info:")
    st.stop()

with st.container(horizontal=True):
    kinds = st.multiselect("Case kind", sorted({r.case_kind for r in rows}), key="audit_kinds")
    reviewers = st.multiselect("Reviewer", sorted({r.reviewer for r in rows}), key="audit_reviewers")
    deliveries = st.multiselect("Delivery", ["pending", "delivered", "superseded"], key="audit_deliveries")
    days = sorted(r.decided_at[:10] for r in rows)
    period = st.date_input("Decided between", value=(pd.Timestamp(days[0]).date(), pd.Timestamp(days[-1]).date()), key="audit_period")

start, end = (period if isinstance(period, tuple) and len(period) == 2 else (None, None))
kept = [r for r in rows if AuditFilter(case_kinds=kinds, reviewers=reviewers, deliveries=deliveries, start=start, end=end).keeps(r)]
st.dataframe(pd.DataFrame([r.model_dump() for r in kept]), hide_index=True, width="stretch", key="audit_table")
st.caption(f"{len(kept)} of {len(rows)} decisions")
with st.container(horizontal=True):
    st.download_button("Export CSV", to_csv(kept), "recall-review-audit.csv", "text/csv", icon=":material/download:")
    st.download_button("Export JSON", to_json(kept), "recall-review-audit.json", "application/json", icon=":material/download:")
