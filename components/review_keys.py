"""Keyboard review flow for the queue pages: previous / next case, next unreviewed, accept, override.

Native button shortcuts (st.button(shortcut=...)): Streamlit ignores them while the focus is in a
text input, a text area or a select, so typing a note never moves the queue. Previous / next move the
queue table's row selection AND the deep link (?case= / ?ticket=) together, so the highlighted row,
the address bar and the case shown always agree.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

import streamlit as st

from components import submission
from dashboard.review.decision import Shown
from dashboard.review.workflow import next_unreviewed

PREVIOUS, NEXT, NEXT_OPEN, ACCEPT, OVERRIDE = "k", "j", "n", "a", "o"


@dataclass(frozen=True)
class Accept:
    """The accept control of the case on screen: its label names what it records ("Accept: reject", "Send the
    draft"); a press is held under the session key `pending` with what the screen showed."""

    label: str
    pending: str
    shown: Shown
    words: str  # what A does, for the keys' help: "accept the agent's recommendation", "send the draft"


def keys_help(accept_words: str) -> str:
    return f"Keys: J next, K previous, N next unreviewed, A {accept_words}, O override (not while typing in a field)."


def _select(table_key: str, param: str, ids: list[str], index: int) -> None:
    st.session_state[table_key] = {"selection": {"rows": [index], "columns": [], "cells": []}}
    st.query_params[param] = ids[index]


def review_keys(
    ids: list[str], current: str, *, table_key: str, param: str, prefix: str, accept: Accept,
    override_state: tuple[str, object] | None = None, decided: Container[str] = (), can_decide: bool = True,
) -> bool:
    """Draw the keyboard bar for the case `current` of the queue `ids` (in table order).

    `override_state` = (session key, value) put into the decision form when O is pressed (override mode).
    `decided`: the ids Next unreviewed (N) skips. `can_decide` False greys out Accept and Override.
    Returns whether Override was pressed in this run (the page brings its form into view).
    """
    index = ids.index(current) if current in ids else -1
    target = next_unreviewed(ids, current, decided)
    with st.container(horizontal=True, vertical_alignment="center", key=f"{prefix}_keys"):
        st.button(
            "Previous", key=f"{prefix}_prev", icon=":material/arrow_upward:", shortcut=PREVIOUS, disabled=index <= 0,
            on_click=_select, args=(table_key, param, ids, index - 1),
        )
        st.button(
            "Next", key=f"{prefix}_next", icon=":material/arrow_downward:", shortcut=NEXT,
            disabled=index < 0 or index >= len(ids) - 1, on_click=_select, args=(table_key, param, ids, index + 1),
        )
        st.button(
            "Next unreviewed", key=f"{prefix}_next_open", icon=":material/skip_next:", shortcut=NEXT_OPEN,
            disabled=target is None, help="The next case without a decision" if target else "Every case is decided",
            on_click=_select, args=(table_key, param, ids, ids.index(target) if target else -1),
        )
        st.button(accept.label, disabled=not can_decide, key=f"{prefix}_accept", icon=":material/check:", shortcut=ACCEPT,
                  type="primary", help=f"{accept.label}, under your reviewer name",
                  on_click=submission.hold, args=(accept.pending, accept.shown, "key"))
        override = st.button(
            "Override", key=f"{prefix}_override", icon=":material/edit:", shortcut=OVERRIDE, disabled=not can_decide,
            help="Switch the decision form to override", on_click=_set_override, args=(override_state,),
        )
        keys = keys_help(accept.words)
        st.caption(f"{index + 1} of {len(ids)} in the queue. {keys}" if index >= 0 else keys)
    return override


def _set_override(override_state: tuple[str, object] | None) -> None:
    if override_state is not None:
        key, value = override_state
        st.session_state[key] = value
