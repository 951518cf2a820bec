"""Vouching on a page: the proposals waiting for a second lead, a lead's proposal form, and every vouch so far.

Plain values in, the lead's action out; the caller checks the role and records it (dashboard.origin.vouching). Names,
reasons, banks and document ids were typed by people: drawn with st.text or in a table, never as markdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time

import pandas as pd
import streamlit as st

from dashboard.origin.vouching import Vouch

ONE, BEFORE = "one document", "every document the server wrote before a time"


@dataclass(frozen=True)
class VouchAction:
    step: str  # propose | confirm | refuse
    bank: str = ""
    document: str | None = None
    before: datetime | None = None
    reason: str = ""
    vouch_id: int | None = None


def render_vouching(
    vouches: list[Vouch], banks: list[str], *, can_vouch: bool, name_key: str | None
) -> VouchAction | None:
    """The vouching part of a page, beside the curation log; `name_key`: the lead's name field (None when signed in)."""
    waiting = [v for v in vouches if v.state == "proposed"]
    title = f"Vouching for records of unknown origin ({len(waiting)} waiting for a second lead)"
    with st.expander(title, icon=":material/verified_user:", expanded=bool(waiting)):
        st.caption(
            "A record nobody here wrote informs a recommendation but never decides it. After reviewing such records, "
            "a lead proposes vouching for them; another lead confirms or refuses. Confirmed, they are of known origin."
        )
        if name_key is not None:
            st.text_input("Your name (lead)", key=name_key, max_chars=120, width=260)
        for v in waiting:
            st.text(
                f"Vouch #{v.id}: {v.covers}. Proposed by {v.proposed_by} on {v.proposed_at:%Y-%m-%d %H:%M} UTC. Reason: {v.reason}"
            )
            with st.container(horizontal=True):
                if st.button(
                    "Confirm", key=f"vouch_{v.id}_confirm", disabled=not can_vouch, icon=":material/done_all:"
                ):
                    return VouchAction("confirm", vouch_id=v.id)
                if st.button("Refuse", key=f"vouch_{v.id}_refuse", disabled=not can_vouch, icon=":material/block:"):
                    return VouchAction("refuse", vouch_id=v.id)
        if not can_vouch:
            st.caption("Only a lead proposes, confirms or refuses vouching.")
        else:
            action = _form(banks)
            if action is not None:
                return action
        if vouches:
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "vouch #": v.id,
                            "covers": v.covers,
                            "state": v.state,
                            "proposed by": v.proposed_by,
                            "proposed at": f"{v.proposed_at:%Y-%m-%d %H:%M}",
                            "settled by": v.settled_by or "",
                            "documents": v.documents if v.documents is not None else "",
                            "reason": v.reason,
                        }
                        for v in vouches
                    ]
                ),
                hide_index=True,
                width="stretch",
                key="vouch_log",
            )
    return None


def _form(banks: list[str]) -> VouchAction | None:
    with st.form("vouch_form", border=True):
        st.text("Propose vouching")
        bank = st.selectbox("Memory bank", banks, key="vouch_bank")
        scope = st.radio("Vouch for", [ONE, BEFORE], key="vouch_scope", horizontal=True)
        document = st.text_input("Document (for one document)", key="vouch_document")
        with st.container(horizontal=True):
            day = st.date_input("Written before, day (UTC)", value=None, key="vouch_day")
            at = st.time_input("time (UTC)", value=time(0, 0), key="vouch_time")
        # No max_chars: a longer paste is refused on submit, naming the field, and kept in the box.
        reason = st.text_area(
            "What you reviewed, and why the records can be trusted (at most 500 characters)", key="vouch_reason"
        )
        if not st.form_submit_button("Propose vouching", icon=":material/send:", key="vouch_propose"):
            return None
    if scope == ONE:
        return VouchAction("propose", bank=bank or "", document=document.strip() or "", reason=reason)
    before = datetime.combine(day, at or time(0, 0), tzinfo=UTC) if day is not None else None
    return VouchAction("propose", bank=bank or "", before=before, reason=reason)
