"""The decision side of the generic case page (kind_page.py): the form a kind's case is decided or revised in, and
recording its submit through the decision service on the revision of the case the page showed."""

from __future__ import annotations

from datetime import UTC, datetime

import streamlit as st

from components import submission
from dashboard.app import access, deciding, resources
from dashboard.app.agent_part import agent_part_of
from dashboard.kinds import proposed
from dashboard.review.queue_kind import CaseView, Choice, QueueKind
from dashboard.store.decision import REVISION_REASON_MAX_CHARS, changed_since_shown
from dashboard.store.errors import InputError


def queue_keys(kind: QueueKind) -> deciding.QueueKeys:
    return deciding.QueueKeys(
        flash=f"{kind.key}_flash",
        conflict=f"{kind.key}_conflict",
        goto=f"{kind.key}_goto",
        pending=f"{kind.key}_submitted",
    )


def field_keys(kind: QueueKind, case_id: str, revising: bool = False) -> dict[str, str]:
    """Each form field's session key, per case: a case's form starts from that case's state (`revising`: with the
    reason for revising its standing decision)."""
    names = ("outcome", "reason", "note", *kind.kind_fields, *(("revise",) if revising else ()))
    return {name: f"{kind.key}_{name}_{case_id}" for name in names}


def record(
    kind: QueueKind, bank: str, case, view: CaseView, submitted: submission.Submitted, cases, seen_key: str
) -> str | None:
    """Record a submit made on the revision of the case its page showed (`seen_key`: a decision landed since is a
    conflict, never an overwrite); returns why not, in a reviewer's words."""
    why = changed_since_shown(submitted.shown, view.shown(), kind.outcomes)
    if why:
        return why
    me = access.reviewer(f"{kind.key}_reviewer")
    values = submitted.values
    choice = Choice(
        reviewer=me.name or "",
        authenticated=me.signed_in,
        outcome=str(values.get("outcome") or ""),
        reason_code=values.get("reason") or None,
        note=str(values.get("note") or ""),
        decided_at=datetime.now(UTC),
        details={name: str(values.get(name) or "") for name in kind.kind_fields if values.get(name)},
        shown=submitted.shown,
        base_revision=st.session_state[seen_key],
        agent=agent_part_of(kind, case.id),
    )
    reasons = kind.reasons(case, resources.settings().reason_codes)
    revise = values.get("revise")
    if revise is not None and not str(revise).strip():
        return "revising the decision needs a reason."
    try:
        proposal = proposed(kind, case, view, choice, reasons)
    except InputError as exc:
        return exc.problem
    st.session_state.pop(seen_key)  # whatever the service says, the next screen reads the case's revision again
    by_id = {c.id: c for c in cases}
    decided = set(resources.outbox().decision_states(bank, kind.name))
    return deciding.record(
        bank,
        proposal,
        queue_keys(kind),
        queue=list(by_id),
        decided=decided,
        describe=lambda i: kind.describe(by_id[i]),
        reasons=reasons,
        revise=None if revise is None else str(revise),
    )


def form(kind: QueueKind, case, view: CaseView, revising: bool) -> None:
    """The case's form; `revising` (the case is decided): it revises the standing decision, and asks why."""
    fields = field_keys(kind, case.id, revising)
    reasons = kind.reasons(case, resources.settings().reason_codes)
    outcomes = list(kind.outcomes)
    with st.form(f"{kind.key}_form_{case.id}", border=True):
        st.radio(
            "Outcome",
            outcomes,
            format_func=lambda o: kind.outcomes[o],
            key=fields["outcome"],
            index=outcomes.index(view.recommendation) if view.recommendation in outcomes else 0,
        )
        if reasons:
            st.selectbox(
                "Reason (an override needs one)",
                [None, *reasons],
                key=fields["reason"],
                format_func=lambda code: "none" if code is None else f"{code}: {reasons[code]}",
            )
        for name in kind.kind_fields:
            st.text_area(name.capitalize(), key=fields[name])
        st.text_area("Note", key=fields["note"])
        if revising:
            st.text_input("Reason for revising (required)", key=fields["revise"], max_chars=REVISION_REASON_MAX_CHARS)
        st.form_submit_button(
            "Revise decision" if revising else "Record the decision",
            type="primary",
            on_click=submission.hold,
            args=(queue_keys(kind).pending, view.shown(), "form", fields),
        )
