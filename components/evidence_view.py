"""The fusion lab on the Traces page: the Evidence tab (labelled sets, per-arm figures, the what-if grid)
and which server knob needs which trace. Query text from a set is untrusted: it goes only to
dataframes; the charts are labelled by arm and setting, never by memory or query text."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.hindsight.wire import SOURCES
from dashboard.traces.evidence import EvidenceCase, EvidenceSetError, parse_cases

SOURCE_COLOURS = {"semantic": "#4C78A8", "bm25": "#F58518", "graph": "#54A24B", "temporal": "#B279A2"}
GRID_SHOWN = 15

KNOB_GUIDE = pd.DataFrame(
    [
        {
            "server knob": "HINDSIGHT_API_RECALL_MAX_CANDIDATES_PER_SOURCE",
            "what-if": "cap (every arm)",
            "trace it needs": "any trace: its arm lists are taken before the cap",
            "predicted exactly": "yes",
        },
        {
            "server knob": "HINDSIGHT_API_RERANKER_MAX_CANDIDATES",
            "what-if": "reranker candidate cap",
            "trace it needs": "a trace with the pool you want to cut (lowering it: any trace)",
            "predicted exactly": "yes",
        },
        {
            "server knob": "HINDSIGHT_API_BM25_MIN_SCORE",
            "what-if": "min BM25 score",
            "trace it needs": "an UNGATED trace (a server without the floor): its lists are taken after the gate",
            "predicted exactly": "yes, from an ungated trace (1.1.0 gates native PostgreSQL too)",
        },
        {
            "server knob": "HINDSIGHT_API_RECALL_STRATEGY_BOOSTS",
            "what-if": "strategy boosts (scoring)",
            "trace it needs": "any trace",
            "predicted exactly": "yes with the RRF reranker; a cross-encoder's scores only for candidates it scored",
        },
        {
            "server knob": "bank: enable_graph/text_search/temporal_retrieval",
            "what-if": "arm weight 0",
            "trace it needs": "any trace (an arm switched off on the bank is absent from it)",
            "predicted exactly": "yes",
        },
        {
            "server knob": "(none: the lab's own) arm weights 0.5, RRF k",
            "what-if": "weights, RRF k",
            "trace it needs": "any trace",
            "predicted exactly": "a what-if the server cannot do",
        },
    ]
)


def render_knob_guide() -> None:
    st.subheader("Which server knob needs which trace")
    st.dataframe(KNOB_GUIDE, hide_index=True, width="stretch", key="lab_knob_guide")


def per_arm_figure(report: dict) -> go.Figure:
    n = max(1, report["cases"])
    stages = [("in_list", "in its list"), ("in_pool", "in the fused pool"), ("in_top_k", "in the returned top k")]
    fig = go.Figure()
    for key, label in stages:
        fig.add_bar(x=list(SOURCES), y=[report["per_arm"][s][key] / n for s in SOURCES], name=f"evidence {label}")
    fig.add_scatter(
        x=list(SOURCES),
        y=[report["per_arm"][s]["share_of_top_k"] for s in SOURCES],
        name="share of top-k slots",
        mode="markers",
        marker={"size": 14, "symbol": "diamond", "color": "black"},
    )
    fig.update_layout(
        barmode="group",
        height=380,
        margin={"t": 40, "b": 10},
        yaxis={"tickformat": ".0%", "range": [0, 1.05]},
        title="Per arm: how often it holds the evidence, and its share of the returned top k",
    )
    return fig


def grid_label(row: dict) -> str:
    weights = " ".join(f"{s[:3]}={row['weights'][s]:g}" for s in SOURCES if row["weights"][s] != 1.0) or "weights 1"
    cap = f"cap {row['cap']}" if row["cap"] else "no cap"
    gate = f"bm25>={row['min_bm25']:g}" if row["min_bm25"] is not None else "no gate"
    return f"{weights} | {cap} | {gate}"


def grid_figure(report: dict, shown: int = GRID_SHOWN) -> go.Figure:
    rows = report["grid"][:shown]
    baseline = report["grid_baseline"]
    labels = [grid_label(r) for r in rows]
    fig = go.Figure()
    fig.add_bar(
        y=labels[::-1], x=[r["evidence_at_k"] for r in rows][::-1], orientation="h", name="predicted evidence@k"
    )
    fig.add_vline(x=baseline["evidence_at_k"], line_dash="dash", annotation_text="server settings")
    fig.update_layout(
        height=40 + 26 * len(rows),
        margin={"t": 40, "b": 10, "l": 10},
        xaxis={
            "title": f"cases with evidence in top {report['k']}",
            "tickformat": "d",
            "dtick": max(1, -(-report["cases"] // 8)),
            "rangemode": "tozero",
        },
        title=f"What-if settings ranked by predicted evidence@{report['k']} (top {len(rows)})",
    )
    return fig


def render_report(report: dict) -> None:
    n, k = report["cases"], report["k"]
    cols = st.columns(4)
    cols[0].metric("Cases", n)
    cols[1].metric(f"Evidence in returned top {k}", f"{report['evidence_at_k']} ({report['evidence_rate']:.0%})")
    best = report["grid"][0] if report.get("grid") else None
    if best:
        cols[2].metric(
            "Best what-if (predicted)", best["evidence_at_k"], delta=best["evidence_at_k"] - report["evidence_at_k"]
        )
    cols[3].metric("Failed recalls", len(report["failed"]))
    st.plotly_chart(per_arm_figure(report), key="lab_per_arm")
    per_arm = pd.DataFrame([{"arm": s, **report["per_arm"][s]} for s in SOURCES])
    st.dataframe(
        per_arm,
        hide_index=True,
        width="stretch",
        key="lab_per_arm_table",
        column_config={
            "share_of_top_k": st.column_config.ProgressColumn(
                "share of top k", min_value=0.0, max_value=1.0, format="percent"
            )
        },
    )
    if best:
        st.plotly_chart(grid_figure(report), key="lab_grid")
    cases = pd.DataFrame(
        [
            {k2: c[k2] for k2 in ("evidence", "first_evidence_rank", "precision_at_k", "returned", "query")}
            for c in report["per_case"]
        ]
    )
    st.dataframe(cases, hide_index=True, width="stretch", key="lab_cases")


def choose_set(
    finance_cases: Callable[[], list[EvidenceCase]], reviewed_cases: Callable[[], list[EvidenceCase]] | None = None
) -> tuple[str, list[EvidenceCase]] | None:
    source = st.radio(
        "Labelled set",
        [
            "Finance queue (same vendor and type)",
            *(["Reviewers' labels"] if reviewed_cases else []),
            "Upload JSON Lines",
        ],
        horizontal=True,
        key="lab_set_source",
    )
    if source.startswith("Finance"):
        return "finance", finance_cases()
    if source.startswith("Reviewers") and reviewed_cases is not None:
        cases = reviewed_cases()
        st.caption(
            "Each labelled case's recall request (the agent's, else the dashboard's); expected: the documents most "
            f"of their reviewers label relevant. {len(cases)} case(s) on this bank."
        )
        return ("reviews", cases) if cases else None
    upload = st.file_uploader(
        "JSON Lines: query, tags?, tags_match?, expected_document_ids",
        type=["jsonl", "json", "txt"],
        key="lab_set_file",
    )
    if upload is None:
        return None
    try:
        return upload.name, parse_cases(upload.getvalue().decode("utf-8", errors="replace").splitlines(), upload.name)
    except EvidenceSetError as exc:
        st.error("This set cannot be read:", icon=":material/error:")
        st.code(str(exc), language=None)
        return None


def render_evidence_tab(
    bank: str,
    finance_cases: Callable[[], list[EvidenceCase]],
    run_bench: Callable[..., dict],
    reviewed_cases: Callable[[], list[EvidenceCase]] | None = None,
) -> None:
    """`run_bench(bank, cases, k, progress)` returns an evidence report (dashboard.traces.evidence.bench), or None
    when the run is refused."""
    st.subheader("Evidence on a labelled set")
    st.caption(
        "Each case is recalled once with a trace; the per-arm figures come from those traces and the grid "
        "from the predicted RETURNED top k under each what-if (weights 0/0.5/1, caps, BM25 gates)."
    )
    chosen = choose_set(finance_cases, reviewed_cases)
    k = st.number_input("k", min_value=1, max_value=100, value=10, key="lab_k")
    st.text(f"bank {bank}")
    reports: dict = st.session_state.setdefault("lab_reports", {})
    key = (bank, chosen[0] if chosen else None, int(k))
    if chosen and st.button("Run the evidence bench", key="lab_run", icon=":material/science:", type="primary"):
        bar = st.progress(0.0, text="recalling the cases ...")
        report = run_bench(
            bank, chosen[1], int(k), lambda done, total: bar.progress(done / total, text=f"{done}/{total} recalled")
        )
        bar.empty()
        if report is not None:  # None: the run was refused (the page said why)
            reports[key] = report
    if key in reports:
        render_report(reports[key])
