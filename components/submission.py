"""A reviewer's submit, taken when they act and carried to the run that records it: which fields they filled in,
and what their screen showed (`Shown`: the case, the agent's recommendation or draft, the evidence).

A button's `on_click` arguments are those of the run that drew it, so `hold` keeps what THAT screen showed, even
when the page has moved to another case by the time the click is handled (a key pressed as the page moved on)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import streamlit as st

from dashboard.store.decision import Shown


@dataclass(frozen=True)
class Submitted:
    shown: Shown  # what the screen showed when the reviewer acted
    origin: str  # "form" (its button) or "key" (the accept key or button in the case's header)
    values: Mapping[str, object] = field(default_factory=dict)  # field -> value, as submitted


def hold(pending: str, shown: Shown, origin: str, keys: Mapping[str, str] | None = None) -> None:
    """A button's callback: keep the submit under the session key `pending` with the values of the fields `keys`
    (field -> session key) as they were sent with it."""
    values = {name: st.session_state.get(key) for name, key in (keys or {}).items()}
    st.session_state[pending] = Submitted(shown=shown, origin=origin, values=values)


def take(pending: str) -> Submitted | None:
    """The submit held under `pending`, once (None when there is none)."""
    return st.session_state.pop(pending, None)
