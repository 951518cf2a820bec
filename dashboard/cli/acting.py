"""Who a command acts as. Sign-in off: the name typed with the command (recorded as unauthenticated), in the role
RECALL_REVIEW_ROLE. Sign-in on: the owner of an API token with the decide scope (made by its owner, signed in, on
the Home page), in the role the token carries; a typed name is refused."""

from __future__ import annotations

import argparse
import os

from dashboard.settings import Role, Settings
from dashboard.store.identity import Actor


def token_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token",
        default=os.environ.get("RECALL_REVIEW_TOKEN"),
        help="where sign-in is on: an API token with the decide scope, made by its owner on the Home page "
        "(default: RECALL_REVIEW_TOKEN); the command acts as its owner, in the role it carries",
    )


def acting(
    settings: Settings, typed: str | None, token: str | None, *, name_flag: str, kind_key: str | None = None
) -> tuple[tuple[Actor, Role] | None, tuple[str, str] | None]:
    """((who acts, in which role), None), or (None, (flag, why not)). `kind_key`: the kind the token must decide;
    None: any."""
    from dashboard.access.api_tokens import ApiTokens
    from dashboard.kinds import handed_in
    from dashboard.settings import sign_in_configured

    if not sign_in_configured():
        if not (typed or "").strip():
            return None, (
                name_flag,
                "required: who acts (sign-in is off, so a typed name, recorded as unauthenticated)",
            )
        return (typed, settings.role), None
    if typed:
        return None, (
            name_flag,
            "sign-in is on: a command acts as an API token's owner (--token), never as a typed name",
        )
    if not token:
        return None, (
            "--token",
            "sign-in is on: give an API token with the decide scope (its owner makes it on the Home page)",
        )
    found = ApiTokens(handed_in(settings).engine).check(token)
    if found is None:
        return None, ("--token", "unknown or revoked")
    if (
        "decide" not in found.scopes
        or (kind_key is not None and kind_key not in found.kinds)
        or found.person_id is None
        or found.role is None
    ):
        what = f"{kind_key} cases" if kind_key else "anything"
        return None, (
            "--token",
            f"{found.name!r} may not decide {what} (it needs the decide scope, made by a signed-in owner)",
        )
    return (found.owner, found.role), None
