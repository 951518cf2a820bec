"""'What the agent recalled then' beside 'what recall returns now', for one case.

Everything shown comes from memory or a run (untrusted): it is drawn with st.text only, one wrapped line per
record (its id and flag read in full), in plain words; the request itself is a trace link away.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components.trace_link import trace_link
from components.when import local_time
from dashboard.agents.then_now import RecallThen, ThenNow, plain_scope
from dashboard.store.agent_runs import RecallSnapshot, ResultRef
from dashboard.traces.request import TraceRequest


def _records(results: list[ResultRef], flag: Callable[[ResultRef], str], mark: Callable[[str], str]) -> None:
    """Each record on a line of its own: its id, its flag, its origin (who wrote it, as checked when it was recalled)
    and its mark (what it was then) when it has one."""
    lines = [
        f"{r.ref}: {flag(r)}"
        + (f"; origin: {r.origin}" if r.origin else "")
        + (f" ({mark(r.ref)})" if mark(r.ref) else "")
        for r in results
    ]
    st.text("\n".join(lines) or "(nothing)")


def request_of(bank_id: str, recall: RecallThen | RecallSnapshot) -> TraceRequest:
    return TraceRequest(
        bank=bank_id,
        query=recall.query,
        tags=tuple(recall.tags),
        tags_match=recall.tags_match or "any",
        budget=recall.budget or "mid",
        max_tokens=recall.max_tokens or 4096,
    )


def render_then_now(view: ThenNow, flag: Callable[[ResultRef], str]) -> None:
    """`flag(record)`: the relevance (finance) or admission (support) verdict, computed on that response."""
    st.subheader("What the agent recalled then, and what recall returns now")
    st.text(
        view.note
        + (f" The agent ran on {local_time(view.run.started_at)}." if view.run and view.source != "recompute" else "")
    )
    then_col, now_col = st.columns(2)
    with then_col:
        st.text("Then")
        if view.run is None or view.source == "recompute":
            st.text("(no record of the agent's recall)")
        else:
            out = view.run.output
            if view.run.variant == "submitted":  # its recommendation and citations are its part above, said once
                st.text(f"The recall {out.get('agent_name') or 'the submitting agent'} reported with its case:")
            elif view.run.agent == "finance":
                st.text(f"Agent's recommendation: {out.get('action')} (confidence {out.get('confidence', 0):.2f})")
                st.text(f"Cited: {', '.join(view.run.cited) or 'nothing'}")
                st.text(str(out.get("rationale", "")))
            else:
                st.text(f"History used: {out.get('path')}; cited: {', '.join(view.run.cited) or 'nothing'}")
                st.text("Draft:\n" + str(out.get("draft", "")))
            left = {r.ref for r in view.left}
            for i, recall in enumerate(view.then):
                st.text(plain_scope(recall.label, recall.tags, recall.tags_match))
                _records(recall.results, flag, lambda ref: "gone since then" if ref in left else "")
                trace_link(request_of(view.run.bank_id, recall), label="Trace (this request, recalled again now)")
    with now_col:
        st.text("Now" + (" (today's recompute)" if view.source == "recompute" else ""))
        _records(view.now, flag, view.now_mark)
    if view.source != "recompute":
        new = f"; of them new since then: {', '.join(view.new_since)}" if view.new_since else ""
        st.text(
            f"Since then: {len(view.appeared)} appeared ({', '.join(r.ref for r in view.appeared) or 'none'}){new}; "
            f"{len(view.left)} left ({', '.join(r.ref for r in view.left) or 'none'})."
        )
    explained = {c.document_id for c in view.causes}
    for cause in view.causes:  # one wrapped plain-text line each: ids and sentences come from memory and people
        st.text(f"{cause.document_id} {cause.change}: {cause.kind.value}. {cause.sentence}")
    for document_id, sentence in view.curated.items():  # a reviewer and a lead retired it (or brought it back)
        if document_id not in explained:
            st.text(f"{document_id}: {sentence}")
