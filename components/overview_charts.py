"""Overview page pieces: headline numbers and Plotly charts of what reviewers and memory are doing.

Only aggregates are drawn here (counts, ids, codes chosen from fixed lists): no memory text. The figures are built
with plotly's graph objects, not plotly express: express builds each through a data frame and subplots, ~50 ms a
chart, ~0.35 s of every Overview run (profiled at 100,000 cases).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from components.safe_text import md
from components.admission import plain_verdict
from components.when import local_day
from dashboard.reporting.overview import MISSED, OverviewMetrics, age_words, crowd_out_states, headline, incident_label
from dashboard.reporting.recall_log import LatencySample

COLORS = {"approved": "#2e7d32", "overridden": "#c62828", "open": "#90a4ae", "decided": "#2e7d32", "pending delivery": "#f9a825",
          "admitted": "#2e7d32", "rejected": "#c62828", "approve": "#2e7d32", "reject": "#c62828", "escalate": "#f9a825"}
KIND_TITLES = {"exception": "Finance exceptions", "ticket": "Support tickets"}
RECALL_NAMES = {"finance": "a finance exception's precedents", "ticket": "a support ticket's history", "trace": "a trace"}
PATHS = {"tagged": "tagged history", "legacy": "old records", "none": "none"}


def _bars(series: dict[str, tuple[Sequence, Sequence]], *, horizontal: bool = False, colors: dict[str, str] = COLORS,
          text: bool = True, fig: go.Figure | None = None, **where) -> go.Figure:
    """Stacked bars, one trace per series name: {name: (categories, counts)}; `where` places them in a subplot."""
    fig = fig or go.Figure()
    for name, (categories, counts) in series.items():
        x, y = (counts, categories) if horizontal else (categories, counts)
        fig.add_bar(x=x, y=y, name=name, orientation="h" if horizontal else "v", marker_color=colors.get(name),
                    text=list(counts) if text else None, legendgroup=name, **where)
    return fig.update_layout(barmode="stack")


def _by(rows: list[dict], series: str, category: str, count: str) -> dict[str, tuple[list, list]]:
    """{series value: (categories, counts)} from rows, in the rows' order."""
    out: dict[str, tuple[list, list]] = {}
    for r in rows:
        cats, counts = out.setdefault(r[series], ([], []))
        cats.append(r[category])
        counts.append(r[count])
    return out


def _layout(fig, height: int = 300):
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend_title_text="")
    return fig

def _counts(fig, largest: float, axis: str = "y"):
    """Counts have whole-number ticks: one per unit up to 10, then Plotly's own (whole) steps."""
    settings = {"tickformat": "d", "rangemode": "tozero"}
    if largest <= 10:
        settings.update(tick0=0, dtick=1)
    (fig.update_yaxes if axis == "y" else fig.update_xaxes)(**settings)
    return fig

def _pct(value: float | None) -> str:
    return "no decision yet" if value is None else f"{value:.0%}"

def render_headline(m: OverviewMetrics) -> None:
    st.subheader(md(headline(m)))

def render_kpis(m: OverviewMetrics) -> None:
    by_kind = {a.kind: a for a in m.agreement}
    fin, tic = by_kind.get("exception"), by_kind.get("ticket")
    co, lg, inc = m.crowd_out, m.legacy, m.incidents
    with st.container(horizontal=True):
        st.metric("Decisions in range", m.decisions_in_range, border=True)
        st.metric("Finance agreement", _pct(fin.rate if fin else None), help="Agent recommendation approved as is", border=True)
        st.metric("Ticket drafts approved", _pct(tic.rate if tic else None), help="Approve or edit-and-approve", border=True)
        st.metric("Exceptions where a plain search misses precedents", co.prevented, border=True,
                  help=f"A plain search over this vendor or this type would have missed {co.precedents_saved} exact precedent(s) "
                       f"in them; the two searches kept them. {co.checked} of {co.cases} exceptions checked")
        st.metric("Old untagged records used / not used", f"{lg.admitted} / {lg.rejected}", help="Each record counted once, however many tickets judged it", border=True)
        st.metric("Cases with incidents", inc.cases if inc.checked else "not checked",
                  help=f"Of {inc.checked} cases whose agent runs were checked; a case can have several incidents (the Incidents page lists each)",
                  border=True)
        st.metric("Tagged share", _pct(m.coverage.tagged_share) if m.coverage else "unavailable", border=True)
        cu = m.curation
        st.metric("Curation proposed / approved / reverted", f"{cu.proposals} / {cu.approvals} / {cu.reverts}", border=True,
                  help=f"Documents retired from recall by four-eyes curation; {cu.rejections} proposal(s) rejected; reverts are approvals too")

def render_queues(m: OverviewMetrics) -> None:
    st.subheader("Queue status")
    rows = [{"queue": q.queue, "status": s, "cases": n} for q in m.queues
            for s, n in (("open", q.open), ("decided", q.decided), ("pending delivery", q.pending_delivery))]
    fig = _bars(_by(rows, "status", "queue", "cases"), horizontal=True).update_xaxes(title_text="cases")
    _counts(fig, max((q.total for q in m.queues), default=0), axis="x")
    st.plotly_chart(_layout(fig, 220), key="overview_queues", width="stretch")

def render_approvals_waiting(m: OverviewMetrics) -> None:
    """Decisions above their reviewer's approval limit, waiting for a second approver, oldest first."""
    st.subheader("Approvals waiting")
    if not m.approvals_waiting:
        st.caption("No decision is waiting for a second approver.")
        return
    if m.approvals_waiting_total > len(m.approvals_waiting):
        st.caption(f"The {len(m.approvals_waiting)} oldest of {m.approvals_waiting_total} decisions waiting for a second approver.")
    rows = [{"case": w.case_id, "decided by": w.proposer, "outcome": w.outcome, "amount": w.amount,
             "their limit": w.limit, "waiting for": age_words(w.age_hours)} for w in m.approvals_waiting]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="overview_approvals",
                 column_config={"amount": st.column_config.NumberColumn(format="%.2f"), "their limit": st.column_config.NumberColumn(format="%.2f")})


def render_agreement(m: OverviewMetrics) -> None:
    st.subheader("Agent and reviewer agreement")
    if not m.daily:
        st.caption("No decision in this date range yet.")
        return
    queues = list(dict.fromkeys(KIND_TITLES.get(d.kind, d.kind) for d in m.daily))
    fig = make_subplots(rows=1, cols=len(queues), subplot_titles=queues, shared_yaxes=True, horizontal_spacing=0.04)
    for col, queue in enumerate(queues, start=1):
        rows = [{"day": local_day(d.day), "decision": name, "decisions": n}
                for d in m.daily if KIND_TITLES.get(d.kind, d.kind) == queue for name, n in (("approved", d.approved), ("overridden", d.overridden))]
        _bars(_by(rows, "decision", "day", "decisions"), text=False, fig=fig, row=1, col=col)
    fig.for_each_trace(lambda t: t.update(showlegend=t.xaxis in ("x", None)))  # one legend entry per decision
    fig.update_xaxes(type="category").update_yaxes(title_text="decisions", col=1)
    _counts(fig, max((d.approved + d.overridden for d in m.daily), default=0))
    st.plotly_chart(_layout(fig), key="overview_agreement", width="stretch")
    st.caption("Latest decision per case, by the day it was made: approved = the agent's recommendation (or draft) kept.")

def render_overrides(m: OverviewMetrics) -> None:
    st.subheader("Finance overrides by vendor and reason code")
    if not m.overrides:
        st.caption("No finance override in this date range.")
        return
    rows = [o.model_dump() for o in m.overrides]
    fig = _bars(_by(rows, "reason_code", "vendor", "count"), text=False, colors={})
    fig.update_xaxes(type="category", title_text="vendor").update_yaxes(title_text="overrides").update_layout(showlegend=True)  # the reasons, even one
    per_vendor: dict[str, int] = {}
    for o in m.overrides:
        per_vendor[o.vendor] = per_vendor.get(o.vendor, 0) + o.count
    _counts(fig, max(per_vendor.values()))
    st.plotly_chart(_layout(fig), key="overview_overrides", width="stretch")

def render_crowd_out(m: OverviewMetrics) -> None:
    co = m.crowd_out
    st.subheader("Exact precedents a plain search would have missed")
    st.caption(
        f"{co.recalled} of {co.cases} queued cases measured; {co.checked} checked against a plain single search over this vendor or this type. "
        f"{co.unchecked_pass2_skipped} case(s) were not checked: their exact precedents alone filled the list, so the wider search never ran."
    )
    if not co.recalled:
        st.caption("No finance case measured yet.")
        return
    states = crowd_out_states(co)
    fig = _bars({state: ([state], [n]) for state, n in states.items()},
                colors={MISSED: "#c62828", "a plain search misses none": "#2e7d32", "not checked": "#90a4ae"})
    fig.update_yaxes(title_text="cases")
    _counts(fig, max(states.values()))
    st.plotly_chart(_layout(fig, 260).update_layout(showlegend=False), key="overview_crowd", width="stretch")
    if co.missed_cases:
        with st.expander(f"The cases a plain search misses ({len(co.missed_cases)} of {co.prevented}, most precedents lost first)"):
            st.dataframe(pd.DataFrame(co.missed_cases), hide_index=True, width="stretch", key="overview_crowd_cases")

def render_recommendations(m: OverviewMetrics) -> None:
    co = m.crowd_out
    st.subheader("What the agent recommends on the queue")
    if not co.recommendations:
        st.caption("No finance case measured yet.")
        return
    fig = _bars({a: ([a], [n]) for a, n in sorted(co.recommendations.items())}, horizontal=True).update_xaxes(title_text="cases")
    _counts(fig, max(co.recommendations.values()), axis="x")
    st.plotly_chart(_layout(fig, 200).update_layout(showlegend=False), key="overview_recommendations", width="stretch")
    st.caption(f"{co.no_relevant} case(s) have no relevant precedent: the agent escalates them.")

def render_legacy(m: OverviewMetrics) -> None:
    lg = m.legacy
    st.subheader("Old untagged records: used vs not used")
    st.caption(f"{lg.recalled} of {lg.tickets} tickets measured. History used: "
               + (", ".join(f"{PATHS.get(k, k)} {v}" for k, v in sorted(lg.paths.items())) or "none yet")
               + f". Each untagged record counted once; {lg.tagged_candidates} tagged record(s) of other customers "
               "also came up in the search of old records and were never used.")
    if not lg.recalled:
        return
    rows = [{"verdict": "used", "reason": "names this customer first", "records": lg.admitted}]
    rows += [{"verdict": "not used", "reason": plain_verdict(reason).removeprefix("not used: "), "records": n} for reason, n in sorted(lg.rejected_by_reason.items())]
    fig = _bars(_by(rows, "reason", "verdict", "records"), colors={}).update_yaxes(title_text="records")
    _counts(fig, max(lg.admitted, lg.rejected))
    st.plotly_chart(_layout(fig, 260), key="overview_legacy", width="stretch")

def render_incidents(m: OverviewMetrics) -> None:
    inc = m.incidents
    st.subheader("Incidents in the agents' recalls")
    if not inc.checked:
        st.caption("The agents' runs were not checked for incidents yet (the Incidents page checks them).")
        return
    st.caption(f"{inc.cases} of {inc.checked} cases with agent runs have an incident (from {inc.agent_runs} agent runs and "
               f"{inc.audited_recalls} recalls read from Hindsight's audit log); details on the Incidents page.")
    if not inc.by_kind:
        return
    labels = [incident_label(k) for k in sorted(inc.by_kind)]
    counts = [inc.by_kind[k] for k in sorted(inc.by_kind)]
    fig = _bars({"cases": (labels, counts)}, horizontal=True, colors={}).update_xaxes(title_text="cases").update_layout(showlegend=False)
    _counts(fig, max(counts), axis="x")
    st.plotly_chart(_layout(fig, 60 + 40 * len(labels)), key="overview_incidents", width="stretch")

def render_coverage(m: OverviewMetrics) -> None:
    st.subheader("Migration coverage (support bank)")
    if m.coverage is None:
        st.info("Coverage unavailable: " + md(m.coverage_error or "Hindsight not reachable."), icon=":material/cloud_off:")
        return
    c = m.coverage
    parts = {"tagged": (c.tagged, "#2e7d32"), "untagged, can be migrated": (c.convertible, "#f9a825"),
             "untagged, owner not proven": (c.untagged - c.convertible, "#90a4ae")}
    fig = go.Figure(go.Pie(labels=list(parts), values=[n for n, _ in parts.values()], hole=0.5,
                           marker_colors=[color for _, color in parts.values()], sort=False))
    st.plotly_chart(_layout(fig, 260), key="overview_coverage", width="stretch")
    st.caption(f"{c.total} documents, {c.tagged_share:.0%} tagged. "
               + ("Ready to stop searching old records." if c.ready_to_retire_fallback else f"{c.convertible} record(s) can still be migrated."))

def _recall_name(kind: str) -> str:
    return RECALL_NAMES.get(kind, kind.replace("_", " "))

def render_latency(m: OverviewMetrics, samples: list[LatencySample]) -> None:
    st.subheader("Recall latency")
    if not samples:
        st.caption("No recall made by this server process since it started (the figures above come from the review store).")
        return
    by_recall: dict[str, list[float]] = {}
    for s in samples:
        by_recall.setdefault(_recall_name(s.kind), []).append(s.ms)
    fig = go.Figure([go.Box(y=ms, name=name, boxpoints="all", marker_color="#1f77b4") for name, ms in by_recall.items()])
    fig.update_layout(showlegend=False).update_yaxes(title_text="milliseconds")
    st.plotly_chart(_layout(fig, 280), key="overview_latency", width="stretch")
    stats = [{"recall": _recall_name(s.kind), "recalls": s.count, "failed": s.failed, "typical (ms, median)": s.p50_ms,
              "19 in 20 within (ms)": s.p95_ms, "slowest (ms)": s.max_ms} for s in m.latency]
    st.dataframe(pd.DataFrame(stats), hide_index=True, width="stretch", key="overview_latency_stats")
    st.caption("Wall time around each recall made by this dashboard server (last 500 per kind; cached answers are not counted).")
