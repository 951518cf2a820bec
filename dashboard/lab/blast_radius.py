"""Blast radius before a knob changes: the DECIDED cases (a reviewer decided them in the review store) whose
exact precedents or recommendation a what-if or A/B would change, each with its page's deep link and what
changes, before -> after. A reviewer's decision stands on that evidence: these are the ones to look at again.
Plain Python."""

from __future__ import annotations

from pydantic import BaseModel

from dashboard.lab.ab import CaseDiff


def case_link(case_id: str) -> str:
    """The exceptions page's deep link to one case."""
    return f"/exceptions?case={case_id}"


class DecidedChange(BaseModel):
    case_id: str
    exact_before: list[str]
    exact_after: list[str]
    recommendation_before: str | None
    recommendation_after: str | None

    @property
    def link(self) -> str:
        return case_link(self.case_id)

    @property
    def sentence(self) -> str:
        """e.g. "exact evidence P1, P2 -> P1, P3; recommendation approve -> reject"."""
        parts = []
        if self.exact_before != self.exact_after:
            before, after = ", ".join(self.exact_before) or "none", ", ".join(self.exact_after) or "none"
            parts.append(f"exact evidence {before} -> {after}")
        if self.recommendation_before != self.recommendation_after:
            parts.append(f"recommendation {self.recommendation_before} -> {self.recommendation_after}")
        return "; ".join(parts)

    def row(self) -> dict:
        return {
            "case": self.link,
            "exact before": ", ".join(self.exact_before),
            "exact after": ", ".join(self.exact_after),
            "recommendation before": self.recommendation_before,
            "recommendation after": self.recommendation_after,
        }


def decided_changes(diffs: list[CaseDiff], decided: set[str]) -> list[DecidedChange]:
    """The decided exceptions whose exact evidence or recommendation differs between A and B, in queue order."""
    return [
        DecidedChange(
            case_id=d.case_id,
            exact_before=d.exact_a,
            exact_after=d.exact_b,
            recommendation_before=d.recommendation_a,
            recommendation_after=d.recommendation_b,
        )
        for d in diffs
        if d.kind == "exception"
        and d.case_id in decided
        and not d.error
        and (d.exact_a != d.exact_b or d.recommendation_changed)
    ]
