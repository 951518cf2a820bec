"""Only its own hosts: the served app answers a request only when its `Host` names one of the app's own names
(RECALL_REVIEW_ALLOWED_HOSTS; this machine's own names on loopback), on every route (pages, WebSocket, static files,
the sign-in callback, the agents' API; the health check answers a load balancer's probe whatever it names); served
beyond this machine without them it does not start.
The browser's side (a rebound name in Chromium) is tests/e2e/test_rebinding.py."""

import base64
import http.client
import json
import os

import pytest
from pydantic import ValidationError

from dashboard.app.hosts import HostsNotNamed, host_allowed, own_hosts
from dashboard.cli.app_server import serve_app
from dashboard.settings import Settings, settings_problem
from tests.helpers import start_on_every_interface
from tests.warm_app import start_warmed

FOREIGN = "rebind.attacker.example"
ROUTES = (
    "/",
    "/exceptions?case=E-1002",
    "/_stcore/host-config",
    "/_stcore/script-health-check",
    "/static/favicon.png",
    "/oauth2callback",
    "/auth/login",
    "/api/v1/openapi.json",
    "/api/v1/cases/finance",
    "/api/v1/mcp",
)


def test_on_loopback_it_answers_this_machines_names_and_elsewhere_only_the_names_configured():
    assert own_hosts([], "127.0.0.1") == ["localhost", "127.0.0.1", "::1"]
    assert own_hosts(["review.example.com"], "localhost") == ["review.example.com", "localhost", "127.0.0.1", "::1"]
    assert own_hosts(["review.example.com"], "0.0.0.0") == ["review.example.com"]
    for address in ("0.0.0.0", "", None, "10.0.0.5"):
        with pytest.raises(HostsNotNamed, match="Set RECALL_REVIEW_ALLOWED_HOSTS"):
            own_hosts([], address)


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8501", True),
        ("localhost", True),
        ("LOCALHOST.:8501", True),
        ("[::1]:8501", True),
        ("review.example.com", True),
        ("a.b.example.com:443", True),
        ("example.com", False),  # *.example.com: subdomains
        (f"{FOREIGN}:8501", False),
        ("127.0.0.1.nip.io", False),
        ("evil.com#@127.0.0.1", False),
        ("127.0.0.1:bad", False),
        ("user@127.0.0.1", False),
        ("", False),
        (None, False),
    ],
)
def test_a_host_header_is_allowed_only_when_it_names_an_own_host(host, allowed):
    assert host_allowed(host, ["localhost", "127.0.0.1", "::1", "review.example.com", "*.example.com"]) is allowed


def test_the_setting_takes_a_list_of_names_and_refuses_what_is_not_a_name():
    assert Settings(RECALL_REVIEW_ALLOWED_HOSTS="Review.Example.com, *.corp.example,[::1]").allowed_hosts == [
        "review.example.com",
        "*.corp.example",
        "::1",
    ]
    assert Settings(RECALL_REVIEW_ALLOWED_HOSTS='["a.example"]').allowed_hosts == ["a.example"]
    for bad in ("*", "https://review.example.com", "review.example.com:8501", "review.example.com/x", "a b"):
        with pytest.raises(ValidationError) as caught:
            Settings(RECALL_REVIEW_ALLOWED_HOSTS=bad)
        assert "RECALL_REVIEW_ALLOWED_HOSTS" in settings_problem(caught.value)


def _get(port: int, path: str, host: str, **headers: str) -> tuple[int, str, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.putrequest("GET", path, skip_host=True)
    conn.putheader("Host", host)
    for name, value in headers.items():
        conn.putheader(name.replace("_", "-"), value)
    conn.endheaders()
    answer = conn.getresponse()
    body = answer.read().decode(errors="replace")
    conn.close()
    return answer.status, answer.getheader("content-type") or "", body


def _mcp_initialize(port: int, host: str) -> tuple[int, str]:
    """An MCP client's first request to the agents' MCP tools, naming `host`."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "1"},
            },
        }
    )
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.putrequest("POST", "/api/v1/mcp", skip_host=True)
    for name, value in (
        ("Host", host),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Length", str(len(body))),
    ):
        conn.putheader(name, value)
    conn.endheaders(body.encode())
    answer = conn.getresponse()
    text = answer.read().decode(errors="replace")
    conn.close()
    return answer.status, text


def _websocket_status(port: int, host: str) -> int:
    """The status of a WebSocket handshake to the app's stream (101: opened) from a page on `host`."""
    key = base64.b64encode(os.urandom(16)).decode()
    status, _, _ = _get(
        port,
        "/_stcore/stream",
        host,
        Upgrade="websocket",
        Connection="Upgrade",
        Sec_WebSocket_Key=key,
        Sec_WebSocket_Version="13",
        Origin=f"http://{host}",
    )
    return status


def test_every_route_of_the_served_app_refuses_a_foreign_host_and_answers_its_own(tmp_path):
    env = {**os.environ, "HINDSIGHT_API_URL": "http://127.0.0.1:9"}
    with serve_app(env, tmp_path, start=start_warmed) as url:
        port = int(url.rsplit(":", 1)[1])
        for own in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            assert _get(port, "/_stcore/health", own)[0] == 200
            assert _websocket_status(port, own) == 101
        assert _get(port, "/api/v1/openapi.json", f"127.0.0.1:{port}")[1] == "application/json"
        for path in ROUTES:
            status, kind, body = _get(port, path, f"{FOREIGN}:{port}")
            assert status == 421, path
            assert (
                f"does not answer to the host name '{FOREIGN}:{port}'" in body and "RECALL_REVIEW_ALLOWED_HOSTS" in body
            )
            assert "<html" not in body.lower()  # never the app's page
            if path.startswith("/api/"):
                assert kind == "application/json" and json.loads(body)["status"] == 421
            else:
                assert kind.startswith("text/plain")
        assert _websocket_status(port, f"{FOREIGN}:{port}") == 403  # closed before it is accepted: no session
        assert _get(port, "/api/v1/openapi.json", "")[0] == 421  # no Host at all is no own host either
        for probe in (
            f"{FOREIGN}:{port}",
            "10.0.0.7:8501",
            "",
        ):  # a load balancer's or a pod's probe: "ok", nothing else
            assert _get(port, "/_stcore/health", probe)[:1] == (200,)
        assert "answers to the host names localhost, 127.0.0.1, ::1" in (tmp_path / "streamlit.log").read_text()


def test_served_beyond_this_machine_without_its_host_names_it_refuses_to_start_naming_the_setting():
    env = {**os.environ, "HINDSIGHT_API_URL": "http://127.0.0.1:9", "RECALL_REVIEW_ALLOW_ANONYMOUS": "true"}
    env.pop("RECALL_REVIEW_ALLOWED_HOSTS", None)
    done = start_on_every_interface(env)
    assert done.returncode == 2
    assert "would serve 0.0.0.0 and answer to any host name" in done.stderr
    assert "Set RECALL_REVIEW_ALLOWED_HOSTS" in done.stderr and "Traceback" not in done.stderr


def test_served_beyond_this_machine_it_answers_the_names_configured_and_no_other(tmp_path):
    env = {
        **os.environ,
        "HINDSIGHT_API_URL": "http://127.0.0.1:9",
        "RECALL_REVIEW_ALLOW_ANONYMOUS": "true",
        "RECALL_REVIEW_ALLOWED_HOSTS": "review.example.com,127.0.0.1",
    }
    # A fork of the worker's warmed app (test_every_route_...): the same launcher, without a new interpreter's imports.
    with serve_app(
        env, tmp_path, start=lambda options, env, log: start_warmed([*options, "--server.address", "0.0.0.0"], env, log)
    ) as url:
        port = int(url.rsplit(":", 1)[1])
        assert _get(port, "/api/v1/openapi.json", "review.example.com")[0] == 200
        assert _mcp_initialize(port, "review.example.com")[0] == 200  # the MCP tools answer the configured name too
        assert _mcp_initialize(port, f"{FOREIGN}:{port}")[0] == 421
        assert _websocket_status(port, "review.example.com") == 101
        assert _get(port, "/api/v1/openapi.json", f"localhost:{port}")[0] == 421  # not named: served beyond loopback
        assert _websocket_status(port, f"{FOREIGN}:{port}") == 403
