"""Home page pieces: server status, banks and the queues' case figures."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.safe_text import md
from components.status_banner import plain_error
from dashboard.reporting.headline import figures_words
from dashboard.reporting.home import BankSummary, QueueSummary, ServerSummary
from dashboard.review.figures import CaseFigures


def render_server(server: ServerSummary) -> None:
    mode = "embedded, started by this project" if server.embedded else "external server"
    if server.healthy:
        st.success(
            f"Hindsight {server.version} is healthy at {md(server.url)} ({mode}).", icon=":material/check_circle:"
        )
    else:
        hint = " Start it with `python -m dashboard server start`." if server.embedded else ""
        st.error(f"Hindsight at {md(server.url)} ({mode}) is not reachable.{hint}", icon=":material/error:")
        if server.error:
            st.text(plain_error(server.error))


def render_banks(banks: list[BankSummary]) -> None:
    """A static table (it wraps; a grid cut "each record kept word for word" at 1440 wide), every cell escaped: a
    server's message is untrusted. In a reader's words; the server's own terms are in the heading's tooltip."""
    technical = "; ".join(f"{b.bank_id}: {b.memory_mode.label}" for b in banks if b.memory_mode is not None)
    st.subheader(
        "Where the agents' memories are kept", help="Hindsight memory banks, one per kind of case. " + md(technical)
    )
    rows = [
        {
            "memory store": b.bank_id,
            "holds": b.role,
            "records": "" if b.documents is None else f"{b.documents:,}",
            "memory entries": "" if b.memories is None else f"{b.memories:,}",
            "kept as": b.memory_mode.plain if b.memory_mode else "",
            "status": plain_error(b.error) if b.error else "ok",
        }
        for b in banks
    ]
    st.table(pd.DataFrame([{md(k): md(v) for k, v in row.items()} for row in rows]), hide_index=True)
    if any(b.memory_mode and b.memory_mode.extracting for b in banks):
        st.caption(
            "With an LLM the server rewrites each document into several facts: every page counts, judges and shows "
            "documents (their original text), with the facts that matched beneath."
        )


def render_queues(queues: list[QueueSummary], figures: dict[str, CaseFigures]) -> None:
    """Each queue's cases and what they are now (`figures`: queue name -> its figures, as the Overview counts them)."""
    st.subheader("Queues")
    for queue, column in zip(queues, st.columns(len(queues)), strict=True):
        with column:
            if queue.error:
                st.error(f"{md(queue.name)}: could not load", icon=":material/error:")
                st.text(plain_error(queue.error))
                continue
            st.metric(queue.name, queue.size, help="cases in the queue file")
            if queue.name in figures:
                st.text(figures_words(figures[queue.name]) + ".")
