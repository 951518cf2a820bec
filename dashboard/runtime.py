"""Streamlit-side wiring: one cached settings object and Hindsight gateway per server process."""

from __future__ import annotations

import streamlit as st

from dashboard.hindsight_gateway import HindsightGateway, HindsightUnavailable
from dashboard.outbox import DeliveryReport, Outbox
from dashboard.recall_log import RecallLog
from dashboard.settings import Settings, load_settings


@st.cache_resource
def settings() -> Settings:
    return load_settings()


@st.cache_resource
def gateway() -> HindsightGateway:
    s = settings()
    return HindsightGateway(s.base_url, s.api_key)


@st.cache_resource
def outbox() -> Outbox:
    return Outbox(settings().data_dir / "decisions.sqlite3")


@st.cache_resource
def recall_log() -> RecallLog:
    """Recall wall times (last 500 per kind) and the latest result per case, for the Overview page."""
    return RecallLog()


@st.cache_data(ttl=5, show_spinner=False)
def connection_error() -> str | None:
    """None when Hindsight answers healthy; otherwise what is wrong. Re-checked every 5 s."""
    try:
        answer = gateway().health()
    except HindsightUnavailable as exc:
        return str(exc)
    return None if answer.get("status") == "healthy" else f"Hindsight reports: {answer}"


def deliver_pending() -> DeliveryReport | None:
    """Drain decisions waiting for Hindsight when it is reachable; cheap when nothing is due."""
    box = outbox()
    if connection_error() is not None or box.pending_count() == 0:
        return None
    report = box.deliver_due(gateway().retain)
    if report.error:
        connection_error.clear()
    if report.delivered:
        # Late deliveries change what the next recall finds: drop every cached recall (outages are rare).
        from dashboard.finance_runtime import recall_cache  # imported here: finance_runtime imports this module

        recall_cache().clear()
        st.cache_data.clear()
    return report
