"""Run the dashboard as people do: `streamlit run dashboard/app/main.py` in a process of its own, on a free
loopback port, stopped by PID with its whole process group. Used by the browser bench and the browser tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"streamlit not healthy after {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)  # the app and anything it started
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


@contextmanager
def serve_app(env: dict[str, str], data_dir: Path) -> Iterator[str]:
    """`streamlit run` the app with `env` and its data in `data_dir`, on a free loopback port; yields its URL
    and stops its whole process group after (by PID). The log is `data_dir/streamlit.log`."""
    path = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)  # this checkout's code
    env = {**env, "RECALL_REVIEW_DATA_DIR": str(data_dir), "HOME": str(data_dir), "PYTHONPATH": path}
    port = free_port()
    log = data_dir / "streamlit.log"
    cmd = [sys.executable, "-m", "streamlit", "run", "dashboard/app/main.py", "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield url
    finally:
        _stop(proc)
