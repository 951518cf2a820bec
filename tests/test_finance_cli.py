"""`python -m dashboard recall-exception` against the real server, and its input errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.cli import main
from tests.finance_helpers import precedent

ROOT = Path(__file__).resolve().parents[1]


def _run(monkeypatch, capsys, hindsight, bank_id, *argv):
    for key, value in hindsight.env(finance=bank_id).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    code = main(["recall-exception", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_report_for_a_scripted_audit(hindsight, bank_id, monkeypatch, capsys):
    hindsight.gateway.retain(bank_id, [precedent("PREC-A-0", "VA", "price_variance", "reject")]
                             + [precedent(f"PREC-B-{i}", "VB", "price_variance") for i in range(5)])  # fmt: skip
    code, out, err = _run(monkeypatch, capsys, hindsight, bank_id, "--vendor", "VA", "--type", "price_variance", "--k", "3", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert {"exact", "broader", "pass2_skipped", "crowded_out_in_single_pass", "recommendation"} <= set(report)
    assert [r["document_id"] for r in report["exact"]] == ["PREC-A-0"] and len(report["broader"]) == 2
    for record in report["exact"] + report["broader"]:
        assert {"id", "text", "tags", "relevant", "pass"} <= set(record)
    assert [(r["pass"], r["relevant"]) for r in report["exact"] + report["broader"]] == [("exact", True), ("broader", False), ("broader", False)]
    assert report["pass2_skipped"] is False and report["calls"] == 2
    assert isinstance(report["crowded_out_in_single_pass"], int)
    assert report["recommendation"]["action"] == "reject" and report["recommendation"]["cited"] == ["PREC-A-0"]
    assert set(report["recommendation"]) >= {"action", "confidence", "cited", "rationale"}


def test_pass2_skipped_report_still_counts_crowd_out_in_three_calls(hindsight, bank_id, monkeypatch, capsys):
    hindsight.gateway.retain(bank_id, [precedent(f"PREC-A-{i}", "VA", "price_variance") for i in range(3)])
    code, out, _ = _run(monkeypatch, capsys, hindsight, bank_id, "--vendor", "VA", "--type", "price_variance", "--k", "2", "--json")
    report = json.loads(out)
    assert code == 0 and report["pass2_skipped"] is True and report["broader"] == []
    assert report["calls"] == 3 and report["crowded_out_in_single_pass"] == 0  # pass 1, human decisions, single pass


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
    proc = subprocess.run([sys.executable, "-m", "dashboard", "recall-exception", *argv, "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.startswith(message), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
