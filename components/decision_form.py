"""The reviewer's decision form (a st.form, so AppTest can submit it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

from components.safe_text import md

from dashboard.finance.decisions import REASON_CODES
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import Recommendation
from dashboard.review.decision import NOTE_MAX_CHARS, OUTCOMES

APPROVE, OVERRIDE = "Approve the recommendation", "Override"
SUBMIT_KEY, NOTE_KEY, LONG_NOTE_KEY = "decision_submit", "decision_note", "decision_long_note"


@dataclass(frozen=True)
class FormInput:
    action: str  # approve_recommendation | override
    outcome: str | None
    reason_code: str | None
    note: str
    reviewer: str | None
    authenticated: bool


def reviewer_field(me) -> None:
    """The reviewer identity (`me`: who the app says acts): the signed-in user, else a name field (outside the
    form: the Approve key and the claim use it without submitting the form)."""
    if me.signed_in:
        st.text(f"Recorded as {me.name} (signed in).")
        return
    st.text_input("Reviewer name", max_chars=120, key="reviewer_name", help="Required. Recorded as unauthenticated: login is not configured.")


def hold_long_note(case_id: str, note: str, box_key: str = NOTE_KEY) -> None:
    """A note over the limit was refused: the next run keeps its first NOTE_MAX_CHARS characters in the box
    `box_key` and shows the rest in full beside it, so nothing typed is lost (call st.rerun after)."""
    st.session_state[LONG_NOTE_KEY] = {
        "case": case_id, "box": box_key, "kept": note[:NOTE_MAX_CHARS], "cut": note[NOTE_MAX_CHARS:], "applied": False,
    }


def long_note(case_id: str) -> None:
    """Before the note box is drawn: a note held by `hold_long_note` for this case goes back into its box, cut to
    the limit, with what was cut shown in full."""
    held = st.session_state.get(LONG_NOTE_KEY)
    if not held or held["case"] != case_id:
        st.session_state.pop(LONG_NOTE_KEY, None)
        return
    if not held["applied"]:  # set before the box is drawn: a widget's value cannot change once it is
        st.session_state[held["box"]], held["applied"] = held["kept"], True
    st.warning(
        f"Not submitted: your note was {len(held['kept']) + len(held['cut']):,} characters; the limit is {NOTE_MAX_CHARS:,}. The box keeps "
        f"the first {NOTE_MAX_CHARS:,}; the last {len(held['cut']):,} were cut and are below, to copy what you need.",
        icon=":material/content_cut:",
    )
    st.code(held["cut"], language=None, wrap_lines=True, height=240)  # plain text, in full (it scrolls)


def decision_form(case: ExceptionCase, rec: Recommendation, me, *, disabled: bool = False,
                  why: str = "someone else holds this case (see who above)", reasons: Mapping[str, str] = REASON_CODES) -> FormInput | None:
    """Draw the form (after `reviewer_field`); returns what was submitted (not yet validated), or None."""
    long_note(case.id)
    if disabled:  # a greyed-out form says why
        st.caption(md(f"The form is off: {why}."))
    with st.form(key=f"decision_form_{case.id}"):
        choice = st.radio(
            "Decision", [APPROVE, OVERRIDE], horizontal=True, key="decision_choice",
            captions=[f"record {rec.action}, as recommended", "record another outcome, with a reason"], disabled=disabled,
        )
        others = [o for o in OUTCOMES if o != rec.action]  # overriding to the recommendation is approving it
        outcome = st.selectbox(
            "Override outcome", others, index=None, placeholder="Only for an override", key="decision_outcome", disabled=disabled,
            help=f"The agent recommends {rec.action}: an override records one of the others.",
        )
        # A list, not a select box: at the form's width a select box cuts "GOODS_NOT_RECEIVED: Goods or ..."; each
        # code and its label read in full, wrapped.
        reason = st.radio(
            "Reason code (required for an override)", list(reasons), index=None,
            format_func=lambda code: f"{code}: {reasons[code]}", key="decision_reason", disabled=disabled,
        )
        # No max_chars: the browser would drop a longer paste whole; the limit is checked on submit instead.
        note = st.text_area("Note", key=NOTE_KEY, disabled=disabled, help=f"At most {NOTE_MAX_CHARS:,} characters.")
        submitted = st.form_submit_button("Submit decision", type="primary", key=SUBMIT_KEY, disabled=disabled)
    if not submitted:
        return None
    return FormInput(
        action="approve_recommendation" if choice == APPROVE else "override", outcome=outcome, reason_code=reason,
        note=note or "", reviewer=_name(me), authenticated=me.signed_in,
    )


def quick_approval(me) -> FormInput:
    """What the Approve key submits: the recommendation as it is, under the current reviewer identity."""
    return FormInput(action="approve_recommendation", outcome=None, reason_code=None, note="", reviewer=_name(me), authenticated=me.signed_in)


def _name(me) -> str | None:
    # The name as typed in this run: the form may be submitted in the run the name is typed.
    return me.name if me.signed_in else st.session_state.get("reviewer_name")
