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
        {"bank": b.bank_id, "holds": b.role, "documents": b.documents, "memories": b.memories,
         "stored as": b.memory_mode.label if b.memory_mode else "", "status": plain_error(b.error) if b.error else "ok"}
        for b in banks
    ]
    frame = pd.DataFrame(rows)
    st.dataframe(frame, hide_index=True, width="stretch")
    for b in banks:  # in words too: a grid cell may be cut
        if b.memory_mode is not None:
            st.text(f"{b.bank_id}: {b.memory_mode.label}.")
    if any(b.memory_mode and b.memory_mode.extracting for b in banks):
        st.caption(
            "With an LLM the server rewrites each document into several facts: every page counts, judges and shows "
            "documents (their original text), with the facts that matched beneath."
        )


def render_queues(queues: list[QueueSummary]) -> None:
    st.subheader("Open queues")
    for queue in queues:
        if queue.error:
            st.error(f"{md(queue.name)}: could not load", icon=":material/error:")
            st.text(plain_error(queue.error))
        else:
            st.metric(queue.name, queue.size)
