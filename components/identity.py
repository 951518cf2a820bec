"""Who is reviewing: the signed-in user when login is configured, else a typed name (unauthenticated).

Login is configured by an `[auth]` section in .streamlit/secrets.toml (Streamlit's OIDC `st.login`).
RECALL_REVIEW_REQUIRE_LOGIN=true makes every page ask for sign-in first.
"""

from __future__ import annotations

import os

import streamlit as st


def login_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


def login_required() -> bool:
    return os.environ.get("RECALL_REVIEW_REQUIRE_LOGIN", "").lower() in ("1", "true", "yes")


def signed_in_reviewer() -> str | None:
    """The signed-in user's name or email, or None (not signed in, or no login configured)."""
    if not login_configured():
        return None
    try:
        if not st.user.is_logged_in:
            return None
        return str(st.user.get("name") or st.user.get("email") or "") or None
    except Exception:
        return None


def signed_in_claims() -> tuple[str | None, list[str]] | None:
    """(e-mail, groups) of the signed-in user, or None when nobody is signed in (or login is off)."""
    if signed_in_reviewer() is None:
        return None
    groups = st.user.get("groups") or []
    return (str(st.user.get("email") or "") or None, [str(g) for g in (groups if isinstance(groups, list) else [groups])])


def render_sign_in() -> None:
    """Sidebar sign-in/out; stops the page when login is required and nobody is signed in."""
    if not login_configured():
        if login_required():
            st.error("RECALL_REVIEW_REQUIRE_LOGIN is set but no [auth] section is configured in secrets.toml.")
            st.stop()
        st.sidebar.caption("Login is not configured: decisions record a typed reviewer name, marked unauthenticated.")
        return
    reviewer = signed_in_reviewer()
    if reviewer:
        st.sidebar.text(f"Signed in as {reviewer}")
        st.sidebar.button("Sign out", on_click=st.logout, key="sign_out")
        return
    st.sidebar.button("Sign in", on_click=st.login, key="sign_in")
    if login_required():
        st.info("Sign in to review.", icon=":material/lock:")
        st.stop()
