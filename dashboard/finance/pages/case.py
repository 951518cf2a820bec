"""The deciding side of a finance exception: its decision state, the form (or a conflict, a second approval, a blind
second review), bulk acceptance of well-supported recommendations. Every decision goes through the decision service
(dashboard/app/deciding.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

import streamlit as st

from components import submission
from components.attention import draw_attention
from components.conflict import render_conflict
from components.decision_form import (
    FINANCE_DRAFTS,
    NOTE_LABEL,
    OUTCOME_LABEL,
    OVERRIDE,
    REVISE_LABEL,
    field_keys,
    hold_long_note,
    not_sent,
    sending,
    show_long_note,
)
from components.revisions import render_history
from components.safe_text import md
from components.workflow import REVIEWER_LABEL, Slot, auto_advance_toggle, render_comments
from dashboard.app import access, blind_review, deciding, resources, second_approval
from dashboard.app.agent_part import agent_part_of
from dashboard.finance.decisions import evidence_snapshot, exception_decision, exception_proposal, reasons_for
from dashboard.finance.kind import FINANCE
from dashboard.finance.matching import match_status
from dashboard.finance.models import ExceptionCase
from dashboard.finance.pages.evidence import render_case_facts, render_decided, render_match
from dashboard.finance.pages.form import decision_form
from dashboard.finance.policy import Recommendation
from dashboard.finance.recall import TwoStageResult
from dashboard.review.decisions import Proposal
from dashboard.store.decision import NOTE_MAX_CHARS, Shown, changed_since_shown, conflict_escalation
from dashboard.store.errors import AlreadyDecided, DecisionInputError

__all__ = ["KEYS", "KIND", "OVERRIDE", "decision_area", "describe", "proposal_for", "reasons", "shown_of"]
KIND = "exception"
KEYS = deciding.QueueKeys(
    flash="exceptions_flash", conflict="exceptions_conflict", goto="exceptions_goto", pending="exceptions_submitted"
)
FIELD_LABELS = {
    "reviewer": REVIEWER_LABEL,
    "outcome": OUTCOME_LABEL,
    "note": NOTE_LABEL,
    "revise": REVISE_LABEL,
}  # the field a refusal names -> its label


def reasons(case: ExceptionCase) -> dict[str, str]:
    """The reason codes offered for the case's type (RECALL_REVIEW_REASON_CODES)."""
    return reasons_for(case.exception_type, resources.settings().reason_codes)


def describe(case: ExceptionCase) -> str:
    """How a confirmation names the case it moved on to."""
    return f"{case.id}: {case.vendor_code} {case.vendor_name}, {case.exception_type.replace('_', ' ')}"


def shown_of(case: ExceptionCase, result: TwoStageResult | None, rec: Recommendation) -> Shown:
    """What the case's screen shows: the case, the recommendation, the evidence (a submit carries it)."""
    return Shown.of(case.id, evidence_snapshot(result, rec))


def proposal_for(
    case: ExceptionCase, rec: Recommendation, decision, base_revision: int, result, shown: Shown | None
) -> Proposal:
    return exception_proposal(case, decision, rec, result, reasons(case), base_revision=base_revision, shown=shown)


def _seen_revision(bank: str, case_id: str, current: int) -> tuple[str, int]:
    """(its session key, the revision this page showed the reviewer): a submit is made on it, so a decision
    that landed since is a conflict, never an overwrite."""
    key = f"exc_seen_{bank}_{case_id}"
    seen = st.session_state.get(key, current)
    st.session_state[key] = current
    return key, seen


def _conflict(bank: str, case: ExceptionCase, queue, conflict: dict, slot: Slot, cases: dict) -> None:
    theirs, proposal = conflict["theirs"], conflict["proposal"]
    choice = render_conflict(theirs, proposal.decision, key=f"conflict_{case.id}", reasons=reasons(case))
    if choice is None:
        return
    st.session_state.pop(KEYS.conflict)
    st.session_state.pop(f"exc_seen_{bank}_{case.id}", None)
    if choice == "keep_theirs":
        st.rerun()
    mine = proposal.decision
    if choice == "escalate":
        mine = conflict_escalation(mine, theirs.decision, decided_at=datetime.now(UTC), reason_code="OTHER")
    rebased = replace(proposal, decision=mine, base_revision=theirs.revision)
    refused = deciding.record(
        bank,
        rebased,
        KEYS,
        queue=queue.ids,
        decided=queue.decided,
        describe=lambda c: describe(cases[c]),
        reasons=reasons(case),
        revise=deciding.conflict_reason(theirs),
    )
    if refused:
        slot.refuse(f"Not recorded: {refused}")


def _decision(case: ExceptionCase, rec: Recommendation, submitted: submission.Submitted, me):
    """The decision a submit asks for: the form's choice, or the accept key's (DecisionInputError names what to fix)."""
    values = submitted.values
    override = submitted.origin == "form" and values.get("choice") == OVERRIDE
    return exception_decision(
        case,
        rec,
        reviewer=me.name if me.signed_in else st.session_state.get("reviewer_name"),
        authenticated=me.signed_in,
        action="override" if override else "accept_recommendation",
        outcome=values.get("outcome"),
        reason_code=values.get("reason"),
        note=str(values.get("note") or ""),
        reasons=reasons(case),
        agent=agent_part_of(FINANCE, case.id),
    )


def decision_area(
    bank: str,
    case: ExceptionCase,
    queue,
    result: TwoStageResult | None,
    rec: Recommendation,
    shown: Shown,
    *,
    header: Slot,
    free: bool,
    override_pressed: bool,
    me,
) -> None:
    """The right column: the case's decision state, the form (or the conflict, the second approval, the blind
    second review, or why the role cannot decide), comments, facts. A submit is recorded here; what it says
    shows where the reviewer acted: under the keys (the accept key), or under the form's button."""
    held, blind = queue.held.get(case.id), queue.blind.get(case.id)
    stored = resources.outbox().latest_decided(bank, KIND, case.id) if case.id in queue.decided else None
    if blind is not None:  # nothing of the first decision while the second review is blind
        blind_review.blind_heading(blind, reasons(case))
    else:
        render_decided(stored, reasons(case))
        if stored is not None:  # a revised case: every decision kept, each with its reason
            render_history(resources.decisions().revisions(bank, KIND, case.id), reasons(case))
    current = held.stored.revision if held else (stored.revision if stored else 0)  # a held row is the newest
    seen_key, seen = _seen_revision(bank, case.id, current)
    submitted = submission.take(KEYS.pending)
    conflict = deciding.pending_conflict(KEYS, case.id)
    if held is not None and held.awaiting:
        second_approval.approval_panel(bank, KIND, held, me, KEYS, free=free)
    elif conflict:
        _conflict(bank, case, queue, conflict, header, {c.id: c for c in queue.shown})
    elif not access.can("decide"):
        st.info(
            f"Your role ({access.current_role()}) can read this case but not decide it.", icon=":material/visibility:"
        )
        if submitted is not None:  # a press this page never offered (a crafted event): said, and nothing recorded
            header.refuse(f"Not recorded: your role ({access.current_role()}) may not decide cases.")
    else:
        if held is not None:
            second_approval.held_notice(held)
        why = (
            blind_review.problem_caption(blind, me, free=free)
            if blind is not None
            else (None if free else "someone else holds this case (see who above)")
        )
        revising = current if stored is not None and blind is None else None  # decided: the form revises it
        long_note = decision_form(
            case,
            rec,
            shown,
            KEYS.pending,
            disabled=why is not None,
            why=why or "",
            reasons=reasons(case),
            revising=revising,
        )
        form_slot = Slot(f"form_feedback_{case.id}")
        with form_slot.box:
            show_long_note(long_note, where=f"long_note_{case.id}")
            if override_pressed:  # O switched the form: bring its outcome into view, focused
                draw_attention(focus=OUTCOME_LABEL, key="override_attention")
        FINANCE_DRAFTS.notice(case.id, where="case")
        if (
            override_pressed and revising is not None
        ):  # said where O was pressed: on a decided case an override revises it
            with header.box:
                st.info(
                    md(
                        f"{AlreadyDecided(stored).standing_words} Override below revises it: revision {revising + 1}, "
                        "recorded only with a reason."
                    ),
                    icon=":material/edit_note:",
                )
        if submitted is not None:
            _record(
                bank,
                case,
                queue,
                result,
                rec,
                submitted,
                me,
                seen_key,
                seen,
                blind,
                header if submitted.origin == "key" else form_slot,
                stored,
            )
    auto_advance_toggle()
    render_comments(
        resources.casework(),
        bank,
        KIND,
        case.id,
        me.person,
        lambda: access.permitted("decide"),
        hidden=blind_review.comments_hidden(blind),
    )
    st.subheader("Invoice and PO")
    render_match(match_status(case))
    render_case_facts(case, date.today())


def _record(bank, case, queue, result, rec, submitted, me, seen_key, seen, blind, slot: Slot, stored) -> None:
    """Record a submit through the service, on the case as it is now; a refusal is shown in `slot`. `stored`: the
    case's standing decision; only the form's Revise decision, with a reason, changes it."""
    if submitted.shown.case_id != case.id:  # pressed as the page moved on: said before its fields are read
        slot.refuse(
            f"Not recorded: {changed_since_shown(submitted.shown, shown_of(case, result, rec), FINANCE.outcomes)}"
        )
        return
    revise = submitted.values.get("revise") if submitted.origin == "form" else None
    if stored is not None and revise is not None and not str(revise).strip():  # asked here, to focus the box to fill
        slot.refuse(
            f"Not recorded: {AlreadyDecided(stored).standing_words} Revising it needs a reason.", focus=REVISE_LABEL
        )
        return
    try:
        decision = _decision(case, rec, submitted, me)
    except DecisionInputError as exc:
        if exc.field == "note" and len(str(submitted.values.get("note") or "")) > NOTE_MAX_CHARS:
            hold_long_note(case.id, str(submitted.values["note"]), field_keys(case.id)["note"])
            st.rerun()
        slot.refuse(f"Not recorded: {exc.problem}", focus=FIELD_LABELS.get(exc.field))
        return
    st.session_state.pop(seen_key, None)
    base = blind.first.revision if blind is not None else seen
    proposal = proposal_for(case, rec, decision, base, result, submitted.shown)
    draft = sending(case.id)  # recorded, the page reruns with no draft and a clean form
    if blind is not None:
        refused = deciding.second_review(bank, proposal, KEYS, lead=blind.awaiting_lead, reasons=reasons(case))
    else:
        cases = {c.id: c for c in queue.shown}
        refused = deciding.record(
            bank,
            proposal,
            KEYS,
            queue=queue.ids,
            decided=queue.decided,
            describe=lambda c: describe(cases[c]),
            reasons=reasons(case),
            revise=None if revise is None else str(revise),
        )
    not_sent(case.id, draft)  # refused: everything chosen and typed stays
    slot.refuse(f"Not recorded: {refused}")
