"""How many cases of the queue a "Why not this one?" fix would alter. A change of the recall's own request
(tags_match, k, max_tokens) alters only that recall; a server setting (per-source cap, reranker candidates)
alters every recall, so the queue is run under the settings the fix was judged on and under the fix, both
predicted from one trace per recall (`lab.whatif`), and the cases whose outcome differs are named."""

from __future__ import annotations

from dashboard.finance.models import ExceptionCase
from dashboard.lab.ab import ABReport, Variant, compare
from dashboard.lab.whatif import WhatIf
from dashboard.support.models import Ticket
from dashboard.traces.replay import ReplaySettings
from dashboard.traces.why_not import WhyNot, knobs_after


def fix_report(
    gateway,
    finance_bank: str,
    support_bank: str,
    cases: list[ExceptionCase],
    tickets: list[Ticket],
    knobs: ReplaySettings,
    answer: WhyNot,
) -> ABReport | None:
    """The queue under the settings the fix was judged on (A) and under the fix (B); None when the fix changes
    only the recall's own request."""
    server_changes = [c for c in answer.changes if c.server_wide]
    if not server_changes:
        return None
    now = Variant(name="now", kind="whatif", whatif=WhatIf.of(knobs))
    fixed = Variant(name="fixed", kind="whatif", whatif=WhatIf.of(knobs_after(knobs, server_changes)))
    return compare(gateway, finance_bank, support_bank, cases, tickets, now, fixed)


def altered(report: ABReport | None, exclude: str | None = None) -> list[str]:
    """The ids of the cases (but `exclude`) whose exact precedents, recommendation or legacy admissions differ."""
    return [] if report is None else sorted(d.case_id for d in report.diffs if d.changed and d.case_id != exclude)


def cases_altered(
    gateway,
    finance_bank: str,
    support_bank: str,
    cases: list[ExceptionCase],
    tickets: list[Ticket],
    knobs: ReplaySettings,
    answer: WhyNot,
    exclude: str | None = None,
) -> list[str]:
    """The ids of the queue's cases (but `exclude`, the case the question came from) whose exact precedents,
    recommendation or legacy admissions the fix's server-wide changes would alter."""
    return altered(fix_report(gateway, finance_bank, support_bank, cases, tickets, knobs, answer), exclude)
