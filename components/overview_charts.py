"""Overview page pieces: headline numbers and Vega-Lite charts of what reviewers and memory are doing.

Only aggregates are drawn here (counts, ids, codes chosen from fixed lists): no memory text. The charts are plain
Vega-Lite specs (`st.vega_lite_chart`), not Plotly: Streamlit's Plotly bundle is 4.7 MB, and parsing it held the
browser's main thread for ~1.1 s on the first chart of a page load (profiled in headless Chromium, 2 vCPUs); its
Vega-Lite charts cost ~0.2 s. The trace pages keep Plotly, where its interactions are used.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.safe_text import md
from components.when import local_day
from dashboard.agents.incidents import naive_words
from dashboard.finance.overview import MISSED, NOTHING_LOST, crowd_out_states
from dashboard.reporting.headline import WRONG, figures_words, headline_parts, held_words
from dashboard.reporting.overview import OverviewMetrics, age_words, incident_label, total
from dashboard.reporting.recall_log import LatencySample
from dashboard.support.pages.admission_view import plain_verdict

HELD_COLORS = {
    "held for a second approver": "#6a1b9a",
    "held for a blind second review": "#1565c0",
    "awaiting the lead": "#ef6c00",
}
COLORS = {
    "approved": "#2e7d32",
    "overridden": "#c62828",
    "open": "#90a4ae",
    "decided": "#2e7d32",
    "pending delivery": "#f9a825",
    **HELD_COLORS,
    "admitted": "#2e7d32",
    "rejected": "#c62828",
    "approve": "#2e7d32",
    "reject": "#c62828",
    "escalate": "#f9a825",
}
RECALL_NAMES = {
    "finance": "a finance exception's precedents",
    "ticket": "a support ticket's history",
    "trace": "a trace",
}
PATHS = {"tagged": "tagged history", "legacy": "old records", "none": "none"}
WHOLE = {"format": "d", "tickMinStep": 1}  # counts have whole-number ticks


def _color(rows: list[dict], series: str, colors: dict[str, str]) -> dict:
    """The series' colour channel: fixed colours when every series has one, else Vega's own palette."""
    names = list(dict.fromkeys(r[series] for r in rows))
    channel = {
        "field": series,
        "type": "nominal",
        "sort": names,
        "legend": {"title": None, "orient": "bottom", "direction": "vertical", "labelLimit": 480},
    }
    if all(n in colors for n in names):
        channel["scale"] = {"domain": names, "range": [colors[n] for n in names]}
    return channel


def _stacked(
    rows: list[dict],
    *,
    category: str,
    series: str,
    count: str,
    title: str,
    horizontal: bool = False,
    colors: dict[str, str] = COLORS,
    labels: bool = True,
    legend: bool = True,
) -> dict:
    """Stacked bars, one per category (in the rows' order) and one colour per series; each piece labelled with its
    count when `labels`."""
    along = {
        "field": category,
        "type": "nominal",
        "sort": list(dict.fromkeys(r[category] for r in rows)),
        "title": None,
        "axis": {"labelLimit": 320, "labelAngle": 0, "labelOverlap": True},
    }
    counts = {"field": count, "type": "quantitative", "title": title, "stack": "zero", "axis": WHOLE}
    colour = _color(rows, series, colors)
    if not legend:
        colour["legend"] = None
    where = {"y": along, "x": counts} if horizontal else {"x": along, "y": counts}
    encoding = {
        **where,
        "color": colour,
        "order": {"field": "order", "type": "quantitative"},
        "tooltip": [
            {"field": category, "type": "nominal"},
            {"field": series, "type": "nominal"},
            {"field": count, "type": "quantitative"},
        ],
    }
    layers = [
        {"mark": {"type": "bar", "size": 22 if horizontal else 40}, "encoding": encoding}
    ]  # bars of a readable thickness, however few
    if labels:
        at_end = {"align": "right", "dx": -4} if horizontal else {"baseline": "top", "dy": 4}
        layers.append(
            {
                "mark": {"type": "text", "color": "white", **at_end},
                "encoding": {**where, "order": encoding["order"], "text": {"field": count, "type": "quantitative"}},
                "transform": [{"filter": f"datum['{count}'] > 0"}],
            }
        )
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
        for label, value in (
            ("Cases", every.cases),
            ("Decided", every.decided),
            ("Held for a second approver", every.held_for_approver),
            ("Held for a blind second review", every.held_for_blind_review),
            ("Awaiting the lead", every.awaiting_lead),
            ("Open", every.open),
        ):
            st.metric(label, value, border=True)


def takeaway(text: str) -> None:
    """A chart's one-line takeaway, in words, beneath it."""
    st.markdown("**" + md(text) + "**")


def most_common(rows: list[dict], name: str, count: str) -> str:
    """ "Most common: X (3 cases)." or, on a tie, each of them."""
    top = max(r[count] for r in rows)
    first = [r[name] for r in rows if r[count] == top]
    if len(first) == 1:
        return f"Most common: {first[0]} ({top} case(s))."
    return f"{len(first)} kinds, {top} case(s) each: {'; '.join(first)}."


def render_headline_numbers(m: OverviewMetrics) -> None:
    """The four numbers a room asks for first, large, in one row: what is decided, whether people keep the agent's
    advice, what the two-step search saved, and where something went wrong."""
    every = total(m.queues)
    fin = next((a for a in m.agreement if a.kind == "exception"), None)
    co, inc = m.crowd_out, m.incidents
    decided, agreement, saved, incidents = st.columns(4)  # one row, whatever the width: a room reads them together
    with decided:
        st.metric(
            "Cases decided",
            f"{every.decided} of {every.cases}",
            border=True,
            help=f"{every.open} open; {every.held} held for a second approver, a blind second review or the lead",
        )
    with agreement:
        st.metric(
            "Finance agreement",
            _pct(fin.rate) if fin and fin.rate is not None else "none yet",
            border=True,
            help="The agent's recommendation approved as is, of the finance decisions in the date range",
        )
    with saved:
        st.metric(
            "Exceptions saved",
            co.prevented,
            border=True,
            help=f"Exceptions the two-step search saved: one search over this vendor or this type would have lost "
            f"{co.precedents_saved} exact precedent(s) in them "
            f"(other records outrank them); searching this vendor AND this type first kept them. {co.checked} of "
            f"{co.cases} exceptions checked",
        )
    with incidents:
        st.metric(
            "Cases with incidents",
            inc.cases if inc.checked else "not checked",
            border=True,
            help=f"Of {inc.checked} cases whose agent runs were checked; a case can have several incidents (the Incidents page lists each)",
        )


def render_kpis(m: OverviewMetrics) -> None:
    tic = next((a for a in m.agreement if a.kind == "ticket"), None)
    lg = m.legacy
    render_case_figures(m)
    with st.container(horizontal=True):
        st.metric("Decisions in range", m.decisions_in_range, border=True)
        st.metric(
            "Ticket drafts approved", _pct(tic.rate if tic else None), help="Approve or edit-and-approve", border=True
        )
        st.metric(
            "Old support records used for their customer",
            lg.admitted,
            border=True,
            help=f"Records without a customer tag whose first sentence names the ticket's customer. {lg.rejected} more were "
            "found but set aside: their owner is not proven. Each record counted once, however many tickets judged it",
        )
        st.metric(
            "Support records with a customer tag",
            _pct(m.coverage.tagged_share) if m.coverage else "unavailable",
            border=True,
        )
        cu = m.curation
        st.metric(
            "Curation proposed / approved / reverted",
            f"{cu.proposals} / {cu.approvals} / {cu.reverts}",
            border=True,
            help=f"Documents retired from recall by four-eyes curation; {cu.rejections} proposal(s) rejected; reverts are approvals too",
        )


def render_queues(m: OverviewMetrics) -> None:
    st.subheader("Queue status")
    rows = [
        {"queue": q.queue, "status": s, "cases": n}
        for q in m.queues
        for s, n in (
            ("open", q.open),
            ("decided", q.decided - q.pending_delivery),
            ("pending delivery", q.pending_delivery),
            ("held for a second approver", q.held_for_approver),
            ("held for a blind second review", q.held_for_blind_review),
            ("awaiting the lead", q.awaiting_lead),
        )
    ]
    _chart(
        _stacked(rows, category="queue", series="status", count="cases", title="cases", horizontal=True),
        "overview_queues",
    )
    for q in m.queues:
        st.text(f"{q.queue}: {q.cases} cases, {figures_words(q)}.")
    every = total(m.queues)
    takeaway(
        f"{every.decided} of {every.cases} cases are decided"
        + (f"; {every.held} wait on a second person." if every.held else ".")
    )


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
        listed = (
            f"The {len(m.approvals_waiting)} oldest" if every.held_for_approver > len(m.approvals_waiting) else "Each"
        )
        st.caption(f"{listed} waiting for a second approver, oldest first:")
        rows = [
            {
                "case": w.case_id,
                "decided by": w.proposer,
                "outcome": w.outcome_words or w.outcome,
                "amount": w.amount,
                "their limit": w.limit,
                "waiting for": age_words(w.age_hours),
            }
            for w in m.approvals_waiting
        ]
        st.dataframe(
            pd.DataFrame(rows),
            hide_index=True,
            width="stretch",
            key="overview_approvals",
            column_config={
                "amount": st.column_config.NumberColumn(format="%.2f"),
                "their limit": st.column_config.NumberColumn(format="%.2f"),
            },
        )
    if m.held_blind:
        st.caption(
            "Waiting for a blind second review or the lead, oldest first (who decided what stays hidden until the second review):"
        )
        rows = [
            {
                "case": h.case_id,
                "waiting for": "a blind second review" if h.status == "awaiting blind second review" else "the lead",
                "since": age_words(h.age_hours),
            }
            for h in m.held_blind
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="overview_blind")


def render_agreement(m: OverviewMetrics) -> None:
    st.subheader("Agent and reviewer agreement")
    if not m.daily:
        st.caption("No decision in this date range yet.")
        return
    kinds = list(dict.fromkeys(d.kind for d in m.daily))
    titles = {q.kind: q.queue for q in m.queues}  # each kind's own title (QueueKind.title)
    for kind, panel in zip(kinds, st.columns(len(kinds))):  # one panel per queue, side by side
        rows = [
            {"day": local_day(d.day), "decision": name, "decisions": n}
            for d in m.daily
            if d.kind == kind
            for name, n in (("approved", d.approved), ("overridden", d.overridden))
        ]
        with panel:
            _chart(
                {
                    **_stacked(rows, category="day", series="decision", count="decisions", title="decisions"),
                    "title": titles.get(kind, kind),
                },
                f"overview_agreement_{kind}",
                240,
            )
    st.caption(
        "Latest decision per case, by the day it was made: approved = the agent's recommendation (or draft) kept."
    )
    kept, made = sum(a.approved for a in m.agreement), sum(a.decisions for a in m.agreement)
    takeaway(f"Reviewers kept the agent's advice on {kept} of {made} decisions in the date range.")


def render_overrides(m: OverviewMetrics) -> None:
    """One panel per queue whose kind groups its overrides (QueueKind.report_by), in its own words."""
    for queue in m.queues:
        by = next((o.by for o in m.overrides if o.kind == queue.kind), None)
        if by is None:
            continue
        st.subheader(f"{queue.queue}: overrides by {by} and reason code")
        mine = [o for o in m.overrides if o.kind == queue.kind]
        rows = [{by: o.group, "reason": o.reason_code, "overrides": o.count} for o in mine]
        _chart(
            _stacked(rows, category=by, series="reason", count="overrides", title="overrides", colors={}),
            f"overview_overrides_{queue.kind}",
        )
        top = max(mine, key=lambda o: o.count)
        takeaway(
            f"Most overridden: {by} {top.group} for {top.reason_code.replace('_', ' ')} ({top.count} of "
            f"{sum(o.count for o in mine)} {queue.nouns[0]} overrides)."
        )
    if not m.overrides:
        st.subheader("Overrides by reason code")
        st.caption("No override in this date range.")


def render_crowd_out(m: OverviewMetrics) -> None:
    co = m.crowd_out
    st.subheader("Precedents the two-step search saved")
    st.caption(
        f"{co.recalled} of {co.cases} queued cases measured; {co.checked} checked against one search over this vendor or this type, which "
        f"lets other records outrank the exact precedents. {co.unchecked_pass2_skipped} case(s) were not checked: their exact precedents "
        "alone filled the list, so the wider search never ran."
    )
    if not co.recalled:
        st.caption("No finance case measured yet.")
        return
    states = crowd_out_states(co)
    rows = [{"state": state, "cases": n} for state, n in states.items()]
    _chart(
        _stacked(
            rows,
            category="state",
            series="state",
            count="cases",
            title="cases",
            horizontal=True,
            legend=False,
            colors={MISSED: "#1565c0", NOTHING_LOST: "#2e7d32", "not checked": "#90a4ae"},
        ),
        "overview_crowd",
    )
    takeaway(f"The two-step search saved exact precedents in {co.prevented} of the {co.checked} exceptions checked.")
    if co.missed_cases:
        with st.expander(
            f"The cases the two-step search saved ({len(co.missed_cases)} of {co.prevented}, most precedents saved first)"
        ):
            st.dataframe(pd.DataFrame(co.missed_cases), hide_index=True, width="stretch", key="overview_crowd_cases")


def render_recommendations(m: OverviewMetrics) -> None:
    co = m.crowd_out
    st.subheader("What the agent recommends on the queue")
    if not co.recommendations:
        st.caption("No finance case measured yet.")
        return
    rows = [{"recommends": a, "cases": n} for a, n in sorted(co.recommendations.items())]
    _chart(
        _stacked(
            rows,
            category="recommends",
            series="recommends",
            count="cases",
            title="cases",
            horizontal=True,
            legend=False,
        ),
        "overview_recommendations",
    )
    st.caption(f"{co.no_relevant} case(s) have no relevant precedent: the agent escalates them.")
    action, n = max(co.recommendations.items(), key=lambda kv: kv[1])
    takeaway(f"The agent most often recommends to {action}: {n} of {sum(co.recommendations.values())} cases.")


def render_legacy(m: OverviewMetrics) -> None:
    lg = m.legacy
    st.subheader("Old support records without a customer tag: used or set aside")
    st.caption(
        f"{lg.recalled} of {lg.tickets} tickets measured. History used: "
        + (", ".join(f"{PATHS.get(k, k)} {v}" for k, v in sorted(lg.paths.items())) or "none yet")
        + f". Each untagged record counted once; {lg.tagged_candidates} tagged record(s) of other customers "
        "also came up in the search of old records and were never used."
    )
    if not lg.recalled:
        return
    rows = [{"verdict": "used", "reason": "names this customer first", "records": lg.admitted}]
    rows += [
        {"verdict": "not used", "reason": plain_verdict(reason).removeprefix("not used: "), "records": n}
        for reason, n in sorted(lg.rejected_by_reason.items())
    ]
    _chart(
        _stacked(rows, category="verdict", series="reason", count="records", title="records", colors={}),
        "overview_legacy",
    )
    takeaway(
        f"{lg.admitted} old record(s) were used for the customer they name; {lg.rejected} were set aside, their owner not proven."
    )


def render_trust(m: OverviewMetrics) -> None:
    """Memory the agent may not trust: counted over the measured exceptions."""
    st.subheader("Memory the agent may not trust")
    t = m.trust
    with st.container(horizontal=True):
        st.metric(
            "Records set aside",
            t.set_aside,
            help="Never cited, never a vote: a forged claim, a text that addresses the agent, a burst's repeat",
        )
        st.metric(
            "Forged reviewer claims",
            t.forged,
            help="Records that claim to be a reviewer's decision this dashboard never recorded",
        )
        st.metric(
            "Recommendations swung",
            t.swung,
            help="Recommendations that turn on an untrusted record (of unknown origin, or set aside)",
        )
    if not (t.set_aside or t.swung):
        st.caption("No measured case holds a record the agent may not trust.")


def render_incidents(m: OverviewMetrics) -> None:
    inc = m.incidents
    st.subheader("Incidents in the agents' recalls")
    if not inc.checked:
        st.caption("The agents' runs were not checked for incidents yet (the Incidents page checks them).")
        return
    naive = naive_words(inc.found)
    st.caption(
        f"{inc.cases} of {inc.checked} cases with agent runs have an incident (from {inc.agent_runs} agent runs and "
        f"{inc.audited_recalls} recalls read from Hindsight's audit log)"
        + (f", {naive}" if naive else "")
        + "; details on the Incidents page."
    )
    if not inc.by_kind:
        return
    rows = [{"incident": incident_label(k), "cases": inc.by_kind[k]} for k in sorted(inc.by_kind)]
    _chart(
        _stacked(
            rows,
            category="incident",
            series="incident",
            count="cases",
            title="cases",
            horizontal=True,
            colors={},
            legend=False,
        ),
        "overview_incidents",
    )
    takeaway(most_common(rows, "incident", "cases"))


def render_coverage(m: OverviewMetrics) -> None:
    st.subheader("Support records moved to customer tags")
    if m.coverage is None:
        st.info(
            "Coverage unavailable: " + md(m.coverage_error or "Hindsight not reachable."), icon=":material/cloud_off:"
        )
        return
    c = m.coverage
    rows = [
        {"support records": "all", "part": part, "records": n}
        for part, n in (
            ("tagged", c.tagged),
            ("untagged, can be migrated", c.convertible),
            ("untagged, owner not proven", c.untagged - c.convertible),
        )
    ]
    _chart(
        _stacked(
            rows,
            category="support records",
            series="part",
            count="records",
            title="records",
            horizontal=True,
            colors={
                "tagged": "#2e7d32",
                "untagged, can be migrated": "#f9a825",
                "untagged, owner not proven": "#90a4ae",
            },
        ),
        "overview_coverage",
        90,
    )
    takeaway(
        f"{c.tagged_share:.0%} of {c.total} support records carry their customer's tag; "
        + (
            "ready to stop searching old records."
            if c.ready_to_retire_fallback
            else f"{c.convertible} more can be migrated."
        )
    )


def _recall_name(kind: str) -> str:
    return RECALL_NAMES.get(kind, kind.replace("_", " "))


def render_latency(m: OverviewMetrics, samples: list[LatencySample]) -> None:
    """Per kind of recall, the time 9 in 10 of them came back within, written on its bar; the takeaway in a sentence."""
    st.subheader("How long a recall takes")
    if not samples or not m.latency:
        st.caption(
            "No recall made by this server process since it started (the figures above come from the review store)."
        )
        return
    rows = [
        {"recall": _recall_name(s.kind), "ms": s.p90_ms, "label": f"9 in 10 within {s.p90_ms:,.0f} ms"}
        for s in m.latency
    ]
    along = {"field": "recall", "type": "nominal", "title": None, "sort": None, "axis": {"labelLimit": 320}}
    size = {
        "field": "ms",
        "type": "quantitative",
        "title": "milliseconds (9 in 10 recalls within)",
        "axis": {"format": "d"},
    }
    _chart(
        {
            "data": {"values": rows},
            "height": {"step": 40},
            "layer": [
                {"mark": {"type": "bar", "size": 26, "color": "#1f77b4"}, "encoding": {"y": along, "x": size}},
                {
                    "mark": {"type": "text", "align": "left", "dx": 4},
                    "encoding": {"y": along, "x": size, "text": {"field": "label"}},
                },
            ],
        },
        "overview_latency",
        40 * len(rows) + 60,
    )
    slowest = max(m.latency, key=lambda s: s.p90_ms)
    st.markdown(md(latency_takeaway(m.latency)))
    stats = [
        {
            "recall": _recall_name(s.kind),
            "recalls": s.count,
            "failed": s.failed,
            "typical (ms)": s.p50_ms,
            "9 in 10 within (ms)": s.p90_ms,
            "slowest (ms)": s.max_ms,
        }
        for s in m.latency
    ]
    st.dataframe(
        pd.DataFrame(stats),
        hide_index=True,
        width="stretch",
        key="overview_latency_stats",
        column_config={"typical (ms)": st.column_config.NumberColumn(help="The median: half the recalls were quicker")},
    )
    st.caption(
        f"Wall time around each recall made by this dashboard server (last 500 per kind; cached answers are not counted). "
        f"Slowest kind: {_recall_name(slowest.kind)}."
    )


def latency_takeaway(stats) -> str:
    """One sentence: 9 in 10 recalls of each kind within X ms."""
    return (
        "9 in 10 recalls came back within "
        + "; ".join(f"{s.p90_ms:,.0f} ms for {_recall_name(s.kind)}" for s in stats)
        + "."
    )
