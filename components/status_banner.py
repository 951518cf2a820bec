"""The banner every page shows: Hindsight unreachable, and decisions waiting for delivery."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st


def render_status_banner(error: str | None, base_url: str, pending: int, deliver_now: Callable[[], None]) -> None:
    """`error`: why Hindsight is unreachable (None when it answers); `deliver_now` runs on the button."""
    if error:
        st.warning(
            f"Hindsight at {base_url} is unreachable: recalls and traces cannot load. "
            "Queues and the audit log still work, and decisions are saved here and delivered when it is back.",
            icon=":material/cloud_off:",
        )
    if pending:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.info(f"{pending} decision(s) saved and waiting for delivery to Hindsight.", icon=":material/schedule_send:")
            if st.button("Deliver now", key="deliver_now", icon=":material/send:"):
                deliver_now()
                st.rerun()
