"""The A/B tab: the finance queue and the tickets under A (the server as it is) and B (a bank
configuration on clones, or another Hindsight URL). Everything typed or recalled goes to st.text,
st.code or dataframes."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from dashboard.lab.ab import ABReport, Variant


def choose_b() -> Variant | None:
    kind = st.radio("B is", ["a bank configuration (on clones)", "another Hindsight URL"], horizontal=True, key="ab_kind")
    if kind.startswith("another"):
        url = st.text_input("Hindsight URL for B", key="ab_url", placeholder="http://127.0.0.1:8889")
        return Variant(name="b", kind="url", url=url.strip()) if url.strip() else None
    cols = st.columns(4)
    config: dict[str, bool | int] = {}
    for col, (name, label) in zip(cols, [("enable_graph_retrieval", "graph arm"), ("enable_text_search", "BM25 arm"),
                                         ("enable_temporal_retrieval", "temporal arm")], strict=False):  # fmt: skip
        if not col.checkbox(label, value=True, key=f"ab_{name}"):
            config[name] = False
    budget = cols[3].number_input("mid budget (0 = unchanged)", min_value=0, max_value=5000, value=0, step=50, key="ab_budget")
    if budget:
        config["recall_budget_fixed_mid"] = int(budget)
    return Variant(name="b", kind="bank_config", bank_config=config) if config else None


def render_ab_report(report: ABReport) -> None:
    st.text(report.summary())
    cols = st.columns(4)
    cols[0].metric("Recommendations changed", report.recommendations_changed)
    cols[1].metric("Exact precedents lost", report.exact_lost)
    cols[2].metric("Exact precedents gained", report.exact_gained)
    p50 = report.p50_change
    cols[3].metric("p50 latency, B vs A", "n/a" if p50 is None else f"{p50 * 100:+.0f} %")
    rows = pd.DataFrame([d.row() for d in report.diffs])
    only_changed = st.toggle("Only the cases that change", value=True, key="ab_only_changed")
    st.dataframe(rows[rows["changed"]] if only_changed and not rows.empty else rows, hide_index=True, width="stretch", key="ab_cases")
    if report.clones_deleted:
        st.text("Clones deleted when the comparison closed: " + ", ".join(report.clones_deleted))


def render_ab_tab(run_compare: Callable[[Variant, Variant], ABReport]) -> None:
    """`run_compare(a, b)` runs the queue under both (dashboard.lab.ab.compare) and closes the comparison."""
    st.subheader("A/B on the same queue")
    st.caption("A is the server as it is. B is a bank configuration tried on clones of the finance and support "
               "banks (deleted when the comparison closes), or another Hindsight server.")  # fmt: skip
    b = choose_b()
    if b is None:
        st.info("Change at least one setting of B, or give B's URL.", icon=":material/tune:")
    elif st.button("Compare A and B", key="ab_run", type="primary", icon=":material/compare_arrows:"):
        with st.spinner("Running the queue under A and under B ..."):
            st.session_state["ab_report"] = run_compare(Variant(name="a"), b)
    report = st.session_state.get("ab_report")
    if report is not None:
        render_ab_report(report)
