"""The "Why not this one?" box of the Traces page: a reviewer names a document (by id, or by searching the
bank's documents), and sees in one sentence where the recall lost it and the smallest change that brings it
in. Document ids and tags come from memory: they go only to st.text, st.dataframe, a selectbox's options and
md()-escaped markdown."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from components.ab_view import render_decided
from components.safe_text import md
from dashboard.hindsight.errors import HindsightError
from dashboard.lab.blast_radius import DecidedChange
from dashboard.lab.suggestions import Suggestion
from dashboard.traces.replay import DEFAULT_RERANKER_MAX_CANDIDATES
from dashboard.traces.scoring import server_knobs
from dashboard.traces.why_not import WhyNot

ANSWER_KEY = "why_not_answer"


def render_why_not(
    request_key: str,
    find: Callable[[str], list[dict[str, str]]],
    explain: Callable[..., tuple[WhyNot, list[Suggestion]] | None],
    cases_altered: Callable[..., tuple[list[str], list[DecidedChange]]],
) -> None:
    """`find(text)` lists matching documents; `explain(document_id, k, knobs)` answers with the ways to bring it in,
    the safe one first (None: no such document);
    `cases_altered(answer, knobs)` names the queue's other cases the fix would alter, and the decided ones among
    them with what changes. Each may raise HindsightError."""
    with st.container(border=True):
        st.subheader("Why not this one?")
        st.caption(
            "Name a document that should have been recalled: the replay of the trace above says where it was lost "
            "and the smallest setting change that brings it in (a looser tag filter is tried with a new recall)."
        )
        search = st.text_input("Document id, or words to search the bank's documents", key="why_not_search")
        if not search.strip():
            return
        try:
            matches = find(search)
        except HindsightError as exc:
            st.error("Could not search the bank's documents.", icon=":material/error:")
            st.code(str(exc), language=None)
            return
        if not matches:
            st.caption("No document of this bank matches.")
            return
        st.dataframe(pd.DataFrame(matches), hide_index=True, width="stretch", key="why_not_matches")
        left, mid, right = st.columns([3, 1, 2])
        document = left.selectbox(
            "Document", list(dict.fromkeys(m["document"] for m in matches)), key="why_not_document"
        )
        k = mid.number_input("k (documents taken)", min_value=1, max_value=100, value=10, key="why_not_k")
        with right.expander("Judge as a server with other settings"):
            cap = st.number_input("per-source cap (0 = off)", min_value=0, value=0, key="why_not_cap")
            reranker = st.number_input(
                "reranker candidates", min_value=1, value=DEFAULT_RERANKER_MAX_CANDIDATES, key="why_not_reranker"
            )
        knobs = server_knobs(per_source_cap=int(cap), reranker_max_candidates=int(reranker))
        asked = (request_key, document, int(k), knobs.model_dump_json())
        if st.button("Why not this one?", key="why_not_run", icon=":material/help:"):
            try:
                explained = explain(document, int(k), knobs)
            except HindsightError as exc:
                st.error("Could not recall again with a trace.", icon=":material/error:")
                st.code(str(exc), language=None)
                return
            st.session_state[ANSWER_KEY] = (asked, explained, None)
        kept = st.session_state.get(ANSWER_KEY)
        if kept is None or kept[0] != asked:
            return  # nothing asked yet, or the question changed since
        _, explained, altered = kept
        if explained is None:
            st.warning(f"This bank has no document {md(document)}.", icon=":material/search_off:")
            return
        answer, found = explained
        if answer.whose:
            st.text(answer.whose)  # names a document id and, when it is not theirs, a marker read from memory
        st.info(md(answer.sentence, max_chars=1000), icon=":material/lightbulb:")
        st.text(f"Smallest change: {answer.fix}")
        render_suggestions(found)
        if not answer.changes:
            return  # returned, or no setting brings it in
        if not any(c.server_wide for c in answer.changes):
            st.caption(
                "A change of this recall's own request: it alters no other case of the queue (what it lets into this "
                "recall is counted above)."
            )
            return
        if altered is None and st.button("Count the queue's cases this change alters", key="why_not_queue"):
            try:
                altered = cases_altered(answer, knobs)
            except HindsightError as exc:
                st.error("Could not run the queue.", icon=":material/error:")
                st.code(str(exc), language=None)
                return
            st.session_state[ANSWER_KEY] = (asked, explained, altered)
        if altered is not None:
            ids, decided = altered
            st.text(f"It would alter {len(ids)} other case(s) of the queue" + (f": {', '.join(ids)}" if ids else "."))
            render_decided(decided, what="the fix", key="why_not_decided")


def render_suggestions(found: list[Suggestion]) -> None:
    """Each way to bring the document in, the safe one first, with what else it lets in (ids come from memory)."""
    if not found:
        return
    st.caption("Ways to bring it in, safest first, each with what else it would let in")
    for number, suggestion in enumerate(found, 1):
        box = st.success if suggestion.safe else st.warning
        box(
            f"{number}. {md(suggestion.sentence(), max_chars=1000)}",
            icon=":material/verified_user:" if suggestion.safe else ":material/warning:",
        )
        if suggestion.lets_in.strangers:
            st.text("\n".join(f"{kind}: {', '.join(ids)}" for kind, ids in suggestion.lets_in.strangers.items()))
