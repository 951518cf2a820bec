"""The embedded server's process handling: the API's PID counts as ours only with when it started (since boot,
so a stepped wall clock changes nothing), PostgreSQL's only while it serves our data directory; stop waits
with psutil.wait_procs (start-up polling is tested in test_processes.py).

The stand-in processes are `sleep`s this test starts and stops; the real server is only read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from dashboard.hindsight.embedded import EmbeddedServer, started
from dashboard.processes import free_port
from dashboard.settings import Settings


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    """An embedded server on a data directory of its own, never started (ports nobody listens on)."""
    data_dir = Path(tempfile.mkdtemp(prefix="recall-review-proc-"))
    os.chmod(data_dir, 0o755)  # as root, pg_home must stay inside it (reachable by `nobody`)
    embedded = EmbeddedServer(
        Settings(data_dir=data_dir, api_port=free_port(), pg_port=free_port()), log=lambda _m: None
    )
    embedded.home.mkdir(parents=True)
    try:
        yield embedded
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def stranger() -> Iterator[psutil.Process]:
    """Someone else's long-running process, leading its own session like hindsight-api does."""
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        yield psutil.Process(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def _write_state(server: EmbeddedServer, pid: int, started_at: float) -> None:
    server.state_file.write_text(
        json.dumps({"api_pid": pid, "api_started": started_at, "pg_pid": None, "url": server.url})
    )


def _write_postmaster_pid(server: EmbeddedServer, pid: int) -> None:
    server.pg_data.mkdir(parents=True, exist_ok=True)
    lines = [str(pid), str(server.pg_data), str(int(time.time())), str(server.settings.pg_port), "/tmp", "127.0.0.1"]
    (server.pg_data / "postmaster.pid").write_text("\n".join(lines) + "\n")


def test_a_reused_api_pid_is_not_our_server_and_stop_leaves_it_alone(server, stranger):
    _write_state(server, stranger.pid, started(stranger) - 3600)  # our API had this PID an hour ago
    status = server.status()
    assert (status.running, status.api_pid) == (False, None)
    server.stop(timeout=5)
    assert stranger.is_running() and stranger.status() != psutil.STATUS_ZOMBIE
    assert not server.state_file.exists()


def test_the_same_pid_with_its_start_is_ours_and_stop_ends_it(server, stranger):
    _write_state(server, stranger.pid, started(stranger))
    status = server.status()
    assert (status.running, status.api_pid) == (True, stranger.pid)
    server.stop(timeout=5)
    assert not stranger.is_running() or stranger.status() == psutil.STATUS_ZOMBIE


def test_a_postmaster_pid_is_ours_only_while_it_serves_our_data_directory(server, stranger):
    _write_postmaster_pid(server, stranger.pid)  # a stale file: the PID now runs something else
    assert server.status().pg_pid is None
    server.stop(timeout=5)
    assert stranger.is_running() and stranger.status() != psutil.STATUS_ZOMBIE
    other_data = server.home / "other-data"  # a postmaster of another data directory
    sleeper = ["-c", "import time; time.sleep(300)", "-D"]
    for data_dir, ours in ((other_data, False), (server.pg_data, True)):
        proc = subprocess.Popen([sys.executable, *sleeper, str(data_dir)], start_new_session=True)
        try:
            _until_exec(proc.pid, str(data_dir))
            _write_postmaster_pid(server, proc.pid)
            assert (server.status().pg_pid == proc.pid) is ours
        finally:
            proc.kill()
            proc.wait()


def test_a_wall_clock_stepped_after_the_start_loses_neither_server(server, stranger, monkeypatch):
    """psutil's create time is boot time + ticks, and the boot time moves when a VM's clock is stepped: the
    bench once left both servers running because their create times had moved 11 s."""
    _write_state(server, stranger.pid, started(stranger))
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: time.time() + 11.6)
    assert server.status().api_pid == stranger.pid
    server.stop(timeout=5)
    assert not stranger.is_running() or stranger.status() == psutil.STATUS_ZOMBIE


def _until_exec(pid: int, marker: str) -> None:
    deadline = time.monotonic() + 30
    while marker not in psutil.Process(pid).cmdline():  # until the child has exec'd its program
        assert time.monotonic() < deadline, "the stand-in process never started"
        time.sleep(0.05)


def test_the_real_server_is_recorded_with_its_start(hindsight):
    server = hindsight.server
    status = server.status()
    assert status.healthy and status.api_pid and status.pg_pid
    state = json.loads(server.state_file.read_text())
    assert state["api_pid"] == status.api_pid and state["api_started"] == started(psutil.Process(status.api_pid))
    # the same state file with another start: the real, healthy API is not claimed as ours
    other = EmbeddedServer(hindsight.settings, log=lambda _m: None)
    other.state_file = server.home / "server-copy.json"
    try:
        other.state_file.write_text(json.dumps({**state, "api_started": state["api_started"] - 3600}))
        seen = other.status()
        assert seen.healthy and not seen.running and seen.api_pid is None and seen.pg_pid == status.pg_pid
    finally:
        other.state_file.unlink(missing_ok=True)


def test_a_state_file_without_start_time_is_believed_only_for_a_running_hindsight_api(server, stranger):
    # server.json written before start times were stored: {"api_pid": ..., "pg_pid": ..., "url": ...}
    server.state_file.write_text(json.dumps({"api_pid": stranger.pid, "pg_pid": None, "url": server.url}))
    assert server.status().api_pid is None  # a `sleep` is not our API
    fake_api = server.home / "hindsight-api"
    fake_api.write_text("import time\ntime.sleep(300)\n")
    proc = subprocess.Popen([sys.executable, str(fake_api)], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while str(fake_api) not in psutil.Process(proc.pid).cmdline():  # until the child has exec'd its program
            assert time.monotonic() < deadline, "the stand-in API never started"
            time.sleep(0.05)
        server.state_file.write_text(json.dumps({"api_pid": proc.pid, "pg_pid": None, "url": server.url}))
        assert server.status().api_pid == proc.pid
        server.stop(timeout=5)
        with pytest.raises(psutil.NoSuchProcess):  # stopped, and reaped by wait_procs
            psutil.Process(proc.pid).status()
    finally:
        proc.kill()
        proc.wait()
