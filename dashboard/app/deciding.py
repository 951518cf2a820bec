"""Recording a decision from a page: the decision service does the work (role, what the screen showed, claim,
outbox, freshness, release); this turns its answer into what the reviewer sees next: a confirmation under the case's
keys (what was decided, in the words the buttons used, and where the page moved on), the conflict screen when
someone else decided the case meanwhile, or a refusal, returned to the page to show where the reviewer acted."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from dashboard.app import access, resources
from dashboard.review.decisions import Decided, Proposal
from dashboard.store.decision import decision_summary, outcome_words
from dashboard.store.errors import AlreadyDecided, NotAllowed, Refused, RevisionConflict
from dashboard.store.identity import Person

Describe = Callable[[str], str]  # a case id -> how the page names it ("E-1003: V03 Acme, price variance")


@dataclass(frozen=True)
class QueueKeys:
    """The session keys of one queue page: its pending confirmation, its conflict, the case its next run opens,
    and a submit waiting to be recorded (components.submission)."""

    flash: str
    conflict: str
    goto: str
    pending: str


def _stored_words(done: Decided) -> str:
    if done.held_because:
        return f", awaiting a second approval before it reaches the agents' memory. {done.held_because}"
    if done.blind:
        return ", held for a blind second review: it reaches the agents' memory once another reviewer agrees."
    if done.delivered:
        return ", saved to the agents' memory: their next recall finds it."
    return "; it is saved to the agents' memory when Hindsight answers."


def _as_signed_in(proposal: Proposal) -> Proposal:
    """With sign-in on, the decision is the signed-in person's: their subject and issuer recorded with it (Refused
    when it names anyone else, or nobody is signed in)."""
    if not access.login_configured():
        return proposal
    me = access.signed_in()
    if me is None:
        raise Refused("Sign in to decide.")
    return proposal.by(me)


REVISE_HINT = "To change it, use Revise decision (under the decision), with a reason."


def conflict_reason(theirs) -> str:
    """The reason a choice on the conflict screen to record over theirs (replace, escalate) gives its revision: the
    reviewer chose it with both decisions in view."""
    return (
        f"Chosen over {theirs.decision.reviewer}'s decision #{theirs.id}, recorded while this one was being made, "
        "with both in view on the conflict screen."
    )


def record(
    bank_id: str,
    proposal: Proposal,
    keys: QueueKeys,
    *,
    queue: Sequence[str],
    decided: Collection[str],
    describe: Describe,
    reasons: Mapping[str, str] | None = None,
    revise: str | None = None,
) -> str | None:
    """Record `proposal` (`revise`: as a revision of the case's standing decision, for this reason); on success the
    next run confirms it in the words the buttons used and (auto-advance on) opens the next unreviewed case, saying
    so. Returns why it was not recorded (the page shows it where the reviewer acted); a conflict opens the conflict
    screen."""
    decision = proposal.decision
    try:
        proposal = _as_signed_in(proposal)
        done = resources.decisions().decide(
            bank_id, access.current_role(), proposal, queue=queue, decided=decided, revise=revise
        )
    except AlreadyDecided as exc:
        return f"{exc.standing_words} {REVISE_HINT}"
    except (NotAllowed, Refused) as exc:
        return str(exc)
    except RevisionConflict as exc:
        st.session_state[keys.conflict] = {"case": decision.case_id, "proposal": proposal, "theirs": exc.theirs}
        st.rerun()
    moves = done.next_case is not None and st.session_state.get("auto_advance", True) and revise is None
    what, revision = ("revised", f"revision {done.stored.revision}, ") if revise is not None else ("recorded", "")
    then = f" Now {describe(done.next_case)}." if moves else ""
    st.session_state[keys.flash] = {
        "ok": done.delivered or done.stored.held,
        "error": None if done.delivered or done.stored.held else done.report.error,
        "message": f"{decision.case_id} {what}: {outcome_words(decision)} ({revision}decision #{done.stored.id}){_stored_words(done)}{then}",
        "details": decision_summary(decision, reasons),
        "top": moves or revise is not None,  # a revision: its confirmation and the history, at the top
    }
    if moves:
        st.session_state[keys.goto] = done.next_case
    st.rerun()


def record_many(bank_id: str, proposals: Sequence[Proposal], flash_key: str) -> str | None:
    """Bulk acceptance: one decision per case through the same service; who was skipped and why is said."""
    try:
        proposals = [_as_signed_in(p) for p in proposals]
        recorded, skipped = resources.decisions().decide_many(bank_id, access.current_role(), proposals)
    except (NotAllowed, Refused) as exc:
        return str(exc)
    ids = [d.stored.case_id for d in recorded]
    message = f"{len(ids)} decision(s) recorded, one per case: {', '.join(ids) or 'none'}."
    held = [d.stored.case_id for d in recorded if d.held_because]
    if held:
        message += f" Above your approval limit, awaiting a second approval: {', '.join(held)}."
    blind = [d.stored.case_id for d in recorded if d.blind]
    if blind:
        message += f" Held for a blind second review: {', '.join(blind)}."
    if skipped:
        message += f" Skipped (claimed or decided by someone else, or changed since shown): {', '.join(skipped)}."
    st.session_state[flash_key] = {"ok": bool(ids), "message": message}
    st.rerun()


def second_approval(
    bank_id: str, kind: str, case_id: str, approver: Person, keys: QueueKeys, *, confirm: bool, note: str
) -> str | None:
    """Confirm (released to memory) or reject (back to the queue) the case's held decision, through the service."""
    try:
        done = resources.decisions().second_approval(
            bank_id, access.current_role(), kind, case_id, approver, confirm=confirm, note=note
        )
    except (NotAllowed, Refused) as exc:
        return str(exc)
    theirs = done.stored.decision
    what = f"{theirs.reviewer}'s {outcome_words(theirs)}"
    if not confirm:
        message = f"{case_id}: {what} rejected by {approver}; the case is back in the queue."
    elif done.delivered:
        message = f"{case_id}: {what} confirmed by {approver} and saved to the agents' memory."
    else:
        message = (
            f"{case_id}: {what} confirmed by {approver}; it is saved to the agents' memory when Hindsight answers."
        )
    st.session_state[keys.flash] = {"ok": True, "error": done.report.error, "message": message}
    st.rerun()


def second_review(
    bank_id: str, proposal: Proposal, keys: QueueKeys, *, lead: bool, reasons: Mapping[str, str] | None = None
) -> str | None:
    """The blind second review (lead=False) or a lead's decision on a disagreement, through the service."""
    service, decision = resources.decisions(), proposal.decision
    try:
        settle = service.lead_decision if lead else service.second_review
        done = settle(bank_id, access.current_role(), _as_signed_in(proposal))
    except (NotAllowed, Refused) as exc:
        return str(exc)
    if lead:
        message = f"{decision.case_id}: the lead's decision, {outcome_words(decision)}, recorded; it replaces both reviewers' in memory."
    elif done.stored.state == "awaiting_lead":
        message = f"{decision.case_id}: second review recorded; the two decisions differ, so a lead decides."
    else:
        message = f"{decision.case_id}: second review recorded; the two decisions agree and the first is saved to the agents' memory."
    st.session_state[keys.flash] = {
        "ok": True,
        "error": done.report.error,
        "message": message,
        "details": decision_summary(decision, reasons),
    }
    st.rerun()


def pending_conflict(keys: QueueKeys, case_id: str) -> dict | None:
    """The conflict this page met on `case_id` (someone decided it since the reviewer opened it), if any."""
    conflict = st.session_state.get(keys.conflict)
    return conflict if conflict and conflict["case"] == case_id else None
