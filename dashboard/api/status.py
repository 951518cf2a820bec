"""A case as the API answers for it: its status by the same rule as every page (review/figures.py), and its decision
only once it is final. A held decision (above a limit, awaiting a blind second review or a lead) is reported as held,
with no outcome: an agent must not act on it, and a blind reviewer's decision is not shown to anyone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashboard.api.context import ApiContext
from dashboard.api.models import CaseOut, DecisionOut, WithdrawalOut
from dashboard.review.case_queue import QueuedCase
from dashboard.review.figures import DECIDED, PENDING_DELIVERY, case_status, held_statuses
from dashboard.review.queue_kind import QueueKind
from dashboard.store.decision import compared, outcome_words
from dashboard.store.standing import DecisionState

FINAL = (DECIDED, PENDING_DELIVERY)
WITHDRAWN = (
    "withdrawn"  # a handed-in case its agent withdrew while open (the API's own status: it is out of every page)
)


def queue_states(context: ApiContext, kind: QueueKind) -> tuple[Mapping[str, DecisionState], dict[str, str]]:
    """(each case's standing decision, each held case's status): read once for a page of cases."""
    bank = context.bank(kind)
    held = held_statuses(context.decisions.held_cases(bank, kind.name), context.decisions.blind_cases(bank, kind.name))
    return context.outbox.decision_states(bank, kind.name), held


def case_out(
    context: ApiContext,
    kind: QueueKind,
    case_id: str,
    stored: QueuedCase | None,
    fields: dict[str, Any],
    states: tuple[Mapping[str, DecisionState], dict[str, str]] | None = None,
) -> CaseOut:
    bank = context.bank(kind)
    standing_of, held = states or queue_states(context, kind)
    standing = standing_of.get(case_id)
    status = case_status(standing, held.get(case_id))
    withdrawal = stored.withdrawal if stored else None
    if withdrawal is not None:
        status = WITHDRAWN
    decision = None
    if status in FINAL:
        row = context.outbox.latest_decided(bank, kind.name, case_id)
        if row is not None:
            d = row.decision
            decision = DecisionOut(
                outcome=d.outcome,
                action=d.action,
                action_words=outcome_words(d),
                **compared(d),
                reason_code=d.reason_code,
                note=d.note,
                reviewer=d.reviewer,
                authenticated=d.authenticated,
                decided_at=d.decided_at.isoformat(),
                revision=row.revision,
                revision_reason=d.revision_reason,
                document_id=row.document_id,
                details=d.details,
            )
    return CaseOut(
        kind=kind.key,
        case_id=case_id,
        status=status,
        final=decision is not None,
        in_memory=decision is not None and standing is not None and standing.state == "delivered",
        decision=decision,
        seq=stored.seq if stored else None,
        source=stored.source if stored else None,
        agent=stored.agent if stored else None,
        case=fields,
        withdrawal=WithdrawalOut(by=withdrawal.by, why=withdrawal.why, at=withdrawal.at.isoformat())
        if withdrawal
        else None,
    )
