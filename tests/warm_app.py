"""The browser tests' apps, forked from one warmed process per test worker (`serve_app(..., start=start_warmed)`).

A new interpreter spends ~8 s of CPU importing the app before it answers (docs/performance.md), and the browser
tests start two dozen apps. A multiprocessing forkserver imports the app's modules once, as
`dashboard.app.serve` does; each app is a fork of it that takes a session of its own, its own environment and
log, and runs the same `dashboard.app.serve.main`. The bench keeps starting fresh interpreters: it times them."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import psutil
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

from dashboard.app import serve
from dashboard.cli.app_server import REPO, START_TIMEOUT_S
from dashboard.processes import Adopted, signals_held

_forkserver = multiprocessing.get_context("forkserver")


def start_warmed(options: list[str], env: dict[str, str], log: Path) -> Adopted:
    """Fork the app from this interpreter's warmed forkserver; returns it once it leads its own session."""
    _forkserver.set_forkserver_preload([*serve.app_module_names(), "streamlit.web.bootstrap"])  # read once, at its start
    log.parent.mkdir(parents=True, exist_ok=True)
    with signals_held():  # a stop signalled while it starts finds it registered
        fork = _forkserver.Process(target=_serve_in_fork, args=(options, env, str(log)), name="streamlit", daemon=True)
        fork.start()
        process = psutil.Process(fork.pid)
        app = Adopted(process, log=log, name="streamlit (warmed fork)")
    # until it leads its own session, a stop of its group would miss it
    leads = Retrying(stop=stop_after_delay(START_TIMEOUT_S), wait=wait_fixed(0.02), retry=retry_if_result(lambda done: not done),
                     retry_error_callback=lambda _state: False)
    if not leads(lambda: _leads_own_group(process)):
        app.stop()
        raise RuntimeError(f"the warmed app fork {fork.pid} never started its own session")
    return app


def _leads_own_group(process: psutil.Process) -> bool:
    try:
        return os.getpgid(process.pid) == process.pid
    except ProcessLookupError:
        return True  # it already exited: serve_app's wait reports that, with its log


def _serve_in_fork(options: list[str], env: dict[str, str], log: str) -> None:
    """In the fork: a session of its own, its output to `log`, the app's environment, then the app's own launcher."""
    os.setsid()
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.chdir(REPO)
    os.environ.clear()
    os.environ.update(env)
    serve.main(options)
