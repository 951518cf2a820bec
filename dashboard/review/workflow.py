"""Queue workflow rules shared by the review pages: the next unreviewed case and the age against the SLA.
No Streamlit here."""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Literal

Sla = Literal["on time", "due", "overdue"]


def next_unreviewed(ids: Sequence[str], current: str | None, decided: Container[str]) -> str | None:
    """The first undecided case after `current` in queue order, wrapping round; None when all are decided.

    `current` itself is never the answer (it is the case on screen)."""
    start = ids.index(current) + 1 if current in ids else 0
    for case_id in [*ids[start:], *ids[:start]]:
        if case_id != current and case_id not in decided:
            return case_id
    return None


def sla_state(age_days: int, sla_days: int) -> Sla:
    """Overdue past `sla_days` open; due on its last day; on time before."""
    if age_days > sla_days:
        return "overdue"
    return "due" if age_days >= sla_days - 1 else "on time"


def age_label(age_days: int, sla_days: int) -> str:
    state = sla_state(age_days, sla_days)
    days = f"{age_days} day{'s' if age_days != 1 else ''} open"
    return days if state == "on time" else f"{days}, {state} (SLA {sla_days} days)"
