"""The finance section of the Overview: how often the two-stage recall saved exact precedents a plain search would
have missed (the crowd-out check, seed 002), over the measured exceptions. Plain data; reporting/overview.py carries it
as it is (OverviewMetrics.crowd_out) and components/overview_charts.py draws it."""

from __future__ import annotations

from collections.abc import Sequence, Set

from pydantic import BaseModel, Field

from dashboard.finance.models import ExceptionCase
from dashboard.review.flag_counts import FinanceCounts


class CrowdOutSummary(BaseModel):
    cases: int  # queued exceptions
    recalled: int = 0  # with flags in the store (recalled at least once, by any instance)
    checked: int = 0  # with a crowd-out check (pass 2 ran, or the extra check was made)
    prevented: int = 0  # checked cases where a single any_strict pass would have lost exact precedents
    precedents_saved: int = 0  # exact precedents a single pass would have lost, summed
    unchecked_pass2_skipped: int = 0  # pass 1 filled k: no counterfactual unless the check was made
    missed_cases: list[dict] = Field(
        default_factory=list
    )  # the cases a plain search misses, most lost first (at most MISSED_LISTED)
    recommendations: dict[str, int] = Field(default_factory=dict)  # the agent's action -> cases
    no_relevant: int = 0  # measured cases with no relevant precedent (the guard escalates)


MISSED = "saved by the two-step search"  # a crowd-out caught, in a stakeholder's words


NOTHING_LOST = "nothing lost either way"
MISSED_LISTED = 200  # the cases a plain search misses, listed by name; the rest are counted


def cases_named(cases: Sequence[ExceptionCase], ids: Set[str]) -> dict[str, ExceptionCase]:
    """The cases with these ids, by id: a few looked up in a queue of 100,000 (no pass at all for none)."""
    return {c.id: c for c in cases if c.id in ids} if ids else {}


def crowd_out_summary(
    cases: Sequence[ExceptionCase], counts: FinanceCounts, missed: Sequence[tuple[str, int, int, str]] = ()
) -> CrowdOutSummary:
    """`counts`: the queue's finance flags counted (QueueFlags.finance); `missed`: (case id, exact precedents, lost,
    the agent's action) of the cases a plain search misses, most lost first (QueueFlags.missed)."""
    by_id = cases_named(cases, {case_id for case_id, *_ in missed})
    listed = []
    for case_id, exact, lost, action in missed:
        case = by_id.get(case_id)
        listed.append(
            {
                "case": case_id,
                "vendor": case.vendor_code if case else "",
                "type": case.exception_type.replace("_", " ") if case else "",
                "exact precedents": exact,
                "lost by a single pass": lost,
                "agent recommends": action,
            }
        )
    return CrowdOutSummary(
        cases=len(cases),
        recalled=counts.recalled,
        checked=counts.checked,
        prevented=counts.prevented,
        precedents_saved=counts.precedents_saved,
        unchecked_pass2_skipped=counts.recalled - counts.checked,
        missed_cases=listed,
        recommendations=dict(counts.recommendations),
        no_relevant=counts.no_relevant,
    )


def crowd_out_states(co: CrowdOutSummary) -> dict[str, int]:
    """The measured cases by what the crowd-out check says of them."""
    return {MISSED: co.prevented, NOTHING_LOST: co.checked - co.prevented, "not checked": co.unchecked_pass2_skipped}
