"""The A/B tab: the finance queue and the tickets under A (the server as it is, or a what-if setting) and
B (a bank configuration on clones, another Hindsight URL, or a what-if setting). Everything typed or
recalled goes to st.text, st.code or dataframes."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from dashboard.hindsight.wire import SOURCES
from dashboard.lab.ab import ABReport, Variant
from dashboard.lab.blast_radius import DecidedChange, decided_changes
from dashboard.lab.whatif import CAPS, KNOB_TRACES, WEIGHTS, WhatIf

ARM_LABELS = {
    "semantic": "meaning (semantic)",
    "bm25": "keywords (BM25)",
    "graph": "links (graph)",
    "temporal": "dates (temporal)",
}
WHATIF = "a what-if setting (predicted)"


def choose_whatif(prefix: str) -> WhatIf | None:
    """The evidence grid's knobs: a weight per arm, one cap for every arm, a BM25 gate."""
    cols = st.columns(len(SOURCES) + 2)
    weights = {}
    for col, source in zip(cols, SOURCES, strict=False):
        weights[source] = col.selectbox(
            f"{ARM_LABELS[source]} weight", WEIGHTS[::-1], key=f"{prefix}_w_{source}", format_func=lambda w: f"{w:g}"
        )
    cap = cols[-2].selectbox(
        "cap per arm", [None, *CAPS], key=f"{prefix}_cap", format_func=lambda c: "none" if c is None else str(c)
    )
    gate = cols[-1].number_input("BM25 gate (0 = none)", min_value=0.0, value=0.0, step=0.5, key=f"{prefix}_gate")
    try:
        return WhatIf(weights=weights, cap=cap, min_bm25=gate or None)
    except ValueError:
        st.warning("At least one arm needs a weight above 0.", icon=":material/tune:")
        return None


def choose_a() -> Variant | None:
    kind = st.radio("A is", ["the server as it is", WHATIF], horizontal=True, key="ab_a_kind")
    if kind == WHATIF:
        whatif = choose_whatif("ab_a")
        return None if whatif is None else Variant(name="a", kind="whatif", whatif=whatif)
    return Variant(name="a")


def choose_b(a: Variant | None = None) -> Variant | None:
    kind = st.radio(
        "B is", ["a bank configuration (on clones)", "another Hindsight URL", WHATIF], horizontal=True, key="ab_kind"
    )
    if kind == WHATIF:
        whatif = choose_whatif("ab_b")
        same = a is not None and (a.whatif or WhatIf()) == whatif
        return None if whatif is None or same else Variant(name="b", kind="whatif", whatif=whatif)
    if kind.startswith("another"):
        url = st.text_input("Hindsight URL for B", key="ab_url", placeholder="http://127.0.0.1:8889")
        return Variant(name="b", kind="url", url=url.strip()) if url.strip() else None
    cols = st.columns(4)
    config: dict[str, bool | int] = {}
    for col, (name, label) in zip(
        cols,
        [
            ("enable_graph_retrieval", "graph arm"),
            ("enable_text_search", "BM25 arm"),
            ("enable_temporal_retrieval", "temporal arm"),
        ],
        strict=False,
    ):
        if not col.checkbox(label, value=True, key=f"ab_{name}"):
            config[name] = False
    budget = cols[3].number_input(
        "mid budget (0 = unchanged)", min_value=0, max_value=5000, value=0, step=50, key="ab_budget"
    )
    if budget:
        config["recall_budget_fixed_mid"] = int(budget)
    return Variant(name="b", kind="bank_config", bank_config=config) if config else None


def render_decided(changes: list[DecidedChange], what: str = "B", key: str = "ab_decided") -> None:
    """The blast radius: decided cases whose evidence or recommendation `what` changes, each a link to its case."""
    none = "" if changes else " (no reviewer's decision rests on what changes)"
    st.text(f"Decided cases {what} would change: {len(changes)}{none}")
    if not changes:
        return
    st.dataframe(
        pd.DataFrame([c.row() for c in changes]),
        hide_index=True,
        width="stretch",
        key=key,
        column_config={"case": st.column_config.LinkColumn(display_text=r"=(.*)$")},
    )
    for change in changes:  # read in full, wrapped: a grid cell would cut the evidence lists
        st.text(f"{change.case_id}: {change.sentence}")


def render_ab_report(report: ABReport, decided: set[str]) -> None:
    """`decided`: the exceptions a reviewer decided (the review store)."""
    st.text(report.summary())
    render_decided(decided_changes(report.diffs, decided))
    if report.prediction_checks:
        st.text(
            f"Check: predicted with the server's settings, {sum(report.prediction_checks)} of "
            f"{len(report.prediction_checks)} recalls return exactly what the server returned."
        )
    cols = st.columns(4)
    cols[0].metric("Recommendations changed", report.recommendations_changed)
    cols[1].metric("Exact precedents lost", report.exact_lost)
    cols[2].metric("Exact precedents gained", report.exact_gained)
    p50 = report.p50_change
    cols[3].metric("p50 latency, B vs A", "n/a" if p50 is None else f"{p50 * 100:+.0f} %")
    rows = pd.DataFrame([d.row() for d in report.diffs])
    if not rows.empty and not rows["changed"].any():
        st.text(
            f"No case changes under B: all {len(rows)} cases keep their exact precedents, recommendation and legacy admissions."
        )
    only_changed = st.toggle("Only the cases that change", value=True, key="ab_only_changed")
    st.dataframe(
        rows[rows["changed"]] if only_changed and not rows.empty else rows,
        hide_index=True,
        width="stretch",
        key="ab_cases",
    )
    if report.clones_deleted:
        st.text("Clones deleted when the comparison closed: " + ", ".join(report.clones_deleted))


def render_ab_tab(run_compare: Callable[[Variant, Variant], ABReport], decided: Callable[[], set[str]]) -> None:
    """`run_compare(a, b)` runs the queue under both (dashboard.lab.ab.compare) and closes the comparison;
    `decided()` the exceptions a reviewer decided."""
    st.subheader("A/B on the same queue")
    st.caption(
        "A is the server as it is or a what-if setting. B is a bank configuration tried on clones of the "
        "finance and support banks (deleted when the comparison closes), another Hindsight server, or a "
        "what-if setting: each case is then recalled once with a trace and both settings are predicted from it."
    )
    a = choose_a()
    b = choose_b(a)
    with st.expander("Which what-if needs which trace"):
        st.text(KNOB_TRACES)
    if a is None:
        return
    if a.kind == "whatif" and b is not None and b.kind != "whatif":
        st.info(
            "A what-if is predicted from the server's own traces: compare it with another what-if.",
            icon=":material/tune:",
        )
    elif b is None:
        st.info("Change at least one setting of B, or give B's URL.", icon=":material/tune:")
    elif st.button("Compare A and B", key="ab_run", type="primary", icon=":material/compare_arrows:"):
        with st.spinner("Running the queue under A and under B ..."):
            st.session_state["ab_report"] = run_compare(a, b)
    report = st.session_state.get("ab_report")
    if report is not None:
        render_ab_report(report, decided())
