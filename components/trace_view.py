"""Render pieces of the trace explorer. Memory text is untrusted: it goes only to st.text, st.code and
st.dataframe, never to markdown, and never into the charts (they are labelled by rank and document id, made
chart-safe). The verdict and plain figures come first; the technical ones sit in "How this was recalled"."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pydantic import ValidationError

from components.glossary import TRACE_TERMS, render_glossary
from components.safe_text import md
from components.when import local_time
from dashboard.hindsight.wire import SOURCES
from dashboard.traces.analysis import TraceAnalysis, analyse, rows_table
from dashboard.traces.labels import CandidateLabel, chart_name, display_name
from dashboard.traces.replay import (
    DEFAULT_RERANKER_MAX_CANDIDATES,
    DEFAULT_RRF_K,
    ReplaySettings,
    diff_top_k,
    replay,
    server_candidates,
    source_shares,
)
from dashboard.traces.request import (
    FACT_TYPES,
    MAX_TRACE_TOKENS,
    TAGS_MATCH_VALUES,
    TRACE_BUDGETS,
    TracedRecall,
    TraceRequest,
)
from dashboard.traces.request_problem import request_problem
from dashboard.traces.verdict import SHORT_ARM_NAMES, CaseFocus, exact_ids, verdict

EXACT_MARK = "★"

SOURCE_COLOURS = {"semantic": "#4C78A8", "bm25": "#F58518", "graph": "#54A24B", "temporal": "#B279A2"}
KIND_COLOURS = {"world": "#4C78A8", "experience": "#F58518", "observation": "#54A24B"}
CHART_LIMIT = 20


def _label(rank: int, node_id: str, labels: dict[str, CandidateLabel], exact: set[str]) -> str:
    return f"#{rank} {chart_name(node_id, labels)}" + (f" {EXACT_MARK}" if node_id in exact else "")


def _arm(source: str) -> str:
    return SHORT_ARM_NAMES.get(source, source)


def _count_axis(largest: float) -> dict:
    """Whole-number ticks on a count axis (plotly would put ticks at 0.5 on small counts)."""
    return {"tickformat": "d", "dtick": max(1, -(-int(largest) // 6)), "rangemode": "tozero"}


# -- console -----------------------------------------------------------------------------------------


def render_console(default: TraceRequest | None, banks: list[str]) -> TraceRequest | None:
    """The ad-hoc query form over the configured `banks` only. Returns a request when it was submitted and valid."""
    with st.form("trace_console"):
        left, right = st.columns([2, 1])
        bank = left.selectbox(
            "Bank",
            banks,
            index=banks.index(default.bank) if default and default.bank in banks else 0,
            key="console_bank",
        )
        budget = right.selectbox(
            "Budget",
            TRACE_BUDGETS,
            index=TRACE_BUDGETS.index(default.budget) if default else TRACE_BUDGETS.index("mid"),
            key="console_budget",
        )
        query = st.text_input("Query", value=default.query if default else "", key="console_query")
        left, mid, right = st.columns([2, 1, 1])
        tags = left.text_input(
            "Tags (comma-separated)", value=", ".join(default.tags) if default else "", key="console_tags"
        )
        tags_match = mid.selectbox(
            "tags_match",
            TAGS_MATCH_VALUES,
            index=TAGS_MATCH_VALUES.index(default.tags_match) if default else 0,
            key="console_match",
        )
        max_tokens = right.number_input(
            "max_tokens",
            min_value=1,
            max_value=MAX_TRACE_TOKENS,
            value=default.max_tokens if default else 4096,
            step=512,
            key="console_max_tokens",
        )
        types = st.multiselect(
            "Fact types (none = the server's default)",
            FACT_TYPES,
            default=list(default.types) if default and default.types else [],
            key="console_types",
        )
        submitted = st.form_submit_button("Trace this recall", type="primary")
    if not submitted:
        return None
    try:
        return TraceRequest(
            bank=bank.strip(),
            query=query.strip(),
            tags=tuple(t.strip() for t in tags.split(",") if t.strip()),
            tags_match=tags_match,
            budget=budget,
            max_tokens=int(max_tokens),
            types=tuple(types) or None,
        )
    except ValidationError as exc:  # one plain sentence naming the field, never pydantic's dump
        st.error("This query cannot be traced. " + md(request_problem(exc)), icon=":material/error:")
        return None


# -- trace view --------------------------------------------------------------------------------------


def render_verdict(traced: TracedRecall, analysis: TraceAnalysis, focus: CaseFocus | None) -> str:
    """The one-line verdict (tags and ids in it came from memory: escaped). Returns the sentence."""
    sentence = verdict(traced.response, analysis, traced.labels, focus).sentence(focus)
    st.info(md(sentence), icon=":material/lightbulb:")
    return sentence


def render_header(traced: TracedRecall, analysis: TraceAnalysis, focus: CaseFocus | None = None) -> None:
    req = traced.request
    exact = exact_ids(traced.labels, focus)
    cols = st.columns(3 if focus else 2)
    cols[0].metric("Results returned", analysis.results_returned)
    cols[1].metric("Candidates considered", len(analysis.rows))
    if focus:
        cols[2].metric(focus.noun[0].upper() + focus.noun[1:], len(exact & {r.node_id for r in analysis.rows}))
    with st.expander("How this was recalled"):
        st.caption(f"Trace fetched {local_time(traced.fetched_at)}")
        st.text(
            f"bank {req.bank} | query {req.query!r} | tags {list(req.tags)} ({req.tags_match}) | "
            f"budget {req.budget} | max_tokens {req.max_tokens} | types {list(req.types) if req.types else 'default'}"
        )
        st.caption(
            "Four retrieval arms (semantic, BM25 keywords, graph links, temporal dates) each rank candidates; "
            "reciprocal rank fusion (RRF) adds 1/(60 + rank) per arm; the reranker then scores the top of that pool."
        )
        render_glossary(TRACE_TERMS)
        cols = st.columns(3)
        cols[0].metric("Pre-filtered before rerank", analysis.pre_filtered)
        cols[1].metric("Found by one arm only", sum(r.single_arm for r in analysis.rows))
        total = analysis.total_seconds
        cols[2].metric("Server time", f"{total * 1000:.0f} ms" if total is not None else "n/a")


def render_counts(analysis: TraceAnalysis) -> None:
    st.subheader("How many candidates each arm found")
    frame = pd.DataFrame([c.model_dump() for c in analysis.counts])
    if frame.empty:
        st.info("The trace has no retrieval lists.")
        return
    frame["arm"] = frame["source"].map(_arm)
    frame["memory kind"] = frame["fact_type"].fillna("other")
    pivot = frame.pivot_table(index="arm", columns="memory kind", values="count", aggfunc="sum", fill_value=0)
    pivot["total"] = pivot.sum(axis=1)
    st.dataframe(pivot, width="stretch")
    fig = go.Figure()
    for kind in frame["memory kind"].unique():
        part = frame[frame["memory kind"] == kind]
        fig.add_bar(
            x=part["arm"], y=part["count"], name=f"{kind} memories", marker_color=KIND_COLOURS.get(kind, "#9D9D9D")
        )
    fig.update_layout(
        barmode="stack",
        height=300,
        margin=dict(t=30, b=10),
        title="Candidates found by each arm",
        yaxis=dict(title="candidates", **_count_axis(pivot["total"].max())),
        legend_title_text="",
    )
    st.plotly_chart(fig, key="chart_counts")


def results_frame(
    analysis: TraceAnalysis,
    labels: dict[str, CandidateLabel],
    exact: set[str] | None,
    focus: CaseFocus | None = None,
) -> pd.DataFrame:
    """One row per candidate, named by document id; `exact` (opened from a case) adds its exact-precedent column, and
    `focus` why each starred one is the case's (a ticket's: by its tag, or by an old record's first sentence)."""
    frame = pd.DataFrame(rows_table(analysis))
    if frame.empty:
        return frame
    frame.insert(0, "candidate", [display_name(n, labels) for n in frame["node_id"]])
    if exact is not None:
        frame.insert(1, "exact", [n in exact for n in frame["node_id"]])
        if focus is not None:
            frame.insert(2, "why starred", [focus.why(labels.get(n)) for n in frame["node_id"]])
    return frame


def render_results(analysis: TraceAnalysis, labels: dict[str, CandidateLabel], focus: CaseFocus | None = None) -> None:
    st.subheader("Each candidate and where each arm ranked it")
    only_returned = st.toggle("Only the results the server returned", value=False, key="trace_only_returned")
    exact = exact_ids(labels, focus) if focus else None
    frame = results_frame(analysis, labels, exact, focus)
    if not frame.empty and only_returned:
        frame = frame[frame["returned"]]
    shown = frame
    if exact is not None and not frame.empty:
        st.caption(f"Highlighted: {md(focus.noun)} ({md(focus.about)}).")
        shown = frame.style.apply(
            lambda row: ["background-color: #fff3c4" if row["exact"] else "" for _ in row], axis=1
        )
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        key="trace_results",
        column_config={
            "candidate": st.column_config.TextColumn("document", help="The memory's document id"),
            "exact": st.column_config.CheckboxColumn(
                f"{EXACT_MARK} {'own' if focus and focus.kind == 'ticket' else 'exact'}",
                help="The customer's own record (the ticket's rule)"
                if focus and focus.kind == "ticket"
                else "An exact precedent of the case this trace was opened from",
            ),
            "rrf_rank": st.column_config.NumberColumn(
                "fused rank", help="Rank after fusing the arms (RRF)", format="%d"
            ),
            "reranked_rank": st.column_config.NumberColumn(
                "final rank", help="Empty: ranked too low to be scored", format="%d"
            ),
            "change": st.column_config.NumberColumn(
                "moved", help="Fused rank minus final rank: positive moved up", format="%d"
            ),
            "single_arm": st.column_config.CheckboxColumn("one arm only", help="Only one retrieval arm found it"),
            "rrf_score": st.column_config.NumberColumn(
                "fusion score", help="RRF: the sum of 1/(60 + rank) over the arms", format="%.5f"
            ),
            **{f"{s}_rank": st.column_config.NumberColumn(f"{_arm(s)} rank", format="%d") for s in SOURCES},
            **{
                f"{s}_rrf": st.column_config.NumberColumn(f"{_arm(s)} score", help="1/(60 + rank)", format="%.5f")
                for s in SOURCES
            },
            "fact_type": st.column_config.TextColumn("memory kind"),
            "node_id": st.column_config.TextColumn("memory id"),
        },
    )
    pre = [r for r in analysis.rows if r.pre_filtered]
    if pre:
        st.caption(f"{len(pre)} candidates ranked too low in the fusion to be scored at all.")


def render_phases(analysis: TraceAnalysis) -> None:
    st.subheader("Phase timings")
    frame = pd.DataFrame(
        [{"phase": p.name, "ms": p.seconds * 1000, "sub-phase": p.diagnostic} for p in analysis.phases]
    )
    st.dataframe(
        frame, hide_index=True, width="stretch", column_config={"ms": st.column_config.NumberColumn(format="%.2f")}
    )


def contribution_figure(
    analysis: TraceAnalysis,
    labels: dict[str, CandidateLabel] | None = None,
    exact: set[str] | None = None,
    limit: int = CHART_LIMIT,
) -> go.Figure:
    rows = analysis.rows[:limit]
    names = [_label(r.rrf_rank, r.node_id, labels or {}, exact or set()) for r in rows]
    fig = go.Figure()
    for source in SOURCES:
        values = [r.contributions.get(source, 0.0) for r in rows]
        if any(values):
            fig.add_bar(x=names, y=values, name=_arm(source), marker_color=SOURCE_COLOURS[source])
    fig.update_layout(
        barmode="stack",
        height=380,
        margin=dict(t=40, b=10),
        yaxis_title="fusion score from each arm",
        legend_title_text="arm",
        title=f"What each arm added to the {len(rows)} best-fused candidates",
    )
    return fig


def rank_path_figure(
    analysis: TraceAnalysis,
    labels: dict[str, CandidateLabel] | None = None,
    exact: set[str] | None = None,
    limit: int = CHART_LIMIT,
) -> go.Figure:
    stages = [_arm(s) for s in SOURCES] + ["fused", "final"]
    fig = go.Figure()
    for r in analysis.rows[:limit]:
        ys = [r.arm_ranks.get(s) for s in SOURCES] + [r.rrf_rank, r.reranked_rank]
        fig.add_scatter(
            x=stages,
            y=ys,
            mode="lines+markers",
            name=_label(r.rrf_rank, r.node_id, labels or {}, exact or set()),
            connectgaps=True,
        )
    fig.update_layout(
        height=440,
        margin=dict(t=40, b=10),
        title="Where each candidate ranked, arm by arm, then fused and final",
        yaxis=dict(autorange="reversed", title="rank (1 = best)", tickformat="d"),
    )
    return fig


def render_charts(analysis: TraceAnalysis, labels: dict[str, CandidateLabel], focus: CaseFocus | None = None) -> None:
    exact = exact_ids(labels, focus)
    if focus:
        st.caption(f"{EXACT_MARK} marks {md(focus.noun)}.")
    st.plotly_chart(contribution_figure(analysis, labels, exact), key="chart_contributions")
    st.plotly_chart(rank_path_figure(analysis, labels, exact), key="chart_rank_path")


# -- what-if -----------------------------------------------------------------------------------------


def whatif_strangers(entered: list[str], labels: dict[str, CandidateLabel], focus: CaseFocus) -> list[str]:
    """The documents a what-if brings into the top k that are not the case's (by the case's page's rule)."""
    return list(dict.fromkeys(display_name(n, labels) for n in entered if not focus.is_exact(labels.get(n))))


def render_whatif_form() -> ReplaySettings:
    """The knobs, in a form; returns the settings last submitted (server defaults at first)."""
    current: ReplaySettings = st.session_state.get("whatif_settings") or ReplaySettings()
    with st.form("whatif"):
        st.subheader("What-if fusion replay")
        st.caption(
            "Replays fusion on this trace's retrieval lists. Defaults are the server's: the replay then equals it."
        )
        caps, weights = {}, {}
        for col, source in zip(st.columns(len(SOURCES)), SOURCES, strict=True):
            caps[source] = col.number_input(
                f"{source} cap (0 = none)", min_value=0, step=1, value=current.cap(source), key=f"whatif_cap_{source}"
            )
            weights[source] = col.number_input(
                f"{source} weight",
                min_value=0.0,
                step=0.05,
                value=current.weight(source),
                key=f"whatif_weight_{source}",
            )
        cols = st.columns(5)
        min_semantic = cols[0].number_input(
            "min semantic similarity",
            value=current.min_semantic,
            min_value=0.0,
            max_value=1.0,
            step=0.05,
            key="whatif_min_semantic",
        )
        min_bm25 = cols[1].number_input(
            "min BM25 score", value=current.min_bm25, min_value=0.0, step=0.05, key="whatif_min_bm25"
        )
        rerank_cap = cols[2].number_input(
            "reranker candidate cap",
            min_value=1,
            step=10,
            value=current.reranker_max_candidates or DEFAULT_RERANKER_MAX_CANDIDATES,
            key="whatif_rerank_cap",
        )
        rrf_k = cols[3].number_input("RRF k", min_value=1, step=1, value=current.rrf_k, key="whatif_rrf_k")
        top_k = cols[4].number_input("top k to compare", min_value=1, step=1, value=current.top_k, key="whatif_top_k")
        submitted = st.form_submit_button("Replay")
    if submitted:
        current = ReplaySettings(
            rrf_k=int(rrf_k),
            top_k=int(top_k),
            reranker_max_candidates=int(rerank_cap),
            caps={s: int(v) for s, v in caps.items() if v},
            weights={s: float(v) for s, v in weights.items() if v != 1.0},
            min_semantic=min_semantic,
            min_bm25=min_bm25,
        )
        st.session_state["whatif_settings"] = current
    return current


def render_whatif(traced: TracedRecall, focus: CaseFocus | None = None) -> None:
    trace = traced.response.trace
    settings = render_whatif_form()
    result = replay(trace, settings)
    diff = diff_top_k(trace, result)
    is_default = settings == ReplaySettings(top_k=settings.top_k)
    cols = st.columns(4)
    cols[0].metric("Entered the top k", len(diff.entered))
    cols[1].metric("Left the top k", len(diff.left))
    cols[2].metric("Replay pre-filtered", len(result.pre_filtered))
    cols[3].metric("Candidates fused", len(result.merged), delta=len(result.merged) - len(trace.rrf_merged) or None)
    if is_default:
        st.caption(f"Server settings (k={DEFAULT_RRF_K}, no caps, weights 1): the replay equals the server's fusion.")
    status = "unchanged" if not diff.changed else f"{len(diff.entered)} in, {len(diff.left)} out"
    st.text(f"Top {diff.k} by RRF, server vs replay: {status}")
    if focus is not None and diff.entered:
        strangers = whatif_strangers(diff.entered, traced.labels, focus)
        words = f"{len(strangers)} of the {len(diff.entered)} entering are not {focus.noun}" + (
            f": {', '.join(strangers)}" if strangers else ""
        )
        (st.warning if strangers else st.success)(md(words + "."), icon=":material/group:")

    server_rank = {c.node_id: c.final_rrf_rank for c in trace.rrf_merged}
    reranked_rank = {c.node_id: c.rerank_rank for c in trace.reranked}
    replay_rank = {c.node_id: c.rrf_rank for c in result.merged}
    text = {c.node_id: c.text for c in trace.rrf_merged}
    ids = list(dict.fromkeys(diff.server + diff.replay))
    frame = pd.DataFrame(
        [
            {
                "document": display_name(n, traced.labels),
                "status": "entered" if n in diff.entered else "left" if n in diff.left else "stayed",
                "server_rrf_rank": server_rank.get(n),
                "replay_rrf_rank": replay_rank.get(n),
                "server_reranked_rank": reranked_rank.get(n),
                "text": text.get(n, ""),
                "node_id": n,
            }
            for n in ids
        ]
    )
    st.dataframe(frame, hide_index=True, width="stretch", key="whatif_topk")

    before = source_shares(server_candidates(trace, settings.rrf_k)[: settings.top_k])
    after = source_shares(result.top)
    shares = pd.DataFrame(
        [
            {
                "source": s,
                "candidates (trace)": result.source_sizes_before.get(s, 0),
                "candidates (replay)": len(result.source_lists.get(s, [])),
                "top-k found, server": int(before[s]["found"]),
                "top-k found, replay": int(after[s]["found"]),
                "top-k RRF share, server": before[s]["score_share"],
                "top-k RRF share, replay": after[s]["score_share"],
            }
            for s in SOURCES
        ]
    )
    st.subheader("Each source's share of the top k")
    st.dataframe(
        shares,
        hide_index=True,
        width="stretch",
        key="whatif_shares",
        column_config={
            c: st.column_config.ProgressColumn(c, min_value=0.0, max_value=1.0, format="percent")
            for c in ("top-k RRF share, server", "top-k RRF share, replay")
        },
    )


# -- export ------------------------------------------------------------------------------------------


def render_export(traced: TracedRecall, deep_link: str) -> None:
    st.download_button(
        "Export trace as JSON",
        data=traced.export_json(),
        mime="application/json",
        key="trace_export",
        file_name=f"trace-{traced.request.bank}-{traced.fetched_at:%Y%m%dT%H%M%S}.json",
        icon=":material/download:",
    )
    st.caption("Deep link to this trace (opening it runs the recall again, with trace=True):")
    st.code(deep_link, language=None)


def render_trace(traced: TracedRecall, deep_link: str, focus: CaseFocus | None = None) -> None:
    if traced.response.trace is None:
        st.error("The server returned no trace for this recall.", icon=":material/error:")
        return
    analysis = analyse(traced.response)
    render_verdict(traced, analysis, focus)
    render_header(traced, analysis, focus)
    tab_charts, tab_results, tab_whatif, tab_phases, tab_export = (
        st.tabs(  # the charts first; the raw scores a tab away
            ["Charts", "Results", "What-if", "Timings", "Export"]
        )
    )
    with tab_results:
        render_results(analysis, traced.labels, focus)
        render_counts(analysis)
    with tab_charts:
        render_charts(analysis, traced.labels, focus)
    with tab_whatif:
        render_whatif(traced, focus)
    with tab_phases:
        render_phases(analysis)
    with tab_export:
        render_export(traced, deep_link)
