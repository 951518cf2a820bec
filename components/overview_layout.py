"""The Overview's panels below its headline, in two columns: queues, held cases, recommendations, overrides and
legacy records on the left; agreement, reviewers' agreement and calibration, crowd-outs, incidents, trust and
coverage on the right; recall latency across. Plain values in, nothing read here."""

from __future__ import annotations

import streamlit as st

from components import overview_charts as charts
from components.review_agreement import render_calibration, render_reviewer_agreement


def render_overview(metrics, agreements, calibration, latencies) -> None:
    charts.render_kpis(metrics)
    left, right = st.columns(2)
    with left:
        charts.render_queues(metrics)
        charts.render_held(metrics)
        charts.render_recommendations(metrics)
        charts.render_overrides(metrics)
        charts.render_legacy(metrics)
    with right:
        charts.render_agreement(metrics)
        render_reviewer_agreement(agreements)
        render_calibration(calibration)
        charts.render_crowd_out(metrics)
        charts.render_incidents(metrics)
        charts.render_trust(metrics)
        charts.render_coverage(metrics)
    charts.render_latency(metrics, latencies)
