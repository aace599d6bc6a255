"""The web app against hostile or careless requests (skipbo_env/web, docs/web.md).

Cross-site requests (a foreign ``Origin``, ``Sec-Fetch-Site: cross-site``, a body that is
not JSON) are refused on every API route; malformed requests of every kind get a 4xx JSON
error, never a 500; crafted agent files offered with ``--agent`` fail with a 4xx; every
response carries the page's security headers; and the ``skipbo-web`` command checks its
files and its port before it says where to open the page.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from skipbo_env.agents import shipped_agent_path  # noqa: E402
from skipbo_env.files import FileReadError  # noqa: E402
from skipbo_env.web.__main__ import main as web_main  # noqa: E402
from skipbo_env.web.app import WebApp  # noqa: E402
from skipbo_env.web.matches import MAX_ADVANCE  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def make(**kwargs):
    web = WebApp(**kwargs)
    return web, TestClient(web.app, raise_server_exceptions=False)


def refused(r, status=None):
    """A 4xx JSON error (of ``status`` when given)."""
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    assert isinstance(r.json()["error"], str) and r.json()["error"]
    if status is not None:
        assert r.status_code == status, (r.status_code, r.text[:300])
    return r.json()["error"]


def new_game(client, seats, **extra):
    r = client.post("/api/games", json={"seats": seats, **extra})
    assert r.status_code == 200, r.text
    return r.json()


# ---------------------------------------------------------------------- cross-site requests
FOREIGN = [
    {"Origin": "https://evil.example"},
    {"Origin": "null"},
    {"Origin": "http://127.0.0.1:9999"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
]


@pytest.mark.parametrize("headers", FOREIGN, ids=lambda h: "-".join(f"{k}={v}" for k, v in h.items()))
def test_cross_site_requests_are_refused_on_every_api_route(headers):
    web, client = make()
    g = new_game(client, ["human", "greedy"], seed=1)
    w = new_game(client, ["greedy", "random"], seed=1)
    gid, token, wid = g["game_id"], g["links"][0]["token"], w["game_id"]
    posts = {
        "/api/games": {"seats": ["greedy", "greedy"]},
        f"/api/games/{gid}/move": {"seat": 0, "token": token, "key": "x13>1"},
        f"/api/games/{gid}/next": {"seat": 0, "token": token},
        "/api/replay": {"format": "skipbo-record"},
    }
    for path, body in posts.items():
        error = refused(client.post(path, json=body, headers=headers), 403)
        assert "the API answers the page of this server only" in error
    refused(client.get(f"/api/games/{wid}", params={"advance": MAX_ADVANCE}, headers=headers), 403)
    refused(client.get(f"/api/games/{gid}/record", params={"seat": 0, "token": token}, headers=headers), 403)
    assert len(web.store) == 2 and web.store.get(wid).step_count == 0
    # the page itself may be opened from a link on another site
    assert client.get("/", headers=headers).status_code == 200


def test_request_bodies_must_be_json():
    web, client = make()
    g = new_game(client, ["human", "greedy"], seed=1)
    body = json.dumps({"seats": ["greedy", "greedy"]})
    for kind in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None]:
        headers = {"Content-Type": kind} if kind else {}
        for path in ["/api/games", f"/api/games/{g['game_id']}/next", "/api/replay"]:
            error = refused(client.post(path, content=body, headers=headers), 415)
            assert "application/json" in error
    assert len(web.store) == 1


def test_the_page_and_same_origin_requests_still_work():
    web, client = make()
    same = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    r = client.post("/api/games", json={"seats": ["greedy", "greedy"]}, headers=same)
    assert r.status_code == 200, r.text
    r = client.post("/api/games", content=json.dumps({"seats": ["greedy", "greedy"]}),
                    headers={"Content-Type": "Application/JSON; charset=utf-8", "Sec-Fetch-Site": "none"})
    assert r.status_code == 200, r.text
    # the address typed with another port: the origin must match the host it was sent to
    r = client.post("/api/games", json={"seats": ["greedy", "greedy"]},
                    headers={"Host": "127.0.0.1:8765", "Origin": "http://127.0.0.1:8765"})
    assert r.status_code == 200, r.text
    r = client.post("/api/games", json={"seats": ["greedy", "greedy"]},
                    headers={"Host": "localhost:8765", "Origin": "http://127.0.0.1:8765"})
    refused(r, 403)


def test_foreign_host_gets_a_json_error():
    web, client = make()
    for host in ["evil.example", "127.0.0.1.evil.example", "localhost.:80", ""]:
        refused(client.get("/api/agents", headers={"Host": host}), 400)
        refused(client.get("/", headers={"Host": host}), 400)


# ---------------------------------------------------------------------- headers
def test_every_response_carries_the_security_headers():
    web, client = make()
    for path in ["/", "/static/index.html", "/static/app.js", "/api/agents", "/api/nothing", "/static/nope"]:
        r = client.get(path)
        csp = r.headers.get("content-security-policy", "")
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, (path, r.headers)
        assert r.headers.get("x-content-type-options") == "nosniff", path
        assert r.headers.get("x-frame-options") == "DENY", path


# ---------------------------------------------------------------------- malformed requests
def test_malformed_requests_get_4xx_json_never_500():
    web, client = make()
    g = new_game(client, ["human", "greedy"], seed=3)
    gid, token = g["game_id"], g["links"][0]["token"]
    game = web.store.get(gid)
    before = json.dumps(game.state.to_dict(), sort_keys=True)
    for bad in ["\u00e9", "t\u00f6ken", "\u2603" * 30, "\U0001f600"]:
        refused(client.get(f"/api/games/{gid}", params={"seat": 0, "token": bad}), 403)
        refused(client.get(f"/api/games/{gid}/record", params={"seat": 0, "token": bad}), 403)
        refused(client.post(f"/api/games/{gid}/move", json={"seat": 0, "token": bad, "action": 0}), 403)
        refused(client.post(f"/api/games/{gid}/next", json={"seat": 0, "token": bad}), 403)
    lone = '{"seat": 0, "token": "\\ud800", "action": 0}'
    refused(client.post(f"/api/games/{gid}/move", content=lone, headers={"Content-Type": "application/json"}), 400)
    refused(client.post(f"/api/games/{gid}/move", content=b'{"seat": 0, "token": "\xed\xa0\x80"}',
                        headers={"Content-Type": "application/json"}), 400)
    refused(client.post(f"/api/games/{gid}/move", content=b'{"seat": 0, "token": "\xff"}',
                        headers={"Content-Type": "application/json"}), 400)
    # partner moves in a game without partners
    for key in ["ps>1", "pd1>1", "pd4>4", "PS>2"]:
        body = {"seat": 0, "token": token, "key": key}
        if game.state.current == 0:
            refused(client.post(f"/api/games/{gid}/move", json=body))
    for seats in [["human", {"a": 1}], ["human", ["greedy"]], ["human", None], ["human", 3], [{"a": 1}, "greedy"],
                  ["human", "greedy\u0000"], ["human", "\ud800"]]:
        r = client.post(
            "/api/games", content=json.dumps({"seats": seats}), headers={"Content-Type": "application/json"}
        )
        error = refused(r, 400)
        assert "seat" in error or "not Unicode" in error
    assert json.dumps(game.state.to_dict(), sort_keys=True) == before
    refused(client.get(f"/api/games/{gid}", params={"seat": "\u0661" * 5000, "token": token}), 400)
    accented = "\u00e9" * 40
    refused(client.get(f"/api/games/{accented}"), 404)


def finished_watch_record(client) -> dict:
    w = new_game(client, ["greedy", "random"], seed=4, short=True)
    while not client.get(f"/api/games/{w['game_id']}", params={"advance": MAX_ADVANCE}).json()["table"]["over"]:
        pass
    return client.get(f"/api/games/{w['game_id']}/record").json()


def test_records_with_text_that_is_not_unicode_are_refused():
    web, client = make()
    record = finished_watch_record(client)
    for players in [["\ud800", "x"], ["x", "\udfff"], ["\ud83d", "\ude00x"]]:
        text = json.dumps({**record, "players": players})  # ensure_ascii: the lone surrogates escaped
        error = refused(client.post("/api/replay", content=text, headers={"Content-Type": "application/json"}), 400)
        assert "unicode" in error.lower()
    ok = client.post("/api/replay", json={**record, "players": ["\U0001f600", "\u00e9"]})
    assert ok.status_code == 200 and ok.json()["players"] == ["\U0001f600", "\u00e9"]


# ---------------------------------------------------------------------- crafted agent files
def rewrite_agent_file(path: Path, edit_description=None, edit_tensors=None, description_text=None):
    """A copy of the shipped ppo-2p agent file with its description or tensor headers changed."""
    data = shipped_agent_path("ppo-2p").read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header["__metadata__"]
    description = json.loads(meta["skipbo_agent"])
    if edit_description:
        edit_description(description)
    meta["skipbo_agent"] = description_text if description_text is not None else json.dumps(description)
    if edit_tensors:
        edit_tensors(header)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + n:])
    return path


def _bf16(header):
    entry = header["mlp_extractor.action_in.weight"]
    entry["dtype"], entry["shape"] = "BF16", [entry["shape"][0], 2 * entry["shape"][1]]


def _kind_list(desc):
    desc["policy"]["kind"] = []


def _activation_object(desc):
    desc["policy"]["activation"] = {"a": 1}


def test_crafted_agent_files_get_a_4xx_not_a_500(tmp_path):
    pytest.importorskip("safetensors")
    files = [
        rewrite_agent_file(tmp_path / "kind_list.safetensors", _kind_list),
        rewrite_agent_file(tmp_path / "activation_object.safetensors", _activation_object),
        rewrite_agent_file(tmp_path / "nested.safetensors", description_text="[" * 65536),
        rewrite_agent_file(tmp_path / "nested_short.safetensors", description_text="[" * 30000 + "]" * 30000),
        rewrite_agent_file(tmp_path / "bf16.safetensors", edit_tensors=_bf16),
        rewrite_agent_file(tmp_path / "huge_int.safetensors",
                           description_text='{"format": "skipbo-agent", "format_version": 1' + "0" * 5000 + "}"),
    ]
    web, client = make(agent_paths=[tmp_path])
    offered = client.get("/api/agents").json()["files"]
    assert sorted(offered) == sorted(p.stem for p in files)
    for path in files:
        error = refused(client.post("/api/games", json={"seats": ["human", path.stem]}), 400)
        assert "cannot load agent" in error and path.stem in error
    assert len(web.store) == 0


# ---------------------------------------------------------------------- agents offered on the command line
def test_an_agent_file_named_human_is_not_a_person(tmp_path):
    pytest.importorskip("safetensors")
    mine = tmp_path / "human.safetensors"
    mine.write_bytes(shipped_agent_path("ppo-2p").read_bytes())
    web, client = make(agent_paths=[mine])
    offered = client.get("/api/agents").json()
    assert offered["agents"].count("human") == 0 and len(offered["files"]) == 1
    label = offered["files"][0]
    assert label != "human" and "human" in label
    g = new_game(client, ["human", label], seed=1)
    assert [link["seat"] for link in g["links"]] == [0]  # the file's seat is an agent, not a person
    assert g["labels"][1] == label


def test_missing_agent_and_record_paths_are_errors_at_start(tmp_path):
    with pytest.raises(FileReadError, match="typo.safetensors: no such agent file or folder"):
        WebApp(agent_paths=[tmp_path / "typo.safetensors"])
    with pytest.raises(FileReadError, match="x.json: no such record file or folder"):
        WebApp(records=["/nonexistent/x.json"])
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(FileReadError, match="not a regular file"):
        WebApp(records=[fifo])
    with pytest.raises(FileReadError, match="not a regular file"):
        WebApp(agent_paths=[fifo])
    # in a folder, only regular files are offered
    (tmp_path / "game.json").write_text("{}")
    assert [p.name for p in WebApp(records=[tmp_path]).records] == ["game.json"]


def run_web(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skipbo_env.web", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_the_command_refuses_missing_files_before_serving(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        web_main(["--agent", str(tmp_path / "typo.safetensors"), "--port", "0"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "typo.safetensors" in err and "open http" not in err
    with pytest.raises(SystemExit) as exc:
        web_main(["--records", "/nonexistent/x.json", "--port", "0"])
    assert exc.value.code == 2 and "/nonexistent/x.json" in capsys.readouterr().err


def test_a_busy_port_is_an_error_without_the_open_line():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = run_web("--port", str(port))
    assert out.returncode == 1
    assert "open http" not in out.stdout + out.stderr
    assert str(port) in out.stderr and "in use" in out.stderr
    assert "Traceback" not in out.stderr


def test_port_zero_prints_the_port_it_listens_on():
    proc = subprocess.Popen([sys.executable, "-m", "skipbo_env.web", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("skipbo-web: open http://127.0.0.1:") and not line.endswith(":0/"), line
        port = int(line.rsplit(":", 1)[1].rstrip("/"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 200")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_command_without_the_web_extra_says_what_to_install():
    code = ("import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None\n"
            "from skipbo_env.web.__main__ import main\nraise SystemExit(main(['--port', '0']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert "skipbo-web:" in out.stderr and "pip install 'skipbo-env[web]'" in out.stderr
