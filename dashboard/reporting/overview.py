"""What the stakeholder Overview shows, computed from plain data. No Streamlit here.

Inputs: the outbox history (every reviewer decision), the two queues, the per-case flags kept in the
review store as cases are recalled (finance: exact precedents, recommendation, crowd-out; tickets: the
path and the legacy records admitted or rejected; both: incident kinds from the agents' runs and the
audit log), the migration coverage and this process's recall latency samples. A date range applies to
decisions (by decided_at, UTC day); queues, flags and coverage are "now". Agreement and overrides count
the LATEST decision per case decided in the range (a revised decision replaces the earlier one, as it
does in memory); a decision held for a second approval is not one yet: it is listed among the approvals
waiting, with its age. Legacy records are counted once each, however many tickets judged them.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta

from pydantic import BaseModel, Field

from dashboard.agents.incidents import KIND_LABELS
from dashboard.finance.flags import FinanceFlags
from dashboard.finance.models import ExceptionCase
from dashboard.finance.queue import status_of
from dashboard.hindsight.wire import tag_value
from dashboard.reporting.recall_log import LatencySample
from dashboard.review.approvals import HeldDecision
from dashboard.review.outbox import StoredDecision
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
    per_case: list[dict] = Field(default_factory=list)
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
    approvals_waiting: list[WaitingApproval] = Field(default_factory=list)  # oldest first
    curation: CurationCounts = Field(default_factory=CurationCounts)


def day_bounds(start: date | None, end: date | None) -> tuple[datetime | None, datetime | None]:
    """The date range as UTC instants: from the start of `start` to the end of `end` (either open)."""
    since = datetime.combine(start, time.min, UTC) if start else None
    until = datetime.combine(end + timedelta(days=1), time.min, UTC) if end else None
    return since, until


def in_range(stored: StoredDecision, start: date | None, end: date | None) -> bool:
    day = stored.decision.decided_at.date()
    return (start is None or day >= start) and (end is None or day <= end)


def latest_in_history(history: Iterable[StoredDecision], bank_for: Mapping[str, str]) -> dict[tuple[str, str], StoredDecision]:
    """(kind, case id) -> newest decision, for decisions in the bank of their kind (history is newest first)."""
    latest: dict[tuple[str, str], StoredDecision] = {}
    for stored in sorted(history, key=lambda s: s.id, reverse=True):
        bank = bank_for.get(stored.case_kind)
        if stored.held or (bank is not None and stored.bank_id != bank):
            continue
        latest.setdefault((stored.case_kind, stored.case_id), stored)
    return latest


def queue_status(
    cases: Sequence[ExceptionCase], tickets: Sequence[Ticket], latest: Mapping[tuple[str, str], StoredDecision]
) -> list[QueueStatus]:
    rows = []
    for name, kind, ids in (("Finance exceptions", "exception", [c.id for c in cases]), ("Support tickets", "ticket", [t.id for t in tickets])):
        counts = Counter(status_of(latest.get((kind, i))) for i in ids)
        rows.append(QueueStatus(queue=name, open=counts["open"], decided=counts["decided"], pending_delivery=counts["pending delivery"]))
    return rows


def _vendor(stored: StoredDecision, vendor_of: Mapping[str, str]) -> str:
    return tag_value(stored.record.tags, "vendor") or vendor_of.get(stored.case_id, "unknown")


def decision_metrics(
    decided: Iterable[StoredDecision], vendor_of: Mapping[str, str]
) -> tuple[list[Agreement], list[OverrideRow], list[DailyDecisions]]:
    agreement = {kind: Agreement(kind=kind) for kind in ("exception", "ticket")}
    overrides: Counter[tuple[str, str]] = Counter()
    daily: dict[tuple[date, str], DailyDecisions] = {}
    for stored in decided:
        d = stored.decision
        row = agreement.setdefault(stored.case_kind, Agreement(kind=stored.case_kind))
        row.decisions += 1
        day = daily.setdefault((d.decided_at.date(), stored.case_kind), DailyDecisions(day=d.decided_at.date(), kind=stored.case_kind))
        if d.overridden:
            row.overridden += 1
            day.overridden += 1
            if stored.case_kind == "exception":
                overrides[(_vendor(stored, vendor_of), d.reason_code or "none")] += 1
        else:
            row.approved += 1
            day.approved += 1
    override_rows = [OverrideRow(vendor=v, reason_code=r, count=n) for (v, r), n in sorted(overrides.items())]
    return list(agreement.values()), override_rows, [daily[key] for key in sorted(daily)]


MISSED = "a plain search misses some"  # a crowd-out caught, in a stakeholder's words


def crowd_out_summary(cases: Sequence[ExceptionCase], flags: Mapping[str, FinanceFlags | None]) -> CrowdOutSummary:
    """`flags`: case id -> its stored flags (None or absent when it was never recalled)."""
    summary = CrowdOutSummary(cases=len(cases))
    actions: Counter[str] = Counter()
    for case in cases:
        measured = flags.get(case.id)
        if measured is None:
            continue
        summary.recalled += 1
        actions[measured.action] += 1
        summary.no_relevant += measured.relevant == 0
        lost = measured.crowd_out_lost
        if lost is None:
            summary.unchecked_pass2_skipped += 1
            state = "not checked"
        else:
            summary.checked += 1
            if lost:
                summary.prevented += 1
                summary.precedents_saved += lost
            state = MISSED if lost else "a plain search misses none"
        summary.per_case.append({"case": case.id, "vendor": case.vendor_code, "type": case.exception_type.replace("_", " "),
                                 "exact precedents": measured.exact, "lost by a single pass": lost, "state": state,
                                 "agent recommends": measured.action})
    summary.recommendations = dict(actions)
    return summary


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


def incident_summary(kinds: Mapping[tuple[str, str], list[str] | None], agent_tally: tuple[int, int] = (0, 0)) -> IncidentSummary:
    """`kinds`: (case kind, case id) -> its stored incident kinds (None: never checked); `agent_tally`: (agent
    runs, audit-log recalls read)."""
    summary = IncidentSummary(agent_runs=agent_tally[0], audited_recalls=agent_tally[1])
    by_kind: Counter[str] = Counter()
    for (case_kind, _case_id), found in kinds.items():
        if found is None:
            continue
        summary.checked += 1
        summary.cases += bool(found)
        by_kind.update(set(found))
        summary.leaks += case_kind == "ticket" and "other_customer" in found
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
        parts.append(f"{_n(len(m.approvals_waiting), 'approval')} waiting for a second approver (the oldest for {oldest})")
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
    history: Sequence[StoredDecision],
    bank_for: Mapping[str, str],
    cases: Sequence[ExceptionCase],
    tickets: Sequence[Ticket],
    finance_flags: Mapping[str, FinanceFlags | None],
    ticket_flags: Mapping[str, TicketFlags | None],
    latencies: Iterable[LatencySample],
    incident_kinds: Mapping[tuple[str, str], list[str] | None] | None = None,
    agent_tally: tuple[int, int] = (0, 0),
    coverage: Coverage | None = None,
    coverage_error: str | None = None,
    curation: Mapping[str, int] | None = None,
    start: date | None = None,
    end: date | None = None,
    waiting: Iterable[HeldDecision] = (),
    now: datetime | None = None,
) -> OverviewMetrics:
    latest = latest_in_history(history, bank_for)
    decided = [s for s in latest.values() if in_range(s, start, end)]
    agreement, overrides, daily = decision_metrics(decided, {c.id: c.vendor_code for c in cases})
    return OverviewMetrics(
        start=start, end=end, decisions_in_range=len(decided),
        queues=queue_status(cases, tickets, latest), agreement=agreement, overrides=overrides, daily=daily,
        crowd_out=crowd_out_summary(cases, finance_flags), legacy=legacy_summary(tickets, ticket_flags),
        incidents=incident_summary(incident_kinds or {}, agent_tally),
        coverage=coverage, coverage_error=coverage_error, latency=latency_stats(latencies),
        approvals_waiting=approvals_waiting(waiting, now or datetime.now(UTC)),
        curation=CurationCounts.model_validate(curation or {}),
    )
