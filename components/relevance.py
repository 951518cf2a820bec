"""A reviewer's relevance label on an evidence card: relevant / not relevant / wrong, in one click.

Plain values in; the pick goes to `on_pick(label)` (the page records it, checking the role). The reviewer's
name and the document id were typed or stored by people: drawn only with st.caption through safe_text.md.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components.safe_text import md
from components.when import local_time
from dashboard.review.relevance import LABELS, RelevanceLabel


def render_relevance(
    current: RelevanceLabel | None,
    key: str,
    on_pick: Callable[[str], None],
    *,
    disabled: str | None = None,
    problem: str | None = None,
) -> None:
    """The three choices, showing the reviewer's current label; a click calls `on_pick` (before the rerun).
    `disabled`: why the person cannot label (the control is greyed out and says so)."""

    def picked() -> None:
        value = st.session_state.get(key)
        if value is not None:  # a second click on the chosen one clears the control: nothing to record
            on_pick(value)

    st.segmented_control(
        "Your relevance label",
        list(LABELS),
        format_func=LABELS.get,
        default=current.label if current else None,
        key=key,
        on_change=picked,
        disabled=disabled is not None,
        help=disabled or "One click: relevant, not relevant or wrong. It feeds the fusion lab and the Overview.",
    )
    if problem:
        st.error(md(f"Label not recorded: {problem}"), icon=":material/block:")
    elif current is not None:
        st.caption(md(f"Labelled {LABELS[current.label]} by {current.reviewer} on {local_time(current.created_at)}"))
