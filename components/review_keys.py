"""Keyboard review flow for the queue pages: previous / next case, next unreviewed, approve, override.

Native button shortcuts (st.button(shortcut=...)): Streamlit ignores them while the focus is in a
text input, a text area or a select, so typing a note never moves the queue. Previous / next move the
queue table's row selection AND the deep link (?case= / ?ticket=) together, so the highlighted row,
the address bar and the case shown always agree.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

import streamlit as st

from dashboard.review.workflow import next_unreviewed

PREVIOUS, NEXT, NEXT_OPEN, APPROVE, OVERRIDE = "k", "j", "n", "a", "o"
HELP = "Keys: J next, K previous, N next unreviewed, A approve, O override (not while typing in a field)."


@dataclass(frozen=True)
class Pressed:
    approve: bool
    override: bool


def _select(table_key: str, param: str, ids: list[str], index: int) -> None:
    st.session_state[table_key] = {"selection": {"rows": [index], "columns": [], "cells": []}}
    st.query_params[param] = ids[index]


def review_keys(
    ids: list[str], current: str, *, table_key: str, param: str, prefix: str, override_state: tuple[str, object] | None = None,
    decided: Container[str] = (), can_decide: bool = True,
) -> Pressed:
    """Draw the keyboard bar for the case `current` of the queue `ids` (in table order).

    `override_state` = (session key, value) put into the decision form when O is pressed (override mode).
    `decided`: the ids Next unreviewed (N) skips. `can_decide` False greys out Approve and Override.
    Returns which of approve / override was pressed in this run (the page acts on approve).
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
        approve = st.button("Approve", disabled=not can_decide, key=f"{prefix}_approve", icon=":material/check:", shortcut=APPROVE, type="primary",
                            help="Record the recommendation as it is, under your reviewer name")
        override = st.button(
            "Override", key=f"{prefix}_override", icon=":material/edit:", shortcut=OVERRIDE, disabled=not can_decide,
            help="Switch the decision form to override", on_click=_set_override, args=(override_state,),
        )
        st.caption(f"{index + 1} of {len(ids)} in the queue. {HELP}" if index >= 0 else HELP)
    return Pressed(approve=approve, override=override)


def _set_override(override_state: tuple[str, object] | None) -> None:
    if override_state is not None:
        key, value = override_state
        st.session_state[key] = value
