"""Home page pieces: server status, banks and queue sizes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.safe_text import md
from components.status_banner import plain_error
from dashboard.reporting.home import BankSummary, QueueSummary, ServerSummary


def render_server(server: ServerSummary) -> None:
    mode = "embedded, started by this project" if server.embedded else "external server"
    if server.healthy:
        st.success(f"Hindsight {server.version} is healthy at {md(server.url)} ({mode}).", icon=":material/check_circle:")
    else:
        hint = " Start it with `python -m dashboard server start`." if server.embedded else ""
        st.error(f"Hindsight at {md(server.url)} ({mode}) is not reachable.{hint}", icon=":material/error:")
        if server.error:
            st.text(plain_error(server.error))


def render_banks(banks: list[BankSummary]) -> None:
    st.subheader("Memory banks")
    rows = [
        {"bank": b.bank_id, "holds": b.role, "memories": b.memories, "documents": b.documents,
         "status": plain_error(b.error) if b.error else "ok"}
        for b in banks
    ]  # fmt: skip
    frame = pd.DataFrame(rows)
    st.dataframe(frame, hide_index=True, width="stretch")


def render_queues(queues: list[QueueSummary]) -> None:
    st.subheader("Open queues")
    for queue in queues:
        if queue.error:
            st.error(f"{md(queue.name)}: could not load", icon=":material/error:")
            st.text(plain_error(queue.error))
        else:
            st.metric(queue.name, queue.size)
