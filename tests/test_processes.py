"""The processes the project starts: a child is stopped with its whole group, one that dies during start-up
fails at once with its log, and a test session stopped by SIGTERM or SIGINT leaves no server behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from dashboard import processes
from dashboard.processes import Child, ProcessFailed

REPO = Path(__file__).resolve().parents[1]


def test_a_child_and_everything_it_started_are_stopped_together(tmp_path):
    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); time.sleep(300)"
    child = Child([sys.executable, "-c", script], env=dict(os.environ), log=tmp_path / "child.log", cwd=tmp_path, name="sleeper")
    child.wait_until(lambda: len(child.process.children()) == 1, timeout=30)
    grandchild = child.process.children()[0]
    child.stop(timeout=10)
    assert not child.running() and not grandchild.is_running()


def test_a_child_that_exits_during_start_up_fails_at_once_with_its_log(tmp_path):
    child = Child([sys.executable, "-c", "print('no such config'); raise SystemExit(3)"], env=dict(os.environ),
                  log=tmp_path / "child.log", cwd=tmp_path, name="broken")  # fmt: skip
    started = time.monotonic()
    with pytest.raises(ProcessFailed, match="broken exited during start-up(.|\n)*no such config"):
        child.wait_until(lambda: False, timeout=60)
    assert time.monotonic() - started < 30


def test_a_child_that_never_answers_is_stopped_after_its_timeout(tmp_path):
    child = Child([sys.executable, "-c", "import time; time.sleep(300)"], env=dict(os.environ), log=tmp_path / "c.log", cwd=tmp_path, name="mute")
    with pytest.raises(ProcessFailed, match="mute not healthy after 1 s"):
        child.wait_until(lambda: False, timeout=1)
    assert not child.running()


def test_stop_all_stops_the_children_still_running_and_runs_the_stoppers(tmp_path, monkeypatch):
    # a registry of this test's own: the real one holds this worker's session server
    monkeypatch.setattr(processes, "_children", {})
    monkeypatch.setattr(processes, "_stoppers", [])
    child = Child([sys.executable, "-c", "import time; time.sleep(300)"], env=dict(os.environ), log=tmp_path / "c.log", cwd=tmp_path, name="c")
    ran = []
    processes.on_exit(lambda: ran.append("stopped"))
    forget = processes.on_exit(lambda: ran.append("forgotten"))
    forget()
    processes.stop_all()
    assert not child.running() and ran == ["stopped"]


HOLDS_A_CHILD = """
import json, sys, time
from pathlib import Path
from dashboard import processes
processes.stop_children_on_signals()
child = processes.Child([sys.executable, "-c", "import time; time.sleep(300)"], env={}, log=Path(sys.argv[2]), cwd=".", name="held")
open(sys.argv[1], "w").write(json.dumps(child.pid))
time.sleep(300)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_process_stopped_by_a_signal_stops_its_children(tmp_path, sig):
    pid_file = tmp_path / "child.json"
    holder = subprocess.Popen([sys.executable, "-c", HOLDS_A_CHILD, str(pid_file), str(tmp_path / "held.log")], cwd=REPO)
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert holder.poll() is None and time.monotonic() < deadline, "the holder never started its child"
            time.sleep(0.1)  # polls for the holder's file; the signal below is what is tested
        child = psutil.Process(json.loads(pid_file.read_text()))
        holder.send_signal(sig)
        holder.wait(timeout=60)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert holder.returncode != 0  # ended as by KeyboardInterrupt, not left running
    assert not psutil.wait_procs([child], timeout=30)[1]


def test_a_test_session_stopped_by_sigterm_stops_every_server_it_started(tmp_path):
    """The real case (a CI timeout): a pytest session holding an embedded Hindsight; SIGINT takes the same handler."""
    sig = signal.SIGTERM
    probe = tmp_path / "servers.json"
    env = {**os.environ, "RECALL_REVIEW_PROBE_FILE": str(probe)}
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(REPO / "tests" / "probes" / "holds_a_server.py")],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not probe.exists():
            assert session.poll() is None, session.stdout.read().decode()[-3000:]
            assert time.monotonic() < deadline, "the probe session never started its server"
            time.sleep(0.2)  # polls for the probe's file; the signal below is what is tested
        servers = json.loads(probe.read_text())
        alive = [psutil.Process(servers["api_pid"]), psutil.Process(servers["pg_pid"])]
        session.send_signal(sig)
        session.wait(timeout=120)
    finally:
        if session.poll() is None:
            session.kill()
            session.wait()
    gone, still = psutil.wait_procs(alive, timeout=30)
    assert not still, [p.pid for p in still]
