"""Serving the app with uvicorn on 127.0.0.1: slow clients time out, connections are bounded.

:class:`GuardedH11Protocol` (uvicorn's h11 protocol) adds a read timeout (:data:`READ_TIMEOUT`
seconds for a whole request, and as long to take an answer) and a connection bound
(:data:`MAX_CONNECTIONS`, fewer under a low file-descriptor limit; beyond it a new connection
closes the one that has waited longest on its client). :func:`listen` binds the socket first, so
the command can report a busy port and print the real port for port 0. See docs/web.md.
"""

from __future__ import annotations

import asyncio
import resource
import socket
import threading
import time
from typing import Any

from ..extras import require

require("web", "the web app (skipbo-web)", "starlette", "uvicorn")

import h11  # noqa: E402  (uvicorn's HTTP/1.1 parser)
import uvicorn  # noqa: E402
from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: E402

HOST = "127.0.0.1"
READ_TIMEOUT = 10.0
"""Seconds a client has to send a whole request (or to take an answer the server is writing)."""
KEEP_ALIVE = 5
"""Seconds an idle connection stays open after an answer (uvicorn's ``timeout_keep_alive``)."""
MAX_CONNECTIONS = 128
"""Open connections at most (fewer when the file-descriptor limit is low)."""
BACKLOG = 32
"""Connections waiting to be accepted; also how many asyncio accepts at once, so the
connection bound acts before a burst of new connections can use up the file descriptors."""
RESERVED_FILES = 64
"""File descriptors kept for everything but connections (the listening socket, files read)."""


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a read timeout and a connection bound (the class attributes;
    :func:`guarded_protocol` makes a subclass with other values)."""

    read_timeout: float = READ_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    _deadline: asyncio.TimerHandle | None = None
    _since: float = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()
        self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def waits_on_client(self) -> bool:
        """Whether the connection waits for its client: (the rest of) a request, or room to write an answer."""
        serving = (self.cycle is not None and not self.cycle.response_complete
                   and self.conn.their_state is h11.DONE)
        return not serving or self.flow.write_paused

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._since = self.loop.time()
        self._deadline = self.loop.call_later(self.read_timeout, self._on_deadline)

    def _on_deadline(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.waits_on_client():
            self.transport.close()
        else:
            self._arm()  # the server is working on the request: the client owes nothing yet

    def _make_room(self) -> None:
        open_ = [c for c in self.connections if not c.transport.is_closing()]
        if len(open_) <= self.max_connections:
            return
        waiting = [c for c in open_ if isinstance(c, GuardedH11Protocol) and c.waits_on_client()]
        oldest = min(waiting, key=lambda c: c._since, default=self)
        oldest.transport.close()


def guarded_protocol(read_timeout: float = READ_TIMEOUT, max_connections: int | None = None) -> type[H11Protocol]:
    """A :class:`GuardedH11Protocol` class with these bounds (``None``: :func:`default_max_connections`)."""
    if max_connections is None:
        max_connections = default_max_connections()
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"read_timeout": float(read_timeout), "max_connections": int(max_connections)})


def default_max_connections() -> int:
    """:data:`MAX_CONNECTIONS`, or fewer under a low soft file-descriptor limit: half of what
    :data:`RESERVED_FILES` leaves (room for a few accept bursts of :data:`BACKLOG`), at least 8."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, (soft - RESERVED_FILES) // 2))


def listen(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:``port`` (0: a free port); ``OSError`` when the port is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(BACKLOG)  # connections wait in the backlog until the server accepts them
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def make_server(app: Any, read_timeout: float = READ_TIMEOUT, max_connections: int | None = None) -> uvicorn.Server:
    """A uvicorn server for ``app`` with the bounds above; ``server.run(sockets=[listen(port)])`` serves."""
    return uvicorn.Server(uvicorn.Config(
        app, host=HOST, log_level="warning", lifespan="off", timeout_keep_alive=KEEP_ALIVE, backlog=BACKLOG,
        http=guarded_protocol(read_timeout, max_connections),
    ))


class BackgroundServer:
    """``with BackgroundServer(app) as server: ... server.url ...`` serves in a thread (tests,
    notebooks); port 0 picks a free port. Keyword arguments: those of :func:`make_server`."""

    def __init__(self, app: Any, port: int = 0, **bounds: Any) -> None:
        self.socket = listen(port)
        self.port = self.socket.getsockname()[1]
        self.server = make_server(app, **bounds)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]},
                                       name="skipbo-web", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def __enter__(self) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the web server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()
