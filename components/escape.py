"""Esc leaves a text field, so the review keys work again: Streamlit ignores a button's shortcut while the focus is in
an input, a text area or a select (typing a note never moves the queue), and nothing of its own takes the focus out.

A custom component (st.components.v2) runs a few lines of our own JavaScript in the app page, once per page load: on
Esc in a text field it blurs the field (what was typed stays in it, and is sent like any edit)."""

from __future__ import annotations

import streamlit as st

_JS = """
export default function () {
  if (window.__recallReviewEscape) return;  // one listener per page, however many runs draw this
  window.__recallReviewEscape = true;
  document.addEventListener('keydown', event => {
    const field = document.activeElement;
    if (event.key !== 'Escape' || !field) return;
    if (field.tagName === 'TEXTAREA' || field.tagName === 'INPUT') field.blur();
  }, true);
}
"""

_escape = st.components.v2.component("recall_review_escape", js=_JS)


def escape_leaves_fields() -> None:
    """Draw (nothing visible) the Esc handler on this page."""
    _escape(key="escape_leaves_fields", height=0)
