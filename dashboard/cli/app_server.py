"""Run the dashboard as people do (`streamlit run dashboard/app/streamlit_app.py`, warmed by its lifespan) in a process
of its own, on a free loopback port, stopped by PID with its whole process group. Used by the
browser bench and the browser tests (which pass their own `start`: a fork of a warmed process, tests/warm_app.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dashboard.processes import HOST, Child, answers, free_port

REPO = Path(__file__).resolve().parents[2]
ENTRY = REPO / "dashboard" / "app" / "streamlit_app.py"  # the served st.App: the pages and the API
START_TIMEOUT_S = 60.0

# (Streamlit's options, the app's environment, its log) -> the running app, leading a process group of its own
Start = Callable[[list[str], dict[str, str], Path], Child]


def start_fresh(options: list[str], env: dict[str, str], log: Path) -> Child:
    """A new interpreter running `streamlit run dashboard/app/streamlit_app.py`, as people start the app (its lifespan
    warms it before it answers)."""
    return Child(
        [sys.executable, "-m", "streamlit", "run", str(ENTRY), *options], env=env, log=log, cwd=REPO, name="streamlit"
    )


@contextmanager
def serve_app(
    env: dict[str, str], data_dir: Path, *, start: Start = start_fresh, port: int | None = None
) -> Iterator[str]:
    """Start the app with `env` and its data in `data_dir`, on `port` (else a free loopback port); yields its URL and
    stops its whole process group after (by PID). The log is `data_dir/streamlit.log`."""
    path = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)  # this checkout's code
    env = {**env, "RECALL_REVIEW_DATA_DIR": str(data_dir), "HOME": str(data_dir), "PYTHONPATH": path}
    port = port or free_port()
    options = [
        "--server.headless",
        "true",
        "--server.address",
        HOST,
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    app = start(options, env, data_dir / "streamlit.log")
    url = f"http://{HOST}:{port}"
    try:
        app.wait_until(lambda: answers(url + "/_stcore/health"), START_TIMEOUT_S)
        yield url
    finally:
        app.stop(timeout=10)
