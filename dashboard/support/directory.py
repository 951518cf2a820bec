"""Is the customer directory safe to retain, recall and migrate against? Two names must never share a
tag, and no name may make the legacy ownership marker ambiguous."""

from __future__ import annotations

from collections.abc import Sequence

from dashboard.support.admission import AmbiguousName, marker_pattern
from dashboard.support.customers import tag_collisions
from dashboard.support.models import Customer


def check_directory(customers: Sequence[Customer]) -> list[str]:
    """Problems that make the directory unsafe to migrate against (shared tags, unusable names)."""
    problems = [
        f"{tag} is shared by {', '.join(names)}" for tag, names in tag_collisions([c.name for c in customers]).items()
    ]
    for customer in customers:
        try:
            marker_pattern(customer.name)
        except AmbiguousName as exc:
            problems.append(str(exc))
    return problems
