"""Keyboard review flow for the queue pages: previous / next case, next unreviewed, accept, override.

Native button shortcuts (st.button(shortcut=...)): Streamlit ignores them while the focus is in a
text input, a text area or a select, so typing a note never moves the queue. Previous / next move the
queue table's row selection AND the deep link (?case= / ?ticket=) together, so the highlighted row,
the address bar and the case shown always agree.

A key never does nothing. A disabled button's shortcut is unbound in the browser, so a key pressed on a state that
changed under the reviewer (another reviewer claimed the case or sent it for a second approval, the queue's last case
reached) used to vanish without a word: with eight reviewers on one queue, one key in six. So the keys stay enabled
whatever the case's state (only a role that may never decide greys out Accept and Override), and a press that cannot
act says why under the keys.

Previous / next move from the case the button was drawn for: the last run that drew the bar is the server's own
account of the case open. (The address bar a press carries can lag behind it: a second J pressed before the first one's
page arrived carries the old case.)
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

import streamlit as st

from components import submission
from components.escape import escape_leaves_fields
from components.safe_text import md
from dashboard.review.workflow import next_unreviewed
from dashboard.store.decision import Shown

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
    return f"Keys: J next, K previous, N next unreviewed, A {accept_words}, O override (not while typing in a field: Esc leaves it)."


def _said_key(prefix: str) -> str:
    return f"{prefix}_keys_said"


def _select(table_key: str, param: str, ids: list[str], index: int) -> None:
    st.session_state[table_key] = {"selection": {"rows": [index], "columns": [], "cells": []}}
    st.query_params[param] = ids[index]


def _step(table_key: str, param: str, prefix: str, ids: list[str], current: str, step: int) -> None:
    index = ids.index(current) + step if current in ids else 0  # a case the queue no longer shows: its first
    if 0 <= index < len(ids):
        _select(table_key, param, ids, index)
    else:
        st.session_state[_said_key(prefix)] = (
            f"{current} is the {'last' if step > 0 else 'first'} case of the queue shown: "
            f"there is no {'next' if step > 0 else 'previous'} one."
        )


def _next_open(table_key: str, param: str, prefix: str, ids: list[str], current: str, decided: Container[str]) -> None:
    target = next_unreviewed(ids, current, decided)
    if target is None:
        st.session_state[_said_key(prefix)] = (
            "Every case of the queue shown is decided: there is no next unreviewed one."
        )
    else:
        _select(table_key, param, ids, ids.index(target))


def _cannot(prefix: str, what: str) -> None:
    st.session_state[_said_key(prefix)] = what


def review_keys(
    ids: list[str],
    current: str,
    *,
    table_key: str,
    param: str,
    prefix: str,
    accept: Accept,
    override_state: tuple[str, object] | None = None,
    decided: Container[str] = (),
    can_decide: bool = True,
    why_not: str | None = None,
) -> bool:
    """Draw the keyboard bar for the case `current` of the queue `ids` (in table order).

    `override_state` = (session key, value) put into the decision form when O is pressed (override mode).
    `decided`: the ids Next unreviewed (N) skips. `can_decide` False (the role never decides) greys out Accept and
    Override; `why_not`: why this case cannot be decided now (someone else holds it, ...): A and O then say so.
    Returns whether Override was pressed in this run (the page brings its form into view).
    """
    index = ids.index(current) if current in ids else -1
    target = next_unreviewed(ids, current, decided)
    with st.container(horizontal=True, vertical_alignment="center", key=f"{prefix}_keys"):
        st.button(
            "Previous",
            key=f"{prefix}_prev",
            icon=":material/arrow_upward:",
            shortcut=PREVIOUS,
            on_click=_step,
            args=(table_key, param, prefix, ids, current, -1),
        )
        st.button(
            "Next",
            key=f"{prefix}_next",
            icon=":material/arrow_downward:",
            shortcut=NEXT,
            on_click=_step,
            args=(table_key, param, prefix, ids, current, +1),
        )
        st.button(
            "Next unreviewed",
            key=f"{prefix}_next_open",
            icon=":material/skip_next:",
            shortcut=NEXT_OPEN,
            help="The next case without a decision" if target else "Every case is decided",
            on_click=_next_open,
            args=(table_key, param, prefix, ids, current, decided),
        )
        refused = f"Not recorded: {current}: {why_not}." if why_not else None
        st.button(
            accept.label,
            disabled=not can_decide,
            key=f"{prefix}_accept",
            icon=":material/check:",
            shortcut=ACCEPT,
            type="primary",
            help=f"{accept.label}, under your reviewer name",
            on_click=_cannot if refused else submission.hold,
            args=(prefix, refused) if refused else (accept.pending, accept.shown, "key"),
        )
        override = (
            st.button(
                "Override",
                key=f"{prefix}_override",
                icon=":material/edit:",
                shortcut=OVERRIDE,
                disabled=not can_decide,
                help="Switch the decision form to override",
                on_click=_cannot if why_not else _set_override,
                args=(prefix, f"Cannot override {current}: {why_not}.") if why_not else (override_state,),
            )
            and not why_not
        )
        keys = keys_help(accept.words)
        st.caption(f"{index + 1} of {len(ids)} in the queue. {keys}" if index >= 0 else keys)
    escape_leaves_fields()
    if said := st.session_state.pop(_said_key(prefix), None):  # what the last key could not do, where the keys are
        st.warning(md(said), icon=":material/keyboard:")
    return override


def _set_override(override_state: tuple[str, object] | None) -> None:
    if override_state is not None:
        key, value = override_state
        st.session_state[key] = value
