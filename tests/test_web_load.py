"""Load on the web server, on 127.0.0.1 only: 50 games at once through the HTTP API, clients
that disconnect mid-request, slow clients (timed out) and a flood of half-open connections
(the connection bound makes room for real requests). Bounded in time; every game must end correctly."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from skipbo_env.records import GameRecord  # noqa: E402
from skipbo_env.web.app import WebApp  # noqa: E402
from skipbo_env.web.server import BackgroundServer  # noqa: E402

GAMES = 50
BUDGET_S = 240.0
"""The whole load must finish within this many seconds (on two shared CPU cores)."""


def one_game(base: str, k: int, deadline: float) -> dict:
    with httpx.Client(base_url=base, timeout=60.0) as client:
        r = client.post("/api/games", json={"seats": ["human", "greedy"], "short": True, "seed": 1000 + k})
        r.raise_for_status()
        g = r.json()
        gid, token = g["game_id"], g["links"][0]["token"]
        snap = client.get(f"/api/games/{gid}", params={"seat": 0, "token": token, "since": 0}).json()
        requests = 2
        while not snap["table"]["over"]:
            assert time.monotonic() < deadline, f"game {k} ran out of time"
            legal = snap["legal"]
            m = min(legal, key=lambda m: (m["source"] != "stock", m["target"] != "build"))
            r = client.post(f"/api/games/{gid}/move",
                            json={"seat": 0, "token": token, "action": m["id"], "seen": snap["moves"]})
            assert r.status_code == 200, r.text
            snap = r.json()
            requests += 1
        record = client.get(f"/api/games/{gid}/record", params={"seat": 0, "token": token})
        assert record.status_code == 200
        return {"snap": snap, "record": record.json(), "requests": requests}


def test_fifty_concurrent_games_end_correctly():
    web = WebApp(max_games=GAMES + 5)
    started = time.monotonic()
    deadline = started + BUDGET_S
    with BackgroundServer(web.app) as server:
        assert server.url.startswith("http://127.0.0.1:")
        with ThreadPoolExecutor(max_workers=GAMES) as pool:
            results = list(pool.map(lambda k: one_game(server.url, k, deadline), range(GAMES)))
    elapsed = time.monotonic() - started
    requests = sum(r["requests"] for r in results)
    print(f"\n{GAMES} concurrent games, {requests} requests in {elapsed:.1f} s "
          f"({requests / elapsed:.0f} requests/s)")
    assert elapsed < BUDGET_S
    for r in results:
        table = r["snap"]["table"]
        assert table["over"]
        final = GameRecord.from_dict(r["record"]).final_state()  # the record replays to the same end
        assert final.is_over and final.winner == table["winner"] and final.truncated == table["truncated"]
        assert r["snap"]["moves"] == len(r["record"]["moves"])
        assert r["snap"]["match"]["games"] == [list(r["record"]["result"]["points"])]
    assert len(web.store) == GAMES


def _raw(port: int, data: bytes, read: bool = False) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        return sock.recv(65536) if read else b""


def test_server_survives_clients_that_disconnect():
    web = WebApp()
    with BackgroundServer(web.app) as server, httpx.Client(base_url=server.url, timeout=30.0) as client:
        g = client.post("/api/games", json={"seats": ["human", "heuristic"], "seed": 3}).json()
        gid, token = g["game_id"], g["links"][0]["token"]
        snap = client.get(f"/api/games/{gid}", params={"seat": 0, "token": token}).json()
        move = json.dumps({"seat": 0, "token": token, "action": snap["legal"][0]["id"], "seen": snap["moves"]})
        head = (f"POST /api/games/{gid}/move HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(move)}\r\n\r\n").encode()
        _raw(server.port, head + move.encode()[:10])  # body cut short, then gone
        _raw(server.port, head)                       # headers only
        _raw(server.port, b"GET /api/ag")             # half a request line
        _raw(server.port, head + move.encode())       # a whole move, the answer never read
        for _ in range(100):
            after = client.get(f"/api/games/{gid}", params={"seat": 0, "token": token}).json()
            if after["moves"] > snap["moves"]:
                break
            time.sleep(0.05)
        assert after["moves"] > snap["moves"]  # the abandoned move counted once, and the game goes on
        assert not after["error"]
        m = after["legal"][0] if after["legal"] else None
        if m is not None:
            r = client.post(f"/api/games/{gid}/move",
                            json={"seat": 0, "token": token, "action": m["id"], "seen": after["moves"]})
            assert r.status_code == 200
        assert client.get("/api/agents").status_code == 200
        # a stale repeat of the abandoned move is refused, not applied twice
        r = client.post(f"/api/games/{gid}/move", content=move, headers={"Content-Type": "application/json"})
        assert r.status_code in (409, 422)


# ---------------------------------------------------------------------- slow clients
def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds (any answer is read and skipped)."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except OSError:  # reset: closed with unread data
        pass
    return True


async def _slow_app(scope, receive, send):
    """An app that works 2.5 s on every request (longer than the read timeout below)."""
    import asyncio

    await asyncio.sleep(2.5)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def test_slow_clients_time_out_but_slow_answers_do_not():
    with BackgroundServer(WebApp().app, read_timeout=1.0) as server:
        head = b"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        half_head = socket.create_connection(("127.0.0.1", server.port))
        half_head.sendall(head)
        half_body = socket.create_connection(("127.0.0.1", server.port))
        half_body.sendall(head + b"Content-Length: 100\r\n\r\n{\"a\": ")
        silent = socket.create_connection(("127.0.0.1", server.port))
        trickle = socket.create_connection(("127.0.0.1", server.port))
        started = time.monotonic()
        for byte in head[:12]:  # a byte every 0.3 s: the whole request is still due in 1 s
            try:
                trickle.sendall(bytes([byte]))
            except OSError:  # closed by the server
                break
            time.sleep(0.3)
        assert time.monotonic() - started < 2.5
        for sock in (half_head, half_body, silent, trickle):
            assert _closed_by_server(sock, 2.0)
            sock.close()
        with httpx.Client(base_url=server.url, timeout=10) as client:
            assert client.get("/api/agents").status_code == 200
    with BackgroundServer(_slow_app, read_timeout=1.0) as server, httpx.Client(timeout=10) as client:
        assert client.get(server.url + "/").text == "ok"  # the server's own time counts against nobody


def test_a_flood_of_half_open_connections_leaves_room_for_real_requests():
    """300 connections that never finish their request, against the command under a limit of
    256 open files: ordinary requests are still answered at once, and the idle ones are closed."""
    import resource
    import subprocess
    import sys

    def limit_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    proc = subprocess.Popen([sys.executable, "-m", "skipbo_env.web", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, preexec_fn=limit_files)
    flood: list[socket.socket] = []
    try:
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1].rstrip("/"))
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
            flood.append(sock)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            for _ in range(5):
                assert client.get("/api/agents").status_code == 200
        closed = sum(_closed_by_server(sock, 0.05) for sock in flood)
        assert closed >= 300 - 128
    finally:
        for sock in flood:
            sock.close()
        proc.terminate()
        proc.wait(timeout=10)
