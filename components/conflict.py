"""A decision that met a newer one: show theirs next to mine and let the reviewer choose."""

from __future__ import annotations

from typing import Literal

import streamlit as st

from components.safe_text import md
from dashboard.review.decision import ReviewerDecision
from dashboard.review.outbox import StoredDecision

Choice = Literal["keep_theirs", "replace", "escalate"]


def render_conflict(theirs: StoredDecision, mine: ReviewerDecision, key: str, can_escalate: bool = True) -> Choice | None:
    """Returns what the reviewer chose, or None while they have not chosen."""
    d = theirs.decision
    st.warning(
        f"Not recorded yet: {md(d.reviewer)} decided this case meanwhile ({md(d.outcome)} at "
        f"{d.decided_at:%Y-%m-%d %H:%M} UTC, audit #{theirs.id}, revision {theirs.revision}). Nothing was overwritten: choose.",
        icon=":material/sync_problem:",
    )
    st.dataframe(
        [
            {"": "theirs", "reviewer": d.reviewer, "outcome": d.outcome, "reason": d.reason_code or "", "note": d.note},
            {"": "yours", "reviewer": mine.reviewer, "outcome": mine.outcome, "reason": mine.reason_code or "", "note": mine.note},
        ],
        hide_index=True, width="stretch", key=f"{key}_table",
    )
    with st.container(horizontal=True):
        if st.button("Keep theirs", key=f"{key}_keep", icon=":material/undo:"):
            return "keep_theirs"
        if st.button("Replace with mine", key=f"{key}_replace", icon=":material/swap_horiz:"):
            return "replace"
        if can_escalate and st.button("Escalate", key=f"{key}_escalate", icon=":material/priority_high:"):
            return "escalate"
    return None
