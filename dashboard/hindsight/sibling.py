"""A second `hindsight-api` against the embedded server's database, with server-wide knobs of its own.

Some of Hindsight's fusion settings exist only as environment variables of the server process
(`HINDSIGHT_API_RECALL_MAX_CANDIDATES_PER_SOURCE`, `HINDSIGHT_API_RERANKER_MAX_CANDIDATES`, ...). To see
what one does to real recalls, run a sibling process on another loopback port with the variable set:
it reads the same banks. Started and stopped by dashboard.processes (its own session, the whole group).
"""

from __future__ import annotations

import sys
from pathlib import Path

from dashboard.hindsight.embedded import HOST, EmbeddedServer, ServerError, health
from dashboard.processes import Child, ProcessFailed, free_port

KNOB_PREFIX = "HINDSIGHT_API_"


class SiblingServer:
    """`with SiblingServer(embedded, RECALL_MAX_CANDIDATES_PER_SOURCE="5") as url:` (names without the prefix)."""

    def __init__(self, embedded: EmbeddedServer, log_dir: Path | None = None, **knobs: str):
        self.embedded = embedded
        self.knobs = {(k if k.startswith(KNOB_PREFIX) else KNOB_PREFIX + k): str(v) for k, v in knobs.items()}
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.log_path = (log_dir or embedded.home) / f"hindsight-api-{self.port}.log"
        self.child: Child | None = None

    def env(self) -> dict[str, str]:
        env = self.embedded.api_env()
        env.update(HINDSIGHT_API_PORT=str(self.port), HINDSIGHT_API_WORKER_ID=f"recall-review-{self.port}")
        env.update(self.knobs)
        return env

    def start(self, timeout: float = 180.0) -> str:
        argv = [str(Path(sys.executable).parent / "hindsight-api"), "--host", HOST, "--port", str(self.port)]
        self.child = Child(
            argv, env=self.env(), log=self.log_path, cwd=self.log_path.parent, name="sibling hindsight-api"
        )
        try:
            self.child.wait_until(lambda: (health(self.url) or {}).get("status") == "healthy", timeout)
        except ProcessFailed as exc:
            raise ServerError(str(exc)) from None
        return self.url

    def stop(self, timeout: float = 30.0) -> None:
        if self.child is not None:
            self.child.stop(timeout)
            self.child = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
