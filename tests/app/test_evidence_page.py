"""The Evidence tab on the Traces page, through AppTest, against the real server."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from dashboard.cli.seed import finance_records, support_records
from tests.conftest import APP
from tests.helpers import bank_ids


def test_evidence_tab_runs_the_finance_set_and_shows_the_figures(point_app, hindsight, bank_id):
    hindsight.gateway.retain(bank_id, finance_records())
    point_app(hindsight.env(finance=bank_id))
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("views/traces.py").run()
    at.text_input(key="console_query").input("price variance for vendor V01")
    at.form_submit_button[0].click().run()
    assert not at.exception, at.exception
    assert at.radio(key="lab_set_source").value.startswith("Finance")
    at.button(key="lab_run").click().run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Cases"] == "15"
    assert "Evidence in returned top 10" in metrics and "Best what-if (predicted)" in metrics
    per_arm = next(df.value for df in at.dataframe if "share_of_top_k" in df.value.columns)
    assert list(per_arm["arm"]) == ["semantic", "bm25", "graph", "temporal"]
    assert any("server knob" in df.value.columns for df in at.dataframe)  # the knob guide


def test_ab_tab_compares_graph_off_on_clones_and_shows_the_summary(point_app, hindsight, bank_id):
    support = f"{bank_id}-sup"
    hindsight.gateway.ensure_bank(support)
    hindsight.gateway.retain(bank_id, finance_records())
    hindsight.gateway.retain(support, support_records())
    point_app(hindsight.env(finance=bank_id, support=support))
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("views/traces.py").run()
    at.text_input(key="console_query").input("price variance for vendor V01")
    at.form_submit_button[0].click().run()
    at.checkbox(key="ab_enable_graph_retrieval").uncheck().run()
    at.button(key="ab_run").click().run()
    assert not at.exception, at.exception
    summary = next(t.value for t in at.text if t.value.startswith("under B ("))
    assert "enable_graph_retrieval=False" in summary and "recommendation(s) change" in summary
    assert {"Recommendations changed", "Exact precedents lost", "p50 latency, B vs A"} <= {m.label for m in at.metric}
    assert not [b for b in bank_ids(hindsight.gateway) if b.startswith("ab-b-")]  # clones deleted


def test_ab_tab_compares_a_whatif_with_the_server_and_says_which_trace_a_knob_needs(
    point_app, hindsight, demo_banks_read_only
):
    point_app(hindsight.env(finance=demo_banks_read_only.finance, support=demo_banks_read_only.support))
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("views/traces.py").run()
    at.text_input(key="console_query").input("price variance for vendor V01")
    at.form_submit_button[0].click().run()
    at.radio(key="ab_kind").set_value("a what-if setting (predicted)").run()
    assert any("A BM25 gate: only from an ungated trace" in t.value for t in at.text)
    assert any("Change at least one setting of B" in i.value for i in at.info)
    at.selectbox(key="ab_b_w_graph").set_value(0.0).run()
    before = bank_ids(hindsight.gateway)
    at.button(key="ab_run").click().run()
    assert not at.exception, at.exception
    summary = next(t.value for t in at.text if t.value.startswith("under B ("))
    assert (
        summary.startswith("under B (what-if: graph arm weight 0): ") and "latency not compared (predicted)" in summary
    )
    check = next(t.value for t in at.text if t.value.startswith("Check: predicted with the server's settings"))
    recalls = int(check.split(" of ")[1].split()[0])
    assert recalls > 0 and f"settings, {recalls} of {recalls} recalls return exactly" in check
    assert bank_ids(hindsight.gateway) == before  # a what-if clones nothing
