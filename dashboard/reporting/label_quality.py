"""The agent's recall quality as the reviewers' relevance labels judge it, week by week: precision@k, MRR and
evidence in the top k, over every labelled case, and by vendor, exception type and customer segment.

Each labelled case (dashboard.agents.labelled_cases) carries the list its request returned (the agent's, from the audit
log or its run, else the dashboard's) and the documents most of their reviewers call relevant; a case counts in
the week of its latest label. Vendor and type are the finance queue's; the segment is the ticket's customer's
(the customer directory's `segment`). Plain Python: it draws nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta

from pydantic import BaseModel

from dashboard.finance.models import ExceptionCase
from dashboard.agents.labelled_cases import LabelledCase
from dashboard.support.models import Customer, Ticket
from dashboard.traces.ranking import rank_figures

DIMENSIONS = ("all", "vendor", "type", "segment")
Attributes = Mapping[tuple[str, str], Mapping[str, str]]  # (case kind, case id) -> {"vendor": ..., "type": ..., "segment": ...}


class QualityRow(BaseModel):
    week: date  # its Monday
    by: str  # all | vendor | type | segment
    group: str
    cases: int
    labels: int
    relevant: int  # documents labelled relevant by most of their reviewers
    precision_at_k: float
    mrr: float
    evidence_at_k: int  # cases with a relevant document in the top k


def week_of(moment: datetime) -> date:
    day = moment.date()
    return day - timedelta(days=day.weekday())


def case_attributes(cases: Iterable[ExceptionCase], tickets: Iterable[Ticket], customers: Iterable[Customer],
                    labelled: Sequence[LabelledCase]) -> dict:
    """What each labelled case is grouped by: an exception's vendor and type, a ticket's customer segment (of a
    queue of 100,000, only the few labelled: every case's attributes cost ~0.1 s a run)."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    if exception_ids := {c.case_id for c in labelled if c.case_kind == "exception"}:
        found |= {("exception", c.id): {"vendor": c.vendor_code, "type": c.exception_type} for c in cases if c.id in exception_ids}
    if ticket_ids := {c.case_id for c in labelled if c.case_kind == "ticket"}:
        segment = {c.name: c.segment for c in customers if c.segment}
        found |= {("ticket", t.id): {"segment": segment[t.customer]} for t in tickets if t.id in ticket_ids and t.customer in segment}
    return found


def label_quality(labelled: Iterable[LabelledCase], attributes: Attributes, k: int) -> list[QualityRow]:
    """One row per week and group, newest week first; within a week: all, then vendor, type and segment."""
    groups: dict[tuple[date, str, str], list[LabelledCase]] = {}
    for case in labelled:
        week, about = week_of(case.labelled_at), attributes.get((case.case_kind, case.case_id), {})
        groups.setdefault((week, "all", "all"), []).append(case)
        for by in DIMENSIONS[1:]:
            if about.get(by):
                groups.setdefault((week, by, about[by]), []).append(case)
    rows = []
    for (week, by, group), members in groups.items():
        figures = [rank_figures(c.ranked, set(c.relevant), k) for c in members]
        n = len(members)
        rows.append(
            QualityRow(
                week=week, by=by, group=group, cases=n, labels=sum(c.labels for c in members),
                relevant=sum(len(c.relevant) for c in members), precision_at_k=sum(f.precision for f in figures) / n,
                mrr=sum(f.reciprocal_rank for f in figures) / n, evidence_at_k=sum(f.hit for f in figures),
            )
        )
    return sorted(rows, key=lambda r: (-r.week.toordinal(), DIMENSIONS.index(r.by), r.group))
