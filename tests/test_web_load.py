"""Load on the web server, on 127.0.0.1 only: 50 games at once through the HTTP API, and
clients that disconnect mid-request. Bounded in time; every game must end correctly."""

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
