"""Four-eyes curation on an evidence card: the document's curation status, a proposal form, a lead's approve / reject.

Plain values in, the person's action out; the caller checks the role and records it (dashboard.review.curation).
Names, reasons and document ids were typed by people: drawn with st.text, or through safe_text.md in labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.status_banner import plain_error
from dashboard.review.curation import INVALIDATED, LABELS, VALID, CurationEvent, DocumentCuration


@dataclass(frozen=True)
class CurationAction:
    step: str  # propose | revert | approve | reject
    label: str | None = None
    reason: str = ""
    proposal_id: int | None = None
    # Where a refusal of this step is said: under the proposal's form, in its popover (which lies over the card, so a
    # refusal drawn at the card is hidden behind it); None: at the card, where the person clicked.
    said: DeltaGenerator | None = field(default=None, compare=False)


def render_curation(
    document_id: str, status: DocumentCuration | None, key: str, *, can_propose: bool, can_approve: bool
) -> CurationAction | None:
    """The curation part of one card (`key` unique on the page); returns what the person submitted, or None."""
    status = status or DocumentCuration(bank_id="", document_id=document_id)
    if status.sentence:
        st.text(status.sentence[0].upper() + status.sentence[1:])
    proposal = status.proposal
    if proposal is not None:
        what = f"invalidate ({proposal.what})" if proposal.change == "invalidate" else "make valid again"
        st.text(f"Proposed by {proposal.actor} on {proposal.created_at:%Y-%m-%d}: {what}. Reason: {proposal.reason}")
        with st.container(horizontal=True):
            if st.button("Approve", key=f"{key}_approve", disabled=not can_approve, icon=":material/done_all:"):
                return CurationAction("approve", proposal_id=proposal.id)
            if st.button("Reject", key=f"{key}_reject", disabled=not can_approve, icon=":material/block:"):
                return CurationAction("reject", proposal_id=proposal.id)
        if not can_approve:
            st.caption("A lead other than the proposer approves or rejects it.")
        return None
    if status.status not in (VALID, INVALIDATED):
        return None
    revert = status.status == INVALIDATED
    # Its form drawn only while open (opening it reruns the page): a form on every card, drawn on every key, for a
    # proposal made now and then.
    proposing = st.popover(
        "Propose making it valid again" if revert else "Propose retiring this record",
        disabled=not can_propose,
        icon=":material/undo:" if revert else ":material/flag:",
        key=f"{key}_open",
        on_change="rerun",
    )
    if not proposing.open:
        return None
    with proposing:
        with st.form(f"{key}_form", border=False):
            label = None
            if not revert:
                label = st.selectbox("What is wrong", list(LABELS), format_func=LABELS.get, key=f"{key}_label")
            # No max_chars: a longer paste is refused on submit, naming the field, and kept in the box.
            reason = st.text_area("Reason (required, at most 500 characters)", key=f"{key}_reason")
            sent = st.form_submit_button("Propose", icon=":material/send:", key=f"{key}_propose")
        if sent:
            return CurationAction("revert" if revert else "propose", label=label, reason=reason, said=st.container())
    return None


def render_curation_log(events: list[CurationEvent], *, can_manage: bool) -> tuple[str, int] | None:
    """The append-only curation log, newest first, and the approvals Hindsight refused; returns ("retry" or
    "discard", event id) when a lead asks for it."""
    parked = [e for e in events if e.state == "failed"]
    with st.expander(
        f"Curation log ({len(events)} events, {len(parked)} refused by Hindsight)",
        icon=":material/flag:",
        expanded=bool(parked),
    ):
        if not events:
            st.text("No curation yet.")
            return None
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "event #": e.id,
                        "at": f"{e.created_at:%Y-%m-%d %H:%M}",
                        "document": e.document_id,
                        "bank": e.bank_id,
                        "actor": e.actor,
                        "action": e.action,
                        "change": e.what,
                        "before": e.before,
                        "after": e.after,
                        "reason": e.reason,
                        "delivery": e.state or "",
                        "last error": plain_error(e.last_error) if e.last_error else "",
                    }
                    for e in events
                ]
            ),
            hide_index=True,
            width="stretch",
            key="curation_log",
        )
        if not parked:
            return None
        if not can_manage:
            st.caption("A lead can retry or discard the approvals Hindsight refused.")
            return None
        with st.container(horizontal=True, vertical_alignment="bottom"):
            chosen = st.selectbox(
                "Refused approval",
                [e.id for e in parked],
                format_func=lambda i: f"event #{i}",
                key="curation_parked_pick",
            )
            if st.button("Try again", key="curation_retry", icon=":material/replay:"):
                return "retry", chosen
            if st.button("Discard", key="curation_discard", icon=":material/delete:"):
                return "discard", chosen
    return None
