"""What the stakeholder Overview shows, computed from plain data. No Streamlit here, and no queue kind named: the
kinds come in as values.

Inputs: a queue per registered kind (QueueIds: its cases, what it groups overrides by, its nouns), the standing
decisions counted by the review store (Outbox.standing_counts) and each case's newest state, the incident kinds
kept per case, the kinds' own sections as their packages computed them (finance/overview.py: crowd-out;
support/overview.py: legacy paths; the migration coverage) and this process's recall latency samples. A date range
applies to decisions (by the day of decided_at); queues, flags and coverage are "now". Agreement and overrides count
the LATEST decision per case decided in the range (a revised decision replaces the earlier one, as it does in
memory); a held decision (for a second approver, a blind second review or a lead) is not one yet: the queues count
it by its hold (review/figures.py, as every page does), the approvals waiting are listed with their age, and a
blind one names nobody and no outcome. Incidents are counted by agents.incidents.incident_figures, as the Incidents
page counts them.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set
from datetime import UTC, date, datetime, time, timedelta

from pydantic import BaseModel, Field, SerializeAsAny

from dashboard.agents.incidents import KIND_LABELS, CaseIncidents, IncidentFigures, incident_figures
from dashboard.reporting.label_quality import GroupsOf
from dashboard.reporting.recall_log import LatencySample
from dashboard.review.approvals import HeldDecision
from dashboard.review.figures import CaseFigures, case_figures
from dashboard.review.flag_counts import IncidentCounts
from dashboard.review.second_review import BlindCase
from dashboard.store.standing import DecisionState, StandingCount


class QueueIds(BaseModel):
    """One queue as the Overview counts it: its name, its case kind, its cases, and whether its kind groups overrides
    (QueueKind.report_by)."""

    name: str
    kind: str
    ids: list[str]
    report_by: str | None = None  # what its kind groups overrides by (QueueKind.report_by): finance, the vendor
    nouns: tuple[str, str] = ("case", "cases")


class QueueStatus(CaseFigures):
    """One queue's case figures (review.figures.case_figures), named."""

    queue: str
    kind: str  # its case kind
    nouns: tuple[str, str] = ("case", "cases")


class Agreement(BaseModel):
    kind: str  # exception | ticket
    decisions: int = 0
    approved: int = 0  # the agent's recommendation (or drafted response) kept
    overridden: int = 0

    @property
    def rate(self) -> float | None:
        return round(self.approved / self.decisions, 4) if self.decisions else None


class OverrideRow(BaseModel):
    """Overrides of one kind's cases in one group (its report_by tag's value: finance, a vendor) with one reason."""

    kind: str  # the case kind
    by: str  # what its kind groups overrides by (QueueKind.report_by): "vendor", "supplier"
    group: str  # the group: "V03"
    reason_code: str
    count: int


class DailyDecisions(BaseModel):
    day: date
    kind: str
    approved: int = 0
    overridden: int = 0


class IncidentSummary(BaseModel):
    checked: int = 0  # cases whose agent runs were checked for incidents
    found: IncidentFigures = Field(
        default_factory=IncidentFigures
    )  # the cases with incidents, where, and how many naive
    agent_runs: int = 0  # recorded runs of the agents (the review store)
    audited_recalls: int = 0  # recall entries read from Hindsight's audit log (the store's projection)

    @property
    def cases(self) -> int:
        return self.found.cases

    @property
    def by_kind(self) -> dict[str, int]:
        """kind -> cases"""
        return {kind: len(cases) for kind, cases in self.found.where.items()}

    @property
    def leaks(self) -> int:
        """Cases where another customer's records reached the agent."""
        return self.found.count("other_customer")


class LatencyStat(BaseModel):
    kind: str
    count: int
    failed: int
    p50_ms: float
    p90_ms: float  # "9 in 10 recalls within": what the Overview says
    p95_ms: float
    max_ms: float


class HeldCase(BaseModel):
    """A case whose first decision waits for a blind second review or a lead: who decided what is not said here
    (blind means blind until the second reviewer decides)."""

    case_id: str
    case_kind: str
    status: str  # awaiting blind second review | awaiting lead
    age_hours: float


class WaitingApproval(BaseModel):
    """A decision above its reviewer's approval limit, waiting for a second approver."""

    case_id: str
    proposer: str
    outcome: str
    outcome_words: str = ""  # the outcome in its kind's words
    amount: float
    limit: float | None
    age_hours: float


class CurationCounts(BaseModel):
    """Four-eyes curation in the date range, counted by the review store (Curation.counts)."""

    proposals: int = 0
    approvals: int = 0
    rejections: int = 0
    reverts: int = 0  # approved reverts (also counted in approvals)


class TrustSummary(BaseModel):
    """Memory the agent may not trust, over the measured exceptions (finance.trust, counted by review.flag_counts)."""

    set_aside: int = 0  # records set aside: never cited, never a vote
    forged: int = 0  # of them, records claiming a reviewer's decision this dashboard never recorded
    swung: int = 0  # cases whose recommendation turns on an untrusted record


class OverviewMetrics(BaseModel):
    start: date | None
    end: date | None
    decisions_in_range: int
    queues: list[QueueStatus]
    agreement: list[Agreement]
    overrides: list[OverrideRow]
    daily: list[DailyDecisions]
    # the kinds' own sections, as their packages computed them (finance/overview.py, support/overview.py)
    crowd_out: SerializeAsAny[BaseModel] | None = None
    legacy: SerializeAsAny[BaseModel] | None = None
    incidents: IncidentSummary = Field(default_factory=IncidentSummary)
    coverage: SerializeAsAny[BaseModel] | None = None  # support.migration.Coverage
    coverage_error: str | None = None
    latency: list[LatencyStat]
    approvals_waiting: list[WaitingApproval] = Field(default_factory=list)  # the oldest, oldest first
    held_blind: list[HeldCase] = Field(default_factory=list)  # awaiting a blind second review or a lead, oldest first
    curation: CurationCounts = Field(default_factory=CurationCounts)
    trust: TrustSummary = Field(default_factory=TrustSummary)


def day_bounds(start: date | None, end: date | None) -> tuple[datetime | None, datetime | None]:
    """The date range as UTC instants: from the start of `start` to the end of `end` (either open)."""
    since = datetime.combine(start, time.min, UTC) if start else None
    until = datetime.combine(end + timedelta(days=1), time.min, UTC) if end else None
    return since, until


def first_decision_day(standing: Mapping[str, Sequence[StandingCount]]) -> date | None:
    return min((c.day for counts in standing.values() for c in counts), default=None)


def queue_status(
    queues: Sequence[QueueIds],
    states: Mapping[str, Mapping[str, DecisionState]],
    held: Mapping[str, Mapping[str, str]] | None = None,
) -> list[QueueStatus]:
    """Each queue's case figures, counted by review.figures.case_figures as every page counts them. `held`: kind ->
    case id -> the status of its held decision."""
    held = held or {}
    return [
        QueueStatus(
            queue=q.name,
            kind=q.kind,
            nouns=q.nouns,
            **case_figures(q.ids, states.get(q.kind, {}), held.get(q.kind, {})).model_dump(),
        )
        for q in queues
    ]


def total(queues: Sequence[QueueStatus]) -> CaseFigures:
    """Every queue's figures added up."""
    return sum((CaseFigures(**q.model_dump(include=set(CaseFigures.model_fields))) for q in queues), CaseFigures())


def decision_metrics(
    standing: Mapping[str, Sequence[StandingCount]],
    group_of: Mapping[tuple[str, str], str],
    start: date | None = None,
    end: date | None = None,
    queues: Sequence[QueueIds] = (),
) -> tuple[list[Agreement], list[OverrideRow], list[DailyDecisions]]:
    """From the standing decisions counted (kind -> counts), those made in the range; the overrides of the `queues`
    whose kind groups them, by kind, group (a vendor) and reason (`group_of`: (kind, case id) -> its group, for an override
    whose record names none)."""
    agreement = {q.kind: Agreement(kind=q.kind) for q in queues}
    grouped = {q.kind: q.report_by for q in queues if q.report_by}
    overrides: Counter[tuple[str, str, str]] = Counter()
    daily: dict[tuple[date, str], DailyDecisions] = {}
    for kind, counts in standing.items():
        for c in counts:
            if (start is not None and c.day < start) or (end is not None and c.day > end):
                continue
            row = agreement.setdefault(kind, Agreement(kind=kind))
            row.decisions += c.count
            day = daily.setdefault((c.day, kind), DailyDecisions(day=c.day, kind=kind))
            if c.overridden:
                row.overridden += c.count
                day.overridden += c.count
                if kind in grouped:
                    overrides[
                        (kind, c.group or group_of.get((kind, c.case_id or ""), "unknown"), c.reason_code or "none")
                    ] += c.count
            else:
                row.approved += c.count
                day.approved += c.count
    override_rows = [
        OverrideRow(kind=k, by=grouped[k], group=g, reason_code=r, count=n)
        for (k, g, r), n in sorted(overrides.items())
    ]
    return list(agreement.values()), override_rows, [daily[key] for key in sorted(daily)]


def incident_summary(
    counts: Mapping[str, IncidentCounts],
    agent_tally: tuple[int, int] = (0, 0),
    found: Iterable[CaseIncidents] = (),
) -> IncidentSummary:
    """`counts`: case kind -> its queue's incident flags counted (QueueFlags.incidents: how many were checked);
    `found`: the queued cases with incidents (their kinds and variants), counted by incident_figures; `agent_tally`:
    (agent runs, audit-log recalls read)."""
    return IncidentSummary(
        checked=sum(c.checked for c in counts.values()),
        found=incident_figures(found),
        agent_runs=agent_tally[0],
        audited_recalls=agent_tally[1],
    )


def held_blind(blind: Iterable[BlindCase], queued: Mapping[str, Set[str]], now: datetime) -> list[HeldCase]:
    """The queued cases awaiting a blind second review or a lead, oldest first: since the first decision, or for a
    lead since the second review."""
    rows = []
    for case in blind:
        if case.case_id not in queued.get(case.first.case_kind, set()):
            continue
        since = case.second.at if case.awaiting_lead and case.second is not None else case.first.created_at
        rows.append(
            HeldCase(
                case_id=case.case_id,
                case_kind=case.first.case_kind,
                status=case.status,
                age_hours=round((now - since).total_seconds() / 3600, 1),
            )
        )
    return sorted(rows, key=lambda h: h.age_hours, reverse=True)


def approvals_waiting(waiting: Iterable[HeldDecision], now: datetime) -> list[WaitingApproval]:
    rows = [
        WaitingApproval(
            case_id=h.stored.case_id,
            proposer=h.proposed.actor,
            outcome=h.stored.decision.outcome,
            outcome_words=h.stored.decision.said(h.stored.decision.outcome),
            amount=h.proposed.amount,
            limit=h.proposed.limit,
            age_hours=round((now - h.proposed.at).total_seconds() / 3600, 1),
        )
        for h in waiting
    ]
    return sorted(rows, key=lambda w: w.age_hours, reverse=True)


def age_words(hours: float) -> str:
    """An age a person reads at a glance: "40 min", "5 h", "3 days"."""
    if hours < 1:
        return f"{round(hours * 60)} min"
    return f"{round(hours)} h" if hours < 48 else f"{round(hours / 24)} days"


def incident_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind.replace("_", " "))


def p95(values: Sequence[float]) -> float:
    """The 95th percentile, interpolated between the samples (one sample is its own p95)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def p90(values: Sequence[float]) -> float:
    """The 90th percentile, interpolated between the samples: 9 in 10 came within it."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def latency_stats(samples: Iterable[LatencySample]) -> list[LatencyStat]:
    by_kind: dict[str, list[LatencySample]] = {}
    for s in samples:
        by_kind.setdefault(s.kind, []).append(s)
    stats = []
    for kind in sorted(by_kind):
        values = sorted(s.ms for s in by_kind[kind])
        stats.append(
            LatencyStat(
                kind=kind,
                count=len(values),
                failed=sum(1 for s in by_kind[kind] if not s.ok),
                p50_ms=round(statistics.median(values), 1),
                p90_ms=round(p90(values), 1),
                p95_ms=round(p95(values), 1),
                max_ms=round(values[-1], 1),
            )
        )
    return stats


def build(
    *,
    queues: Sequence[QueueIds],
    standing: Mapping[str, Sequence[StandingCount]],
    states: Mapping[str, Mapping[str, DecisionState]],
    latencies: Iterable[LatencySample],
    groups_of: Mapping[str, GroupsOf] | None = None,
    sections: Mapping[str, BaseModel] | None = None,
    trust: TrustSummary | None = None,
    incidents: Mapping[str, IncidentCounts] | None = None,
    agent_tally: tuple[int, int] = (0, 0),
    coverage_error: str | None = None,
    curation: Mapping[str, int] | None = None,
    start: date | None = None,
    end: date | None = None,
    waiting: Iterable[HeldDecision] = (),
    held: Mapping[str, Mapping[str, str]] | None = None,
    blind: Iterable[BlindCase] = (),
    incident_cases: Mapping[str, Iterable[CaseIncidents]] | None = None,
    now: datetime | None = None,
) -> OverviewMetrics:
    """`queues`: every queue counted (a QueueIds per registered kind); `standing`, `states`: case kind -> the bank's
    standing decisions counted, and each case's standing state; `groups_of`: case kind -> its QueueKind.label_groups
    (the group of an override whose record names none); `sections`: the kinds' own sections ("crowd_out", "legacy",
    "coverage"), as their packages computed them; `held`: case kind -> case id -> the status of its held decision;
    `waiting`: the oldest decisions awaiting a second approval, `blind`: the cases awaiting a blind second review or a
    lead, `incident_cases`: case kind -> the cases with incidents (each is kept only when queued)."""
    agreement, overrides, daily = decision_metrics(
        standing, _groups_named(queues, standing, groups_of or {}), start, end, queues
    )
    now = now or datetime.now(UTC)
    queued = {q.kind: set(q.ids) for q in queues}
    found = [c for kind, found in (incident_cases or {}).items() for c in found if c.case_id in queued.get(kind, set())]
    return OverviewMetrics(
        start=start,
        end=end,
        decisions_in_range=sum(a.decisions for a in agreement),
        queues=queue_status(queues, states, held),
        agreement=agreement,
        overrides=overrides,
        daily=daily,
        **(sections or {}),
        incidents=incident_summary(incidents or {}, agent_tally, found),
        coverage_error=coverage_error,
        latency=latency_stats(latencies),
        approvals_waiting=approvals_waiting(
            (h for h in waiting if h.stored.case_id in queued.get(h.stored.case_kind, set())), now
        ),
        held_blind=held_blind(blind, queued, now),
        curation=CurationCounts.model_validate(curation or {}),
        trust=trust or TrustSummary(),
    )


def _groups_named(
    queues: Sequence[QueueIds], standing: Mapping[str, Sequence[StandingCount]], groups_of: Mapping[str, GroupsOf]
) -> dict[tuple[str, str], str]:
    """(kind, case id) -> its group, for the overrides whose record names none (a few of a queue of 100,000)."""
    named = {}
    for q in queues:
        unnamed = {c.case_id for c in standing.get(q.kind, ()) if c.case_id}
        if q.report_by and unnamed and q.kind in groups_of:
            named |= {
                (q.kind, case_id): about[q.report_by]
                for case_id, about in groups_of[q.kind](unnamed).items()
                if q.report_by in about
            }
    return named
