"""A second `hindsight-api` against the embedded server's database, with server-wide knobs of its own.

Some of Hindsight's fusion settings exist only as environment variables of the server process
(`HINDSIGHT_API_RECALL_MAX_CANDIDATES_PER_SOURCE`, `HINDSIGHT_API_RERANKER_MAX_CANDIDATES`, ...). To see
what one does to real recalls, run a sibling process on another loopback port with the variable set:
it reads the same banks. Started and stopped by process id (its own session, so the whole group).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from dashboard.hindsight.embedded import HOST, EmbeddedServer, ServerError, health

KNOB_PREFIX = "HINDSIGHT_API_"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class SiblingServer:
    """`with SiblingServer(embedded, RECALL_MAX_CANDIDATES_PER_SOURCE="5") as url:` (names without the prefix)."""

    def __init__(self, embedded: EmbeddedServer, log_dir: Path | None = None, **knobs: str):
        self.embedded = embedded
        self.knobs = {(k if k.startswith(KNOB_PREFIX) else KNOB_PREFIX + k): str(v) for k, v in knobs.items()}
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.log_path = (log_dir or embedded.home) / f"hindsight-api-{self.port}.log"
        self.pid: int | None = None

    def env(self) -> dict[str, str]:
        env = self.embedded.api_env()
        env.update(HINDSIGHT_API_PORT=str(self.port), HINDSIGHT_API_WORKER_ID=f"recall-review-{self.port}")
        env.update(self.knobs)
        return env

    def start(self, timeout: float = 180.0) -> str:
        executable = Path(sys.executable).parent / "hindsight-api"
        argv = [str(executable), "--host", HOST, "--port", str(self.port)]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a") as log:
            proc = subprocess.Popen(
                argv, env=self.env(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.log_path.parent, start_new_session=True,
            )  # fmt: skip
        self.pid = proc.pid
        self._proc = proc
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = health(self.url)
            if answer and answer.get("status") == "healthy":
                return self.url
            if proc.poll() is not None:
                raise ServerError(f"sibling hindsight-api exited during start-up (see {self.log_path})")
            time.sleep(0.5)
        self.stop()
        raise ServerError(f"sibling hindsight-api not healthy after {timeout:.0f} s (see {self.log_path})")

    def stop(self, timeout: float = 30.0) -> None:
        if self.pid is None:
            return
        try:
            os.killpg(self.pid, signal.SIGTERM)
            self._proc.wait(timeout=timeout)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            self._proc.wait(timeout=5)
        self.pid = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
