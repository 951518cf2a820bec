"""A case under blind second review. The second reviewer decides it with the form alone: the page holds nothing of
the first decision (no outcome, reviewer, reason, note or comment), only that a blind second review is asked for.
When the two differ, a lead (neither of the two) sees both side by side and decides. The rule itself is the decision
service's (dashboard/review/decisions.py); the form and its submit are the case page's own."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from components.safe_text import md
from dashboard.app import access, resources
from dashboard.store.decision import decision_summary


def _problem(case, me, *, free: bool) -> str | None:
    if me.name is None:
        return "type your reviewer name first"
    if not free:
        return "someone else holds this case"
    return resources.decisions().second_review_problem(case, me.person, access.current_role())


def cannot_claim(blind, me) -> str | None:
    """Why `me` may not claim a case under blind second review (its first reviewer, say: their claim would name
    them to the second reviewer); None when they may, or when the case is not under blind review."""
    if blind is None or me.name is None:
        return None
    return resources.decisions().second_review_problem(blind, me.person, access.current_role())


def _side_by_side(case, reasons: Mapping[str, str] | None) -> None:
    """The two reviewers' decisions, for the lead: who, when, what (with the reason labels configured for the case)."""
    first, second = case.first.decision, case.second.decision
    for column, (step, d) in zip(
        st.columns(2), (("First review", first), ("Blind second review", second)), strict=True
    ):
        with column.container(border=True):
            st.text(f"{step}: {d.reviewer}, {d.decided_at:%Y-%m-%d %H:%M} UTC")
            st.text(decision_summary(d, reasons))


def blind_heading(blind, reasons: Mapping[str, str] | None = None) -> None:
    """Awaiting the second review: only that one is asked for. Awaiting a lead: both decisions side by side."""
    if blind.awaiting_second:
        st.subheader("Blind second review")
        st.info(
            "A blind second review is asked for: decide this case on its evidence. Another reviewer's decision "
            "waits for yours and is not shown.",
            icon=":material/visibility_off:",
        )
    else:
        st.subheader("The reviewers disagree: a lead decides")
        st.info(
            "Awaiting a lead: two reviewers decided this case differently. Their decisions are below; a lead's "
            "decision replaces both in memory.",
            icon=":material/gavel:",
        )
        _side_by_side(blind, reasons)


def comments_hidden(blind) -> str | None:
    """Why the case's comments are not shown now: while the second review is blind, a comment's author may be
    the first reviewer. None when they are shown."""
    if blind is None or not blind.awaiting_second:
        return None
    return "Comments are hidden until the blind second review is given: a comment names its author."


def problem_caption(blind, me, *, free: bool) -> str | None:
    """Why `me` cannot decide this case here, said under the heading; None when they can."""
    why = _problem(blind, me, free=free)
    if why:
        st.caption(md(f"You cannot decide it here: {why}"))
    return why
