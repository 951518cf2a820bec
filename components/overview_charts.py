"""Overview page pieces: headline numbers and Plotly charts of what reviewers and memory are doing.

Only aggregates are drawn here (counts, ids, codes chosen from fixed lists): no memory text.
"""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboard.reporting.overview import OverviewMetrics
from dashboard.reporting.recall_log import LatencySample

COLORS = {"approved": "#2e7d32", "overridden": "#c62828", "open": "#90a4ae", "decided": "#2e7d32", "pending delivery": "#f9a825",
          "admitted": "#2e7d32", "rejected": "#c62828"}  # fmt: skip


def _layout(fig, height: int = 300):
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend_title_text="")
    return fig


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def render_kpis(m: OverviewMetrics) -> None:
    by_kind = {a.kind: a for a in m.agreement}
    fin, tic = by_kind.get("exception"), by_kind.get("ticket")
    latency = {s.kind: s for s in m.latency}
    two_stage = latency.get("finance two-stage") or latency.get("ticket") or next(iter(latency.values()), None)
    with st.container(horizontal=True):
        st.metric("Decisions in range", m.decisions_in_range, border=True)
        st.metric("Finance agreement", _pct(fin.rate if fin else None), help="Agent recommendation approved as is", border=True)
        st.metric("Ticket drafts approved", _pct(tic.rate if tic else None), help="Approve or edit-and-approve", border=True)
        st.metric("Crowd-outs prevented", m.crowd_out.prevented, help=f"{m.crowd_out.precedents_saved} exact precedent(s) kept", border=True)
        st.metric("Legacy admitted / rejected", f"{m.legacy.admitted} / {m.legacy.rejected}", border=True)
        st.metric("Tagged share", _pct(m.coverage.tagged_share) if m.coverage else "n/a", border=True)
        st.metric("Recall p50", f"{two_stage.p50_ms:.0f} ms" if two_stage else "n/a", help=f"{two_stage.kind} recall, wall time" if two_stage else None, border=True)


def render_queues(m: OverviewMetrics) -> None:
    st.subheader("Queue status")
    rows = [{"queue": q.queue, "status": s, "cases": n} for q in m.queues
            for s, n in (("open", q.open), ("decided", q.decided), ("pending delivery", q.pending_delivery))]  # fmt: skip
    fig = px.bar(pd.DataFrame(rows), x="cases", y="queue", color="status", orientation="h", color_discrete_map=COLORS, text="cases")
    st.plotly_chart(_layout(fig, 220), key="overview_queues", width="stretch")


def render_agreement(m: OverviewMetrics) -> None:
    st.subheader("Agent and reviewer agreement")
    if not m.daily:
        st.info("No decision in this date range yet.", icon=":material/info:")
        return
    rows = [{"day": d.day.isoformat(), "kind": "finance" if d.kind == "exception" else "tickets", "decision": name, "count": n}
            for d in m.daily for name, n in (("approved", d.approved), ("overridden", d.overridden))]  # fmt: skip
    fig = px.bar(pd.DataFrame(rows), x="day", y="count", color="decision", facet_col="kind", color_discrete_map=COLORS, barmode="stack")
    fig.update_xaxes(type="category")
    st.plotly_chart(_layout(fig), key="overview_agreement", width="stretch")
    st.caption("Latest decision per case, by the day it was made: approved = the agent's recommendation (or draft) kept.")


def render_overrides(m: OverviewMetrics) -> None:
    st.subheader("Finance overrides by vendor and reason code")
    if not m.overrides:
        st.info("No finance override in this date range.", icon=":material/info:")
        return
    frame = pd.DataFrame([o.model_dump() for o in m.overrides])
    fig = px.bar(frame, x="vendor", y="count", color="reason_code", barmode="stack")
    fig.update_xaxes(type="category")
    st.plotly_chart(_layout(fig), key="overview_overrides", width="stretch")


def render_crowd_out(m: OverviewMetrics) -> None:
    co = m.crowd_out
    st.subheader("Crowd-outs prevented by the two-stage recall")
    st.caption(
        f"{co.recalled} of {co.cases} queued cases recalled on this server; {co.checked} checked against a single "
        f"any_strict pass. {co.unchecked_pass2_skipped} case(s) had pass 2 skipped (pass 1 filled k): no counterfactual "
        "was computed for them unless the crowd-out check was asked for."
    )
    if not co.per_case:
        st.info("No finance case recalled yet: open cases, or recall the whole queue above.", icon=":material/info:")
        return
    counts = pd.DataFrame(co.per_case)["state"].value_counts().rename_axis("state").reset_index(name="cases")
    fig = px.bar(counts, x="state", y="cases", color="state", text="cases",
                 color_discrete_map={"crowd-out prevented": "#c62828", "no crowd-out": "#2e7d32", "pass 2 skipped, not checked": "#90a4ae"})  # fmt: skip
    st.plotly_chart(_layout(fig, 260), key="overview_crowd", width="stretch")
    with st.expander("Per case"):
        st.dataframe(pd.DataFrame(co.per_case), hide_index=True, width="stretch", key="overview_crowd_cases")


def render_legacy(m: OverviewMetrics) -> None:
    lg = m.legacy
    st.subheader("Legacy records admitted vs rejected")
    st.caption(f"{lg.recalled} of {lg.tickets} tickets recalled on this server. Paths: "
               + (", ".join(f"{k} {v}" for k, v in sorted(lg.paths.items())) or "none yet") + ".")  # fmt: skip
    if not lg.recalled:
        st.info("No ticket recalled yet.", icon=":material/info:")
        return
    rows = [{"verdict": "admitted", "reason": "ownership marker at the start", "records": lg.admitted}]
    rows += [{"verdict": "rejected", "reason": reason.replace("_", " "), "records": n} for reason, n in sorted(lg.rejected_by_reason.items())]
    fig = px.bar(pd.DataFrame(rows), x="verdict", y="records", color="reason", text="records")
    st.plotly_chart(_layout(fig, 260), key="overview_legacy", width="stretch")


def render_coverage(m: OverviewMetrics) -> None:
    st.subheader("Migration coverage (support bank)")
    if m.coverage is None:
        st.info("Coverage unavailable: " + (m.coverage_error or "Hindsight not reachable."), icon=":material/cloud_off:")
        return
    c = m.coverage
    frame = pd.DataFrame([{"records": "tagged", "count": c.tagged}, {"records": "untagged, convertible", "count": c.convertible},
                          {"records": "untagged, stays (failed validation)", "count": c.untagged - c.convertible}])  # fmt: skip
    fig = px.pie(frame, names="records", values="count", hole=0.5, color="records",
                 color_discrete_map={"tagged": "#2e7d32", "untagged, convertible": "#f9a825",
                                     "untagged, stays (failed validation)": "#90a4ae"})  # fmt: skip
    st.plotly_chart(_layout(fig, 260), key="overview_coverage", width="stretch")
    st.caption(f"{c.total} memories, {c.tagged_share:.0%} tagged. "
               + ("Ready to retire the legacy fallback." if c.ready_to_retire_fallback else f"{c.convertible} convertible record(s) left."))  # fmt: skip


def render_latency(m: OverviewMetrics, samples: list[LatencySample]) -> None:
    st.subheader("Recall latency")
    if not samples:
        st.info("No recall measured by this server yet.", icon=":material/info:")
        return
    frame = pd.DataFrame([{"kind": s.kind, "ms": s.ms} for s in samples])
    fig = px.box(frame, x="kind", y="ms", points="all")
    st.plotly_chart(_layout(fig, 280), key="overview_latency", width="stretch")
    st.dataframe(pd.DataFrame([s.model_dump() for s in m.latency]), hide_index=True, width="stretch", key="overview_latency_stats")
    st.caption("Wall time around each recall made by this dashboard server (last 500 per kind; cached answers are not counted).")
