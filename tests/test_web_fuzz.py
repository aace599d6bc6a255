"""The web API under random and mutated requests (Hypothesis): only 2xx/4xx answers, JSON on
the API, never a 500.

Each request is a right one (the person to move with their token and a legal move, a new
game of cheap agents, a real record, ...) with at most one fault: a seat, token, field, seat
spec, move key or part of a record replaced by any JSON value or text (non-ASCII and lone
surrogates included), an extra field, raw bytes, a foreign header, another method, a bad query
value, or a forged path. The examples are few and derandomized, so the test runs in seconds
and the same way every time.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from skipbo_env.web.app import WebApp  # noqa: E402
from skipbo_env.web.matches import MAX_ADVANCE  # noqa: E402
from skipbo_env.web.tables import legal_json  # noqa: E402

FUZZ = settings(max_examples=600, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
CHEAP_AGENTS = ["human", "greedy", "random", "heuristic"]
"""Seats the fuzzer may start games with (the trained agents take seconds to load)."""

unicode = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
"""Text a URL can carry (no lone surrogates)."""
text = st.text(max_size=12) | st.sampled_from(["\ud800", "\u00e9", "\U0001f600", "\x00", "%ff", "..", "/"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | st.floats() | text
    | st.sampled_from(CHEAP_AGENTS + ["ps>1", "pd1>1", "h5>1", "x13>1", "s>1"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=10,
)


class Table:
    """A web app with a game of each mode and a finished game's record, made once."""

    def __init__(self) -> None:
        self.web = WebApp(max_games=100_000)
        self.client = TestClient(self.web.app, raise_server_exceptions=False)
        play = self.client.post("/api/games", json={"seats": ["human", "greedy", "human"], "seed": 1}).json()
        watch = self.client.post("/api/games", json={"seats": ["greedy", "random"], "seed": 2, "short": True,
                                                     "target": 1}).json()
        self.play, self.watch = play["game_id"], watch["game_id"]
        self.tokens = {link["seat"]: link["token"] for link in play["links"]}
        while not self.client.get(f"/api/games/{self.watch}", params={"advance": MAX_ADVANCE}).json()["table"]["over"]:
            pass
        self.record = self.client.get(f"/api/games/{self.watch}/record").json()


_TABLE: list[Table] = []


def table() -> Table:
    if not _TABLE:
        _TABLE.append(Table())
    return _TABLE[0]


FAULTS = ["none", "seat", "token", "field", "extra field", "raw body", "seat spec", "record part", "key",
          "header", "method", "query", "path"]
"""What one request gets wrong: nothing, or one thing (one fault at a time finds the most)."""


def _who(draw, t: Table, fault: str) -> tuple[object, object]:
    """The person to move in the play game and their token (the other person's now and then),
    with the seat or the token replaced by anything for those faults."""
    game = t.web.store.get(t.play)
    seat = game.state.current if game.state.current in t.tokens else draw(st.sampled_from(sorted(t.tokens)))
    token: object = t.tokens[draw(st.sampled_from([seat, seat, seat, 2 - seat]))]
    if fault == "seat":
        return draw(st.sampled_from([1, -1, 3, None, "0", True]) | json_values), token
    if fault == "token":
        return seat, draw(text | json_values | st.sampled_from([token + "\u00e9", "\u00e9" * 22, token.upper()]))
    return seat, token


def _move(draw, t: Table, fault: str) -> dict:
    """A legal move of the play game by the person to move, with the move count they saw."""
    game = t.web.store.get(t.play)
    legal = [m["id"] for m in legal_json(game.state.view(game.state.current))]
    seat, token = _who(draw, t, fault)
    body = {"seat": seat, "token": token, "action": draw(st.sampled_from(legal)) if legal else 0,
            "seen": game.step_count}
    if fault == "key":
        del body["action"]
        body["key"] = draw(st.sampled_from(["ps>1", "pd1>1", "pd4>4", "h5>1", "x13>1", "s>1", "d1>2", "h13>1"])
                           | text | json_values)
    return body


def _body(draw, t: Table, route: str, fault: str) -> bytes:
    """The body of ``route``, with one fault: a field replaced or added, a seat spec or a part of
    the record replaced, or raw bytes."""
    body: dict = {}
    if route == "move":
        body = _move(draw, t, fault)
    elif route == "next":
        body = dict(zip(("seat", "token"), _who(draw, t, fault), strict=True))
    elif route == "games":
        body = {"seats": draw(st.lists(st.sampled_from(CHEAP_AGENTS), min_size=2, max_size=6)),
                "partner": draw(st.booleans()), "short": True, "seed": draw(st.none() | st.integers(0, 1 << 40)),
                "target": draw(st.sampled_from([1, 500]))}
    elif route == "replay":
        body = json.loads(json.dumps(t.record))
    if fault == "field" and body:
        body[draw(st.sampled_from(sorted(body)))] = draw(json_values)
    elif fault == "extra field":
        body[draw(text)] = draw(json_values)
    elif fault == "seat spec" and route == "games":
        body["seats"][draw(st.integers(0, len(body["seats"]) - 1))] = draw(json_values)
    elif fault == "record part" and route == "replay":
        part = draw(st.sampled_from(["moves", "initial_state", "result", "players", "format", "version"]))
        body[part] = draw(json_values)
    if fault == "raw body":
        return draw(st.binary(max_size=40) | st.sampled_from([b"[" * 5000, b'{"seat": "\xed\xa0\x80"}', b"\xff"]))
    return json.dumps(body).encode()


def _params(draw, t: Table, fault: str) -> dict:
    seat, token = _who(draw, t, fault)
    params = {"seat": str(seat), "token": token, "since": str(draw(st.integers(0, 5))),
              "advance": str(draw(st.integers(0, MAX_ADVANCE)))}
    params = {k: v for k, v in params.items() if draw(st.booleans())}
    if fault == "query":
        params[draw(st.sampled_from(["seat", "token", "since", "advance"]))] = draw(unicode)
    return {k: v for k, v in params.items() if isinstance(v, str)}


def _headers(draw, fault: str) -> dict:
    headers = {"Content-Type": "application/json"}
    if fault == "header":
        headers.update(draw(st.sampled_from([
            {"Content-Type": "text/plain"}, {"Content-Type": ""}, {"Content-Type": "application/json; charset=utf-8"},
            {"Content-Type": "application/x-www-form-urlencoded"}, {"Origin": "https://evil.example"},
            {"Origin": "http://testserver"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-origin"}, {"Host": "evil.example"}, {"Content-Length": "x"},
        ])))
    return headers


@st.composite
def requests(draw):
    """(method, path, query parameters, body bytes, headers) of a request to one of the routes,
    right but for (at most) one fault."""
    t = table()
    fault = draw(st.sampled_from(FAULTS))
    route = draw(st.sampled_from(["poll", "move", "next", "record", "games", "replay", "agents", "records",
                                  "record_n", "page", "static"]))
    gid = draw(st.sampled_from([t.play, t.watch, t.play]))
    if fault == "path":
        gid = quote(draw(text), safe="", errors="surrogatepass")
    path = {
        "poll": f"/api/games/{gid}", "move": f"/api/games/{gid}/move", "next": f"/api/games/{gid}/next",
        "record": f"/api/games/{gid}/record", "games": "/api/games", "replay": "/api/replay",
        "agents": "/api/agents", "records": "/api/records", "record_n": f"/api/records/{draw(st.integers(-5, 5))}",
        "page": "/", "static": f"/static/{gid if fault == 'path' else draw(st.sampled_from(['app.js', 'x']))}",
    }[route]
    method = "POST" if route in ("move", "next", "games", "replay") else "GET"
    if fault == "method":
        method = draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]))
    return method, path, _params(draw, t, fault), _body(draw, t, route, fault), _headers(draw, fault)


@FUZZ
@given(requests())
def test_random_and_mutated_requests_get_2xx_or_4xx_json(request):
    method, path, params, content, headers = request
    client = table().client
    try:
        r = client.request(method, path, params=params, content=content, headers=headers)
    except (UnicodeEncodeError, httpx.InvalidURL):  # requests the client itself refuses to send
        return
    assert r.status_code < 500, (method, path, params, content[:200], headers, r.status_code, r.text[:300])
    if r.status_code >= 400 or path.startswith("/api/"):
        data = r.json()
        assert isinstance(data, dict), data
        if r.status_code >= 400:
            assert isinstance(data.get("error"), str) and data["error"]
