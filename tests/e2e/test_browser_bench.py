"""`python -m dashboard bench-browser` end to end on small sizes: it prints a figure per size for each
measurement, judges each against its target, says which evidence marker it waited for, and leaves no app
or browser process behind. The figures themselves are never asserted (speed lives in the bench)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psutil

from dashboard.cli.app_server import REPO
from dashboard.cli.browser_bench import MARKERS, TARGETS_MS


def _started_by_a_bench() -> list[int]:
    """Processes whose environment points into a bench-browser temporary directory (its apps and Chromium)."""
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if any("/bench-browser-" in value for value in proc.environ().values()):
                found.append(proc.pid)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def test_bench_browser_reports_both_sizes_and_stops_what_it_started(hindsight):
    before = set(_started_by_a_bench())
    env = {**os.environ, **hindsight.env()}
    env.pop("HINDSIGHT_API_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", "bench-browser", "--sizes", "18,5", "--runs", "1", "--bank-size", "40", "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)

    assert [row["target_ms"] for row in report["rows"]] == list(TARGETS_MS.values())
    for row in report["rows"]:
        assert [cell["size"] for cell in row["sizes"]] == ["18 cases (demo)", "5 cases, 40-memory bank"]
        for cell in row["sizes"]:
            assert len(cell["samples_ms"]) == 1 and cell["median_ms"] > 0, cell
            assert cell["verdict"] == ("PASS" if cell["median_ms"] <= row["target_ms"] else "MISS"), cell
    assert any(note.startswith("evidence marker: ") and any(m in note for m in MARKERS.values()) for note in report["notes"])
    assert report["viewport"] == "1440x900"
    assert hindsight.server.status().healthy  # the bench reused the server and left it running
    assert set(_started_by_a_bench()) <= before, "the bench left an app or browser process running"
