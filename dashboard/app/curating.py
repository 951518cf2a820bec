"""Curation on the evidence cards: the page's side of four-eyes curation (dashboard.review.curation).

One query for the statuses of the cards on screen; each card's controls (components.curation); the person is
the signed-in user or the name typed in the page's reviewer field, and the role is checked by the service
right before it writes. A refusal shows where the person acted (under the proposal's form, in its popover; at the card for
an approval); a confirmation beside the decision form, after the rerun
(never toasts: a toast lies over the form's fields).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import streamlit as st

from components.curation import CurationAction, render_curation
from components.workflow import notice
from dashboard.app import access, resources
from dashboard.store.errors import CurationInputError, NotAllowed, Refused


def card_controls(bank: str, document_ids: Iterable[str], name_key: str, flash_key: str) -> Callable[[str], None]:
    """What an evidence card calls with its document id to draw its curation part. A recorded step reruns the
    page (the cards show the new status) with its confirmation left under `flash_key`."""
    curation = resources.curation()
    statuses = curation.statuses(bank, document_ids)
    role = access.current_role()
    can_propose, can_approve = access.can("propose_curation"), access.can("approve_curation")

    def controls(document_id: str) -> None:
        action = render_curation(
            document_id,
            statuses.get(document_id),
            f"curate_{document_id}",
            can_propose=can_propose,
            can_approve=can_approve,
        )
        if action is None:
            return
        me = access.reviewer(name_key).person or ""
        try:
            if action.step in ("propose", "revert"):
                change = "invalidate" if action.step == "propose" else "revert"
                curation.propose(
                    bank, document_id, role=role, proposer=me, reason=action.reason, change=change, label=action.label
                )
                done = f"Proposed: {document_id} waits for a lead's approval."
            elif action.step == "approve":
                approval, _ = curation.approve(action.proposal_id, role=role, lead=me)
                done = f"Approved: {document_id} is {approval.after}" + (
                    "." if approval.state == "delivered" else "; delivery to memory is pending."
                )
            else:
                curation.reject(action.proposal_id, role=role, lead=me)
                done = f"Rejected: {document_id} stays as it was."
        except CurationInputError as exc:
            field = "your name (the reviewer name field)" if exc.field in ("proposer", "lead") else exc.field
            _refuse(action, f"Not recorded: {field}: {str(exc).split(': ', 1)[1]}")
            return
        except (NotAllowed, Refused) as exc:
            _refuse(action, f"Not recorded: {exc}")
            return
        st.session_state[flash_key] = {"message": done}
        st.rerun()

    return controls


def _refuse(action: CurationAction, message: str) -> None:
    with action.said if action.said is not None else st.container():
        notice(message, ok=False)


def record_controls(bank: str, document_ids: list[str], name_key: str, flash_key: str, key: str) -> None:
    """The same controls for evidence drawn as a table (a ticket's records): pick a record, then curate it."""
    if not document_ids:
        return
    st.subheader("Curate a record used")
    chosen = st.selectbox(
        "Record",
        document_ids,
        key=key,
        help="Propose retiring a record that is wrong, outdated, another customer's or a duplicate.",
    )
    card_controls(bank, [chosen], name_key, flash_key)(chosen)
