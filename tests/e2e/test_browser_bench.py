"""`python -m benches browser` end to end on small sizes: it prints a figure per size for each
measurement, judges each against its target, says which evidence marker it waited for, and leaves no app
or browser process behind. The figures themselves are never asserted (speed lives in the bench)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import psutil
import pytest

from benches import data as bench_data
from benches.browser import DEMO_BANK, EVIDENCE_SHOWN, LABELS, MARKERS, TARGETS_MS, SizeResult, summarise
from dashboard.cli.app_server import REPO
from tests.helpers import scratch_databases


@pytest.fixture
def bench_env(hindsight) -> Iterator[tuple[dict[str, str], str]]:
    """The bench's environment, its temporary files in a directory of this test's own, and the mark its processes
    carry (its apps' and Chromium's environments name that directory): the other bench test may run beside
    this one on another worker, and its processes are not this bench's. Short, under /tmp: Chromium's socket
    path must fit in 108 bytes."""
    with tempfile.TemporaryDirectory(prefix="bb-") as tmp:
        env = {**os.environ, **hindsight.env(), "TMPDIR": tmp}
        env.pop("HINDSIGHT_API_URL", None)
        env.pop("RECALL_REVIEW_PREFETCH")  # the bench measures the product's default
        yield env, f"{tmp}/bench-browser-"


def _started_by(mark: str) -> set[int]:
    """Processes whose environment points into the bench's temporary directory (its apps and Chromium)."""
    found = set()
    for proc in psutil.process_iter(["pid"]):
        try:
            if any(mark in value for value in proc.environ().values()):
                found.add(proc.pid)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def _left_behind(mark: str, timeout: float = 30.0) -> set[int]:
    """The bench's processes still running `timeout` s after it ended (Chromium's children exit a moment after it)."""
    started = []
    for pid in _started_by(mark):
        try:
            started.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            continue
    _gone, alive = psutil.wait_procs(started, timeout=timeout)
    return {proc.pid for proc in alive}


def _described(pids: set[int]) -> list[str]:
    described = []
    for pid in sorted(pids):
        try:
            proc = psutil.Process(pid)
            described.append(f"{pid} (parent {proc.ppid()}): {' '.join(proc.cmdline())[:160]}")
        except psutil.NoSuchProcess:
            described.append(f"{pid}: gone")
    return described


def test_bench_browser_reports_both_sizes_and_stops_what_it_started(hindsight, bench_env):
    env, mark = bench_env
    done = subprocess.run(  # the synthetic queue's apps share a PostgreSQL store holding 100 decisions over its last 5 cases
        [
            sys.executable,
            "-m",
            "benches",
            "browser",
            "--sizes",
            "18,25",
            "--runs",
            "1",
            "--bank-size",
            "40",
            "--decisions",
            "100",
            "--json",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, "\n".join(line for line in done.stderr.splitlines() if "crashpad" not in line)[-3000:]
    report = json.loads(done.stdout)

    assert [row["name"] for row in report["rows"]] == list(LABELS.values())  # first, cold, J, K, N, decision
    for row in report["rows"]:
        assert [(cell["size"], cell["load"]) for cell in row["sizes"]] == [
            ("18 cases (demo), its own store", "quiet"),
            ("25 cases, 40-memory bank, 100 decisions in the store", "quiet"),
        ]
        for cell in row["sizes"]:
            assert len(cell["samples_ms"]) == 1 and cell["median_ms"] > 0, cell
            assert cell["verdict"] == ("PASS" if cell["median_ms"] <= row["targets_ms"]["quiet"] else "MISS"), cell
    assert any(
        note.startswith("evidence marker: ") and any(m in note for m in MARKERS.values()) for note in report["notes"]
    )
    assert report["viewport"] == "1440x900"
    assert (
        "review store: 100 decisions over 5 of the 25 cases, 2 held, in a PostgreSQL database the apps share"
        in report["notes"]
    )
    assert scratch_databases(hindsight.settings.pg_port, "bench_browser_") == []  # dropped
    assert hindsight.server.status().healthy  # the bench reused the server and left it running
    for bank in (DEMO_BANK, bench_data.bench_bank(40)):  # its decisions deleted: the banks as it found them
        assert not hindsight.gateway.list_documents(bank, search="decision-")["items"], bank
    left = _left_behind(mark)
    assert not left, f"the bench left {_described(left)}"


def test_bench_browser_stopped_by_sigterm_stops_the_app_it_started(bench_env, tmp_path):
    env, mark = bench_env
    log = (tmp_path / "bench.log").open("w")
    bench = subprocess.Popen(
        [sys.executable, "-m", "benches", "browser", "--sizes", "18", "--runs", "3", "--json"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 300
        while not _started_by(mark):  # its browser (or app) is up
            assert bench.poll() is None and time.monotonic() < deadline, "the bench never started its app"
            time.sleep(0.2)
        bench.send_signal(signal.SIGTERM)
        bench.wait(timeout=120)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    left = _left_behind(mark)
    log.close()
    assert not left, (
        f"a bench stopped by SIGTERM left {_described(left)}; its output: {(tmp_path / 'bench.log').read_text()[-3000:]}"
    )


def test_each_load_is_judged_against_its_own_target():
    quiet, hog = SizeResult("18 cases (demo)", "quiet"), SizeResult("18 cases (demo)", "hog")
    quiet.samples["J"], hog.samples["J"] = [200.0, 400.0, 350.0], [400.0, 500.0, 700.0]  # medians 350 and 500
    row = next(r for r in summarise([quiet, hog], 3, [])["rows"] if r["name"] == LABELS["J"])
    assert (
        row["targets_ms"] == {"quiet": TARGETS_MS["J"][0], "hog": TARGETS_MS["J"][1]} == {"quiet": 300.0, "hog": 600.0}
    )
    assert [(c["load"], c["median_ms"], c["verdict"]) for c in row["sizes"]] == [
        ("quiet", 350.0, "MISS"),
        ("hog", 500.0, "PASS"),
    ]


def test_the_evidence_counts_only_under_the_header_of_the_case_in_the_address_bar(page):
    """After a key, the address bar moves a frame or two before Streamlit marks the previous case's elements
    stale: its evidence, still looking fresh, must not stop the clock."""

    def case_page(header: str, stale: bool = False) -> str:
        mark = ' data-stale="true"' if stale else ""
        return (
            f'<div class="st-key-case_header"><div{mark}><h2>{header}</h2></div></div><div class="st-key-case_evidence">'
            f'<div data-testid="stElementContainer"{mark}>Exact: this vendor AND this type</div></div>'
        )

    shown = {}
    page.route("http://bench.test/**", lambda route: route.fulfill(content_type="text/html", body=shown["body"]))

    def check(header: str, case: str, previous: str | None, stale: bool = False):
        shown["body"] = case_page(header, stale)
        page.goto(f"http://bench.test/exceptions?case={case}")
        return page.evaluate(f"({EVIDENCE_SHOWN})", previous)

    assert check("E-1002: V01 price variance", "E-1002", "E-1001") == "container"
    assert check("E-1001: V01 price variance", "E-1002", "E-1001") is False  # the previous case, not yet marked stale
    assert check("E-1002: V01 price variance", "E-1002", "E-1001", stale=True) is False
    assert check("E-1002: V01 price variance", "E-1002", None) == "container"  # a cold open
    assert check("E-1002: V01 price variance", "E-1002", "E-1002") is False  # the address bar has not moved yet
