"""What the stakeholder Overview shows, computed from plain data. No Streamlit here.

Inputs: the standing decisions counted by the review store (Outbox.standing_counts) and each case's newest state,
the two queues, the per-case flags kept in the review store as cases are recalled, counted there (finance: exact
precedents, recommendation, crowd-out; both: incident kinds from the agents' runs and the audit log; tickets, a
small queue, as models: the path and the legacy records admitted or rejected), the migration coverage and this
process's recall latency samples. A date range applies to decisions (by the day of decided_at); queues, flags and
coverage are "now". Agreement and overrides count the LATEST decision per case decided in the range (a revised
decision replaces the earlier one, as it does in memory); a decision held for a second approval is not one yet: it
is counted among the approvals waiting, the oldest listed with their age. Legacy records are counted once each,
however many tickets judged them.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set
from datetime import UTC, date, datetime, time, timedelta

from pydantic import BaseModel, Field

from dashboard.agents.incidents import KIND_LABELS
from dashboard.finance.models import ExceptionCase
from dashboard.reporting.recall_log import LatencySample
from dashboard.review.approvals import HeldDecision
from dashboard.review.flag_counts import FinanceCounts, IncidentCounts
from dashboard.review.standing import DecisionState, StandingCount
from dashboard.support.flags import TicketFlags
from dashboard.support.migration import Coverage
from dashboard.support.models import Ticket


class QueueStatus(BaseModel):
    queue: str
    open: int = 0
    decided: int = 0
    pending_delivery: int = 0

    @property
    def total(self) -> int:
        return self.open + self.decided + self.pending_delivery


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
    cases: int = 0  # of them, cases with at least one incident
    by_kind: dict[str, int] = Field(default_factory=dict)  # kind -> cases
    leaks: int = 0  # tickets where another customer's records reached the agent
    agent_runs: int = 0  # recorded runs of the agents (the review store)
    audited_recalls: int = 0  # recall entries read from Hindsight's audit log (the store's projection)


class LatencyStat(BaseModel):
    kind: str
    count: int
    failed: int
    p50_ms: float
    p95_ms: float
    max_ms: float


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
    approvals_waiting_total: int = 0
    curation: CurationCounts = Field(default_factory=CurationCounts)


def day_bounds(start: date | None, end: date | None) -> tuple[datetime | None, datetime | None]:
    """The date range as UTC instants: from the start of `start` to the end of `end` (either open)."""
    since = datetime.combine(start, time.min, UTC) if start else None
    until = datetime.combine(end + timedelta(days=1), time.min, UTC) if end else None
    return since, until


def first_decision_day(standing: Mapping[str, Sequence[StandingCount]]) -> date | None:
    return min((c.day for counts in standing.values() for c in counts), default=None)


def queue_status(
    cases: Sequence[ExceptionCase], tickets: Sequence[Ticket], states: Mapping[str, Mapping[str, DecisionState]]
) -> list[QueueStatus]:
    rows = []
    for name, kind, ids in (("Finance exceptions", "exception", [c.id for c in cases]), ("Support tickets", "ticket", [t.id for t in tickets])):
        newest = states.get(kind, {})
        decided = newest.keys() & ids
        # finance.queue.status_of's rule, by one scan of the states (a queue of 100,000: ~0.1 s looked up case by case)
        pending = sum(1 for i, s in newest.items() if s.state == "pending" and i in decided)
        rows.append(QueueStatus(queue=name, open=len(ids) - len(decided), decided=len(decided) - pending, pending_delivery=pending))
    return rows


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


def incident_summary(counts: Mapping[str, IncidentCounts], agent_tally: tuple[int, int] = (0, 0)) -> IncidentSummary:
    """`counts`: case kind -> its queue's incident flags counted (QueueFlags.incidents); `agent_tally`: (agent runs,
    audit-log recalls read)."""
    summary = IncidentSummary(agent_runs=agent_tally[0], audited_recalls=agent_tally[1])
    by_kind: Counter[str] = Counter()
    for case_kind, found in counts.items():
        summary.checked += found.checked
        summary.cases += found.cases
        by_kind.update(dict(found.by_kind))
        if case_kind == "ticket":
            summary.leaks += dict(found.by_kind).get("other_customer", 0)
    summary.by_kind = dict(by_kind)
    return summary


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


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def headline(m: OverviewMetrics) -> str:
    """One sentence a stakeholder reads first, e.g. "18 exceptions, 5 decided; the agent was overruled on 1; ..."."""
    queues = {q.queue: q for q in m.queues}
    agreement = {a.kind: a for a in m.agreement}
    parts = []
    for name, kind, noun in (("Finance exceptions", "exception", "exception"), ("Support tickets", "ticket", "ticket")):
        q = queues.get(name)
        if q is None:
            continue
        part = f"{_n(q.total, noun)}, {q.decided + q.pending_delivery} decided"
        overruled = agreement[kind].overridden if kind in agreement else 0
        if kind == "exception" and overruled:
            part += f" (the agent was overruled on {overruled})"
        parts.append(part)
    if m.approvals_waiting:
        oldest = age_words(m.approvals_waiting[0].age_hours)
        parts.append(f"{_n(m.approvals_waiting_total, 'approval')} waiting for a second approver (the oldest for {oldest})")
    co = m.crowd_out
    parts.append(f"{_n(co.prevented, 'exception')} where a plain search would have missed exact precedents" if co.checked
                 else "not yet checked whether a plain search would miss exact precedents")
    inc = m.incidents
    if not inc.checked:
        parts.append("the agents' runs not checked for incidents yet")
    elif inc.leaks:
        parts.append(f"{_n(inc.leaks, 'ticket')} where another customer's records reached the agent")
    else:
        parts.append("no cross-customer leak")
    others = inc.cases - inc.leaks
    if inc.checked and others > 0:
        parts.append(f"{_n(others, 'other case')} with incidents")
    return "; ".join(parts) + "."


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
    waiting_total: int | None = None,
    now: datetime | None = None,
) -> OverviewMetrics:
    """`standing`, `states`: case kind -> the bank's standing decisions counted, and each case's newest state;
    `waiting`: the oldest decisions awaiting a second approval, of `waiting_total` (all of them when None)."""
    no_vendor = {c.case_id for counts in standing.values() for c in counts if c.case_id}  # overrides whose record has no vendor tag
    vendor_of = {case_id: case.vendor_code for case_id, case in cases_named(cases, no_vendor).items()}
    agreement, overrides, daily = decision_metrics(standing, vendor_of, start, end)
    waiting_rows = approvals_waiting(waiting, now or datetime.now(UTC))
    return OverviewMetrics(
        start=start, end=end, decisions_in_range=sum(a.decisions for a in agreement),
        queues=queue_status(cases, tickets, states), agreement=agreement, overrides=overrides, daily=daily,
        crowd_out=crowd_out_summary(cases, finance, missed), legacy=legacy_summary(tickets, ticket_flags),
        incidents=incident_summary(incidents or {}, agent_tally),
        coverage=coverage, coverage_error=coverage_error, latency=latency_stats(latencies),
        approvals_waiting=waiting_rows, approvals_waiting_total=len(waiting_rows) if waiting_total is None else waiting_total,
        curation=CurationCounts.model_validate(curation or {}),
    )
