"""Queue workflow pieces shared by the review pages: the table's selection kept on the case shown, the next
unreviewed case after a decision, claims with a lease, age badges against the SLA, comments, the inline
confirmations (never toasts: a toast lies over the form's fields) and the bulk approval's confirmation.

The rules live in dashboard.review (workflow, casework); writes go through the `require` the page passes
(its role check, True when the write may go ahead). Names, comments and holders were typed by people: text elements or `md()` only.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence

import streamlit as st

from components.attention import draw_attention
from components.safe_text import md
from components.when import local_clock, local_time
from dashboard.review.casework import Casework
from dashboard.review.workflow import age_label, next_unreviewed, sla_state
from dashboard.store.identity import Person

SLA_COLORS = {"on time": "gray", "due": "orange", "overdue": "red"}
Require = Callable[[], bool]
REVIEWER_LABEL = "Reviewer name"


def select_case(table_key: str, param: str, ids: Sequence[str], case_id: str) -> None:
    """Point the queue table's row selection and the deep link at `case_id` (call before the table is drawn)."""
    st.session_state[table_key] = {"selection": {"rows": [list(ids).index(case_id)], "columns": [], "cells": []}}
    st.query_params[param] = case_id


def unknown_link(what: str, linked: str, ids: Sequence[str], decided: Container[str], *, goto_key: str) -> None:
    """A deep link to a case the queue does not hold: said once, with the way on (the first unreviewed case,
    opened by the next run through `keep_selection`, before the table is drawn)."""
    st.warning(md(f"No {what} {linked!r} in the queue (or it is filtered out)."), icon=":material/link_off:")
    first = next_unreviewed(list(ids), None, decided)
    if first is not None and st.button(
        f"Open {first}, the first unreviewed {what}", key=f"{goto_key}_first", type="primary"
    ):
        st.session_state[goto_key] = first
        st.rerun()


def selected_rows(table_key: str) -> list[int]:
    state = st.session_state.get(table_key) or {}
    return list((state.get("selection") or {}).get("rows") or [])


def keep_selection(
    table_key: str, param: str, ids: Sequence[str], decided: Container[str], goto_key: str, *, open_first: bool = True
) -> None:
    """Before the table is drawn: apply a pending move (auto-advance), else highlight the deep-linked case,
    else (`open_first`) open the first unreviewed case, so the row, the address bar and the case shown agree."""
    goto = st.session_state.pop(goto_key, None)
    if goto in ids:
        select_case(table_key, param, ids, goto)
        return
    rows = selected_rows(table_key)
    if rows and 0 <= rows[0] < len(ids):
        return
    linked = st.query_params.get(param)
    if linked in ids:
        select_case(table_key, param, ids, linked)
    elif not linked and ids and open_first:
        select_case(table_key, param, ids, next_unreviewed(ids, None, decided) or ids[0])


def auto_advance_toggle() -> None:
    st.toggle("Open the next unreviewed case after a decision", value=True, key="auto_advance")


def age_badge(age_days: int, sla_days: int) -> None:
    state = sla_state(age_days, sla_days)
    st.badge(age_label(age_days, sla_days), color=SLA_COLORS[state], icon=":material/schedule:")


def notice(message: str, ok: bool = True) -> None:
    """A confirmation or a refusal, inline where it is called: beside the form, covering nothing (escaped: it may hold names)."""
    (st.success if ok else st.error)(md(message), icon=":material/check_circle:" if ok else ":material/block:")


class Slot:
    """The place for what an action says, next to the control that caused it (a keyed container, so the browser
    can bring it into view): a refusal there is scrolled into the viewport and the field to fix is focused."""

    def __init__(self, key: str):
        self.key = key
        self.box = st.container(key=key)

    def refuse(self, message: str, *, focus: str | None = None) -> None:
        with self.box:  # the browser step inside the box too: an element added beside it would shift what follows
            notice(message, ok=False)
            draw_attention(scroll_to=self.key, focus=focus, key=f"{self.key}_attention")


def flash(key: str, slot: Slot | None = None) -> None:
    """Show the confirmation a previous run left before its rerun, with what was decided (the note in full), in
    `slot` (else here); when the page moved on to the next case, it is scrolled to its top to show it."""
    pending = st.session_state.pop(key, None)
    if not pending:
        return
    with slot.box if slot is not None else st.container():
        delivered = pending.get(
            "ok", True
        )  # not ok: recorded, but not in memory yet (or nothing recorded in a bulk approval)
        (st.success if delivered else st.warning)(
            md(pending["message"]), icon=":material/check_circle:" if delivered else ":material/schedule:"
        )
        if pending.get("details"):
            st.text(pending["details"])
        if pending.get("error"):
            st.text(f"Delivery error: {pending['error']}")
        if pending.get("top"):  # inside the box: an element added beside it would shift (and double) what follows
            draw_attention(top=True, key=f"{key}_attention")


def reviewer_field(me, key: str) -> None:
    """Who acts (`me`: who the app says acts): the signed-in user, else a name field, in the case's header beside the
    claim: the accept key, the claim and the form all record under it."""
    if me.signed_in:
        st.text(f"Recorded as {me.name} (signed in)")
        return
    st.text_input(
        REVIEWER_LABEL,
        key=key,
        max_chars=120,
        width=260,
        label_visibility="collapsed",
        placeholder="Your reviewer name (required)",
    )


def claim_controls(
    casework: Casework,
    bank: str,
    kind: str,
    case_id: str,
    me: Person | None,
    require: Require,
    *,
    cannot_claim: str | None = None,
) -> bool:
    """Who holds the case, with Claim / Release; returns True when `me` may decide it (nobody else holds it).
    `cannot_claim`: why `me` may not claim it (the first reviewer of a case under blind second review: their claim
    would name them to the second reviewer)."""
    held = casework.holder_of(bank, kind, case_id)
    with st.container(horizontal=True, vertical_alignment="center", key=f"claim_{kind}"):
        if held is not None and not (me is not None and held.held_by(me)):
            st.warning(
                f"Claimed by {md(held.holder)} until {local_clock(held.expires_at)}: only they can decide it now.",
                icon=":material/lock:",
            )
            return False
        if held is not None:
            st.badge(f"Yours until {local_clock(held.expires_at)}", color="green", icon=":material/person:")
            if st.button("Release", key=f"release_{kind}", icon=":material/lock_open:") and require():
                casework.release(bank, kind, case_id, me)
                st.rerun()
            return True
        why_not = "Type your reviewer name first" if me is None else cannot_claim
        if (
            st.button(
                "Claim",
                key=f"claim_{kind}_button",
                icon=":material/front_hand:",
                disabled=why_not is not None,
                help=why_not or "Hold this case so nobody else decides it meanwhile",
            )
            and require()
        ):
            now_held = casework.claim(bank, kind, case_id, me)
            if now_held.held_by(me):
                st.rerun()
            notice(f"{now_held.holder} claimed this case first.", ok=False)
            return False
    return True


def my_queue_filter(casework: Casework, bank: str, kind: str, me: str | None, key: str) -> set[str] | None:
    """The "my queue" toggle: the ids `me` holds when it is on, else None (show everything)."""
    on = st.toggle("My queue", key=key, disabled=me is None, help="Only the cases you have claimed")
    if not on or me is None:
        return None
    return {case_id for case_id, holder in casework.live_claims(bank, kind).items() if holder == me}


def render_comments(
    casework: Casework,
    bank: str,
    kind: str,
    case_id: str,
    me: Person | None,
    require: Require,
    *,
    hidden: str | None = None,
) -> None:
    """The case's comments and a box to add one. `hidden`: why the comments are not shown (a blind second review:
    a comment names its author, who may have made the first decision)."""
    notes = [] if hidden else casework.comments(bank, kind, case_id)
    with st.expander(
        "Comments" if hidden else f"Comments ({len(notes)})", icon=":material/forum:", expanded=bool(notes or hidden)
    ):
        if hidden:
            st.caption(hidden)
        for note in notes:
            st.text(f"{note.author}, {local_time(note.created_at)}")
            st.text(note.body)  # typed by a person: literal text, wrapped
        with st.form(key=f"comment_form_{kind}_{case_id}", clear_on_submit=True, border=False):
            body = st.text_area("Add a comment", max_chars=4000, key=f"comment_body_{kind}")
            sent = st.form_submit_button(
                "Comment",
                icon=":material/send:",
                disabled=me is None,
                help="Type your reviewer name first" if me is None else None,
            )
        if sent:
            if not body.strip():
                notice("An empty comment was not saved.", ok=False)
            elif require():
                casework.comment(bank, kind, case_id, me, body.strip())
                st.rerun()


@st.dialog("Accept these recommendations?")
def confirm_bulk(lines: dict[str, str], confirm_key: str) -> None:
    """One confirmation for a bulk acceptance (`lines`: case id -> what is accepted). The confirmed ids go to
    `st.session_state[confirm_key]`; the page records each decision on its own after the rerun."""
    st.text(
        f"Each of these {len(lines)} case(s) gets its own decision, recorded as accepting the agent's recommendation:"
    )
    st.text("\n".join(lines.values()))
    if st.button(f"Accept all {len(lines)}", key=f"{confirm_key}_yes", type="primary", icon=":material/done_all:"):
        st.session_state[confirm_key] = list(lines)
        st.rerun()
