"""Who is using the dashboard and what they may do: the one place the app reads identity and role.

Sign-in is configured by an `[auth]` section in .streamlit/secrets.toml (Streamlit's OIDC `st.login`); with it, who
acts is the provider's subject (store/identity.py), checked on every run against the configured issuer, this
dashboard's client id and the token's expiry, and roles come from e-mail and group claims (`[roles]`).
RECALL_REVIEW_REQUIRE_LOGIN=true makes every page ask for it first. Without sign-in, a reviewer types a name,
recorded as unauthenticated, and everyone has the role RECALL_REVIEW_ROLE (lead by default, on this machine only:
on any other address the app does not start without sign-in unless RECALL_REVIEW_ALLOW_ANONYMOUS=true, and then
an anonymous visitor is a viewer unless RECALL_REVIEW_ROLE says otherwise; serve.py).

`can(action)` decides whether a control is drawn enabled; the rule itself is `dashboard.access.roles`,
which every write checks right before it writes (the decision service itself, a page's own writes through
`permitted`), so a crafted widget event or a stale page cannot bypass it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from functools import lru_cache

import httpx
import streamlit as st
from streamlit.runtime.secrets import secrets_singleton

from components.safe_text import md
from dashboard.access.roles import WHAT, Action, allowed, require, role_for
from dashboard.app import resources
from dashboard.settings import Role, is_loopback
from dashboard.store.errors import NotAllowed
from dashboard.store.identity import Person, SignedIn, signed_in_person


@dataclass(frozen=True)
class Reviewer:
    name: str | None  # None until a name is typed (sign-in off)
    signed_in: bool
    person: Person | None = None  # who acts: the provider's subject when signed in, else the typed name


def login_configured() -> bool:
    if st.secrets is secrets_singleton and _no_secrets_file():
        return False
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


@lru_cache(maxsize=1)
def _no_secrets_file() -> bool:
    """This process has no secrets file. Streamlit keeps a file's secrets once read, but with no file it looks for one
    again at every question (two paths opened, an exception raised), and a page run asks about sign-in a dozen times: 8%
    of the app's CPU with eight reviewers at once. Sign-in is configured at start, so the first answer stands."""
    try:
        secrets_singleton.to_dict()
        return False
    except Exception:  # StreamlitSecretNotFoundError: no file in any configured path
        return True


def login_required() -> bool:
    return os.environ.get("RECALL_REVIEW_REQUIRE_LOGIN", "").lower() in ("1", "true", "yes")


def exposed() -> bool:
    """Served on an address other than this machine's own (Streamlit's server.address; unset: every interface)."""
    return not is_loopback(st.get_option("server.address"))


@lru_cache(maxsize=4)
def _issuer_of(metadata_url: str) -> str:
    """The provider's issuer, from its discovery document (read once per process, as Streamlit reads it to sign in)."""
    return str(httpx.get(metadata_url, timeout=10).raise_for_status().json()["issuer"])


def _sign_in() -> SignedIn | str | None:
    """The signed-in person, why the session's sign-in is not accepted (in words), or None (nobody signed in)."""
    if not login_configured():
        return None
    try:
        if not st.user.is_logged_in:
            return None
        claims = st.user.to_dict()
        auth = st.secrets["auth"]
        issuer = _issuer_of(str(auth["server_metadata_url"]))
        client_id = str(auth["client_id"])
    except Exception:  # a provider that cannot be reached now accepts no one, rather than trusting the cookie
        return "The sign-in provider cannot be reached to check this sign-in. Try again shortly."
    return signed_in_person(
        claims, issuer=issuer, client_id=client_id, now=time.time(), groups_claim=resources.settings().groups_claim
    )


def _signed_in_user() -> SignedIn | None:
    user = _sign_in()
    return user if isinstance(user, SignedIn) else None


def signed_in() -> Person | None:
    """The signed-in person, or None (sign-in off, nobody signed in, or a session not accepted)."""
    user = _signed_in_user()
    return user.person if user is not None else None


def reviewer(name_key: str) -> Reviewer:
    """Who acts: the signed-in user, else the name typed in the page's reviewer field (`name_key`)."""
    user = _signed_in_user()
    if user is not None:
        return Reviewer(user.person.name, True, user.person)
    if login_configured():
        return Reviewer(None, False)  # sign-in is on: nobody types a name
    typed = str(st.session_state.get(name_key) or "").strip()
    return Reviewer(typed or None, False, Person(typed) if typed else None)


def current_role() -> Role:
    settings = resources.settings()
    if not login_configured():
        if exposed() and "role" not in settings.model_fields_set:
            return "viewer"  # RECALL_REVIEW_ALLOW_ANONYMOUS on another address: anonymous visitors read only
        return settings.role
    user = _signed_in_user()
    if user is None:
        return "viewer"  # sign-in is configured but nobody is signed in: read only
    return role_for(user.person.email, user.groups, settings.roles)


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
        where = (
            "open to anyone who reaches this address (RECALL\\_REVIEW\\_ALLOW\\_ANONYMOUS)"
            if exposed()
            else "one-person mode, served on this machine only"
        )
        st.sidebar.caption(
            f"Sign-in is off ({where}): everyone acts as **{role}** ({WHAT[role]}), and decisions record a typed "
            "reviewer name, marked unauthenticated."
        )
        return
    user = _sign_in()
    if isinstance(user, SignedIn):
        st.sidebar.text(f"Signed in as {user.person.name}")
        st.sidebar.caption(f"Your role: {role} ({WHAT[role]}).")
        st.sidebar.button("Sign out", on_click=st.logout, key="sign_out")
        return
    if isinstance(user, str):  # it quotes the session's own claims: plain text, never markdown (no autolinks either)
        st.sidebar.warning("This session's sign-in is not accepted:", icon=":material/lock:")
        st.sidebar.text(user)
    st.sidebar.button("Sign in", on_click=st.login, key="sign_in")
    if login_required():
        st.info("Sign in to review.", icon=":material/lock:")
        st.stop()
