"""The Overview's blind-second-review agreement and the agent's calibration, as tables (names shown as plain
cells, never markdown)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.reporting.agreement import Agreement, CalibrationBand, kappa_text


def render_reviewer_agreement(rows: list[Agreement]) -> None:
    st.subheader("Reviewer agreement (blind second review)")
    if not rows:
        st.caption("No case has had a blind second review yet.")
        return
    frame = pd.DataFrame(
        [
            {
                "reviewers": r.pair,
                "cases": r.cases,
                "agreement": f"{r.percent:.0f}%",
                "Cohen's kappa": kappa_text(r.kappa),
            }
            for r in rows
        ]
    )
    st.dataframe(frame, hide_index=True, width="stretch", key="overview_reviewer_agreement")
    st.caption(
        "Cases decided by two reviewers blind to each other; kappa discounts the agreement expected by chance "
        "(n/a: both always gave the same outcome, so chance explains it all)."
    )


def render_calibration(rows: list[CalibrationBand]) -> None:
    st.subheader("Agent calibration")
    if not any(r.decisions for r in rows):
        st.caption("No finance decision yet.")
        return
    frame = pd.DataFrame(
        [
            {
                "agent confidence": r.band,
                "decisions": r.decisions,
                "recommendation kept": "" if r.kept_percent is None else f"{r.kept_percent:.0f}%",
            }
            for r in rows
        ]
    )
    st.dataframe(frame, hide_index=True, width="stretch", key="overview_calibration")
    st.caption(
        "Each exception's standing decision, by the confidence the agent gave its recommendation: kept = approved, not overridden."
    )
