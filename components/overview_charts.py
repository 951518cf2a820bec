"""Overview page pieces: headline numbers and Vega-Lite charts of what reviewers and memory are doing.

Only aggregates are drawn here (counts, ids, codes chosen from fixed lists): no memory text. The charts are plain
Vega-Lite specs (`st.vega_lite_chart`), not Plotly: Streamlit's Plotly bundle is 4.7 MB, and parsing it held the
browser's main thread for ~1.1 s on the first chart of a page load (profiled in headless Chromium, 2 vCPUs); its
Vega-Lite charts cost ~0.2 s. The trace pages keep Plotly, where its interactions are used.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.admission import plain_verdict
from components.safe_text import md
from components.when import local_day
from dashboard.agents.incidents import naive_words
from dashboard.finance.overview import MISSED, crowd_out_states
from dashboard.reporting.headline import WRONG, figures_words, headline_parts, held_words
from dashboard.reporting.overview import OverviewMetrics, age_words, incident_label, total
from dashboard.reporting.recall_log import LatencySample
from dashboard.review.decision import OUTCOME_WORDS

HELD_COLORS = {"held for a second approver": "#6a1b9a", "held for a blind second review": "#1565c0", "awaiting the lead": "#ef6c00"}
COLORS = {"approved": "#2e7d32", "overridden": "#c62828", "open": "#90a4ae", "decided": "#2e7d32", "pending delivery": "#f9a825", **HELD_COLORS,
          "admitted": "#2e7d32", "rejected": "#c62828", "approve": "#2e7d32", "reject": "#c62828", "escalate": "#f9a825"}
KIND_TITLES = {"exception": "Finance exceptions", "ticket": "Support tickets"}
RECALL_NAMES = {"finance": "a finance exception's precedents", "ticket": "a support ticket's history", "trace": "a trace"}
PATHS = {"tagged": "tagged history", "legacy": "old records", "none": "none"}
WHOLE = {"format": "d", "tickMinStep": 1}  # counts have whole-number ticks


def _color(rows: list[dict], series: str, colors: dict[str, str]) -> dict:
    """The series' colour channel: fixed colours when every series has one, else Vega's own palette."""
    names = list(dict.fromkeys(r[series] for r in rows))
    channel = {"field": series, "type": "nominal", "sort": names,
               "legend": {"title": None, "orient": "bottom", "direction": "vertical", "labelLimit": 480}}
    if all(n in colors for n in names):
        channel["scale"] = {"domain": names, "range": [colors[n] for n in names]}
    return channel


def _stacked(rows: list[dict], *, category: str, series: str, count: str, title: str, horizontal: bool = False,
             colors: dict[str, str] = COLORS, labels: bool = True, legend: bool = True) -> dict:
    """Stacked bars, one per category (in the rows' order) and one colour per series; each piece labelled with its
    count when `labels`."""
    along = {"field": category, "type": "nominal", "sort": list(dict.fromkeys(r[category] for r in rows)), "title": None,
             "axis": {"labelLimit": 320, "labelAngle": 0, "labelOverlap": True}}
    counts = {"field": count, "type": "quantitative", "title": title, "stack": "zero", "axis": WHOLE}
    colour = _color(rows, series, colors)
    if not legend:
        colour["legend"] = None
    where = {"y": along, "x": counts} if horizontal else {"x": along, "y": counts}
    encoding = {**where, "color": colour, "order": {"field": "order", "type": "quantitative"},
                "tooltip": [{"field": category, "type": "nominal"}, {"field": series, "type": "nominal"}, {"field": count, "type": "quantitative"}]}
    layers = [{"mark": {"type": "bar", "size": 22 if horizontal else 40}, "encoding": encoding}]  # bars of a readable thickness, however few
    if labels:
        at_end = {"align": "right", "dx": -4} if horizontal else {"baseline": "top", "dy": 4}
        layers.append({"mark": {"type": "text", "color": "white", **at_end},
                       "encoding": {**where, "order": encoding["order"], "text": {"field": count, "type": "quantitative"}},
                       "transform": [{"filter": f"datum['{count}'] > 0"}]})
    spec = {"data": {"values": [{**r, "order": i} for i, r in enumerate(rows)]}, "layer": layers}
    return {**spec, "height": {"step": 34}} if horizontal else spec  # horizontal: as tall as its bars need


def _chart(spec: dict, key: str, height: int = 260) -> None:
    st.vega_lite_chart(spec={"height": height, **spec}, key=key, width="stretch")


def _pct(value: float | None) -> str:
    return "no decision yet" if value is None else f"{value:.0%}"

def render_headline(m: OverviewMetrics) -> None:
    """The cases and the decisions as the heading; what went wrong and where beneath it, in body text (it names cases)."""
    lead, wrong = headline_parts(m)
    st.subheader(md(lead))
    if wrong.startswith(WRONG):
        st.markdown("**" + WRONG.strip() + "** " + md(wrong.removeprefix(WRONG)))
    else:
        st.markdown(md(wrong))

def render_case_figures(m: OverviewMetrics) -> None:
    """The cases now, as every page counts them (review/figures.py): the Audit log and its export say the same."""
    every = total(m.queues)
    with st.container(horizontal=True):
        for label, value in (("Cases", every.cases), ("Decided", every.decided), ("Held for a second approver", every.held_for_approver),
                             ("Held for a blind second review", every.held_for_blind_review), ("Awaiting the lead", every.awaiting_lead),
                             ("Open", every.open)):
            st.metric(label, value, border=True)


def render_kpis(m: OverviewMetrics) -> None:
    by_kind = {a.kind: a for a in m.agreement}
    fin, tic = by_kind.get("exception"), by_kind.get("ticket")
    co, lg, inc = m.crowd_out, m.legacy, m.incidents
    render_case_figures(m)
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
            for s, n in (("open", q.open), ("decided", q.decided - q.pending_delivery), ("pending delivery", q.pending_delivery),
                         ("held for a second approver", q.held_for_approver), ("held for a blind second review", q.held_for_blind_review),
                         ("awaiting the lead", q.awaiting_lead))]
    _chart(_stacked(rows, category="queue", series="status", count="cases", title="cases", horizontal=True), "overview_queues")
    for q in m.queues:
        st.text(f"{q.queue}: {q.cases} cases, {figures_words(q)}.")


def render_held(m: OverviewMetrics) -> None:
    """The decisions held: for a second approver (who, what, the amount against their limit, for how long), for a
    blind second review or a lead (the case and for how long only: blind means blind)."""
    st.subheader("Decisions held")
    every = total(m.queues)
    if not every.held:
        st.caption("No decision is held: none waits for a second approver, a blind second review or the lead.")
        return
    st.caption(held_words(every)[0].upper() + held_words(every)[1:] + ".")
    if m.approvals_waiting:
        listed = f"The {len(m.approvals_waiting)} oldest" if every.held_for_approver > len(m.approvals_waiting) else "Each"
        st.caption(f"{listed} waiting for a second approver, oldest first:")
        rows = [{"case": w.case_id, "decided by": w.proposer, "outcome": OUTCOME_WORDS.get(w.outcome, w.outcome), "amount": w.amount,
                 "their limit": w.limit, "waiting for": age_words(w.age_hours)} for w in m.approvals_waiting]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="overview_approvals",
                     column_config={"amount": st.column_config.NumberColumn(format="%.2f"), "their limit": st.column_config.NumberColumn(format="%.2f")})
    if m.held_blind:
        st.caption("Waiting for a blind second review or the lead, oldest first (who decided what stays hidden until the second review):")
        rows = [{"case": h.case_id, "waiting for": "a blind second review" if h.status == "awaiting blind second review" else "the lead",
                 "since": age_words(h.age_hours)} for h in m.held_blind]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="overview_blind")


def render_agreement(m: OverviewMetrics) -> None:
    st.subheader("Agent and reviewer agreement")
    if not m.daily:
        st.caption("No decision in this date range yet.")
        return
    kinds = list(dict.fromkeys(d.kind for d in m.daily))
    for kind, panel in zip(kinds, st.columns(len(kinds))):  # one panel per queue, side by side
        rows = [{"day": local_day(d.day), "decision": name, "decisions": n}
                for d in m.daily if d.kind == kind for name, n in (("approved", d.approved), ("overridden", d.overridden))]
        with panel:
            _chart({**_stacked(rows, category="day", series="decision", count="decisions", title="decisions", labels=False),
                    "title": KIND_TITLES.get(kind, kind)}, f"overview_agreement_{kind}", 240)
    st.caption("Latest decision per case, by the day it was made: approved = the agent's recommendation (or draft) kept.")

def render_overrides(m: OverviewMetrics) -> None:
    st.subheader("Finance overrides by vendor and reason code")
    if not m.overrides:
        st.caption("No finance override in this date range.")
        return
    rows = [{"vendor": o.vendor, "reason": o.reason_code, "overrides": o.count} for o in m.overrides]
    _chart(_stacked(rows, category="vendor", series="reason", count="overrides", title="overrides", colors={}, labels=False), "overview_overrides")

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
    rows = [{"state": state, "cases": n} for state, n in states.items()]
    _chart(_stacked(rows, category="state", series="state", count="cases", title="cases", horizontal=True, legend=False,
                    colors={MISSED: "#c62828", "a plain search misses none": "#2e7d32", "not checked": "#90a4ae"}), "overview_crowd")
    if co.missed_cases:
        with st.expander(f"The cases a plain search misses ({len(co.missed_cases)} of {co.prevented}, most precedents lost first)"):
            st.dataframe(pd.DataFrame(co.missed_cases), hide_index=True, width="stretch", key="overview_crowd_cases")

def render_recommendations(m: OverviewMetrics) -> None:
    co = m.crowd_out
    st.subheader("What the agent recommends on the queue")
    if not co.recommendations:
        st.caption("No finance case measured yet.")
        return
    rows = [{"recommends": a, "cases": n} for a, n in sorted(co.recommendations.items())]
    _chart(_stacked(rows, category="recommends", series="recommends", count="cases", title="cases", horizontal=True, legend=False),
           "overview_recommendations")
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
    _chart(_stacked(rows, category="verdict", series="reason", count="records", title="records", colors={}), "overview_legacy")

def render_trust(m: OverviewMetrics) -> None:
    """Memory the agent may not trust: counted over the measured exceptions."""
    st.subheader("Memory the agent may not trust")
    t = m.trust
    with st.container(horizontal=True):
        st.metric("Records set aside", t.set_aside, help="Never cited, never a vote: a forged claim, a text that addresses the agent, a burst's repeat")
        st.metric("Forged reviewer claims", t.forged, help="Records that claim to be a reviewer's decision this dashboard never recorded")
        st.metric("Recommendations swung", t.swung, help="Recommendations that turn on an untrusted record (of unknown origin, or set aside)")
    if not (t.set_aside or t.swung):
        st.caption("No measured case holds a record the agent may not trust.")


def render_incidents(m: OverviewMetrics) -> None:
    inc = m.incidents
    st.subheader("Incidents in the agents' recalls")
    if not inc.checked:
        st.caption("The agents' runs were not checked for incidents yet (the Incidents page checks them).")
        return
    naive = naive_words(inc.found)
    st.caption(f"{inc.cases} of {inc.checked} cases with agent runs have an incident (from {inc.agent_runs} agent runs and "
               f"{inc.audited_recalls} recalls read from Hindsight's audit log)" + (f", {naive}" if naive else "")
               + "; details on the Incidents page.")
    if not inc.by_kind:
        return
    rows = [{"incident": incident_label(k), "cases": inc.by_kind[k]} for k in sorted(inc.by_kind)]
    _chart(_stacked(rows, category="incident", series="incident", count="cases", title="cases", horizontal=True, colors={}, legend=False),
           "overview_incidents")

def render_coverage(m: OverviewMetrics) -> None:
    st.subheader("Migration coverage (support bank)")
    if m.coverage is None:
        st.info("Coverage unavailable: " + md(m.coverage_error or "Hindsight not reachable."), icon=":material/cloud_off:")
        return
    c = m.coverage
    parts = {"tagged": (c.tagged, "#2e7d32"), "untagged, can be migrated": (c.convertible, "#f9a825"),
             "untagged, owner not proven": (c.untagged - c.convertible, "#90a4ae")}
    rows = [{"documents": part, "count": n, "order": i} for i, (part, (n, _)) in enumerate(parts.items())]
    colour = _color(rows, "documents", {part: color for part, (_, color) in parts.items()})
    colour["legend"] |= {"orient": "right"}
    _chart({"data": {"values": rows}, "mark": {"type": "arc", "innerRadius": 50, "outerRadius": 95},
            "encoding": {"theta": {"field": "count", "type": "quantitative"}, "color": colour, "order": {"field": "order", "type": "quantitative"},
                         "tooltip": [{"field": "documents", "type": "nominal"}, {"field": "count", "type": "quantitative"}]}},
           "overview_coverage", 200)
    st.caption(f"{c.total} documents, {c.tagged_share:.0%} tagged. "
               + ("Ready to stop searching old records." if c.ready_to_retire_fallback else f"{c.convertible} record(s) can still be migrated."))

def _recall_name(kind: str) -> str:
    return RECALL_NAMES.get(kind, kind.replace("_", " "))

def render_latency(m: OverviewMetrics, samples: list[LatencySample]) -> None:
    st.subheader("Recall latency")
    if not samples:
        st.caption("No recall made by this server process since it started (the figures above come from the review store).")
        return
    rows = [{"recall": _recall_name(s.kind), "ms": round(s.ms, 1)} for s in samples]
    where = {"x": {"field": "recall", "type": "nominal", "title": None, "axis": {"labelAngle": 0, "labelLimit": 320}},
             "y": {"field": "ms", "type": "quantitative", "title": "milliseconds"}}
    _chart({"data": {"values": rows}, "layer": [
        {"mark": {"type": "boxplot", "extent": "min-max", "size": 40, "color": "#1f77b4", "opacity": 0.5}, "encoding": where},
        {"mark": {"type": "point", "color": "#1f77b4", "opacity": 0.6}, "encoding": {**where, "tooltip": [{"field": "ms", "type": "quantitative"}]}},
    ]}, "overview_latency", 260)
    stats = [{"recall": _recall_name(s.kind), "recalls": s.count, "failed": s.failed, "typical (ms, median)": s.p50_ms,
              "19 in 20 within (ms)": s.p95_ms, "slowest (ms)": s.max_ms} for s in m.latency]
    st.dataframe(pd.DataFrame(stats), hide_index=True, width="stretch", key="overview_latency_stats")
    st.caption("Wall time around each recall made by this dashboard server (last 500 per kind; cached answers are not counted).")
