"""What the Overview measures on a visit: the flags each queue's cases have, the queues recalled so every case
counts (cached answers reused), and the legacy migration's coverage. Names the two built-in kinds, as the Overview's
per-kind panels still do (issue 62)."""

from __future__ import annotations

from dashboard.app import resources
from dashboard.app.kept_while_same import ids_of
from dashboard.finance.decisions import document_id_for
from dashboard.finance.kind import FINANCE
from dashboard.finance.pages import recalls as finance_recalls
from dashboard.finance.recall import DEFAULT_K, CaseKey
from dashboard.hindsight.errors import HindsightError
from dashboard.support.kind import SUPPORT
from dashboard.support.pages import recalls as ticket_recalls


def finance_flags(settings, cases):
    return resources.casework().queue_flags(settings.finance_bank, FINANCE.name, ids_of(cases))


def ticket_flags(settings, tickets):
    return resources.casework().queue_flags(settings.support_bank, SUPPORT.name, ids_of(tickets))


def measure(settings, cases, tickets, *, check: bool, progress=None) -> list[str]:
    """Recall the queues (cached answers are reused) so every case counts; returns the problems met."""
    failed = []
    loaded = finance_recalls.load_queue(settings.finance_bank, cases, DEFAULT_K, progress=progress)
    if loaded["failed"]:
        failed.append(f"{loaded['failed']} {FINANCE.nouns[0]}(s) could not be recalled")
    for case in cases if check else []:
        try:
            finance_recalls.recall_case(
                settings.finance_bank,
                CaseKey.of(case),
                case.recall_query(),
                DEFAULT_K,
                document_id_for(case.id),
                check=True,
            )
        except HindsightError as exc:
            failed.append(f"{case.id}: {exc}")
    for ticket in tickets:
        try:
            ticket_recalls.recall_ticket(settings.support_bank, ticket.customer, ticket.issue)
        except (HindsightError, ValueError) as exc:  # ValueError: a name no marker can be built from
            failed.append(f"{ticket.id}: {exc}")
    return failed


def coverage_of(settings, customers, reachable: bool):
    if not reachable:
        return None, "Hindsight is not reachable."
    if not customers:
        return None, None
    try:
        return ticket_recalls.legacy_plan(settings.support_bank, customers).coverage, None
    except HindsightError as exc:
        return None, str(exc)
