"""A decided case's history: every decision recorded on it, each revision with its reason. Plain text only: names,
notes and reasons were typed by people."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from components.when import local_time
from dashboard.delivery.outbox import StoredDecision
from dashboard.store.decision import decision_summary, outcome_words


def history_lines(history: Sequence[StoredDecision], reasons: Mapping[str, str] | None = None) -> str:
    """One paragraph per decision, newest first: "Revision 2, decision #7, by Lee on ... (delivered): ..."."""
    lines, standing = [], next((row.id for row in reversed(history) if not row.held and row.state != "discarded"), None)
    for row in reversed(history):
        d = row.decision
        state = (
            "standing"
            if row.id == standing
            else row.state.replace("_", " ")
            if row.held or row.id > (standing or 0)
            else "replaced"
        )
        lines.append(
            f"Revision {row.revision}, decision #{row.id}: {outcome_words(d)} by {d.reviewer} on "
            f"{local_time(d.decided_at)} ({state}).\n{decision_summary(d, reasons)}"
        )
    return "\n\n".join(lines)


def render_history(history: Sequence[StoredDecision], reasons: Mapping[str, str] | None = None) -> None:
    """The case's decisions when it has more than one (a revised case): each kept, newest first."""
    if len(history) < 2:
        return
    with st.expander(f"Decision history: {len(history)} revisions", icon=":material/history:", expanded=True):
        st.text(history_lines(history, reasons))
