"""The Audit log's decisions Hindsight refused to store: listed with what it said, retried or discarded by a lead."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.status_banner import plain_error
from dashboard.app import access, resources


def show_refused(parked: list, outbox) -> None:
    """`parked`: the decision log's entries in state "failed"; nothing is drawn without one."""
    if not parked:
        return
    st.subheader(f"Decisions Hindsight refused ({len(parked)})")
    st.caption(
        "Hindsight refused to store these decisions; the others are not held up. Fix the cause, then retry, or discard."
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "decision #": e.id,
                    "case": e.case_id,
                    "memory store": e.bank_id,
                    "reviewer": e.decision.reviewer,
                    "attempts": e.attempts,
                    "Hindsight said": plain_error(e.last_error or ""),
                }
                for e in parked
            ]
        ),
        hide_index=True,
        width="stretch",
        key="audit_parked",
    )
    if access.can("manage_deliveries"):
        with st.container(horizontal=True, vertical_alignment="bottom"):
            chosen = st.selectbox(
                "Refused decision",
                [e.id for e in parked],
                format_func=lambda i: f"decision #{i}",
                key="audit_parked_pick",
            )
            retry = st.button("Try again", key="audit_retry", icon=":material/replay:")
            discard = st.button("Discard", key="audit_discard", icon=":material/delete:")
        if (retry or discard) and access.permitted("manage_deliveries"):
            done = outbox.retry_failed(chosen) if retry else outbox.discard_failed(chosen)
            if done and retry:
                resources.deliver_now()
            st.rerun()
    else:
        st.caption("A lead can retry or discard them.")
