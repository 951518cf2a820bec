"""Bring what a reviewer must read next into view: a refusal or confirmation scrolled into the viewport, the field
that needs fixing focused. Streamlit reruns a page without moving its scroll position, so a message drawn below the
fold (or a form switched by a key) would otherwise change nothing the reviewer can see.

A custom component (st.components.v2) runs a few lines of our own JavaScript in the app page; it takes only
element keys and field labels chosen by the code, never text a user or a file typed."""

from __future__ import annotations

import streamlit as st

_JS = """
// The field labelled `label`: by its aria-label (a text box), else the input under the widget label that reads so (a
// select box's input is labelled otherwise).
function findField(label) {
  const named = document.querySelector('[aria-label="' + CSS.escape(label) + '"]');
  if (named) return named;
  const caption = [...document.querySelectorAll('[data-testid="stWidgetLabel"]')].find(e => e.textContent.trim() === label);
  const widget = caption && caption.closest('[data-testid="stElementContainer"]');
  return widget && widget.querySelector('input, textarea, [role="radiogroup"] input');
}

export default function (component) {
  const want = component.data;
  if (!want) return;
  const place = (first) => {
    if (first && want.top) {
      const main = document.querySelector('[data-testid="stMain"]');
      if (main) main.scrollTo({ top: 0 });
      window.scrollTo({ top: 0 });
    }
    const target = want.scroll && document.querySelector('.st-key-' + CSS.escape(want.scroll));
    if (target) target.scrollIntoView({ block: 'nearest' });
    const field = want.focus && findField(want.focus);
    if (!field) return;
    if (first) field.focus({ preventScroll: true });
    const widget = field.closest('[data-testid="stElementContainer"]') || field;  // with its label
    const box = widget.getBoundingClientRect();  // the field to fix is in view too, beside what was said
    if (box.top < 0 || box.bottom > window.innerHeight) widget.scrollIntoView({ block: target ? 'nearest' : 'center' });
  };
  // After the rerun has drawn the page (the target may be drawn in the same run as this component), and again once
  // what is drawn above it has settled, so a late layout shift does not carry the message out of view.
  setTimeout(() => place(true), 50);
  setTimeout(() => place(false), 600);
}
"""

_attention = st.components.v2.component("recall_review_attention", js=_JS)


def draw_attention(
    *, scroll_to: str | None = None, focus: str | None = None, top: bool = False, key: str = "attention"
) -> None:
    """In the browser, once this run is drawn: scroll the page to its top (`top`), then the container keyed
    `scroll_to` into view, then focus the field labelled `focus`."""
    count = st.session_state.get("_attention_count", 0) + 1  # a new value each call, so the browser acts again
    st.session_state["_attention_count"] = count
    _attention(data={"scroll": scroll_to, "focus": focus, "top": top, "n": count}, key=key, height=0)
