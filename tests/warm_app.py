"""The browser tests' apps, forked from one warmed process per test worker (`serve_app(..., start=start_warmed)`).

A new interpreter spends ~8 s of CPU importing the app before it answers (docs/performance.md), and the browser
tests start two dozen apps. `python -m tests.warm_app` imports the app once, as `dashboard.app.serve` does, then
forks one app per request: the fork takes a session of its own, its own environment, working directory and log,
and runs the same `dashboard.app.serve.main`. (multiprocessing's forkserver would re-run the worker's `__main__`
in each fork, and after an AppTest that is the app's own script.) The bench keeps starting fresh interpreters:
it times them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import psutil

from dashboard.app import serve
from dashboard.cli.app_server import REPO
from dashboard.processes import Adopted, signals_held
from tests.component_scan import scan_components_once

_launcher: subprocess.Popen | None = None
_lock = threading.Lock()


def start_warmed(options: list[str], env: dict[str, str], log: Path) -> Adopted:
    """A fork of this worker's warmed launcher (started on first use; it ends when this interpreter does)."""
    global _launcher
    log.parent.mkdir(parents=True, exist_ok=True)
    with _lock, signals_held():  # a stop signalled while it starts finds it registered
        if _launcher is None or _launcher.poll() is not None:
            _launcher = subprocess.Popen(
                [sys.executable, "-m", "tests.warm_app"],
                cwd=REPO,
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        _launcher.stdin.write(json.dumps({"options": options, "env": env, "log": str(log)}) + "\n")
        _launcher.stdin.flush()
        answer = _launcher.stdout.readline()  # the fork's pid, once it leads its own session
        if not answer.strip().isdigit():
            raise RuntimeError(f"the warmed app launcher did not fork an app (it said {answer!r})")
        return Adopted(psutil.Process(int(answer)), log=log, name="streamlit (warmed fork)")


def _serve_forks() -> None:
    """Import the app once, then fork an app for each request line on stdin, until stdin closes."""
    serve.warm()
    # Scanned once here, so no fork scans all installed packages again as its runtime starts (tests/component_scan.py).
    scan_components_once()
    from streamlit.components.v2 import manifest_scanner

    manifest_scanner.scan_component_manifests()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # each fork is reaped as it exits
    for line in sys.stdin:
        if os.fork() == 0:
            _become_app(**json.loads(line))


def _become_app(options: list[str], env: dict[str, str], log: str) -> None:
    """In the fork: a session of its own, its pid to the launcher's caller, its output to `log`, the app's
    environment, then the app's own launcher; it never returns into the request loop."""
    code = 1
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        print(os.getpid(), flush=True)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(REPO)
        os.environ.clear()
        os.environ.update(env)
        serve.main(options)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 0 if done.code is None else 1
    except BaseException:  # noqa: BLE001 - said in its log, then the fork ends
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    _serve_forks()
