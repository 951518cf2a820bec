"""The support section of the Overview: which path each measured ticket's recall took and what the legacy fallback
admitted or rejected, each legacy record once. Plain data; reporting/overview.py carries it as it is
(OverviewMetrics.legacy) and components/overview_charts.py draws it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from dashboard.support.flags import TicketFlags
from dashboard.support.models import Ticket


class LegacySummary(BaseModel):
    tickets: int
    recalled: int = 0  # with flags in the store
    paths: dict[str, int] = Field(default_factory=dict)  # tagged | legacy | none
    admitted: int = 0  # distinct legacy records admitted by the ownership rule for some ticket
    rejected: int = 0  # distinct legacy (untagged) records met by a fallback and never admitted
    rejected_by_reason: dict[str, int] = Field(default_factory=dict)  # distinct rejected records by verdict
    tagged_candidates: int = 0  # distinct tagged records a fallback met (never admitted: not legacy)


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
