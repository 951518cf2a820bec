"""Who is using the dashboard and what they may do: the one place the app reads identity and role.

Sign-in is configured by an `[auth]` section in .streamlit/secrets.toml (Streamlit's OIDC `st.login`);
RECALL_REVIEW_REQUIRE_LOGIN=true makes every page ask for it first. Without sign-in, everyone has the
role RECALL_REVIEW_ROLE and types a reviewer name, recorded as unauthenticated.

`can(action)` decides whether a control is drawn enabled; the rule itself is `dashboard.review.roles`,
which every write checks right before it writes (the decision service itself, a page's own writes through
`permitted`), so a crafted widget event or a stale page cannot bypass it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st

from components.safe_text import md
from dashboard.app import resources
from dashboard.review.errors import NotAllowed
from dashboard.review.roles import WHAT, Action, allowed, require, role_for
from dashboard.settings import Role


@dataclass(frozen=True)
class Reviewer:
    name: str | None  # None until a name is typed (sign-in off)
    signed_in: bool


def login_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


def login_required() -> bool:
    return os.environ.get("RECALL_REVIEW_REQUIRE_LOGIN", "").lower() in ("1", "true", "yes")


def _signed_in_user() -> tuple[str, str | None, list[str]] | None:
    """(name, e-mail, groups) of the signed-in user, or None (nobody signed in, or sign-in is off)."""
    if not login_configured():
        return None
    try:
        if not st.user.is_logged_in:
            return None
        name = str(st.user.get("name") or st.user.get("email") or "")
        groups = st.user.get("groups") or []
    except Exception:
        return None
    if not name:
        return None
    return name, str(st.user.get("email") or "") or None, [str(g) for g in (groups if isinstance(groups, list) else [groups])]


def reviewer(name_key: str) -> Reviewer:
    """Who acts: the signed-in user, else the name typed in the page's reviewer field (`name_key`)."""
    user = _signed_in_user()
    if user is not None:
        return Reviewer(user[0], True)
    typed = str(st.session_state.get(name_key) or "").strip()
    return Reviewer(typed or None, False)


def current_role() -> Role:
    settings = resources.settings()
    if not login_configured():
        return settings.role
    user = _signed_in_user()
    if user is None:
        return "viewer"  # sign-in is configured but nobody is signed in: read only
    _name, email, groups = user
    return role_for(email, groups, settings.roles)


def can(action: Action) -> bool:
    return allowed(current_role(), action)


def permitted(action: Action) -> bool:
    """The rule right before a page's own write (a claim, a comment, a migration): roles.require, its
    refusal shown inline where the write was asked for (a toast would lie over the form); True when the write
    may go ahead."""
    try:
        require(current_role(), action)
    except NotAllowed as exc:
        st.error(md(f"Not allowed: {exc}"), icon=":material/lock:")
        return False
    return True


def render_sign_in() -> None:
    """Sidebar sign-in/out and the role; stops the page when sign-in is required and nobody is signed in."""
    role = current_role()
    if not login_configured():
        if login_required():
            st.error("RECALL_REVIEW_REQUIRE_LOGIN is set but no [auth] section is configured in secrets.toml.")
            st.stop()
        st.sidebar.caption(
            f"Sign-in is off: everyone who reaches this dashboard acts as **{role}** ({WHAT[role]}), set by "
            "RECALL\\_REVIEW\\_ROLE, and decisions record a typed reviewer name, marked unauthenticated."
        )
        return
    user = _signed_in_user()
    if user is not None:
        st.sidebar.text(f"Signed in as {user[0]}")
        st.sidebar.caption(f"Your role: {role} ({WHAT[role]}).")
        st.sidebar.button("Sign out", on_click=st.logout, key="sign_out")
        return
    st.sidebar.button("Sign in", on_click=st.login, key="sign_in")
    if login_required():
        st.info("Sign in to review.", icon=":material/lock:")
        st.stop()
