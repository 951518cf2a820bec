"""Vouching on the Audit page, beside the curation log: the page's side of dashboard.origin.vouching, with the same
role checks as `python -m dashboard vouch` (the service checks them right before it writes). The person is the
signed-in user or the name typed in the section's own field. A confirmation reads the documents it covers from the
bank now, and makes the bank's cached recalls be made again."""

from __future__ import annotations

import streamlit as st

from components.vouching import VouchAction, render_vouching
from components.workflow import notice
from dashboard.app import access, resources
from dashboard.origin.vouching import Vouch, Vouching, in_bank
from dashboard.review.freshness import EVERYTHING
from dashboard.store.errors import NotAllowed, Refused, VouchInputError

NAME_KEY, FLASH_KEY = "vouch_name", "vouch_flash"
FIELDS = {
    "proposer": "your name",
    "lead": "your name",
    "document": "document",
    "before": "written before",
    "reason": "reason",
    "bank": "memory bank",
}


@st.cache_resource
def _vouching() -> Vouching:
    return Vouching(resources.outbox().engine)


def section() -> None:
    """Draw the section; record what a lead asked, then rerun with its confirmation (or say why it was refused)."""
    vouching, settings = _vouching(), resources.settings()
    flash = st.session_state.pop(FLASH_KEY, None)
    if flash:
        notice(flash)
    banks = list(dict.fromkeys([settings.finance_bank, settings.support_bank]))
    signed_in = access.signed_in() is not None or access.login_configured()
    action = render_vouching(
        vouching.history(), banks, can_vouch=access.can("vouch"), name_key=None if signed_in else NAME_KEY
    )
    if action is None:
        return
    try:
        done = _record(vouching, action)
    except VouchInputError as exc:
        notice(f"Not recorded: {FIELDS.get(exc.field, exc.field)}: {exc.problem}", ok=False)
        return
    except (NotAllowed, Refused) as exc:
        notice(f"Not recorded: {exc}", ok=False)
        return
    st.session_state[FLASH_KEY] = _said(done)
    st.rerun()


def _record(vouching: Vouching, action: VouchAction) -> Vouch:
    role, me = access.current_role(), access.reviewer(NAME_KEY).person or ""
    if action.step == "propose":
        if action.document and resources.gateway().document(action.bank, action.document) is None:
            raise VouchInputError("document", f"{action.document} is not a document of bank {action.bank}")
        return vouching.propose(
            action.bank,
            role=role,
            proposer=me,
            reason=action.reason,
            document_id=action.document or None,
            written_before=action.before,
        )
    if action.step == "confirm":
        done = vouching.confirm(action.vouch_id, role=role, confirmer=me, documents_of=in_bank(resources.gateway()))
        resources.freshness().bump(done.bank_id, EVERYTHING)  # recalls judged before the vouch are made again
        return done
    return vouching.refuse(action.vouch_id, role=role, refuser=me)


def _said(v: Vouch) -> str:
    if v.state == "proposed":
        return f"Proposed: vouch #{v.id} for {v.covers} waits for another lead."
    if v.state == "confirmed":
        return f"Confirmed: vouch #{v.id}; {v.documents} document(s) of {v.bank_id} now of known origin ({v.by})."
    return f"Refused: vouch #{v.id}; nothing changes."
