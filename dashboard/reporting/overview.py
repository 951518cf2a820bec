"""What the stakeholder Overview shows, computed from plain data. No Streamlit here.

Inputs: the outbox history (every reviewer decision), the two queues, the latest recall results the
runtime kept (finance two-stage results, ticket recalls), the migration coverage and recall latency
samples. A date range applies to decisions (by decided_at, UTC day); queues, recalls and coverage are
"now". Agreement and overrides count the LATEST decision per case decided in the range (a revised
decision replaces the earlier one, as it does in memory).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import date

from pydantic import BaseModel, Field

from dashboard.finance.models import ExceptionCase
from dashboard.finance.queue import status_of
from dashboard.finance.recall import TwoStageResult
from dashboard.hindsight.wire import tag_value
from dashboard.reporting.recall_log import LatencySample
from dashboard.review.outbox import StoredDecision
from dashboard.support.migration import Coverage
from dashboard.support.models import Ticket
from dashboard.support.recall import TicketRecall


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
    recalled: int = 0  # with a two-stage result in this server's memory
    checked: int = 0  # with a crowd-out check (pass 2 ran, or the extra check was asked for)
    prevented: int = 0  # checked cases where a single any_strict pass would have lost exact precedents
    precedents_saved: int = 0  # exact precedents a single pass would have lost, summed
    unchecked_pass2_skipped: int = 0  # pass 1 filled k: no counterfactual unless someone asks for the check
    per_case: list[dict] = Field(default_factory=list)


class LegacySummary(BaseModel):
    tickets: int
    recalled: int = 0
    paths: dict[str, int] = Field(default_factory=dict)  # tagged | legacy | none
    admitted: int = 0  # legacy candidates admitted by the ownership rule
    rejected: int = 0
    rejected_by_reason: dict[str, int] = Field(default_factory=dict)


class LatencyStat(BaseModel):
    kind: str
    count: int
    failed: int
    p50_ms: float
    p95_ms: float
    max_ms: float


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
    coverage: Coverage | None = None
    coverage_error: str | None = None
    latency: list[LatencyStat]


def in_range(stored: StoredDecision, start: date | None, end: date | None) -> bool:
    day = stored.decision.decided_at.date()
    return (start is None or day >= start) and (end is None or day <= end)


def latest_per_case(history: Iterable[StoredDecision], bank_for: Mapping[str, str]) -> dict[tuple[str, str], StoredDecision]:
    """(kind, case id) -> newest decision, for decisions in the bank of their kind (history is newest first)."""
    latest: dict[tuple[str, str], StoredDecision] = {}
    for stored in sorted(history, key=lambda s: s.id, reverse=True):
        bank = bank_for.get(stored.case_kind)
        if bank is not None and stored.bank_id != bank:
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


def crowd_out_summary(cases: Sequence[ExceptionCase], results: Mapping[str, TwoStageResult | None]) -> CrowdOutSummary:
    """`results`: case id -> its latest two-stage result (None when it was not recalled on this server yet)."""
    summary = CrowdOutSummary(cases=len(cases))
    for case in cases:
        result = results.get(case.id)
        if result is None:
            continue
        summary.recalled += 1
        co = result.crowd_out
        if co is None:
            summary.unchecked_pass2_skipped += 1
            state, lost = "pass 2 skipped, not checked", None
        else:
            summary.checked += 1
            lost = co.lost
            if co.crowded_out:
                summary.prevented += 1
                summary.precedents_saved += co.lost
            state = "crowd-out prevented" if co.crowded_out else "no crowd-out"
        summary.per_case.append({"case": case.id, "vendor": case.vendor_code, "type": case.exception_type,
                                 "exact": len(result.exact), "lost by a single pass": lost, "state": state})  # fmt: skip
    return summary


def legacy_summary(tickets: Sequence[Ticket], results: Mapping[str, TicketRecall | None]) -> LegacySummary:
    summary = LegacySummary(tickets=len(tickets))
    paths: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for ticket in tickets:
        recall = results.get(ticket.id)
        if recall is None:
            continue
        summary.recalled += 1
        paths[recall.path] += 1
        summary.admitted += len(recall.legacy_admitted)
        summary.rejected += len(recall.legacy_rejected)
        reasons.update(e.verdict for e in recall.legacy_rejected)
    summary.paths, summary.rejected_by_reason = dict(paths), dict(reasons)
    return summary


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
        ))  # fmt: skip
    return stats


def build(
    *,
    history: Sequence[StoredDecision],
    bank_for: Mapping[str, str],
    cases: Sequence[ExceptionCase],
    tickets: Sequence[Ticket],
    finance_results: Mapping[str, TwoStageResult | None],
    ticket_results: Mapping[str, TicketRecall | None],
    latencies: Iterable[LatencySample],
    coverage: Coverage | None = None,
    coverage_error: str | None = None,
    start: date | None = None,
    end: date | None = None,
) -> OverviewMetrics:
    latest = latest_per_case(history, bank_for)
    decided = [s for s in latest.values() if in_range(s, start, end)]
    agreement, overrides, daily = decision_metrics(decided, {c.id: c.vendor_code for c in cases})
    return OverviewMetrics(
        start=start, end=end, decisions_in_range=len(decided),
        queues=queue_status(cases, tickets, latest), agreement=agreement, overrides=overrides, daily=daily,
        crowd_out=crowd_out_summary(cases, finance_results), legacy=legacy_summary(tickets, ticket_results),
        coverage=coverage, coverage_error=coverage_error, latency=latency_stats(latencies),
    )  # fmt: skip
