"""The signed-in user's role, and the check every write makes before it writes.

Hiding a button is a courtesy; `require(action)` is the rule. It runs in the page's script on the
server, right before the write, so a crafted widget event or a stale page cannot bypass it.
"""

from __future__ import annotations

import streamlit as st

from components.identity import login_configured, signed_in_claims
from components.safe_text import md
from dashboard.app import state
from dashboard.review.roles import WHAT, Action, NotAllowed, allowed, role_for
from dashboard.settings import Role


def current_role() -> Role:
    settings = state.settings()
    if not login_configured():
        return settings.role
    claims = signed_in_claims()
    if claims is None:
        return "viewer"  # login is configured but nobody is signed in: read only
    email, groups = claims
    return role_for(email, groups, settings.roles)


def can(action: Action) -> bool:
    return allowed(current_role(), action)


def require(action: Action) -> bool:
    """True when the current user may do `action`; otherwise says why on the page and returns False."""
    try:
        role = current_role()
        if not allowed(role, action):
            raise NotAllowed(role, action)
    except NotAllowed as exc:
        st.error(f"Not allowed: {md(exc)}", icon=":material/lock:")
        return False
    return True


def render_role_note() -> None:
    role = current_role()
    if login_configured():
        st.sidebar.caption(f"Your role: {role} ({WHAT[role]}).")
    else:
        st.sidebar.caption(
            f"Sign-in is off: everyone who reaches this dashboard acts as **{role}** ({WHAT[role]}), set by "
            "RECALL\\_REVIEW\\_ROLE. Configure sign-in to give people their own roles."
        )
