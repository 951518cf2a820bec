"""Who may do what: three roles, resolved from the signed-in identity or, without sign-in, configuration.

Pure rules, no Streamlit: the app asks `role_for(...)` once per run and `allowed(role, action)` right
before every write, not only to decide whether to draw a button.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from dashboard.settings import ROLES, Role, RoleMap
from dashboard.store.errors import NotAllowed

Action = Literal[
    "read",
    "decide",
    "deliver_now",
    "trace",
    "manage_deliveries",
    "apply_migration",
    "trace_any_query",
    "compare_configs",
    "propose_curation",
    "approve_curation",
    "settle_disagreement",
    "vouch",
]

# The least role each action needs.
NEEDS: dict[str, Role] = {
    "read": "viewer",  # Overview, queues, the audit log
    "decide": "reviewer",  # record or revise a decision, comments, claims
    "deliver_now": "reviewer",
    "trace": "reviewer",  # run the trace of a recall a page linked to
    "manage_deliveries": "lead",  # retry or discard a parked (failed) delivery
    "apply_migration": "lead",
    "trace_any_query": "lead",  # the trace console's free query; everyone may open a page's own trace links
    "compare_configs": "lead",  # the fusion lab's A/B: it clones banks and may call another Hindsight
    "propose_curation": "reviewer",  # propose retiring a document's memories, or bringing them back
    "approve_curation": "lead",  # approve or reject someone else's proposal (four eyes)
    "settle_disagreement": "lead",  # decide a case whose blind second review disagreed with the first
    "vouch": "lead",  # vouch for memory records of unknown origin after review, or confirm another lead's vouching
}
WHAT = {
    "viewer": "read the Overview, queues and the audit log",
    "reviewer": "also decide cases, propose curating a document and open the traces of the pages' recalls",
    "lead": "also approve others' curation proposals, settle blind second reviews that disagree, vouch for reviewed memory records (another lead confirms), apply the tag migration, retry or discard parked deliveries, trace any query on the configured banks and run A/B comparisons",
}


def allowed(role: Role, action: Action) -> bool:
    return ROLES.index(role) >= ROLES.index(NEEDS[action])


def require(role: Role, action: Action) -> None:
    if not allowed(role, action):
        raise NotAllowed(role, action, NEEDS[action])


def role_for(email: str | None, groups: Iterable[str], roles: RoleMap) -> Role:
    """The highest role the mapping gives this e-mail or any of its groups (`group:<name>`); else `signed_in`."""
    names = {f"group:{g}".lower() for g in groups}
    if email:
        names.add(email.strip().lower())
    for role in ("lead", "reviewer", "viewer"):
        if names & {entry.strip().lower() for entry in getattr(roles, role)}:
            return role
    return roles.signed_in
