"""Sign-in keeps your place: a reviewer who opens a link to a case and signs in lands on that case, not on Home.

Streamlit's sign-in (`st.login`) sends the browser to /auth/login, then to the provider, whose answer comes back to
/oauth2callback, which always redirects to the app's root. This middleware notes where the browser came from when it
asked to sign in (the `Referer` of /auth/login: the page and its query, same origin only) in a short-lived cookie, and
turns the callback's redirect to the root into one to that place. Only a path on this app is ever used (never another
host), so the cookie cannot make an open redirect.
"""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "recall_review_return_to"
LOGIN, CALLBACK = "/auth/login", "/oauth2callback"
KEPT_S = 600  # a sign-in takes a minute or two; a place older than this is not where the reviewer is now
LONGEST = 2000


def safe_place(place: str | None) -> str | None:
    """`place` when it is a path (and query) on this app, not the sign-in's own routes; else None."""
    if not place or len(place) > LONGEST or not place.startswith("/") or place.startswith("//") or "\\" in place:
        return None
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in place):
        return None
    parts = urlsplit(place)
    if parts.scheme or parts.netloc or parts.path.startswith(("/auth/", CALLBACK, "/_stcore/")):
        return None
    return place


def place_of(referer: str | None, host: str | None) -> str | None:
    """The page a sign-in was asked from: the `Referer`'s path and query when it is this app's own origin."""
    if not referer or not host:
        return None
    parts = urlsplit(referer)
    if parts.netloc.lower() != host.lower() or parts.scheme not in ("http", "https"):
        return None
    return safe_place(parts.path + (f"?{parts.query}" if parts.query else ""))


def _root() -> str:
    from streamlit import config

    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}/" if base else "/"


class KeepPlaceAtSignIn:
    """ASGI middleware: notes the place at /auth/login, returns to it from /oauth2callback (see the module)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith((LOGIN, CALLBACK)):
            await self.app(scope, receive, send)
            return
        request = HTTPConnection(scope)
        if scope["path"].endswith(LOGIN):
            place = place_of(request.headers.get("referer"), request.headers.get("host"))
            cookie = f"{COOKIE}={quote(place, safe='')}; Max-Age={KEPT_S}" if place else None
            await self.app(scope, receive, _with_cookie(send, cookie))
            return
        place = safe_place(unquote(request.cookies.get(COOKIE, "")))
        if place is None:
            await self.app(scope, receive, send)
            return
        root = _root()

        async def back_to_the_place(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in (302, 303, 307):
                headers = [(k, v) for k, v in message["headers"]]
                if (b"location", root.encode()) in headers:
                    headers = [(k, place.encode() if k == b"location" else v) for k, v in headers]
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, _with_cookie(back_to_the_place, f"{COOKIE}=; Max-Age=0"))


def _with_cookie(send: Send, cookie: str | None) -> Send:
    if cookie is None:
        return send

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            attributes = f"{cookie}; Path=/; HttpOnly; SameSite=Lax".encode("latin-1")
            message = {**message, "headers": [*message["headers"], (b"set-cookie", attributes)]}
        await send(message)

    return sending
