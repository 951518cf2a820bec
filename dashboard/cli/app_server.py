"""Run the dashboard as people do (`python -m dashboard.app.serve`: `streamlit run` with the app's modules imported
first) in a process of its own, on a free loopback port, stopped by PID with its whole process group. Used by the
browser bench and the browser tests.

`warmed=True` forks the app from a process that imported it once (a multiprocessing forkserver, per interpreter)
instead of starting a new interpreter: the same `dashboard.app.serve.main` in a session of its own, with its own
environment, working directory and log, minus the ~8 s of CPU a new interpreter spends importing (docs/performance.md).
The browser tests start two dozen apps this way; the bench starts fresh processes, since it times their first page."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

from dashboard.processes import HOST, Adopted, Child, answers, free_port, signals_held

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0


@contextmanager
def serve_app(env: dict[str, str], data_dir: Path, *, warmed: bool = False) -> Iterator[str]:
    """`streamlit run` the app with `env` and its data in `data_dir`, on a free loopback port; yields its URL
    and stops its whole process group after (by PID). The log is `data_dir/streamlit.log`."""
    path = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)  # this checkout's code
    env = {**env, "RECALL_REVIEW_DATA_DIR": str(data_dir), "HOME": str(data_dir), "PYTHONPATH": path}
    port = free_port()
    options = ["--server.headless", "true", "--server.address", HOST, "--server.port", str(port),
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    log = data_dir / "streamlit.log"
    if warmed:
        app = _fork_warmed(options, env, log)
    else:
        app = Child([sys.executable, "-m", "dashboard.app.serve", *options], env=env, log=log, cwd=REPO, name="streamlit")
    url = f"http://{HOST}:{port}"
    try:
        app.wait_until(lambda: answers(url + "/_stcore/health"), START_TIMEOUT_S)
        yield url
    finally:
        app.stop(timeout=10)


_forkserver = multiprocessing.get_context("forkserver")


def _fork_warmed(options: list[str], env: dict[str, str], log: Path) -> Adopted:
    """Fork the app from this interpreter's warmed forkserver; returns it once it leads its own session."""
    from dashboard.app.serve import app_module_names

    _forkserver.set_forkserver_preload([*app_module_names(), "streamlit.web.bootstrap"])  # read once, at its start
    log.parent.mkdir(parents=True, exist_ok=True)
    with signals_held():  # a stop signalled while it starts finds it registered
        fork = _forkserver.Process(target=_serve_in_fork, args=(options, env, str(log)), name="streamlit", daemon=True)
        fork.start()
        process = psutil.Process(fork.pid)
        app = Adopted(process, log=log, name="streamlit (warmed fork)")
    # until it has its own session, a stop of its group would miss it
    leads = Retrying(stop=stop_after_delay(START_TIMEOUT_S), wait=wait_fixed(0.02), retry=retry_if_result(lambda done: not done),
                     retry_error_callback=lambda _state: False)
    if not leads(lambda: _leads_own_group(process)):
        process.kill()
        raise RuntimeError(f"the warmed app fork {fork.pid} never started its own session")
    return app


def _leads_own_group(process: psutil.Process) -> bool:
    try:
        return os.getpgid(process.pid) == process.pid
    except ProcessLookupError:
        return True  # it already exited: wait_until reports that, with its log


def _serve_in_fork(options: list[str], env: dict[str, str], log: str) -> None:
    """In the fork: a session of its own, its output to `log`, the app's environment, then the app's own launcher."""
    os.setsid()
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.chdir(REPO)
    os.environ.clear()
    os.environ.update(env)
    from dashboard.app import serve

    serve.main(options)
