"""What the agent that handed the case in said of it, beside the dashboard's own recompute, and where the two differ.
Everything here was typed by an agent: plain text only."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import streamlit as st

from dashboard.store.agent_part import AgentPart


def render_agent_part(
    agent: AgentPart,
    outcome_words: Mapping[str, str],
    differences: Sequence[str],
    recompute: Callable[[], None] | None = None,
) -> None:
    """The agent's part, with the dashboard's recompute beside it when `recompute` draws it, and their differences."""
    with st.container(border=True, key="agent_part"):
        if recompute is None:
            _said(agent, outcome_words)
        else:
            said, beside = st.columns(2, gap="medium")
            with said:
                _said(agent, outcome_words)
            with beside, st.container(key="recompute_part"):
                recompute()
        for line in differences:
            st.text("Differs: " + line)
        if not differences:
            st.text("The agent and the dashboard's recompute agree on its recommendation and citations.")


def _said(agent: AgentPart, outcome_words: Mapping[str, str]) -> None:
    st.subheader("What the submitting agent said")
    said = f"{agent.name} {agent.version}".strip()
    if agent.recommendation:
        said += f": recommends {agent.recommendation} ({outcome_words.get(agent.recommendation, 'not an outcome of this queue')})"
    if agent.confidence is not None:
        said += f", confidence {agent.confidence:.2f}"
    st.text(said)
    if agent.rationale:
        st.text(agent.rationale)
    if agent.draft:
        st.text("Its draft: " + agent.draft)
    st.text("It cited: " + (", ".join(agent.cited) if agent.cited else "nothing"))
    if agent.recall is not None:
        r = agent.recall
        st.text(
            f"It recalled {r.query or '(no query given)'!r} with tags {', '.join(r.tags) or 'none'}"
            f" ({r.tags_match or 'no match mode given'}): {len(r.document_ids)} documents returned"
        )
