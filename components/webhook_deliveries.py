"""The webhook delivery log on the Audit page: each final decision told to its kind's webhook, its attempts and the
latest answer, and a lead's redeliver. Plain values in, the lead's choice out; the caller checks the role and acts.
Case ids and errors are drawn in a table, never as markdown."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.when import local_time
from dashboard.delivery.webhook_target import REFUSED
from dashboard.delivery.webhooks import WebhookDelivery

STATES = {
    "pending": "waiting to be sent",
    "delivered": "received (2xx)",
    "failed": "refused by the receiver",
    "discarded": "discarded",
}


def _answer(line: WebhookDelivery) -> str:
    if (line.last_error or "").startswith(REFUSED):
        return "not sent (inward address)"
    if line.last_status is not None:
        return f"HTTP {line.last_status}"
    return "no answer" if line.attempts else "not tried yet"


def render_webhook_deliveries(log: list[WebhookDelivery], *, can_redeliver: bool) -> int | None:
    """The log, newest first; returns the event a lead asks to send again (under its own idempotency key), or None."""
    refused = [line for line in log if line.state == "failed"]
    st.subheader(f"Webhook deliveries ({len(log)} event{'' if len(log) == 1 else 's'}, {len(refused)} refused)")
    st.caption(
        "Each final decision, told to its kind's webhook with a signed body; a receiver that is down is tried "
        "again (1 s, 2 s, 4 s ... up to 5 min apart) and loses nothing. docs/webhooks.md"
    )
    if not log:
        st.text("No webhook events yet: a kind's webhook_url in the settings turns them on.")
        return None
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "event #": line.event_id,
                    "idempotency key": line.idempotency_key,
                    "kind": line.case_kind,
                    "case": line.case_id,
                    "state": "not sent: its address is refused"
                    if _answer(line).startswith("not sent") and line.state == "failed"
                    else STATES.get(line.state, line.state),
                    "attempts": line.attempts,
                    "last answer": _answer(line),
                    "last error": line.last_error or "",
                    "queued at": local_time(line.created_at),
                    "received at": local_time(line.delivered_at) if line.delivered_at else "",
                    "URL": line.url,
                }
                for line in log
            ]
        ),
        hide_index=True,
        width="stretch",
        key="webhook_log",
    )
    if not can_redeliver:
        st.caption("A lead can send an event again.")
        return None
    first = [*refused, *(line for line in log if line.state != "failed")]  # the refused ones first
    states = {line.event_id: line.state for line in log}
    with st.container(horizontal=True, vertical_alignment="bottom"):
        chosen = st.selectbox(
            "Event",
            [line.event_id for line in first],
            key="webhook_pick",
            format_func=lambda i: f"event #{i} ({STATES.get(states[i], states[i])})",
        )
        if st.button("Redeliver", key="webhook_redeliver", icon=":material/replay:"):
            return chosen
    return None
