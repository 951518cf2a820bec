"""Times as a person reads them: in the viewer's own time zone (the browser's), e.g. "2 Dec 2026, 15:03 CET",
never a raw ISO string. The review store keeps UTC; without a browser (AppTest, a script) times show in UTC."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import streamlit as st


def _viewer_zone():
    try:
        return ZoneInfo(st.context.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def _local(moment: datetime) -> datetime:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(_viewer_zone())  # naive: UTC, as stored


def local_time(moment: datetime) -> str:
    """`moment` in the viewer's time zone: "2 Dec 2026, 15:03 CET"."""
    local = _local(moment)
    return f"{local_day(local.date())}, {local_clock(local)}"


def local_clock(moment: datetime) -> str:
    """Only the hour of `moment` in the viewer's time zone ("15:03 CET"): for a lease that ends today."""
    local = _local(moment)
    return f"{local:%H:%M} {local.tzname()}"


def local_day(day: date) -> str:
    """A calendar day as people write it: "2 Dec 2026"."""
    return f"{day.day} {day:%b %Y}"
