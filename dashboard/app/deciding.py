"""Recording a decision from a page: the decision service does the work (role, claim, outbox, freshness,
release); this turns its answer into what the reviewer sees next: a confirmation beside the form (what was
decided: outcome, override or not, reason, note), the next unreviewed case, or the conflict screen when
someone else decided the case meanwhile."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import streamlit as st

from components.workflow import notice
from dashboard.app import access, resources
from dashboard.finance.decisions import REASON_CODES
from dashboard.review.decision import decision_summary
from dashboard.review.decisions import NotAllowed, Proposal, Refused, RevisionConflict


@dataclass(frozen=True)
class QueueKeys:
    """The session keys of one queue page: its pending confirmation, its conflict, the case its next run opens."""

    flash: str
    conflict: str
    goto: str


def record(bank_id: str, proposal: Proposal, keys: QueueKeys, *, queue: Sequence[str], decided: Collection[str], what: str) -> None:
    """Record `proposal`; on success the next run confirms `what`, with what was decided, and (auto-advance on)
    opens the next unreviewed case."""
    decision = proposal.decision
    try:
        done = resources.decisions().decide(bank_id, access.current_role(), proposal, queue=queue, decided=decided)
    except (NotAllowed, Refused) as exc:
        notice(f"Not recorded: {exc}", ok=False)
        return
    except RevisionConflict as exc:
        st.session_state[keys.conflict] = {"case": decision.case_id, "proposal": proposal, "theirs": exc.theirs}
        st.rerun()
    if done.held_because:
        delivery = f", awaiting a second approval before it reaches memory. {done.held_because}"
    elif done.blind:
        delivery = ", held for a blind second review: it reaches memory once another reviewer agrees."
    elif done.delivered:
        delivery = f" and retained into {bank_id} as {done.stored.document_id}."
    else:
        delivery = "; it is delivered to memory when Hindsight answers."
    st.session_state[keys.flash] = {
        "ok": done.delivered or done.stored.held, "error": None if done.delivered or done.stored.held else done.report.error,
        "message": f"{decision.case_id}: {what} recorded (audit #{done.stored.id}){delivery}", "details": decision_summary(decision, REASON_CODES),
    }
    if done.next_case is not None and st.session_state.get("auto_advance", True):
        st.session_state[keys.goto] = done.next_case
    st.rerun()


def record_many(bank_id: str, proposals: Sequence[Proposal], flash_key: str) -> None:
    """Bulk approval: one decision per case through the same service; who was skipped and why is said."""
    try:
        recorded, skipped = resources.decisions().decide_many(bank_id, access.current_role(), proposals)
    except NotAllowed as exc:
        notice(f"Not recorded: {exc}", ok=False)
        return
    ids = [d.stored.case_id for d in recorded]
    message = f"{len(ids)} decision(s) recorded, one per case: {', '.join(ids) or 'none'}."
    held = [d.stored.case_id for d in recorded if d.held_because]
    if held:
        message += f" Above your approval limit, awaiting a second approval: {', '.join(held)}."
    blind = [d.stored.case_id for d in recorded if d.blind]
    if blind:
        message += f" Held for a blind second review: {', '.join(blind)}."
    if skipped:
        message += f" Skipped (claimed or decided by someone else): {', '.join(skipped)}."
    st.session_state[flash_key] = {"ok": bool(ids), "message": message}
    st.rerun()


def second_approval(bank_id: str, kind: str, case_id: str, approver: str, keys: QueueKeys, *, confirm: bool, note: str) -> None:
    """Confirm (released to memory) or reject (back to the queue) the case's held decision, through the service."""
    try:
        done = resources.decisions().second_approval(bank_id, access.current_role(), kind, case_id, approver, confirm=confirm, note=note)
    except (NotAllowed, Refused) as exc:
        notice(f"Not recorded: {exc}", ok=False)
        return
    theirs = done.stored.decision
    if not confirm:
        message = f"{case_id}: {theirs.reviewer}'s {theirs.outcome} rejected by {approver}; the case is back in the queue."
    elif done.delivered:
        message = f"{case_id}: {theirs.reviewer}'s {theirs.outcome} confirmed by {approver} and retained into {bank_id} as {done.stored.document_id}."
    else:
        message = f"{case_id}: {theirs.reviewer}'s {theirs.outcome} confirmed by {approver}; it is delivered to memory when Hindsight answers."
    st.session_state[keys.flash] = {"ok": True, "error": done.report.error, "message": message}
    st.rerun()


def second_review(bank_id: str, proposal: Proposal, keys: QueueKeys, *, lead: bool) -> None:
    """The blind second review (lead=False) or a lead's decision on a disagreement, through the service."""
    service, decision = resources.decisions(), proposal.decision
    try:
        settle = service.lead_decision if lead else service.second_review
        done = settle(bank_id, access.current_role(), proposal)
    except (NotAllowed, Refused) as exc:
        notice(f"Not recorded: {exc}", ok=False)
        return
    if lead:
        message = f"{decision.case_id}: the lead's decision {decision.outcome} recorded; it replaces both reviewers' in memory."
    elif done.stored.state == "awaiting_lead":
        message = f"{decision.case_id}: second review recorded; the two decisions differ, so a lead decides."
    else:
        message = f"{decision.case_id}: second review recorded; the two decisions agree and the first is released to memory."
    st.session_state[keys.flash] = {"ok": True, "error": done.report.error, "message": message,
                                    "details": decision_summary(decision, REASON_CODES)}
    st.rerun()


def pending_conflict(keys: QueueKeys, case_id: str) -> dict | None:
    """The conflict this page met on `case_id` (someone decided it since the reviewer opened it), if any."""
    conflict = st.session_state.get(keys.conflict)
    return conflict if conflict and conflict["case"] == case_id else None
