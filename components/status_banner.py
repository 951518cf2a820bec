"""The banner every page shows: Hindsight unreachable, decisions waiting for delivery, parked deliveries."""

from __future__ import annotations

import re
from collections.abc import Callable

import streamlit as st

from components.safe_text import md


def render_status_banner(
    error: str | None, base_url: str, pending: int, deliver_now: Callable[[], None] | None, failed: int = 0
) -> None:
    """`error`: why Hindsight is unreachable (None when it answers); `deliver_now` runs on the button (None: no button)."""
    if error:
        st.warning(
            f"Hindsight at {md(base_url)} is unreachable: recalls and traces cannot load. "
            "Queues, decisions and the audit log still work: a decision is saved in the review store and "
            "delivered when Hindsight is back.",
            icon=":material/cloud_off:",
        )
    if pending:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.info(
                f"{pending} decision(s) saved and waiting for delivery to Hindsight.", icon=":material/schedule_send:"
            )
            if deliver_now is not None and st.button("Deliver now", key="deliver_now", icon=":material/send:"):
                deliver_now()
                st.rerun()
    if failed:
        st.error(
            f"{failed} decision(s) were refused by Hindsight and are parked: a lead can retry or discard them on the "
            "Audit log page.",
            icon=":material/report:",
        )


def render_evidence_unavailable(base_url: str, error: Exception) -> None:
    """A case's recall failed: its decision form still works, and the decision is delivered later."""
    st.warning(
        f"Evidence is unavailable: the recall from Hindsight at {md(base_url)} failed. You can still record "
        "a decision; it is saved in the review store and delivered when Hindsight is back.",
        icon=":material/cloud_off:",
    )
    st.text(plain_error(error))


# "HindsightRequestRejected: query: ..." -> "query: ...": a stored message may still start with a class name.
_CLASS_PREFIX = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z][A-Za-z0-9]*(?:Error|Exception|Unavailable|Rejected|Refused|Timeout)\s*:\s*"
)


def plain_error(error: BaseException | str) -> str:
    """The message of an error for a person: never `ClassName: ...`, never empty."""
    text = _CLASS_PREFIX.sub("", str(error).strip())
    if text:
        return text
    return "no message was given"
