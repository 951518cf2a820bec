"""The exception queue's "needs me" toggles: cases held for someone else's eyes that the reviewer may act on now.
Which ones is the decision service's rule (second_approver_problem, second_review_problem); this only asks it."""

from __future__ import annotations

import streamlit as st

from dashboard.app import access, resources
from dashboard.store.identity import Person


def approval_filter(held: dict, me: Person | None) -> set[str] | None:
    """The "Needs my approval" toggle: the held cases `me` may confirm or reject when it is on, else None."""
    on = st.toggle(
        "Needs my approval",
        key="exceptions_needs_me",
        disabled=me is None,
        help="Only the decisions above someone's approval limit that you may confirm or reject",
    )
    if not on or me is None:
        return None
    service, role = resources.decisions(), access.current_role()
    return {case_id for case_id, h in held.items() if service.approval_problem(h, me, role) is None}


def second_review_filter(blind: dict, me: Person | None, *, lead: bool) -> set[str] | None:
    """ "Needs my second review" (lead=False) or "Lead queue": the cases `me` may decide blind, or settle, when on."""
    label, key = (
        ("Lead queue", "exceptions_lead_queue") if lead else ("Needs my second review", "exceptions_needs_second")
    )
    on = st.toggle(
        label,
        key=key,
        disabled=me is None,
        help="Cases whose two reviewers disagree, for a lead who was neither"
        if lead
        else "Cases sampled for a blind second review that someone else decided first",
    )
    if not on or me is None:
        return None
    service, role = resources.decisions(), access.current_role()
    return {
        case_id
        for case_id, b in blind.items()
        if b.awaiting_lead == lead and service.second_review_problem(b, me, role) is None
    }
