"""The banner every page shows: Hindsight unreachable, and decisions waiting for delivery."""

from __future__ import annotations

import streamlit as st

from dashboard import runtime


def render_status_banner() -> None:
    error = runtime.connection_error()
    if error:
        st.warning(
            f"Hindsight at {runtime.settings().base_url} is unreachable: recalls and traces cannot load. "
            "Queues and the audit log still work, and decisions are saved here and delivered when it is back.",
            icon=":material/cloud_off:",
        )
    pending = runtime.outbox().pending_count()
    if pending:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.info(f"{pending} decision(s) saved and waiting for delivery to Hindsight.", icon=":material/schedule_send:")
            if st.button("Deliver now", key="deliver_now", icon=":material/send:"):
                runtime.outbox().retry_now()
                runtime.connection_error.clear()
                runtime.deliver_pending()
                st.rerun()
