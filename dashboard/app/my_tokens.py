"""A signed-in person's own API tokens (the Home page): made here, they carry their owner's subject and role, so a
script or an agent acting with one (`python -m dashboard decide --token ...`) acts as that person, never as a typed
name. Each token is shown once; only its hash is kept; its owner revokes it here."""

from __future__ import annotations

import streamlit as st

from dashboard.access.api_tokens import SCOPES, ApiTokens, TokenError
from dashboard.app import access, resources
from dashboard.kinds import handed_in

SHOWN_ONCE = "my_token_shown_once"


def render_my_tokens() -> None:
    me = access.signed_in()
    if me is None:
        return
    tokens = ApiTokens(handed_in(resources.settings()).engine)
    role = access.current_role()
    with st.expander("Your API tokens: scripts and agents acting as you"):
        if shown := st.session_state.pop(SHOWN_ONCE, None):
            st.success("Copy it now: it is shown once, and only its hash is kept.", icon=":material/key:")
            st.code(shown, language=None)
        with st.form("my_token_form", clear_on_submit=True):
            name = st.text_input("Name (what uses it)", max_chars=120)
            kinds = st.multiselect("Queue kinds", [k.key for k in resources.kinds()])
            scopes = st.multiselect("Scopes", SCOPES, help=f"decide: a command acts as you, in your role now ({role})")
            made = st.form_submit_button("Make a token", icon=":material/add:")
        if made:
            try:
                token, _ = tokens.create(name, kinds, scopes, me, role=role)
            except TokenError as exc:
                st.error("Not made:", icon=":material/block:")
                st.text(str(exc).removeprefix("--"))
            else:
                st.session_state[SHOWN_ONCE] = token
                st.rerun()
        for token in reversed(tokens.owned_by(me)):
            state = (
                f"revoked {token.revoked_at:%Y-%m-%d}"
                if token.revoked_at
                else (f"last used {token.last_used_at:%Y-%m-%d %H:%M} UTC" if token.last_used_at else "never used")
            )
            left, right = st.columns([5, 1], vertical_alignment="center")
            left.text(
                f"{token.name}: {', '.join(token.scopes)} on {', '.join(token.kinds)}, as {token.role or 'no role'}; {state}"
            )
            if token.revoked_at is None and right.button("Revoke", key=f"revoke_token_{token.id}"):
                tokens.revoke(token.name)
                st.rerun()
