"""What the Overview's metrics are built from that the kinds give: a queue per registered kind (its cases, what it
groups overrides by, its nouns), each kind's groups, and the finance and support sections (crowd-out, legacy paths,
migration coverage) computed by their own packages. Plain data: the page reads the stores, this arranges it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from dashboard.finance.models import ExceptionCase
from dashboard.finance.overview import crowd_out_summary
from dashboard.reporting.overview import QueueIds, TrustSummary
from dashboard.review.flag_counts import FinanceCounts
from dashboard.review.queue_kind import QueueKind
from dashboard.support.flags import TicketFlags
from dashboard.support.migration import Coverage
from dashboard.support.models import Ticket
from dashboard.support.overview import legacy_summary


def queues_of(kinds: Sequence[QueueKind], queued: Mapping[str, Sequence], settings=None) -> dict:
    """`build`'s queues and groups: one per kind (`queued`: case kind -> its cases)."""
    return {
        "queues": [
            QueueIds(
                name=k.title, kind=k.name, ids=[c.id for c in queued[k.name]], report_by=k.report_by, nouns=k.nouns
            )
            for k in kinds
        ],
        "groups_of": {k.name: partial(k.label_groups, cases=queued[k.name], settings=settings) for k in kinds},
    }


def sections(
    cases: Sequence[ExceptionCase],
    tickets: Sequence[Ticket],
    *,
    ticket_flags: Mapping[str, TicketFlags | None],
    finance: FinanceCounts = FinanceCounts(),
    missed: Sequence[tuple[str, int, int, str]] = (),
    coverage: Coverage | None = None,
) -> dict:
    """`build`'s finance and support sections and the trust figures of the measured exceptions."""
    return {
        "sections": {
            "crowd_out": crowd_out_summary(cases, finance, missed),
            "legacy": legacy_summary(tickets, ticket_flags),
            "coverage": coverage,
        },
        "trust": TrustSummary(set_aside=finance.set_aside, forged=finance.forged, swung=finance.swung),
    }
