"""The agent's recall quality as the reviewers' relevance labels judge it, week by week: precision@k, MRR and
evidence in the top k, over every labelled case, and by vendor, exception type and customer segment.

Each labelled case (dashboard.agents.labelled_cases) carries the list its request returned (the agent's, from the audit
log or its run, else the dashboard's) and the documents most of their reviewers call relevant; a case counts in
the week of its latest label. What a case is grouped by is its kind's (QueueKind.label_groups: a finance case's
vendor and type, a ticket's customer segment). Plain Python: it draws nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta

from pydantic import BaseModel

from dashboard.agents.labelled_cases import LabelledCase
from dashboard.traces.ranking import rank_figures

Attributes = Mapping[
    tuple[str, str], Mapping[str, str]
]  # (case kind, case id) -> {"vendor": ..., "type": ..., "segment": ...}
GroupsOf = Callable[[set[str]], Mapping[str, Mapping[str, str]]]  # a kind's: its case ids -> each one's groups


class QualityRow(BaseModel):
    week: date  # its Monday
    by: str  # "all", or what its kind groups by (vendor, type, segment ...)
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


def case_attributes(groups_of: Mapping[str, GroupsOf], labelled: Sequence[LabelledCase]) -> dict:
    """What each labelled case is grouped by, asked of its kind (`groups_of`: case kind -> its QueueKind.label_groups)
    for the labelled cases only (of a queue of 100,000, every case's attributes cost ~0.1 s a run)."""
    found: dict[tuple[str, str], Mapping[str, str]] = {}
    for kind, groups in groups_of.items():
        if ids := {c.case_id for c in labelled if c.case_kind == kind}:
            found |= {(kind, case_id): about for case_id, about in groups(ids).items()}
    return found


def label_quality(labelled: Iterable[LabelledCase], attributes: Attributes, k: int) -> list[QualityRow]:
    """One row per week and group, newest week first; within a week: all, then each grouping in the order the kinds
    give them (vendor, type, segment)."""
    dimensions = ["all", *dict.fromkeys(by for about in attributes.values() for by in about)]
    groups: dict[tuple[date, str, str], list[LabelledCase]] = {}
    for case in labelled:
        week, about = week_of(case.labelled_at), attributes.get((case.case_kind, case.case_id), {})
        groups.setdefault((week, "all", "all"), []).append(case)
        for by in dimensions[1:]:
            if about.get(by):
                groups.setdefault((week, by, about[by]), []).append(case)
    rows = []
    for (week, by, group), members in groups.items():
        figures = [rank_figures(c.ranked, set(c.relevant), k) for c in members]
        n = len(members)
        rows.append(
            QualityRow(
                week=week,
                by=by,
                group=group,
                cases=n,
                labels=sum(c.labels for c in members),
                relevant=sum(len(c.relevant) for c in members),
                precision_at_k=sum(f.precision for f in figures) / n,
                mrr=sum(f.reciprocal_rank for f in figures) / n,
                evidence_at_k=sum(f.hit for f in figures),
            )
        )
    return sorted(rows, key=lambda r: (-r.week.toordinal(), dimensions.index(r.by), r.group))
