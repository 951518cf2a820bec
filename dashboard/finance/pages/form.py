"""A finance case's decision form: accept the agent's recommendation, or override it with another outcome and a reason
code. Its keys, drafts and long-note refusal are every kind's (components/decision_form.py)."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from components import submission
from components.decision_form import (
    ACCEPT,
    FINANCE_DRAFTS,
    FRESH,
    NOTE_LABEL,
    OUTCOME_LABEL,
    OVERRIDE,
    REVISE_BUTTON,
    REVISE_LABEL,
    clear_if_sent,
    field_keys,
    refill_long_note,
)
from components.safe_text import md
from dashboard.finance.decisions import REASON_CODES
from dashboard.finance.models import OUTCOME_WORDS, ExceptionCase
from dashboard.finance.policy import Recommendation
from dashboard.store.decision import NOTE_MAX_CHARS, OUTCOMES, REVISION_REASON_MAX_CHARS, Shown


def accept_label(action: str) -> str:
    """The accept control names the outcome it records: "Accept: reject", "Accept: approve for payment"."""
    return f"Accept: {OUTCOME_WORDS[action]}"


def decision_form(
    case: ExceptionCase,
    rec: Recommendation,
    shown: Shown,
    pending: str,
    *,
    disabled: bool = False,
    why: str = "someone else holds this case (see who above)",
    reasons: Mapping[str, str] = REASON_CODES,
    revising: int | None = None,
) -> dict | None:
    """Draw the case's form. Its button holds what was submitted, with `shown`, under
    the session key `pending` (the page takes it with `submission.take`). Returns the long note it refused, if any.
    `revising`: the revision of the case's standing decision; the form then revises it, and asks why."""
    keys = field_keys(case.id, revising=revising is not None)
    clear_if_sent(case.id, {key: FRESH[name] for name, key in field_keys(case.id, revising=True).items()})
    others = [o for o in OUTCOMES if o != rec.action]  # overriding to the recommendation is accepting it
    FINANCE_DRAFTS.refill(case.id, keys, {"outcome": others, "reason": list(reasons)})
    held_note = refill_long_note(case.id)
    if revising is not None:
        st.subheader(REVISE_BUTTON)
        st.caption(
            f"Records revision {revising + 1} in place of the decision above, which stays in the case's history. "
            "It needs a reason."
        )
    if disabled:  # a greyed-out form says why
        st.caption(md(f"The form is off: {why}."))
    keep = FINANCE_DRAFTS.on_change(
        case.id, keys, FRESH
    )  # its notice: FINANCE_DRAFTS.notice, under the form's feedback
    # Not a st.form: a form sends its fields only with its button, so a half-written override vanished when a key moved
    # the page on. Each field is sent as it changes and kept as the case's draft (`Drafts.keep`).
    with st.container(key=f"decision_form_{case.id}", border=True):
        st.radio(
            "Decision",
            [ACCEPT, OVERRIDE],
            horizontal=True,
            key=keys["choice"],
            disabled=disabled,
            format_func=lambda c: accept_label(rec.action) if c == ACCEPT else "Override",
            captions=[
                f"record {OUTCOME_WORDS[rec.action]}, as the agent recommends",
                "record another outcome, with a reason",
            ],
            **keep,
        )
        st.selectbox(
            OUTCOME_LABEL,
            others,
            index=None,
            placeholder="Only for an override",
            key=keys["outcome"],
            disabled=disabled,
            format_func=OUTCOME_WORDS.get,
            help=f"The agent recommends {OUTCOME_WORDS[rec.action]}: an override records one of the others.",
            **keep,
        )
        # A list, not a select box: at the form's width a select box cuts "GOODS_NOT_RECEIVED: Goods or ..."; each
        # code and its label read in full, wrapped.
        st.radio(
            "Reason code (required for an override)",
            list(reasons),
            index=None,
            format_func=lambda code: f"{code}: {reasons[code]}",
            key=keys["reason"],
            disabled=disabled,
            **keep,
        )
        # No max_chars: the browser would drop a longer paste whole; the limit is checked on submit instead.
        st.text_area(
            NOTE_LABEL, key=keys["note"], disabled=disabled, help=f"At most {NOTE_MAX_CHARS:,} characters.", **keep
        )
        if revising is not None:
            st.text_input(
                REVISE_LABEL,
                key=keys["revise"],
                disabled=disabled,
                max_chars=REVISION_REASON_MAX_CHARS,
                placeholder="Why the decision above no longer stands",
                **keep,
            )
        st.button(
            "Record decision" if revising is None else REVISE_BUTTON,
            type="primary",
            key=f"decision_submit_{case.id}",
            disabled=disabled,
            on_click=submission.hold,
            args=(pending, shown, "form", keys),
        )
    return held_note
