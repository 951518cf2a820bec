"""'What the agent recalled then' beside 'what recall returns now', for one case.

Everything shown comes from memory or a run (untrusted): it is drawn with st.text and dataframes only.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from components.trace_link import trace_link
from dashboard.agents.then_now import RecallThen, ThenNow
from dashboard.review.agent_runs import RecallSnapshot, ResultRef
from dashboard.traces.request import TraceRequest


def _frame(results: list[ResultRef], flag: Callable[[ResultRef], str], marked: set[str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"record": r.ref, "flag": flag(r), "tags": ", ".join(r.tags), "score": r.score,
             "since then": "changed" if r.ref in marked else ""}
            for r in results
        ],
        columns=["record", "flag", "tags", "score", "since then"],
    )


def request_of(bank_id: str, recall: RecallThen | RecallSnapshot) -> TraceRequest:
    return TraceRequest(
        bank=bank_id, query=recall.query, tags=tuple(recall.tags), tags_match=recall.tags_match or "any",
        budget=recall.budget or "mid", max_tokens=recall.max_tokens or 4096,
    )


def render_then_now(view: ThenNow, flag: Callable[[ResultRef], str], key: str) -> None:
    """`flag(record)`: the relevance (finance) or admission (support) verdict, computed on that response."""
    st.subheader("What the agent recalled then, and what recall returns now")
    st.text(view.note)
    then_col, now_col = st.columns(2)
    with then_col:
        st.text("Then")
        if view.run is None or view.source == "recompute":
            st.text("(no record of the agent's recall)")
        else:
            out = view.run.output
            if view.run.agent == "finance":
                st.text(f"Agent's recommendation: {out.get('action')} (confidence {out.get('confidence', 0):.2f}, policy {out.get('policy')})")
                st.text(f"Cited: {', '.join(view.run.cited) or 'nothing'}")
                st.text(str(out.get("rationale", "")))
            else:
                st.text(f"Path: {out.get('path')}; cited: {', '.join(view.run.cited) or 'nothing'}")
                st.text("Draft:\n" + str(out.get("draft", "")))
            left = {r.ref for r in view.left}
            for i, recall in enumerate(view.then):
                st.text(f"{recall.label}: tags {recall.tags or 'none (bank-wide)'} {recall.tags_match or ''}; audit entry {recall.audit_id or 'not synced'}")
                st.dataframe(_frame(recall.results, flag, left), hide_index=True, key=f"{key}_then_{i}", width="stretch")
                trace_link(request_of(view.run.bank_id, recall), label="Trace (this request, recalled again now)")
    with now_col:
        st.text("Now" + (" (today's recompute)" if view.source == "recompute" else ""))
        st.dataframe(_frame(view.now, flag, {r.ref for r in view.appeared}), hide_index=True, key=f"{key}_now", width="stretch")
    if view.source != "recompute":
        st.text(
            f"Since then: {len(view.appeared)} appeared ({', '.join(r.ref for r in view.appeared) or 'none'}); "
            f"{len(view.left)} left ({', '.join(r.ref for r in view.left) or 'none'})."
        )
    for document_id, sentence in view.curated.items():  # a reviewer and a lead retired it (or brought it back)
        st.text(f"{document_id}: {sentence}")
