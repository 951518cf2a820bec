"""A real load balancer in front of app instances: Debian's HAProxy (`/usr/sbin/haproxy`, 2.6 on bookworm; scripts/setup
installs it), run as a child process of the test in the foreground (`haproxy -f haproxy.cfg -db`), on free loopback
ports, stopped by PID (its whole process group) when the context ends. The package's own service is never used.

    with load_balancer({"a": first_url, "b": second_url}, tmp_path) as lb:
        page.goto(f"{lb.url}/exceptions")      # reviewers reach the apps only through lb.url
        lb.requests()                         # HAProxy's log: which instance served each request
        lb.servers()                          # HAProxy's stats: each instance's health check and session count

The configuration (`config`) is the one docs/scaling.md shows: sticky sessions by a cookie HAProxy inserts
(`RRSERVER`, naming the instance), WebSocket-friendly timeouts (Streamlit keeps one WebSocket per browser tab,
`/_stcore/stream`), a health check on Streamlit's `/_stcore/health`, and a response header naming the instance that
answered (`X-Recall-Review-Instance`), so a test (or a person with the browser's network panel) sees who served.
"""

from __future__ import annotations

import csv
import io
import os
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from dashboard.processes import HOST, Child, answers, free_port

HAPROXY = "/usr/sbin/haproxy"
COOKIE = "RRSERVER"
INSTANCE_HEADER = "X-Recall-Review-Instance"
START_TIMEOUT_S = 30.0
LOGGED = "request"  # the first word of each request's log line (HAProxy's own messages share the log)


def config(backends: Mapping[str, str], port: int, stats_port: int) -> str:
    """haproxy.cfg for `backends` (instance name -> its URL) behind 127.0.0.1:`port`; stats on `stats_port`."""
    servers = "\n".join(
        f"    server {name} {urlsplit(url).hostname}:{urlsplit(url).port} cookie {name} check inter 1s fall 2 rise 1"
        for name, url in backends.items()
    )
    return f"""\
# Recall Review behind HAProxy 2.6: the configuration tests/e2e/test_two_instances.py runs (tests/load_balancer.py).
global
    log stdout format raw local0          # -db keeps HAProxy in the foreground: its log is its standard output
    maxconn 1000

defaults
    mode http
    log global
    option logasap                        # log a request when its answer starts: a WebSocket is logged at its 101
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    timeout tunnel 1h                     # an upgraded WebSocket (Streamlit pings it every 30 s): kept while its tab is open
    timeout client-fin 30s

frontend reviewers
    bind {HOST}:{port}
    http-request capture req.fhdr(User-Agent) len 300
    log-format "{LOGGED} %s %ST %HM %HU %[capture.req.hdr(0)]"
    default_backend dashboards

backend dashboards
    balance roundrobin                    # a new browser (no cookie yet) goes to the next instance
    cookie {COOKIE} insert indirect nocache httponly   # then it stays there: the cookie names its instance
    option httpchk
    http-check send meth GET uri /_stcore/health
    http-check expect status 200
    http-response set-header {INSTANCE_HEADER} %[srv_name]
{servers}

listen stats
    bind {HOST}:{stats_port}
    no log
    stats enable
    stats uri /stats
"""


@dataclass(frozen=True)
class Logged:
    """One request as HAProxy logged it."""

    server: str  # the instance that answered ("<NOSRV>" when none did)
    status: int
    method: str
    uri: str
    agent: str  # the request's User-Agent (a test names each browser context by it)


@dataclass
class Balancer:
    url: str
    stats_url: str
    config_file: Path
    log: Path

    def requests(self) -> list[Logged]:
        """Every request HAProxy has logged so far, in order."""
        seen = []
        for line in self.log.read_text(errors="replace").splitlines():
            parts = line.split(" ", 5)
            if len(parts) == 6 and parts[0] == LOGGED and parts[2].isdigit():
                seen.append(
                    Logged(server=parts[1], status=int(parts[2]), method=parts[3], uri=parts[4], agent=parts[5])
                )
        return seen

    def servers(self) -> dict[str, dict[str, str]]:
        """HAProxy's stats of each instance of the backend (name -> its CSV row: status, check_status, stot, ...)."""
        with urllib.request.urlopen(f"{self.stats_url};csv", timeout=5) as resp:
            text = resp.read().decode()
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        return {
            row["svname"]: row
            for row in rows
            if row["pxname"] == "dashboards" and row["svname"] not in ("FRONTEND", "BACKEND")
        }

    def all_up(self) -> bool:
        """Every instance passed its health check on /_stcore/health."""
        try:
            servers = self.servers()
        except OSError:
            return False
        return bool(servers) and all(
            row["status"] == "UP" and row["check_status"] == "L7OK" for row in servers.values()
        )


@contextmanager
def load_balancer(backends: Mapping[str, str], folder: Path) -> Iterator[Balancer]:
    """HAProxy in front of `backends` (instance name -> URL, each already answering), its config and log in `folder`;
    yields once every instance passed its health check, and stops HAProxy by PID after."""
    if not os.access(HAPROXY, os.X_OK):
        raise RuntimeError(
            f"{HAPROXY} is missing: the two-instance test needs Debian's haproxy (scripts/setup installs it; "
            "or apt-get install haproxy). It is never skipped."
        )
    folder.mkdir(parents=True, exist_ok=True)
    port, stats_port = free_port(), free_port()
    cfg = folder / "haproxy.cfg"
    cfg.write_text(config(backends, port, stats_port))
    log = folder / "haproxy.log"
    balancer = Balancer(
        url=f"http://{HOST}:{port}", stats_url=f"http://{HOST}:{stats_port}/stats", config_file=cfg, log=log
    )
    proxy = Child(
        [HAPROXY, "-f", str(cfg), "-db"], env={"PATH": "/usr/sbin:/usr/bin:/bin"}, log=log, cwd=folder, name="haproxy"
    )
    try:
        proxy.wait_until(lambda: balancer.all_up() and answers(f"{balancer.url}/_stcore/health"), START_TIMEOUT_S)
        yield balancer
    finally:
        proxy.stop(timeout=10)
