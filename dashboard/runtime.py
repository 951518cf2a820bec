"""Streamlit-side wiring: one cached settings object and Hindsight gateway per server process."""

from __future__ import annotations

import streamlit as st

from dashboard.hindsight_gateway import HindsightGateway
from dashboard.outbox import Outbox
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
