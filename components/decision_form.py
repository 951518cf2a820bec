"""The reviewer's decision form (a st.form, so AppTest can submit it)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from dashboard.finance.decisions import REASON_CODES
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import Recommendation
from dashboard.review.decision import OUTCOMES

APPROVE, OVERRIDE = "Approve the recommendation", "Override"
SUBMIT_KEY = "decision_submit"


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


def decision_form(case: ExceptionCase, rec: Recommendation, me, *, disabled: bool = False) -> FormInput | None:
    """Draw the form (after `reviewer_field`); returns what was submitted (not yet validated), or None."""
    with st.form(key=f"decision_form_{case.id}"):
        choice = st.radio(
            "Decision", [APPROVE, OVERRIDE], horizontal=True, key="decision_choice",
            captions=[f"record {rec.action}, as recommended", "record another outcome, with a reason"], disabled=disabled,
        )
        a, b = st.columns(2)
        outcome = a.selectbox(
            "Override outcome", OUTCOMES, index=None, placeholder="approve / reject / escalate", key="decision_outcome", disabled=disabled
        )
        reason = b.selectbox(
            "Reason code (required for an override)", list(REASON_CODES), index=None, placeholder="choose a reason",
            format_func=lambda code: f"{code}: {REASON_CODES[code]}", key="decision_reason", disabled=disabled,
        )
        note = st.text_area("Note", max_chars=4000, key="decision_note", disabled=disabled)
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
