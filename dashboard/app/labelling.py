"""Relevance labels on the evidence cards: the page's side of dashboard.review.relevance.

Each card gets one control (its recall request: the kind's pages give them, e.g. finance/pages/evidence.py's
recall_contexts) keyed per case, document and reviewer; a click is recorded at once (the role is
checked by the store right before it writes) with the recall request the card came from. The person is the
signed-in user or the name typed in the page's reviewer field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import streamlit as st

from components.relevance import render_relevance
from dashboard.app import access, resources
from dashboard.review.relevance import RecallContext
from dashboard.store.errors import LabelInputError, NotAllowed

Card = Callable[[str], None]
PROBLEM_KEY = "relevance_problem"  # (control key, why a click was not recorded), shown at that card after the rerun


def card_labels(bank: str, kind: str, case_id: str, contexts: Mapping[str, RecallContext], name_key: str) -> Card:
    """What an evidence card calls with its document id to draw its relevance label."""
    store, role = resources.relevance_labels(), access.current_role()
    me = access.reviewer(name_key).person
    mine = store.mine((bank, kind, case_id), me)
    why_not = None if access.can("decide") else f"Your role ({role}) can read the labels but not give one."
    if me is None:
        why_not = "Type your reviewer name first."

    def label(document_id: str) -> None:
        key = f"relevance_{kind}_{case_id}_{document_id}_{me.name if me else ''}"

        def record(value: str) -> None:
            try:
                store.record(
                    bank,
                    kind,
                    case_id,
                    document_id,
                    value,
                    role=role,
                    reviewer=me or "",
                    context=contexts.get(document_id),
                )
            except LabelInputError as exc:
                field, _, problem = str(exc).partition(": ")
                st.session_state[PROBLEM_KEY] = (
                    key,
                    f"your name (the reviewer name field): {problem}" if field == "reviewer" else str(exc),
                )
            except NotAllowed as exc:
                st.session_state[PROBLEM_KEY] = (key, str(exc))

        shown_problem = st.session_state.get(PROBLEM_KEY)
        problem = shown_problem[1] if shown_problem and shown_problem[0] == key else None
        if problem:
            st.session_state.pop(PROBLEM_KEY)
        render_relevance(mine.get(document_id), key, record, disabled=why_not, problem=problem)

    return label


def both(*cards: Card) -> Card:
    """One card callback drawing each part in turn (the label, then curation)."""

    def draw(document_id: str) -> None:
        for card in cards:
            card(document_id)

    return draw
