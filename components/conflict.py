"""A decision that met a newer one: show theirs next to mine and let the reviewer choose."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import streamlit as st

from components.safe_text import md
from components.when import local_time
from dashboard.delivery.outbox import StoredDecision
from dashboard.store.decision import ReviewerDecision, decision_summary, outcome_words

Choice = Literal["keep_theirs", "replace", "escalate"]


def render_conflict(
    theirs: StoredDecision,
    mine: ReviewerDecision,
    key: str,
    can_escalate: bool = True,
    reasons: Mapping[str, str] | None = None,
) -> Choice | None:
    """Returns what the reviewer chose, or None while they have not chosen (`reasons`: the case's reason labels)."""
    d = theirs.decision
    st.warning(
        f"Not recorded yet: {md(d.reviewer)} decided this case meanwhile ({md(outcome_words(d))} on "
        f"{local_time(d.decided_at)}, decision #{theirs.id}, revision {theirs.revision}). Nothing was overwritten: choose.",
        icon=":material/sync_problem:",
    )
    theirs_col, yours_col = st.columns(2)  # both read in full, side by side
    theirs_col.text(f"Theirs, by {d.reviewer}\n{decision_summary(d, reasons)}")
    yours_col.text(f"Yours, by {mine.reviewer}\n{decision_summary(mine, reasons)}")
    with st.container(horizontal=True):
        if st.button("Keep theirs", key=f"{key}_keep", icon=":material/undo:"):
            return "keep_theirs"
        if st.button("Replace with mine", key=f"{key}_replace", icon=":material/swap_horiz:"):
            return "replace"
        if can_escalate and st.button("Escalate", key=f"{key}_escalate", icon=":material/priority_high:"):
            return "escalate"
    return None
