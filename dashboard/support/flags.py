"""A ticket's queue-wide flags, computed from its recall as it happens, and kept in the review store so the
queue table and the Overview show them at once, for every reviewer, after a restart. Records are named
(by document id, else memory id), so the Overview counts each legacy record once, however many tickets
judged it. Pure functions, and `keep`, which writes them through the review store's Casework. No Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from dashboard.review.casework import Casework
from dashboard.review.flag_counts import (
    RECALL as KEY,  # the store key of these flags (a ticket's incidents live beside them)
)
from dashboard.support.recall import Path, TicketRecall


class TicketFlags(BaseModel):
    path: Path  # tagged | legacy | none
    tagged: int  # tagged documents used
    admitted: list[str] = Field(default_factory=list)  # legacy documents admitted by the ownership rule
    rejected: dict[str, str] = Field(default_factory=dict)  # untagged candidates rejected: document -> verdict
    tagged_candidates: list[str] = Field(default_factory=list)  # tagged documents the fallback met (never admitted)
    mixing_observations: list[str] = Field(default_factory=list)  # excluded: they carry another customer's records


def ticket_flags(recall: TicketRecall) -> TicketFlags:
    untagged = [e for e in recall.legacy_rejected if not e.tags and e.kind == "document"]
    return TicketFlags(
        path=recall.path,
        tagged=len(recall.tagged),
        admitted=[e.ref for e in recall.legacy_admitted],
        rejected={e.ref: e.verdict for e in untagged},
        tagged_candidates=[e.ref for e in recall.legacy_rejected if e.tags and e.kind == "document"],
        mixing_observations=[e.ref for e in recall.mixing_observations],
    )


def history_used(flags: TicketFlags | None) -> str:
    """The queue's "history used" cell: blank when the ticket was not recalled yet."""
    if flags is None:
        return ""
    if flags.path == "tagged":
        return f"tagged ({flags.tagged} document{'s' if flags.tagged != 1 else ''})"
    if flags.path == "legacy":
        return f"legacy ({len(flags.admitted)} admitted)"
    return "none"


def stored(flags: dict | None) -> TicketFlags | None:
    value = (flags or {}).get(KEY)
    try:
        return TicketFlags.model_validate(value) if value else None
    except ValueError:
        return None


def keep(casework: Casework, bank_id: str, recalls: Mapping[str, TicketRecall]) -> None:
    """Store the flags of these tickets' recalls (ticket id -> recall)."""
    if recalls:
        casework.put_many_flags(
            bank_id, "ticket", {tid: {KEY: ticket_flags(r).model_dump(mode="json")} for tid, r in recalls.items()}
        )
