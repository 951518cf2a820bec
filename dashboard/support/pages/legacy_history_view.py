"""A ticket's legacy history the recall left out (with the one-customer migration), and the actions on
one record: flag it for review, tag it for this customer.

These pieces draw and collect; they never write. They return what the person asked for, and the page
checks the role right before it writes. Memory text, document ids, names and notes are untrusted: they
are drawn with st.text only, wrapped in full.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st
from pydantic import BaseModel

from components.when import local_time
from dashboard.review.casework import Comment
from dashboard.support.legacy_history import NotConsulted, RecordRow
from dashboard.support.pages.admission_view import record_card

CONFIRM = "I have checked these records"
ACTIONS_LABEL = "One record: read it in full, flag it for review, or tag it for this customer"


class RecordAction(BaseModel):
    kind: Literal["flag", "tag"]
    record: RecordRow
    author: str = ""
    note: str = ""


def render_not_consulted(skipped: NotConsulted | None, *, can_migrate: bool, key: str) -> bool:
    """True when a lead asked (and confirmed) to migrate this customer's legacy records."""
    if skipped is None:
        return False
    if not skipped.count:
        st.text("This customer has no old untagged record left out.")
        return False
    st.warning(skipped.sentence(), icon=":material/history:")
    migratable = {c.document_id for c in skipped.migratable}
    for c in skipped.records:
        record_card(
            c.document_id or "(no document id)",
            "can be migrated" if c.document_id in migratable else "cannot be migrated",
            c.reason,
            c.text,
        )
    if skipped.not_migratable:
        st.text(
            f"{len(skipped.not_migratable)} of them cannot be migrated: the migration needs a document id and a customer of the directory."
        )
    if not can_migrate:
        st.text("A lead can migrate them: they are then tagged for this customer and used by the next recall.")
        return False
    with st.form(f"{key}_migrate"):
        st.text(
            f"Migrate tags the {len(skipped.migratable)} record(s) marked above for {skipped.customer}, as the Migration page "
            "does: each is stored again under the same document id with the customer's tag, replacing the untagged copy. "
            "Records are counted before and after."
        )
        confirmed = st.checkbox(CONFIRM, key=f"{key}_migrate_confirm")
        clicked = st.form_submit_button(
            "Migrate this customer's legacy records",
            type="primary",
            icon=":material/sell:",
            disabled=not skipped.migratable,
        )
    if clicked and not confirmed:
        st.error(f"Tick '{CONFIRM}' first.")
        return False
    return clicked


def render_record_actions(
    rows: list[RecordRow],
    flags: dict[str, list[Comment]],
    *,
    can_flag: bool,
    can_tag: bool,
    signed_in: str | None,
    key: str,
) -> RecordAction | None:
    """Pick one record; see its full text, why it stands where it does and its flags; flag it or tag it."""
    if not rows:
        return None
    with st.expander(ACTIONS_LABEL):
        return _record_actions(rows, flags, can_flag=can_flag, can_tag=can_tag, signed_in=signed_in, key=key)


def _record_actions(
    rows: list[RecordRow],
    flags: dict[str, list[Comment]],
    *,
    can_flag: bool,
    can_tag: bool,
    signed_in: str | None,
    key: str,
) -> RecordAction | None:
    by_key = {r.key: r for r in rows}
    chosen = st.selectbox(
        "Record",
        list(by_key),
        key=f"{key}_record",
        format_func=lambda k: f"{k} · {by_key[k].where}" + (" · flagged" if k in flags else ""),
    )
    record = by_key[chosen]
    st.text(f"{record.key}: {record.where}\nWhy: {record.reason}\nTags: {', '.join(record.tags) or '(untagged)'}")
    st.text(record.text)
    for flag in flags.get(record.key, []):
        st.text(f"Flag by {flag.author} on {local_time(flag.created_at)}: {flag.body}")
    if not can_flag:
        return None
    with st.form(f"{key}_record_form"):
        author = signed_in
        if signed_in is None:
            author = st.text_input(
                "Your name (required; recorded as unauthenticated)", key=f"{key}_record_author", max_chars=120
            )
        note = st.text_area("Note (optional, with a flag)", key=f"{key}_record_note", max_chars=1000)
        with st.container(horizontal=True):
            flag = st.form_submit_button("Flag for review", icon=":material/flag:")
            tag = st.form_submit_button(
                "Tag for this customer",
                icon=":material/sell:",
                disabled=not can_tag,
                help=None if can_tag else "Needs the lead role",
            )
    if flag:
        return RecordAction(kind="flag", record=record, author=author or "", note=note)
    if tag:
        return RecordAction(kind="tag", record=record, author=author or "")
    return None
