"""The processes this project starts: the embedded Hindsight's API, a second API beside it, the app for
the benches and the browser tests. One way to do each step: a free loopback port, a start in a session of
its own (so it and everything it starts form one process group), a wait until it answers healthy (failing
at once if it exits), and a stop of the whole group by PID, waited for, killed if it lingers.

A PID alone does not name a process (after a crash or a reboot the number may belong to someone else),
so a process is held as a psutil.Process, which checks it is the same process before every signal (psutil 7
compares its start since boot, which a stepped wall clock does not move).

Every child started here is also stopped when this interpreter exits, and, where the caller asks
(`stop_children_on_signals`, e.g. a test session), when it is sent SIGTERM or SIGINT: a stopped run leaves
no server behind.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psutil
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

HOST = "127.0.0.1"
POLL_S = 0.25


class ProcessFailed(RuntimeError):
    """A child did not start, exited during start-up, or did not answer healthy in time."""


def free_port(host: str = HOST) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def answers(url: str, timeout: float = 2.0) -> bool:
    """True when `url` answers HTTP 200."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def log_tail(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return f"(no log at {path})"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def stop_process(
    proc: psutil.Process | None, sig: int = signal.SIGTERM, timeout: float = 30.0, *, group: bool = False
) -> None:
    """Signal the process (its whole group when it leads one) and wait for it and its children to exit;
    SIGKILL what is left after `timeout`. psutil.wait_procs also reaps our own exited children."""
    if proc is None:
        return
    try:
        family = [proc, *proc.children(recursive=True)]
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except (psutil.NoSuchProcess, ProcessLookupError):
        return
    _gone, alive = psutil.wait_procs(family, timeout=timeout)
    for left in alive:
        try:
            left.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=5)


class Child:
    """A process started in a session of its own, its output in `log`; `stop()` stops its whole group."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        log: Path,
        cwd: Path | str,
        name: str,
        stop_at_exit: bool = True,
    ):
        """`stop_at_exit=False` for a server meant to outlive this interpreter (`server start`)."""
        self.name, self.log = name, log
        log.parent.mkdir(parents=True, exist_ok=True)
        with signals_held(), log.open("ab") as out:  # a stop signalled while it starts finds it registered
            popen = subprocess.Popen(
                list(argv),
                env=env,
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            self.process = psutil.Process(popen.pid)
            if stop_at_exit:
                _register(self)

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        try:
            return self.process.is_running() and self.process.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    def wait_until(self, ready: Callable[[], bool], timeout: float) -> None:
        """Poll `ready()` until it is true; ProcessFailed (with the log's tail) if the child exits first or time runs out."""

        def check() -> bool:
            if ready():
                return True
            if not self.running():
                raise ProcessFailed(f"{self.name} exited during start-up. Log tail:\n{log_tail(self.log)}")
            return False

        poll = Retrying(
            stop=stop_after_delay(timeout),
            wait=wait_fixed(POLL_S),
            retry=retry_if_result(lambda done: not done),
            retry_error_callback=lambda _state: False,
        )
        if not poll(check):
            self.stop()
            raise ProcessFailed(f"{self.name} not healthy after {timeout:.0f} s. Log tail:\n{log_tail(self.log)}")

    def stop(self, timeout: float = 30.0) -> None:
        stop_process(self.process if self.running() else None, signal.SIGTERM, timeout, group=True)
        _unregister(self)


class Adopted(Child):
    """A process started some other way (e.g. forked from a warmed parent: the browser tests' apps) that already
    leads a session of its own: held, waited for and stopped as a Child is. Adopt it inside `signals_held()`."""

    def __init__(self, process: psutil.Process, *, log: Path, name: str):  # it runs already: nothing to start
        self.name, self.log, self.process = name, log, process
        _register(self)


# -- the children of this interpreter, stopped when it exits or is told to stop ------------------------
_children: dict[int, Child] = {}
_lock = threading.Lock()
_stoppers: list[Callable[[], None]] = []  # other servers to stop (e.g. an embedded server's PostgreSQL)


def _register(child: Child) -> None:
    with _lock:
        _children[id(child)] = child


def _unregister(child: Child) -> None:
    with _lock:
        _children.pop(id(child), None)


def on_exit(stop: Callable[[], None]) -> Callable[[], None]:
    """Also run `stop` when this interpreter exits or is signalled (see `stop_children_on_signals`); returns
    a function that takes it back (call it once the server was stopped the normal way)."""
    with _lock:
        _stoppers.append(stop)

    def forget() -> None:
        with _lock:
            if stop in _stoppers:
                _stoppers.remove(stop)

    return forget


def stop_all() -> None:
    """Stop every child still running and run every pending stopper, newest first."""
    with _lock:
        children, stoppers = list(_children.values()), list(_stoppers)
        _stoppers.clear()
    for child in reversed(children):
        child.stop(timeout=10)
    for stop in reversed(stoppers):
        try:
            stop()
        except Exception:  # noqa: BLE001 - at exit, each stopper gets its chance
            pass


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGTERM and SIGINT until the block ends, then act on the first one that came: a process started in
    the block is registered for its stop before the stop runs. Only the main thread handles signals, so
    elsewhere this holds nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    before = {sig: signal.signal(sig, lambda signum, _frame: came.append(signum)) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)  # None: a handler set outside Python
        if came:
            signal.raise_signal(came[0])


def stop_children_on_signals() -> None:
    """SIGTERM and SIGINT stop every child first, then end the interpreter as KeyboardInterrupt would, so
    the caller's own clean-up (a test session's fixtures) runs too."""

    def handler(signum, _frame):
        stop_all()
        raise KeyboardInterrupt(f"stopped by signal {signum}")

    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)


atexit.register(stop_all)
