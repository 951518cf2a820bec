"""`python -m benches scale` on a small history: every read answers, and the scratch database is dropped."""

from __future__ import annotations

import json

from benches.scale import GROUPED_READ, LOG_READ, MODELS_READ, QUEUE_READ
from tests.helpers import run_command, scratch_databases


def test_bench_scale_times_every_read_on_the_seeded_history_and_drops_its_database(
    hindsight, bank_id, monkeypatch, capsys
):
    argv = ("scale", "--cases", "300", "--decisions", "3000", "--repeat", "2", "--json")
    code, out, err = run_command(monkeypatch, capsys, hindsight, bank_id, *argv, bench=True)
    assert code == 0, err
    report = json.loads(out)
    rows = {name: figure["rows"] for name, figure in report["figures"].items()}
    assert (
        rows
        == {
            QUEUE_READ: 300,
            GROUPED_READ: 300,
            MODELS_READ: 300,
            LOG_READ: 300,
            "the standing decisions counted by day, outcome and reason (the Overview)": 2,  # one day: kept, and overridden at V01
            "the calibration by confidence band (the Overview)": 1,  # every seeded record's agent was 0.80 sure
            "the cases decided (ids only)": 300,
            "one case's latest decision, in full (a case open)": 1,
            "every case's flags": 300,
            "the flags of a page of 50 cases": 50,
        }
    )
    assert all(len(figure["samples_ms"]) == 2 and figure["median_ms"] > 0 for figure in report["figures"].values())
    assert "seeded 3,000 decisions over 300 cases" in err
    assert scratch_databases(hindsight.settings.pg_port, "bench_scale_") == []


def test_bench_scale_refuses_an_empty_history(hindsight, bank_id, monkeypatch, capsys):
    code, _out, err = run_command(monkeypatch, capsys, hindsight, bank_id, "scale", "--decisions", "0", bench=True)
    assert code == 2 and "--decisions: must be at least 1" in err
