"""What the stakeholder Overview shows, computed from plain data. No Streamlit here.

Inputs: the standing decisions counted by the review store (Outbox.standing_counts) and each case's newest state,
the two queues, the per-case flags kept in the review store as cases are recalled, counted there (finance: exact
precedents, recommendation, crowd-out; both: incident kinds from the agents' runs and the audit log; tickets, a
small queue, as models: the path and the legacy records admitted or rejected), the migration coverage and this
process's recall latency samples. A date range applies to decisions (by the day of decided_at); queues, flags and
coverage are "now". Agreement and overrides count the LATEST decision per case decided in the range (a revised
decision replaces the earlier one, as it does in memory); a held decision (for a second approver, a blind second
review or a lead) is not one yet: the queues count it by its hold (review/figures.py, as every page does), the
approvals waiting are listed with their age, and a blind one names nobody and no outcome. Legacy records are counted
once each, however many tickets judged them. Incidents are counted by agents.incidents.incident_figures, as the
Incidents page counts them.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set
from datetime import UTC, date, datetime, time, timedelta

from pydantic import BaseModel, Field

from dashboard.agents.incidents import KIND_LABELS, CaseIncidents, IncidentFigures, incident_figures
from dashboard.finance.models import ExceptionCase
from dashboard.reporting.recall_log import LatencySample
from dashboard.review.approvals import HeldDecision
from dashboard.review.figures import CaseFigures, case_figures
from dashboard.review.flag_counts import FinanceCounts, IncidentCounts
from dashboard.review.second_review import BlindCase
from dashboard.review.standing import DecisionState, StandingCount
from dashboard.support.flags import TicketFlags
from dashboard.support.migration import Coverage
from dashboard.support.models import Ticket


class QueueStatus(CaseFigures):
    """One queue's case figures (review.figures.case_figures), named."""

    queue: str
    kind: str  # exception | ticket


class Agreement(BaseModel):
    kind: str  # exception | ticket
    decisions: int = 0
    approved: int = 0  # the agent's recommendation (or drafted response) kept
    overridden: int = 0

    @property
    def rate(self) -> float | None:
        return round(self.approved / self.decisions, 4) if self.decisions else None


class OverrideRow(BaseModel):
    vendor: str
    reason_code: str
    count: int


class DailyDecisions(BaseModel):
    day: date
    kind: str
    approved: int = 0
    overridden: int = 0


class CrowdOutSummary(BaseModel):
    cases: int  # queued exceptions
    recalled: int = 0  # with flags in the store (recalled at least once, by any instance)
    checked: int = 0  # with a crowd-out check (pass 2 ran, or the extra check was made)
    prevented: int = 0  # checked cases where a single any_strict pass would have lost exact precedents
    precedents_saved: int = 0  # exact precedents a single pass would have lost, summed
    unchecked_pass2_skipped: int = 0  # pass 1 filled k: no counterfactual unless the check was made
    missed_cases: list[dict] = Field(default_factory=list)  # the cases a plain search misses, most lost first (at most MISSED_LISTED)
    recommendations: dict[str, int] = Field(default_factory=dict)  # the agent's action -> cases
    no_relevant: int = 0  # measured cases with no relevant precedent (the guard escalates)


class LegacySummary(BaseModel):
    tickets: int
    recalled: int = 0  # with flags in the store
    paths: dict[str, int] = Field(default_factory=dict)  # tagged | legacy | none
    admitted: int = 0  # distinct legacy records admitted by the ownership rule for some ticket
    rejected: int = 0  # distinct legacy (untagged) records met by a fallback and never admitted
    rejected_by_reason: dict[str, int] = Field(default_factory=dict)  # distinct rejected records by verdict
    tagged_candidates: int = 0  # distinct tagged records a fallback met (never admitted: not legacy)


class IncidentSummary(BaseModel):
    checked: int = 0  # cases whose agent runs were checked for incidents
    found: IncidentFigures = Field(default_factory=IncidentFigures)  # the cases with incidents, where, and how many naive
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
        """Tickets where another customer's records reached the agent."""
        return self.found.count("other_customer", "ticket")


class LatencyStat(BaseModel):
    kind: str
    count: int
    failed: int
    p50_ms: float
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
    crowd_out: CrowdOutSummary
    legacy: LegacySummary
    incidents: IncidentSummary = Field(default_factory=IncidentSummary)
    coverage: Coverage | None = None
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
    cases: Sequence[ExceptionCase], tickets: Sequence[Ticket], states: Mapping[str, Mapping[str, DecisionState]],
    held: Mapping[str, Mapping[str, str]] | None = None,
) -> list[QueueStatus]:
    """Each queue's case figures, counted by review.figures.case_figures as every page counts them. `held`: kind ->
    case id -> the status of its held decision."""
    held = held or {}
    return [
        QueueStatus(queue=name, kind=kind, **case_figures(ids, states.get(kind, {}), held.get(kind, {})).model_dump())
        for name, kind, ids in (("Finance exceptions", "exception", [c.id for c in cases]), ("Support tickets", "ticket", [t.id for t in tickets]))
    ]


def total(queues: Sequence[QueueStatus]) -> CaseFigures:
    """Every queue's figures added up."""
    return sum((CaseFigures(**q.model_dump(include=set(CaseFigures.model_fields))) for q in queues), CaseFigures())


def decision_metrics(
    standing: Mapping[str, Sequence[StandingCount]], vendor_of: Mapping[str, str], start: date | None = None, end: date | None = None
) -> tuple[list[Agreement], list[OverrideRow], list[DailyDecisions]]:
    """From the standing decisions counted (kind -> counts), those made in the range."""
    agreement = {kind: Agreement(kind=kind) for kind in ("exception", "ticket")}
    overrides: Counter[tuple[str, str]] = Counter()
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
                if kind == "exception":
                    overrides[(c.vendor or vendor_of.get(c.case_id or "", "unknown"), c.reason_code or "none")] += c.count
            else:
                row.approved += c.count
                day.approved += c.count
    override_rows = [OverrideRow(vendor=v, reason_code=r, count=n) for (v, r), n in sorted(overrides.items())]
    return list(agreement.values()), override_rows, [daily[key] for key in sorted(daily)]


MISSED = "a plain search misses some"  # a crowd-out caught, in a stakeholder's words


MISSED_LISTED = 200  # the cases a plain search misses, listed by name; the rest are counted


def cases_named(cases: Sequence[ExceptionCase], ids: Set[str]) -> dict[str, ExceptionCase]:
    """The cases with these ids, by id: a few looked up in a queue of 100,000 (no pass at all for none)."""
    return {c.id: c for c in cases if c.id in ids} if ids else {}


def crowd_out_summary(cases: Sequence[ExceptionCase], counts: FinanceCounts, missed: Sequence[tuple[str, int, int, str]] = ()) -> CrowdOutSummary:
    """`counts`: the queue's finance flags counted (QueueFlags.finance); `missed`: (case id, exact precedents, lost,
    the agent's action) of the cases a plain search misses, most lost first (QueueFlags.missed)."""
    by_id = cases_named(cases, {case_id for case_id, *_ in missed})
    listed = []
    for case_id, exact, lost, action in missed:
        case = by_id.get(case_id)
        listed.append({"case": case_id, "vendor": case.vendor_code if case else "", "type": case.exception_type.replace("_", " ") if case else "",
                       "exact precedents": exact, "lost by a single pass": lost, "agent recommends": action})
    return CrowdOutSummary(
        cases=len(cases), recalled=counts.recalled, checked=counts.checked, prevented=counts.prevented,
        precedents_saved=counts.precedents_saved, unchecked_pass2_skipped=counts.recalled - counts.checked,
        missed_cases=listed, recommendations=dict(counts.recommendations), no_relevant=counts.no_relevant,
    )


def crowd_out_states(co: CrowdOutSummary) -> dict[str, int]:
    """The measured cases by what the crowd-out check says of them."""
    return {MISSED: co.prevented, "a plain search misses none": co.checked - co.prevented, "not checked": co.unchecked_pass2_skipped}


def legacy_summary(tickets: Sequence[Ticket], flags: Mapping[str, TicketFlags | None]) -> LegacySummary:
    """Paths per ticket; legacy records once each: admitted if any ticket admitted it, else rejected."""
    summary = LegacySummary(tickets=len(tickets))
    paths: Counter[str] = Counter()
    admitted: set[str] = set()
    verdicts: dict[str, str] = {}
    tagged: set[str] = set()
    for ticket in tickets:
        measured = flags.get(ticket.id)
        if measured is None:
            continue
        summary.recalled += 1
        paths[measured.path] += 1
        admitted.update(measured.admitted)
        for record, verdict in measured.rejected.items():
            verdicts.setdefault(record, verdict)
        tagged.update(measured.tagged_candidates)
    rejected = {record: verdict for record, verdict in verdicts.items() if record not in admitted}
    summary.paths, summary.admitted, summary.rejected = dict(paths), len(admitted), len(rejected)
    summary.rejected_by_reason = dict(Counter(rejected.values()))
    summary.tagged_candidates = len(tagged)
    return summary


def incident_summary(
    counts: Mapping[str, IncidentCounts], agent_tally: tuple[int, int] = (0, 0), found: Iterable[CaseIncidents] = (),
) -> IncidentSummary:
    """`counts`: case kind -> its queue's incident flags counted (QueueFlags.incidents: how many were checked);
    `found`: the queued cases with incidents (their kinds and variants), counted by incident_figures; `agent_tally`:
    (agent runs, audit-log recalls read)."""
    return IncidentSummary(checked=sum(c.checked for c in counts.values()), found=incident_figures(found),
                           agent_runs=agent_tally[0], audited_recalls=agent_tally[1])


def held_blind(blind: Iterable[BlindCase], queued: Mapping[str, Set[str]], now: datetime) -> list[HeldCase]:
    """The queued cases awaiting a blind second review or a lead, oldest first: since the first decision, or for a
    lead since the second review."""
    rows = []
    for case in blind:
        if case.case_id not in queued.get(case.first.case_kind, set()):
            continue
        since = case.second.at if case.awaiting_lead and case.second is not None else case.first.created_at
        rows.append(HeldCase(case_id=case.case_id, case_kind=case.first.case_kind, status=case.status,
                             age_hours=round((now - since).total_seconds() / 3600, 1)))
    return sorted(rows, key=lambda h: h.age_hours, reverse=True)


def approvals_waiting(waiting: Iterable[HeldDecision], now: datetime) -> list[WaitingApproval]:
    rows = [
        WaitingApproval(
            case_id=h.stored.case_id, proposer=h.proposed.actor, outcome=h.stored.decision.outcome, amount=h.proposed.amount,
            limit=h.proposed.limit, age_hours=round((now - h.proposed.at).total_seconds() / 3600, 1),
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


def latency_stats(samples: Iterable[LatencySample]) -> list[LatencyStat]:
    by_kind: dict[str, list[LatencySample]] = {}
    for s in samples:
        by_kind.setdefault(s.kind, []).append(s)
    stats = []
    for kind in sorted(by_kind):
        values = sorted(s.ms for s in by_kind[kind])
        stats.append(LatencyStat(
            kind=kind, count=len(values), failed=sum(1 for s in by_kind[kind] if not s.ok),
            p50_ms=round(statistics.median(values), 1), p95_ms=round(p95(values), 1), max_ms=round(values[-1], 1),
        ))
    return stats


def build(
    *,
    standing: Mapping[str, Sequence[StandingCount]],
    states: Mapping[str, Mapping[str, DecisionState]],
    cases: Sequence[ExceptionCase],
    tickets: Sequence[Ticket],
    finance: FinanceCounts = FinanceCounts(),
    missed: Sequence[tuple[str, int, int, str]] = (),
    ticket_flags: Mapping[str, TicketFlags | None],
    latencies: Iterable[LatencySample],
    incidents: Mapping[str, IncidentCounts] | None = None,
    agent_tally: tuple[int, int] = (0, 0),
    coverage: Coverage | None = None,
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
    """`standing`, `states`: case kind -> the bank's standing decisions counted, and each case's standing state;
    `held`: case kind -> case id -> the status of its held decision; `waiting`: the oldest decisions awaiting a second
    approval, `blind`: the cases awaiting a blind second review or a lead, `incident_cases`: case kind -> the cases with
    incidents (each is kept only when queued)."""
    no_vendor = {c.case_id for counts in standing.values() for c in counts if c.case_id}  # overrides whose record has no vendor tag
    vendor_of = {case_id: case.vendor_code for case_id, case in cases_named(cases, no_vendor).items()}
    agreement, overrides, daily = decision_metrics(standing, vendor_of, start, end)
    now = now or datetime.now(UTC)
    queued = {"exception": {c.id for c in cases}, "ticket": {t.id for t in tickets}}
    found = [c for kind, found in (incident_cases or {}).items() for c in found if c.case_id in queued.get(kind, set())]
    return OverviewMetrics(
        start=start, end=end, decisions_in_range=sum(a.decisions for a in agreement),
        queues=queue_status(cases, tickets, states, held), agreement=agreement, overrides=overrides, daily=daily,
        crowd_out=crowd_out_summary(cases, finance, missed), legacy=legacy_summary(tickets, ticket_flags),
        incidents=incident_summary(incidents or {}, agent_tally, found),
        coverage=coverage, coverage_error=coverage_error, latency=latency_stats(latencies),
        approvals_waiting=approvals_waiting((h for h in waiting if h.stored.case_id in queued.get(h.stored.case_kind, set())), now),
        held_blind=held_blind(blind, queued, now), curation=CurationCounts.model_validate(curation or {}),
        trust=TrustSummary(set_aside=finance.set_aside, forged=finance.forged, swung=finance.swung),
    )
