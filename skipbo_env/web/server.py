"""Run the app with uvicorn on 127.0.0.1 in a background thread (tests, notebooks)."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn

HOST = "127.0.0.1"


class BackgroundServer:
    """``with BackgroundServer(app) as server: ... server.url ...``; port 0 picks a free port."""

    def __init__(self, app: Any, port: int = 0) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning",
                                                    lifespan="off", timeout_keep_alive=5))
        self.thread = threading.Thread(target=self.server.run, name="skipbo-web", daemon=True)
        self.port = port

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
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
