"""Run the dashboard as people do (`python -m dashboard.app.serve`: `streamlit run` with the app's modules imported
first) in a process of its own, on a free loopback port, stopped by PID with its whole process group. Used by the
browser bench and the browser tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dashboard.processes import HOST, Child, answers, free_port

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0


@contextmanager
def serve_app(env: dict[str, str], data_dir: Path) -> Iterator[str]:
    """`streamlit run` the app with `env` and its data in `data_dir`, on a free loopback port; yields its URL
    and stops its whole process group after (by PID). The log is `data_dir/streamlit.log`."""
    path = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)  # this checkout's code
    env = {**env, "RECALL_REVIEW_DATA_DIR": str(data_dir), "HOME": str(data_dir), "PYTHONPATH": path}
    port = free_port()
    cmd = [sys.executable, "-m", "dashboard.app.serve", "--server.headless", "true",
           "--server.address", HOST, "--server.port", str(port), "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    app = Child(cmd, env=env, log=data_dir / "streamlit.log", cwd=REPO, name="streamlit")
    url = f"http://{HOST}:{port}"
    try:
        app.wait_until(lambda: answers(url + "/_stcore/health"), START_TIMEOUT_S)
        yield url
    finally:
        app.stop(timeout=10)
