"""`python -m dashboard recall-exception` against the real server, and its input errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import signed_as
from tests.finance_helpers import CROWD_QUERY, crowding_records
from tests.helpers import run_command

ROOT = Path(__file__).resolve().parents[2]


def _run(monkeypatch, capsys, hindsight, bank, *argv):
    return run_command(monkeypatch, capsys, hindsight, bank, "recall-exception", *argv)


def test_json_report_for_a_scripted_audit(hindsight, bank_id, monkeypatch, capsys):
    hindsight.gateway.retain(bank_id, [signed_as(r) for r in crowding_records()])  # the demo seed's: a known origin
    code, out, err = _run(
        monkeypatch,
        capsys,
        hindsight,
        bank_id,
        "--vendor",
        "VA",
        "--type",
        "price_variance",
        "--query",
        CROWD_QUERY,
        "--k",
        "3",
        "--json",
    )
    assert code == 0, err
    report = json.loads(out)
    assert (report["bank"], report["vendor"], report["type"], report["query"], report["k"]) == (
        bank_id,
        "VA",
        "price_variance",
        CROWD_QUERY,
        3,
    )
    exact, broader = report["exact"], report["broader"]
    assert sorted(r["document_id"] for r in exact) == ["PREC-VA-0", "PREC-VA-1"]
    assert [(r["pass"], r["relevant"], r["rank"], r["outcome"]) for r in exact] == [
        ("exact", True, 1, "reject"),
        ("exact", True, 2, "reject"),
    ]
    assert [(r["document_id"][:8], r["pass"], r["relevant"], r["rank"]) for r in broader] == [
        ("PREC-VB-", "broader", False, 3)
    ]
    assert all(
        sorted(r["tags"]) == ["kind:decision", "type:price_variance", "vendor:VA"] for r in exact
    )  # a set: any order
    # one any_strict pass would have shown three VB records: both exact precedents lost, found by reusing pass 2
    assert (report["crowded_out_in_single_pass"], report["crowd_out_check"]) == (2, "reused pass 2")
    assert report["pass2_skipped"] is False and report["calls"] == 2
    rec = report["recommendation"]
    assert (rec["action"], rec["policy"], sorted(rec["cited"])) == ("reject", "precedent", ["PREC-VA-0", "PREC-VA-1"])
    assert 0 < rec["confidence"] <= 1 and "VA" in rec["rationale"]


@pytest.mark.parametrize(("others", "lost"), [(True, 2), (False, 0)], ids=["crowded", "alone"])
def test_pass2_skipped_report_counts_crowd_out_in_three_calls(hindsight, bank_id, monkeypatch, capsys, others, lost):
    records = [r for r in crowding_records() if others or r.document_id.startswith("PREC-VA-")]
    hindsight.gateway.retain(bank_id, records)
    code, out, err = _run(
        monkeypatch,
        capsys,
        hindsight,
        bank_id,
        "--vendor",
        "VA",
        "--type",
        "price_variance",
        "--query",
        CROWD_QUERY,
        "--k",
        "2",
        "--json",
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["pass2_skipped"] is True and report["broader"] == []
    assert sorted(r["document_id"] for r in report["exact"]) == ["PREC-VA-0", "PREC-VA-1"]
    assert (report["calls"], report["crowd_out_check"]) == (
        3,
        "one extra any_strict call",
    )  # pass 1, human decisions, single pass
    assert report["crowded_out_in_single_pass"] == lost


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--type", "price_variance"], "error: --vendor: is required"),
        (["--vendor", "", "--type", "price_variance"], "error: --vendor: is required"),
        (["--vendor", "V 01", "--type", "price_variance"], "error: --vendor: vendor code 'V 01'"),
        (["--vendor", "V01", "--type", "late_fee"], "error: --type: unknown exception type 'late_fee'"),
        (["--vendor", "V01"], "error: --type: is required"),
        (["--vendor", "V01", "--type", "price_variance", "--k", "zero"], "error: --k: must be a whole number"),
    ],
)
def test_bad_input_exits_2_naming_the_field_without_a_traceback(argv, message):
    proc = subprocess.run(
        [sys.executable, "-m", "dashboard", "recall-exception", *argv, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stderr.startswith(message), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
