"""A case whose decision awaits a second approval: who decided what, the amount against their limit, and
Confirm / Reject for an eligible second approver. Anyone else sees the controls disabled, with why. The
rule itself is the decision service's (dashboard/review/decisions.py)."""

from __future__ import annotations

import streamlit as st

from components.safe_text import md
from components.workflow import notice
from dashboard.app import access, deciding, resources
from dashboard.store.decision import NOTE_MAX_CHARS


def held_notice(held) -> None:
    """A decision returned by a second approver: the case is back in the queue, naming both."""
    st.warning(md(f"Returned to the queue: {held.summary()}"), icon=":material/undo:")
    if held.settled.note:
        st.text(f"{held.settled.actor}'s note: {held.settled.note}")


def approval_panel(bank: str, kind: str, held, me, keys: deciding.QueueKeys, *, free: bool) -> None:
    """The pending view of `held` (awaiting), with the second approver's controls."""
    decision = held.stored.decision
    st.subheader("Awaiting second approval")
    st.warning(md(held.summary()), icon=":material/pending_actions:")
    st.text(held.limit_words())
    if decision.reason_code or decision.note:
        st.text(f"Reason: {decision.reason_code or 'none'}. Note: {decision.note or 'none'}")
    if me.name is None:
        why = "Type your reviewer name first."
    elif not free:
        why = "Someone else holds this case."
    else:
        why = resources.decisions().approval_problem(held, me.person, access.current_role())
    if why:
        st.caption(md(f"You cannot give the second approval: {why}"))
    note = st.text_area(
        "Note for the record (optional)",
        key=f"second_note_{held.stored.case_id}",
        max_chars=NOTE_MAX_CHARS,
        disabled=why is not None,
    )
    left, right = st.columns(2)
    confirm = left.button(
        "Confirm and release to memory",
        key="second_confirm",
        type="primary",
        icon=":material/done:",
        disabled=why is not None,
        help=why or "Memory and the agent see this decision once you confirm it",
    )
    reject = right.button(
        "Reject: return it to the queue",
        key="second_reject",
        icon=":material/undo:",
        disabled=why is not None,
        help=why or "The case goes back to the queue, naming both of you",
    )
    if confirm or reject:
        refused = deciding.second_approval(bank, kind, held.stored.case_id, me.person, keys, confirm=confirm, note=note)
        notice(f"Not recorded: {refused}", ok=False)
