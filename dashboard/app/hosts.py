"""Only its own hosts: every request to the served app (the pages, their WebSocket, static files, the sign-in callback,
the agents' API; all but the health check) names in its `Host` a name the operator chose, or is refused before it
reaches any of them. Against DNS rebinding: an attacker's page whose name is made to resolve to this server is same-origin with
it, but its requests carry the attacker's name.

The names come from one setting (RECALL_REVIEW_ALLOWED_HOSTS; this machine's own names when served on loopback) and
are kept in Streamlit's `server.allowedHosts`, which Streamlit checks on its WebSocket too (startup_checks.hosts_or_exit).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from dashboard.settings import is_loopback

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SETTING = "RECALL_REVIEW_ALLOWED_HOSTS"
MISDIRECTED = 421  # "Misdirected Request": this server does not answer for that name
# Answers any Host: a load balancer's or an orchestrator's probe names an address (a pod's IP, no Host at all in
# HAProxy's default check), and "ok" tells a rebinding page nothing it could act on.
HEALTH = "/_stcore/health"


class HostsNotNamed(ValueError):
    """Served beyond this machine without the names it answers to."""


def own_hosts(configured: Sequence[str], address: str | None) -> list[str]:
    """The names the app answers to when served on `address` (Streamlit's server.address; empty: every interface):
    the configured ones, and this machine's own names when served on loopback. HostsNotNamed when served elsewhere
    with none configured."""
    if is_loopback(address):
        return [*dict.fromkeys([*configured, *LOOPBACK_NAMES])]
    if not configured:
        raise HostsNotNamed(
            f"the dashboard would serve {address or 'every network interface'} and answer to any host name, so a web "
            f"page on any domain made to resolve to it could act here (DNS rebinding). Set {SETTING} to the name(s) "
            "people reach it by, e.g. review.example.com (comma-separated; *.example.com for subdomains), or serve "
            "on 127.0.0.1."
        )
    return list(configured)


def hostname_of(host_header: str | None) -> str | None:
    """The name in a `Host` header, lower case, without its port or a trailing dot; None when it is not one."""
    if not host_header:
        return None
    try:
        parts = urlsplit(f"//{host_header}")
        parts.port  # noqa: B018  (a port that is not a number is not a Host)
    except ValueError:
        return None
    if parts.hostname is None or parts.username is not None or parts.password is not None or parts.path or parts.query:
        return None
    return parts.hostname.lower().rstrip(".")


def host_allowed(host_header: str | None, allowed: Sequence[str]) -> bool:
    """Whether `host_header` names one of `allowed` (`*.example.com`: any subdomain of example.com). Nothing allowed:
    nothing answers (the list is made at start, before the first request)."""
    name = hostname_of(host_header)
    if name is None:
        return False
    return any(name == pattern or (pattern.startswith("*.") and name.endswith(pattern[1:])) for pattern in allowed)


def refusal_words(host_header: str | None) -> str:
    shown = (host_header or "")[:200].encode("ascii", "backslashreplace").decode()
    return (
        f"This Recall Review dashboard does not answer to the host name {shown!r}. Open it by one of the names "
        f"its operator configured ({SETTING})."
    )


class OwnHostsOnly:
    """ASGI middleware over the whole served app: a request whose `Host` is not allowed gets a plain-text (or, under
    /api/, a JSON) 421 refusal, and a WebSocket is closed before it is accepted; neither reaches the app. `allowed` is
    read at each request (Streamlit's server.allowedHosts, set at start)."""

    def __init__(self, app: ASGIApp, allowed=None) -> None:
        self.app = app
        self.allowed = allowed or _streamlit_allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or (scope["type"] == "http" and scope["path"].endswith(HEALTH)):
            await self.app(scope, receive, send)
            return
        host = next((value.decode("latin-1") for key, value in scope["headers"] if key == b"host"), None)
        if host_allowed(host, self.allowed()):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send(
                {"type": "websocket.close", "code": 1008, "reason": "host not allowed"}
            )  # an HTTP 403 to the client
            return
        words = refusal_words(host)
        if scope["path"].startswith("/api/"):
            body = json.dumps({"status": MISDIRECTED, "error": words, "fields": ["Host"]}).encode()
            kind = b"application/json"
        else:
            body, kind = words.encode(), b"text/plain; charset=utf-8"
        await send(
            {
                "type": "http.response.start",
                "status": MISDIRECTED,
                "headers": [
                    (b"content-type", kind),
                    (b"content-length", str(len(body)).encode()),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _streamlit_allowed_hosts() -> list[str]:
    from streamlit import config

    return list(config.get_option("server.allowedHosts") or [])
