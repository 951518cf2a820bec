"""Approval limits: the largest invoice a reviewer may decide alone (RECALL_REVIEW_APPROVAL_LIMITS).

A named reviewer's entry (their name, or a signed-in reviewer's e-mail) wins over their role's; a role with no entry has no limit. Names match without
regard to case or surrounding spaces; the role names themselves are never read as a reviewer's name.
Pure rules, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dashboard.settings import ROLES, Role
from dashboard.store.identity import Actor, as_person


def _key(name: str) -> str:
    return name.strip().casefold()


@dataclass(frozen=True)
class Limit:
    amount: float | None  # None: no limit
    whose: str  # in plain words: "Dana's own limit", "the reviewer role's limit", "no limit"

    def covers(self, amount: float) -> bool:
        return self.amount is None or amount <= self.amount


@dataclass(frozen=True)
class ApprovalLimits:
    entries: Mapping[str, float] = field(default_factory=dict)

    def limit_for(self, reviewer: Actor, role: Role) -> Limit:
        named = {_key(k): v for k, v in self.entries.items() if _key(k) not in ROLES}
        person = as_person(reviewer)
        for key in (person.email, person.name):
            if key and _key(key) in named:
                return Limit(named[_key(key)], f"{person.name}'s own limit")
        roles = {_key(k): v for k, v in self.entries.items() if _key(k) in ROLES}
        if role in roles:
            return Limit(roles[role], f"the {role} role's limit")
        return Limit(None, f"no limit for the {role} role")

    def covers(self, reviewer: Actor, role: Role, amount: float) -> bool:
        return self.limit_for(reviewer, role).covers(amount)


def in_words(reviewer: Actor, limit: Limit, amount: float) -> str:
    """ "Dana's own limit is 20,000.00; this invoice is 42,000.00, above it." (for the page and the CLI)."""
    if limit.amount is None:
        return f"{reviewer} has {limit.whose}; this invoice is {amount:,.2f}."
    where = "within it" if limit.covers(amount) else "above it"
    return f"{limit.whose[0].upper()}{limit.whose[1:]} is {limit.amount:,.2f}; this invoice is {amount:,.2f}, {where}."
