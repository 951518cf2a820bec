"""The processes the project starts: a child is stopped with its whole group, one that dies during start-up
fails at once with its log, and a test session stopped by SIGTERM or SIGINT leaves no server behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from dashboard import processes
from dashboard.processes import Child, ProcessFailed

REPO = Path(__file__).resolve().parents[2]


def test_a_child_and_everything_it_started_are_stopped_together(tmp_path):
    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); time.sleep(300)"
    child = Child(
        [sys.executable, "-c", script], env=dict(os.environ), log=tmp_path / "child.log", cwd=tmp_path, name="sleeper"
    )
    child.wait_until(lambda: len(child.process.children()) == 1, timeout=30)
    grandchild = child.process.children()[0]
    child.stop(timeout=10)
    assert not child.running() and not grandchild.is_running()


def test_a_child_that_exits_during_start_up_fails_at_once_with_its_log(tmp_path):
    child = Child(
        [sys.executable, "-c", "print('no such config'); raise SystemExit(3)"],
        env=dict(os.environ),
        log=tmp_path / "child.log",
        cwd=tmp_path,
        name="broken",
    )
    started = time.monotonic()
    with pytest.raises(ProcessFailed, match="broken exited during start-up(.|\n)*no such config"):
        child.wait_until(lambda: False, timeout=60)
    assert time.monotonic() - started < 30


def test_a_child_that_never_answers_is_stopped_after_its_timeout(tmp_path):
    child = Child(
        [sys.executable, "-c", "import time; time.sleep(300)"],
        env=dict(os.environ),
        log=tmp_path / "c.log",
        cwd=tmp_path,
        name="mute",
    )
    with pytest.raises(ProcessFailed, match="mute not healthy after 1 s"):
        child.wait_until(lambda: False, timeout=1)
    assert not child.running()


def test_stop_all_stops_the_children_still_running_and_runs_the_stoppers(tmp_path, monkeypatch):
    # a registry of this test's own: the real one holds this worker's session server
    monkeypatch.setattr(processes, "_children", {})
    monkeypatch.setattr(processes, "_stoppers", [])
    child = Child(
        [sys.executable, "-c", "import time; time.sleep(300)"],
        env=dict(os.environ),
        log=tmp_path / "c.log",
        cwd=tmp_path,
        name="c",
    )
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
Path(sys.argv[1] + ".tmp").write_text(json.dumps(child.pid))
Path(sys.argv[1] + ".tmp").replace(sys.argv[1])  # whole, or not there
time.sleep(300)
"""


HOLDS_A_SIGNAL = """
import os, signal
from dashboard import processes
came, started = [], False
signal.signal(signal.SIGTERM, lambda signum, frame: came.append("once registered" if started else "while starting"))
with processes.signals_held():
    os.kill(os.getpid(), signal.SIGTERM)
    sum(range(100_000))  # bytecode enough for an unheld handler to run here
    started = True
print(came)
"""


def test_a_stop_signalled_while_a_child_starts_waits_until_it_is_registered():
    run = subprocess.run(
        [sys.executable, "-c", HOLDS_A_SIGNAL], cwd=REPO, capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.strip() == "['once registered']"


@contextmanager
def _started(argv: list[str], **popen) -> Iterator[subprocess.Popen]:
    """A process for one test, killed at the end if the test left it running."""
    proc = subprocess.Popen(argv, cwd=REPO, **popen)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _written_by(proc: subprocess.Popen, path: Path, timeout: float):
    """The JSON `proc` writes to `path` once it is ready (polled: the signal sent after is what is tested)."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text()):
        assert proc.poll() is None, (
            f"exited before writing {path.name}: {proc.stdout.read().decode()[-3000:] if proc.stdout else ''}"
        )
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.1)
    return json.loads(path.read_text())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_process_stopped_by_a_signal_stops_its_children(tmp_path, sig):
    pid_file = tmp_path / "child.json"
    with _started([sys.executable, "-c", HOLDS_A_CHILD, str(pid_file), str(tmp_path / "held.log")]) as holder:
        child = psutil.Process(_written_by(holder, pid_file, timeout=60))
        holder.send_signal(sig)
        holder.wait(timeout=60)
    assert holder.returncode != 0  # ended as by KeyboardInterrupt, not left running
    assert not psutil.wait_procs([child], timeout=30)[1]


def test_a_test_session_stopped_by_sigterm_stops_every_server_it_started(tmp_path):
    """The real case (a CI timeout): a pytest session holding an embedded Hindsight; SIGINT takes the same handler."""
    probe = tmp_path / "servers.json"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        str(REPO / "tests" / "probes" / "holds_a_server.py"),
    ]
    env = {**os.environ, "RECALL_REVIEW_PROBE_FILE": str(probe)}
    with _started(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as session:
        servers = _written_by(session, probe, timeout=180)
        alive = [psutil.Process(servers["api_pid"]), psutil.Process(servers["pg_pid"])]
        session.send_signal(signal.SIGTERM)
        session.wait(timeout=120)
    assert not psutil.wait_procs(alive, timeout=30)[1]
