"""The deciding side of a finance case: the decision form, a conflict with a decision made meanwhile,
comments, the case facts, and bulk approval of the queue's well-supported recommendations. Every decision
goes through the decision service (dashboard/app/deciding.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

import streamlit as st

from components.conflict import render_conflict
from components.decision_form import OVERRIDE, decision_form, hold_long_note, quick_approval, reviewer_field
from components.evidence import render_case_facts, render_decided, render_match
from components.workflow import auto_advance_toggle, confirm_bulk, flash, notice, render_comments
from dashboard.app import access, blind_review, deciding, finance_recalls, resources, second_approval
from dashboard.finance import queue as exception_queue
from dashboard.finance.decisions import DecisionError, evidence_snapshot, exception_decision, precedent_record, reasons_for
from dashboard.finance.matching import match_status
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import Recommendation, assess
from dashboard.finance.recall import CaseKey, TwoStageResult
from dashboard.review.decision import NOTE_MAX_CHARS, conflict_escalation
from dashboard.review.decisions import Proposal

__all__ = ["KEYS", "KIND", "OVERRIDE", "bulk_bar", "decision_area"]
KIND = "exception"
KEYS = deciding.QueueKeys(flash="exceptions_flash", conflict="exceptions_conflict", goto="exceptions_goto")
BULK = "exceptions_bulk_confirmed"


def _reasons(case: ExceptionCase) -> dict[str, str]:
    """The reason codes offered for the case's type (RECALL_REVIEW_REASON_CODES)."""
    return reasons_for(case.exception_type, resources.settings().reason_codes)


def _proposal(case: ExceptionCase, rec: Recommendation, decision, base_revision: int, snapshot) -> Proposal:
    record = precedent_record(case, decision, rec, _reasons(case))
    return Proposal(
        decision=decision, record=record, scope=CaseKey.of(case).scope, base_revision=base_revision, evidence=snapshot,
        amount=case.invoice_amount,  # the approval limits apply to it
    )


def _seen_revision(bank: str, case_id: str, current: int) -> tuple[str, int]:
    """(its session key, the revision this page showed the reviewer): a submit is made on it, so a decision
    that landed since is a conflict, never an overwrite."""
    key = f"exc_seen_{bank}_{case_id}"
    seen = st.session_state.get(key, current)
    st.session_state[key] = current
    return key, seen


def _conflict(bank: str, case: ExceptionCase, queue, conflict: dict) -> None:
    theirs, proposal = conflict["theirs"], conflict["proposal"]
    choice = render_conflict(theirs, proposal.decision, key=f"conflict_{case.id}")
    if choice is None:
        return
    st.session_state.pop(KEYS.conflict)
    st.session_state.pop(f"exc_seen_{bank}_{case.id}", None)
    if choice == "keep_theirs":
        st.rerun()
    mine = proposal.decision
    if choice == "escalate":
        mine = conflict_escalation(mine, theirs.decision, decided_at=datetime.now(UTC))
    rebased = replace(proposal, decision=mine, base_revision=theirs.revision)
    deciding.record(bank, rebased, KEYS, queue=queue.ids, decided=queue.decided, what=f"decision {mine.outcome}")


def decision_area(bank: str, case: ExceptionCase, queue, result: TwoStageResult | None, rec: Recommendation, *, free: bool, approve_key: bool, me) -> None:
    """The right column: the decided box, the form (or the conflict, the second approval, or why the role cannot
    decide), comments, facts."""
    held = queue.held.get(case.id)
    stored = resources.outbox().latest_decided(bank, KIND, case.id) if case.id in queue.decided else None
    render_decided(stored)
    flash(KEYS.flash)  # the last decision's confirmation, here beside the form: a toast would lie over its fields
    current = held.stored.revision if held else (stored.revision if stored else 0)  # a held row is the newest
    seen_key, seen = _seen_revision(bank, case.id, current)
    conflict = deciding.pending_conflict(KEYS, case.id)
    blind = queue.blind.get(case.id)
    if held is not None and held.awaiting:
        second_approval.approval_panel(bank, KIND, held, me, KEYS, free=free)
    elif blind is not None:
        def submit(decision, lead: bool) -> None:
            proposal = _proposal(case, rec, decision, blind.first.revision, evidence_snapshot(result, rec))
            deciding.second_review(bank, proposal, KEYS, lead=lead)

        blind_review.blind_panel(case, blind, rec, submit, me=me, free=free, reasons=_reasons(case))
    elif conflict:
        _conflict(bank, case, queue, conflict)
    elif not access.can("decide"):
        st.info(f"Your role ({access.current_role()}) can read this case but not decide it.", icon=":material/visibility:")
    else:
        if held is not None:
            second_approval.held_notice(held)
        reviewer_field(me)
        submitted = decision_form(case, rec, me, disabled=not free, reasons=_reasons(case))
        if approve_key and not submitted and free:
            submitted = quick_approval(me)
        if submitted:
            try:
                decision = exception_decision(
                    case, rec, reviewer=submitted.reviewer, authenticated=submitted.authenticated, action=submitted.action,
                    outcome=submitted.outcome, reason_code=submitted.reason_code, note=submitted.note, reasons=_reasons(case),
                )
            except DecisionError as exc:
                if exc.field == "note" and len(submitted.note) > NOTE_MAX_CHARS:
                    hold_long_note(case.id, submitted.note)
                    st.rerun()
                notice(f"Not submitted: {exc}", ok=False)
            else:
                st.session_state.pop(seen_key, None)
                proposal = _proposal(case, rec, decision, seen, evidence_snapshot(result, rec))
                deciding.record(bank, proposal, KEYS, queue=queue.ids, decided=queue.decided, what=f"decision {decision.outcome}")
    auto_advance_toggle()
    render_comments(resources.casework(), bank, KIND, case.id, me.name, lambda: access.permitted("decide"),
                    hidden=blind_review.comments_hidden(blind))
    st.subheader("Invoice and PO")
    render_match(match_status(case))
    render_case_facts(case, date.today())


def _open_cases(bank: str, queue, me: str | None) -> list[ExceptionCase]:
    """The queue's open cases nobody else holds."""
    holders = resources.casework().live_claims(bank, KIND)
    waiting = {*queue.decided, *queue.held, *queue.blind}
    return [c for c in queue.shown if c.id not in waiting and holders.get(c.id, me) == me]


def _candidates(bank: str, queue, me: str | None) -> list[tuple[ExceptionCase, TwoStageResult, Recommendation]]:
    """Each open case whose recall is at hand and whose recommendation is well supported (on a click only)."""
    at_hand = finance_recalls.cached_cases(bank, _open_cases(bank, queue, me), queue.k)
    ready = []
    for c in _open_cases(bank, queue, me):
        if c.id in at_hand:
            result, rec = assess(at_hand[c.id])
            if exception_queue.well_supported(rec):
                ready.append((c, result, rec))
    return ready


def bulk_bar(bank: str, queue, me: str | None) -> None:
    """Approve the well-supported recommendations: one confirmation, then one decision per case."""
    with st.container(horizontal=True, vertical_alignment="center"):
        if st.button(
            "Approve well-supported recommendations", key="bulk_open", icon=":material/done_all:",
            disabled=me is None or not access.can("decide"),
            help="Open cases whose recommendation cites relevant precedents with high confidence; you confirm the list first"
            + (" (type your reviewer name first)" if me is None else ""),
        ):
            candidates = _candidates(bank, queue, me)
            if candidates:
                confirm_bulk({c.id: f"{c.id}: {c.vendor_code} {c.exception_type.replace('_', ' ')}, {r.action}" for c, _res, r in candidates}, BULK)
            else:
                notice("No open case has a well-supported recommendation at hand yet.", ok=False)
        open_ids = [c for c in queue.shown if c.id not in queue.decided]
        loading = len(open_ids) - len(finance_recalls.cached_cases(bank, open_ids, queue.k))
        if loading:
            if not resources.settings().prefetch_queue:
                st.caption(f"{loading} open case(s) not recalled yet (background recall is off): bulk approval offers the cases opened so far.")
            elif len(queue.shown) <= finance_recalls.PREFETCH_AHEAD:
                st.caption(f"{loading} open case(s) are still being recalled in the background.")
            else:
                st.caption(f"{loading:,} open case(s) not recalled yet: the {finance_recalls.PREFETCH_AHEAD} after the open case are "
                           "recalled in the background, and bulk approval offers the cases at hand.")
    confirmed = st.session_state.pop(BULK, None)
    if confirmed:
        note = "Approved in bulk: a well-supported recommendation."
        proposals = []
        for c, result, rec in _candidates(bank, queue, me):
            if c.id in confirmed:  # only what the reviewer saw
                decision = exception_decision(
                    c, rec, reviewer=me, authenticated=access.reviewer("reviewer_name").signed_in, action="approve_recommendation", note=note
                )
                proposals.append(_proposal(c, rec, decision, 0, evidence_snapshot(result, rec)))
        deciding.record_many(bank, proposals, KEYS.flash)
