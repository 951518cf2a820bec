"""Labelled evidence sets: parsing, the finance queue as a set, and `evidence-bench` on the real server."""

from __future__ import annotations

import json

import pytest

from dashboard.cli.seed import finance_records
from dashboard.lab.finance_set import SHIPPED_SET, demo_finance_cases
from dashboard.traces.evidence import EvidenceSetError, dump_cases, load_cases, parse_cases
from tests.helpers import run_command


def test_the_shipped_finance_set_is_the_queue_labelled_by_vendor_and_type():
    cases = demo_finance_cases()
    assert SHIPPED_SET.read_text() == dump_cases(cases)  # regenerate with dump_cases(demo_finance_cases())
    assert load_cases(SHIPPED_SET) == cases
    v01 = next(c for c in cases if "V01" in c.query and c.query.startswith("price variance"))
    assert v01.expected_document_ids and all(d.startswith("PREC-V01-PRI-") for d in v01.expected_document_ids)
    assert not v01.tags  # untagged: the arms compete as in a single recall


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not JSON"),
        ('{"query": "q"}', "line 2: expected_document_ids: Field required"),
        ('{"query": "q", "expected_document_ids": []}', "line 2: expected_document_ids"),
        ('{"query": "q", "expected_document_ids": ["d"], "tags_match": "some"}', "line 2: tags_match"),
        ('{"query": "q", "expected_document_ids": ["d"], "extra": 1}', "line 2: extra"),
    ],
)
def test_a_bad_line_is_named(line, message):
    good = '{"query": "q", "expected_document_ids": ["d"]}'
    with pytest.raises(EvidenceSetError, match=message):
        parse_cases([good, line], "set.jsonl")


def _bench(monkeypatch, capsys, hindsight, bank, *argv):
    return run_command(monkeypatch, capsys, hindsight, bank, "evidence-bench", *argv)


def test_evidence_bench_on_the_demo_finance_set(hindsight, bank_id, monkeypatch, capsys):
    hindsight.gateway.retain(bank_id, finance_records())
    code, out, err = _bench(monkeypatch, capsys, hindsight, bank_id, "--finance", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["cases"] == len(demo_finance_cases()) == 15 and report["failed"] == []
    assert {"cases", "evidence_at_k", "per_arm", "grid"} <= set(report)
    per_case = report["per_case"]
    assert report["evidence_at_k"] == sum(c["evidence"] for c in per_case)
    # The prediction with the server's settings is what the server returned.
    assert (
        report["predicted_evidence_at_k_default"] == report["evidence_at_k"] == report["grid_baseline"]["evidence_at_k"]
    )
    for arm, row in report["per_arm"].items():
        assert {"in_list", "in_pool", "in_top_k", "share_of_top_k"} <= set(row), arm
        assert row["in_top_k"] <= row["in_pool"] <= row["in_list"] <= report["cases"]
        assert 0.0 <= row["share_of_top_k"] <= 1.0
    grid = report["grid"]
    assert len(grid) == (3**4 - 1) * 4 * len({g["min_bm25"] for g in grid})
    assert [g["evidence_at_k"] for g in grid] == sorted((g["evidence_at_k"] for g in grid), reverse=True)
    # The Hindsight issue on the demo data: the graph arm holds top-k slots without the evidence;
    # switching it off (or capping every arm) brings the evidence into the top k more often.
    graph = report["per_arm"]["graph"]
    assert graph["share_of_top_k"] > 0.5 and graph["in_top_k"] < report["cases"]
    graph_off = next(
        g
        for g in grid
        if g["weights"] == {"semantic": 1, "bm25": 1, "graph": 0, "temporal": 1}
        and g["cap"] is None
        and g["min_bm25"] is None
    )
    assert graph_off["evidence_at_k"] > report["evidence_at_k"]

    code, text, _ = _bench(monkeypatch, capsys, hindsight, bank_id, "--finance", "--k", "5", "--no-grid")
    assert code == 0 and "15 cases on bank" in text and "share of top k" in text


def test_evidence_bench_input_errors(hindsight, monkeypatch, capsys, tmp_path):
    bad = tmp_path / "set.jsonl"
    bad.write_text('{"query": "q"}\n')
    code, _, err = _bench(monkeypatch, capsys, hindsight, "b", "--set", str(bad), "--bank", "b")
    assert code == 2 and "line 1: expected_document_ids" in err
    code, _, err = _bench(monkeypatch, capsys, hindsight, "b", "--finance", "--k", "0")
    assert code == 2 and "--k" in err
