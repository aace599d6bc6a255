"""What every request must be before the app reads it, and the headers every response carries.

:class:`RequestGuard` (an ASGI middleware) answers with a JSON error, before any route runs, a
request that names a host other than 127.0.0.1 or localhost (400, against DNS rebinding), comes
to the API from another site (403: a foreign ``Origin`` or ``Sec-Fetch-Site``), or sends the API
a body that is not JSON (415). No other site may frame the page (``frame-ancestors 'none'``).
See docs/web.md ("How it is built").
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ALLOWED_HOSTS = ("127.0.0.1", "localhost", "testserver")
"""Host names the server answers (``testserver``: Starlette's test client)."""
SAME_SITE_FETCHES = ("same-origin", "none")
"""``Sec-Fetch-Site`` values of the page's own requests and of a typed address."""
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


def host_name(host: str) -> str:
    """The name in a ``Host`` header, without its port."""
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def refusal(headers: dict[str, str], path: str, method: str) -> tuple[int, str] | None:
    """The status and message for a request the guard refuses, or ``None``."""
    host = headers.get("host", "")
    if host_name(host) not in ALLOWED_HOSTS:
        return 400, f"this server answers requests for 127.0.0.1 or localhost only, not {host[:60]!r}"
    if not path.startswith("/api/"):
        return None
    site = headers.get("sec-fetch-site")
    if site is not None and site not in SAME_SITE_FETCHES:
        return 403, f"a {site[:20]} request: the API answers the page of this server only"
    origin = headers.get("origin")
    if origin is not None and origin != f"http://{host}":
        return 403, f"a request from origin {origin[:80]!r}: the API answers the page of this server only"
    if method == "POST":
        kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            return 415, "send the request body as JSON (Content-Type: application/json)"
    return None


class RequestGuard:
    """ASGI middleware: refuse what :func:`refusal` names; add :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        refused = refusal(headers, scope["path"], scope["method"])
        if refused is None:
            await self.app(scope, receive, send_secured)
            return
        status, text = refused
        body = json.dumps({"error": text}).encode()
        await send_secured({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        ]})
        await send_secured({"type": "http.response.body", "body": body})
