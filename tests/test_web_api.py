"""The web app's JSON API through Starlette's test client (skipbo_env/web, docs/web.md).

Whole games through HTTP, bad and stale requests, several humans, watch mode,
replays of the records terminal play and evaluate.py write, the bounded store
and expiry, and information discipline checked on the JSON a seat receives:
no response holds another hand, a stock card below the top or the draw pile
(a rigged deal whose hidden cards are all 12s, and responses that stay
byte-identical when the hidden cards are shuffled).
"""

from __future__ import annotations

import dataclasses
import io
import json
import random

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from skipbo_env.agents.shipped import SHIPPED, SHIPPED_PLAYERS  # noqa: E402
from skipbo_env.records import GameRecord  # noqa: E402
from skipbo_env.rules import GameState, new_game  # noqa: E402
from skipbo_env.web.__main__ import build_parser  # noqa: E402
from skipbo_env.web.app import WebApp  # noqa: E402
from skipbo_env.web.matches import MAX_ADVANCE  # noqa: E402


def make(**kwargs):
    web = WebApp(**kwargs)
    return web, TestClient(web.app)


@pytest.fixture
def api():
    return make()


def create(client, seats, **extra):
    r = client.post("/api/games", json={"seats": seats, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def poll(client, gid, seat=None, token=None, **params):
    if seat is not None:
        params.update(seat=seat, token=token)
    r = client.get(f"/api/games/{gid}", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def choose(legal, rng=None):
    """A simple person: stock first, then other plays, then discards (random among equals with ``rng``)."""
    def rank(m):
        return (m["source"] != "stock", m["target"] != "build", m["source"] == "hand" and m["card"] == "SB")
    best = min(rank(m) for m in legal)
    top = [m for m in legal if rank(m) == best]
    return rng.choice(top) if rng else top[0]


def play_to_end(client, gid, seat, token, check=None, max_requests=5000):
    """Play ``seat`` until the game ends; ``check(response_json)`` sees every response."""
    snap = poll(client, gid, seat, token, since=0)
    if check:
        check(snap)
    for _ in range(max_requests):
        if snap["table"]["over"]:
            return snap
        assert snap["legal"], "a person in a two-player game against agents always has a move"
        m = choose(snap["legal"])
        r = client.post(f"/api/games/{gid}/move",
                        json={"seat": seat, "token": token, "action": m["id"], "seen": snap["moves"]})
        assert r.status_code == 200, r.text
        snap = r.json()
        if check:
            check(snap)
    raise AssertionError("the game did not end")


# ---------------------------------------------------------------------- a whole game
def test_play_a_whole_game_through_http(api):
    web, client = api
    g = create(client, ["human", "greedy"], short=True, seed=11)
    assert g["mode"] == "play" and [link["seat"] for link in g["links"]] == [0]
    token = g["links"][0]["token"]
    end = play_to_end(client, g["game_id"], 0, token)
    table = end["table"]
    assert table["over"] and (table["winner"] is not None or table["truncated"])
    assert end["legal"] == []
    match = end["match"]
    assert len(match["games"]) == 1 and match["scores"] == match["games"][0] == match["points"]
    # the record of the game replays to the same end, and opens in the replay API
    r = client.get(f"/api/games/{g['game_id']}/record", params={"seat": 0, "token": token})
    assert r.status_code == 200
    record = GameRecord.from_dict(r.json())
    final = record.final_state()
    assert final.winner == table["winner"] and len(record.moves) == end["moves"]
    rep = client.post("/api/replay", json=r.json()).json()
    assert len(rep["frames"]) == len(rep["moves"]) + 1 == end["moves"] + 1
    assert rep["frames"][-1]["over"] and rep["frames"][-1]["full"]
    # a finished game takes no more moves; the next game of the match is dealt on request
    r = client.post(f"/api/games/{g['game_id']}/move", json={"seat": 0, "token": token, "action": 0})
    assert r.status_code == 409 and "over" in r.json()["error"]
    r = client.post(f"/api/games/{g['game_id']}/next", json={"seat": 0, "token": token})
    assert r.status_code == 200 and r.json()["game_no"] == 1 and not r.json()["table"]["over"]


def test_moves_by_key_and_legal_list_matches_the_rules(api):
    web, client = api
    g = create(client, ["human", "heuristic"], seed=3)
    token = g["links"][0]["token"]
    snap = poll(client, g["game_id"], 0, token)
    game = web.store.get(g["game_id"])
    rules = {m for m in game.state.legal_moves()}
    assert len(snap["legal"]) == len(rules)
    m = choose(snap["legal"])
    r = client.post(f"/api/games/{g['game_id']}/move", json={"seat": 0, "token": token, "key": m["key"]})
    assert r.status_code == 200, r.text
    assert r.json()["moves"] > snap["moves"]


# ---------------------------------------------------------------------- bad requests
def test_bad_and_stale_requests_get_4xx_and_change_nothing(api):
    web, client = api
    g = create(client, ["human", "greedy"], seed=5, short=True)
    gid, token = g["game_id"], g["links"][0]["token"]
    before = poll(client, gid, 0, token)
    game = web.store.get(gid)
    state_before = json.dumps(game.state.to_dict(), sort_keys=True)
    legal_ids = {m["id"] for m in before["legal"]}
    illegal = next(i for i in range(200) if i not in legal_ids)

    def post(path, body, status, words=""):
        r = client.post(path, content=body if isinstance(body, (bytes, str)) else json.dumps(body),
                        headers={"Content-Type": "application/json"})
        assert r.status_code == status, (body, r.status_code, r.text)
        assert words.lower() in r.json()["error"].lower(), r.json()
        return r

    move = f"/api/games/{gid}/move"
    post(move, {"seat": 0, "token": token, "action": illegal}, 422, "not a legal move")
    post(move, {"seat": 0, "token": token, "action": 10_000}, 422, "action table")
    post(move, {"seat": 0, "token": token, "action": "3"}, 400, "integer")
    post(move, {"seat": 0, "token": token, "action": True}, 400, "integer")
    post(move, {"seat": 0, "token": token, "key": "zz>9"}, 400)
    unlisted = "h12>1" not in {m["key"] for m in before["legal"]}
    post(move, {"seat": 0, "token": token, "key": "h12>1" if unlisted else "x13>9"}, 422 if unlisted else 400)
    post(move, {"seat": 0, "token": token}, 400, "send a move")
    post(move, {"seat": 0, "token": "wrong", "action": min(legal_ids)}, 403, "token")
    post(move, {"seat": 1, "token": token, "action": min(legal_ids)}, 400, "human seats")
    post(move, {"seat": 0, "token": token, "action": min(legal_ids), "seen": before["moves"] + 7}, 409, "moved on")
    post(move, {"seat": 0, "token": token, "action": min(legal_ids), "extra": 1}, 400, "unknown field")
    post(move, b"{not json", 400, "not valid JSON")
    post(move, [1, 2], 400, "object")
    post(f"/api/games/{gid}/next", {"seat": 0, "token": token}, 409, "not over")
    assert client.get(f"/api/games/{gid}/record", params={"seat": 0, "token": token}).status_code == 409
    assert client.get(f"/api/games/{gid}", params={"seat": 0, "token": token, "advance": 3}).status_code == 400
    assert client.get(f"/api/games/{gid}", params={"seat": 0, "token": token, "since": "x"}).status_code == 400
    assert client.get(f"/api/games/{gid}", params={"seat": 0, "token": token, "since": -1}).status_code == 400
    assert client.get(f"/api/games/{gid}", params={"seat": 0}).status_code == 403
    assert client.get("/api/games/nope", params={"seat": 0, "token": token}).status_code == 404
    # nothing above changed the game
    assert json.dumps(game.state.to_dict(), sort_keys=True) == state_before
    assert poll(client, gid, 0, token)["moves"] == before["moves"]
    # creating games
    games = "/api/games"
    post(games, {"seats": ["human"]}, 400, "2 to 6")
    post(games, {"seats": ["human", "nobody"]}, 400, "not on offer")
    post(games, {"seats": ["human", "/etc/passwd"]}, 400, "not on offer")
    post(games, {"seats": ["human", "greedy", "greedy"], "partner": True}, 400, "4 or 6")
    post(games, {"seats": ["human", "greedy"], "seed": -1}, 400, "seed")
    post(games, {"seats": ["human", "greedy"], "short": "yes"}, 400)
    post(games, {"seats": ["human", "greedy"], "target": 0}, 400, "target")
    post("/api/replay", {"format": "nope"}, 400, "not a game record")
    post("/api/replay", b"[" * 100_000 + b"]" * 100_000, 400)
    r = client.post("/api/replay", content=b"x" * 10,
                    headers={"Content-Length": str(64 * 2**20), "Content-Type": "application/json"})
    assert r.status_code == 413
    assert client.get("/api/records/3").status_code == 404
    assert client.get("/api/nothing").status_code == 404
    assert client.get("/", headers={"Host": "evil.example"}).status_code == 400


def test_tampered_record_is_refused(api):
    web, client = api
    g = create(client, ["greedy", "random"], seed=2, short=True)
    for _ in range(200):
        if poll(client, g["game_id"], advance=MAX_ADVANCE)["table"]["over"]:
            break
    record = client.get(f"/api/games/{g['game_id']}/record").json()
    record["result"]["winner"] = 1 - record["result"]["winner"]
    r = client.post("/api/replay", json=record)
    assert r.status_code == 400 and "result" in r.json()["error"]


# ---------------------------------------------------------------------- information discipline
HIDDEN = 12


def rig(state_dict, me):
    """Move every 12 to where ``me`` cannot see it (other hands, stocks below the top, the draw pile)."""
    d = json.loads(json.dumps(state_dict))
    draw = d["draw_pile"]
    spare = [i for i, c in enumerate(draw) if c != HIDDEN]

    def swap_out(cards, idx):
        j = spare.pop()
        cards[idx], draw[j] = draw[j], cards[idx]

    hand = d["hands"][me]  # a hand is a list of cards in the state format, in increasing order
    for i, c in enumerate(hand):
        if c == HIDDEN:
            swap_out(hand, i)
    hand.sort()
    for stock in d["stocks"]:
        if stock and stock[-1] == HIDDEN:
            swap_out(stock, len(stock) - 1)
    assert not any(c == HIDDEN for pile in d["discard_piles"][me] for c in pile)
    return d


def hidden_cards(state: GameState, me: int):
    cards = list(state.draw_pile)
    for s in range(state.config.num_players):
        if s != me:
            cards += state.hand_cards(s)
        cards += state.stocks[s][:-1]
    return cards


def test_rigged_deal_no_hidden_card_reaches_the_seat(api):
    """Every 12 is hidden: no response to the person holds the card "12" until one is played."""
    web, client = api
    g = create(client, ["human", "greedy", "greedy"], seed=21)
    gid, token = g["game_id"], g["links"][0]["token"]
    game = web.store.get(gid)
    with game.lock:
        fresh = new_game(dataclasses.replace(game.config, first_player=0), seed=21)  # seat 0 to move, nothing played
        rigged = GameState.from_dict(rig(fresh.to_dict(), 0))
        game.state = rigged
        game.steps.clear()
        game.step_count = 0
        game.recorder = GameRecord.start(rigged, game.labels)
    hidden = hidden_cards(game.state, 0)
    assert hidden.count(HIDDEN) == 12  # all of them
    snap_text = client.get(f"/api/games/{gid}", params={"seat": 0, "token": token, "since": 0}).text
    assert f'"{HIDDEN}"' not in snap_text
    assert all(str(HIDDEN) not in m["key"] for m in json.loads(snap_text)["legal"])
    # the person plays from the hand (nothing new is revealed while the turn goes on)
    for _ in range(5):
        snap = json.loads(snap_text)
        plays = [m for m in snap["legal"] if m["target"] == "build" and m["source"] == "hand"]
        if not plays:
            break
        r = client.post(f"/api/games/{gid}/move",
                        json={"seat": 0, "token": token, "action": plays[0]["id"], "seen": snap["moves"]})
        assert r.status_code == 200
        snap_text = r.text
        if game.state.current != 0:
            break
        assert f'"{HIDDEN}"' not in snap_text


def scramble(state: GameState, me: int | None, rng: random.Random) -> GameState:
    """The same position for ``me`` (``None``: a watcher, who sees every hand) with every hidden
    card shuffled among the hidden places and another generator state."""
    d = state.to_dict()
    places = []  # (container, index)
    for i in range(len(d["draw_pile"])):
        places.append((d["draw_pile"], i))
    for stock in d["stocks"]:
        places += [(stock, i) for i in range(len(stock) - 1)]
    for s, hand in enumerate(d["hands"]):
        if me is not None and s != me:
            places += [(hand, i) for i in range(len(hand))]
    cards = [c[i] for c, i in places]
    rng.shuffle(cards)
    for (c, i), card in zip(places, cards, strict=True):
        c[i] = card
    for s, hand in enumerate(d["hands"]):
        if s != me:
            hand.sort()
    d["rng"] = new_game(state.config, seed=rng.getrandbits(63)).to_dict()["rng"]
    return GameState.from_dict(d)


def test_responses_do_not_depend_on_hidden_cards(api):
    """Throughout whole games, every response to a seat is byte-identical when the hidden
    cards (other hands, stocks below the top, the draw pile) are shuffled: it cannot hold them."""
    web, client = api
    rng = random.Random(0)
    g = create(client, ["human", "human", "greedy", "greedy"], partner=True, short=True, seed=8)
    gid = g["game_id"]
    tokens = {link["seat"]: link["token"] for link in g["links"]}
    game = web.store.get(gid)
    checked = 0
    for _ in range(3000):
        seat = game.state.current if game.state.current in tokens else 0
        for s, tok in tokens.items():
            params = {"seat": s, "token": tok, "since": game.step_count}
            first = client.get(f"/api/games/{gid}", params=params).text
            real = game.state
            try:
                game.state = scramble(real, s, rng)
                again = client.get(f"/api/games/{gid}", params=params).text
            finally:
                game.state = real
            assert first == again
            other = [row for row in json.loads(first)["table"]["seats"] if row["seat"] != s]
            assert all(row["hand"] is None for row in other)
            checked += 1
        if game.state.is_over:
            break
        snap = poll(client, gid, seat, tokens[seat])
        m = choose(snap["legal"], rng)
        r = client.post(f"/api/games/{gid}/move",
                        json={"seat": seat, "token": tokens[seat], "action": m["id"], "seen": snap["moves"]})
        assert r.status_code == 200, r.text
        # the steps in a move's answer are the mover's own views after each move
        for step in r.json()["steps"]:
            assert step["table"]["me"] == seat
            assert all(row["hand"] is None for row in step["table"]["seats"] if row["seat"] != seat)
    assert game.state.is_over and checked > 20


def test_watch_responses_do_not_depend_on_the_draw_pile_or_the_generator():
    """A watcher sees every hand but not the draw pile, the stocks below their tops or the
    generator: throughout a whole game of agents, every response (and the record request,
    refused until the game is over) is byte-identical when those are shuffled."""
    web, client = make()
    rng = random.Random(1)
    g = create(client, ["greedy", "heuristic", "random"], short=True, seed=14)
    gid = g["game_id"]
    game = web.store.get(gid)
    since, checked = 0, 0
    while not game.state.is_over:
        params = {"since": since}
        first = client.get(f"/api/games/{gid}", params=params).text
        record = client.get(f"/api/games/{gid}/record")
        assert record.status_code == 409 and "over" in record.json()["error"]
        real = game.state
        try:
            game.state = scramble(real, None, rng)
            assert client.get(f"/api/games/{gid}", params=params).text == first
            assert client.get(f"/api/games/{gid}/record").text == record.text
        finally:
            game.state = real
        checked += 1
        since = poll(client, gid, advance=5)["moves"] - 3
    assert checked > 10
    assert GameRecord.from_dict(client.get(f"/api/games/{gid}/record").json()).final_state().is_over


SECRET_SEED = 0x1234_5678_9ABC_DEF0_0FED_CBA9_8765_4321


@pytest.mark.parametrize("target", [1, 100_000], ids=["match-ends", "match-goes-on"])
@pytest.mark.parametrize("seats", [["human", "greedy"], ["greedy", "random"]], ids=["play", "watch"])
def test_a_drawn_seed_is_shown_only_when_the_match_is_over(monkeypatch, seats, target):
    """A seed left blank is a key the server draws, which rebuilds every deal of the match: no
    response holds it until the match is over (then ``match.seed`` shows it), not even the
    record of a finished game."""
    monkeypatch.setattr("skipbo_env.web.app.secrets.randbits", lambda n: SECRET_SEED)
    web, client = make()
    r = client.post("/api/games", json={"seats": seats, "short": True, "target": target})
    assert r.status_code == 200 and r.json()["seed"] is None
    texts = [r.text]
    g = r.json()
    gid = g["game_id"]
    assert web.store.get(gid).seed == SECRET_SEED
    if g["links"]:
        params = {"seat": 0, "token": g["links"][0]["token"]}
        play_to_end(client, gid, 0, params["token"], check=lambda snap: texts.append(json.dumps(snap)))
    else:
        params = {}
        while not (snap := poll(client, gid, since=0, advance=10))["table"]["over"]:
            texts.append(json.dumps(snap))
    texts.append(client.get(f"/api/games/{gid}/record", params=params).text)
    end = poll(client, gid, **params)
    if target == 1:
        assert end["match"]["over"] and end["match"]["seed"] == SECRET_SEED
    else:
        assert not end["match"]["over"] and end["match"]["seed"] is None
        texts.append(json.dumps(end))
    hiding = [text for text in texts if str(SECRET_SEED) not in text]
    shown = [json.loads(text)["match"] for text in texts if text not in hiding]
    assert all(match["over"] for match in shown)  # only the answers at the match's end
    assert len(hiding) > 5


def test_a_chosen_seed_is_shown_to_everyone_at_the_table(api):
    web, client = api
    g = create(client, ["human", "human"], seed=77)
    assert g["seed"] == 77
    for link in g["links"]:
        assert poll(client, g["game_id"], link["seat"], link["token"])["match"]["seed"] == 77


# ---------------------------------------------------------------------- several humans
def test_several_humans_each_see_their_own_seat(api):
    web, client = api
    g = create(client, ["human", "greedy", "human"], short=True, seed=4)
    gid = g["game_id"]
    tokens = {link["seat"]: link["token"] for link in g["links"]}
    assert set(tokens) == {0, 2} and tokens[0] != tokens[2]
    assert client.get(f"/api/games/{gid}", params={"seat": 2, "token": tokens[0]}).status_code == 403
    game = web.store.get(gid)
    seen = {0: 0, 2: 0}
    for _ in range(3000):
        if game.state.is_over:
            break
        mover = game.state.current
        assert mover in tokens  # agents never wait
        other = 2 - mover
        waiting = poll(client, gid, other, tokens[other], since=seen[other])
        assert waiting["legal"] == []
        r = client.post(f"/api/games/{gid}/move", json={"seat": other, "token": tokens[other], "action": 0})
        assert r.status_code in (409, 422)
        if r.status_code == 409:
            assert "not your turn" in r.json()["error"]
        for step in waiting["steps"]:
            assert step["table"]["me"] == other
        seen[other] = waiting["moves"]
        snap = poll(client, gid, mover, tokens[mover])
        own = [row for row in snap["table"]["seats"] if row["hand"] is not None]
        assert [row["seat"] for row in own] == [mover]
        m = choose(snap["legal"])
        r = client.post(f"/api/games/{gid}/move",
                        json={"seat": mover, "token": tokens[mover], "action": m["id"], "seen": snap["moves"]})
        assert r.status_code == 200, r.text
    assert game.state.is_over
    ends = [poll(client, gid, s, tokens[s]) for s in (0, 2)]
    assert ends[0]["table"]["winner"] == ends[1]["table"]["winner"] == game.state.winner
    assert ends[0]["match"]["scores"] == ends[1]["match"]["scores"]


# ---------------------------------------------------------------------- watch mode
def test_watch_agents_step_by_step_and_a_match():
    web, client = make()
    g = create(client, ["greedy", "heuristic", "random"], short=True, seed=9, target=1)
    assert g["mode"] == "watch" and g["links"] == []
    gid = g["game_id"]
    first = poll(client, gid, since=0)
    assert first["moves"] == 0 and first["table"]["full"]
    one = poll(client, gid, since=0, advance=1)
    assert one["moves"] == 1 and len(one["steps"]) == 1 and one["steps"][0]["table"]["full"]
    assert client.get(f"/api/games/{gid}", params={"advance": MAX_ADVANCE + 1}).status_code == 400
    moves = 1
    for _ in range(1000):
        snap = poll(client, gid, since=moves, advance=MAX_ADVANCE)
        assert [s["index"] for s in snap["steps"]] == list(range(moves, snap["moves"]))
        moves = snap["moves"]
        if snap["table"]["over"]:
            break
    assert snap["table"]["over"] and snap["match"]["over"]  # target 1: the first win ends the match
    assert client.post(f"/api/games/{gid}/next", json={}).status_code == 409
    record = GameRecord.from_dict(client.get(f"/api/games/{gid}/record").json())
    assert len(record.moves) == moves
    assert client.post(f"/api/games/{gid}/move", json={"action": 0}).status_code == 400


def test_a_match_goes_on_until_the_target():
    web, client = make()
    g = create(client, ["greedy", "greedy"], short=True, seed=1, target=60)
    gid = g["game_id"]
    for game_no in range(10):
        while not (snap := poll(client, gid, advance=MAX_ADVANCE))["table"]["over"]:
            pass
        assert snap["game_no"] == game_no and sum(snap["match"]["scores"]) == sum(map(sum, snap["match"]["games"]))
        if snap["match"]["over"]:
            break
        nxt = client.post(f"/api/games/{gid}/next", json={}).json()
        assert nxt["game_no"] == game_no + 1 and nxt["moves"] == 0
    assert snap["match"]["over"] and max(snap["match"]["scores"]) >= 60


# ---------------------------------------------------------------------- an agent that fails
def test_an_agent_that_breaks_stops_the_game_not_the_server(api):
    web, client = api
    g = create(client, ["human", "greedy"], short=True, seed=6)
    gid, token = g["game_id"], g["links"][0]["token"]
    game = web.store.get(gid)

    class Broken:
        def act(self, observation):
            raise RuntimeError("boom")

    game.agents[1] = Broken()
    end = play_to_end_or_error(client, gid, token)
    assert "boom" in end["error"]
    r = client.post(f"/api/games/{gid}/move", json={"seat": 0, "token": token, "action": 0})
    assert r.status_code == 409 and "stopped" in r.json()["error"]
    assert client.get("/api/agents").status_code == 200


def play_to_end_or_error(client, gid, token):
    snap = poll(client, gid, 0, token)
    for _ in range(100):
        if snap["error"] or snap["table"]["over"]:
            return snap
        m = choose(snap["legal"])
        snap = client.post(f"/api/games/{gid}/move",
                           json={"seat": 0, "token": token, "action": m["id"], "seen": snap["moves"]}).json()
    raise AssertionError("no error")


# ---------------------------------------------------------------------- the store
def test_games_are_bounded_and_expire():
    now = [0.0]
    web, client = make(max_games=2, ttl=60.0, clock=lambda: now[0])
    a = create(client, ["greedy", "greedy"])
    create(client, ["greedy", "random"])
    r = client.post("/api/games", json={"seats": ["greedy", "greedy"]})
    assert r.status_code == 503 and "maximum of 2 games" in r.json()["error"]
    now[0] = 30.0
    poll(client, a["game_id"])  # a request keeps a game alive
    now[0] = 70.0
    c = create(client, ["greedy", "greedy"])  # the untouched one expired
    assert len(web.store) == 2
    now[0] = 200.0
    r = client.get(f"/api/games/{a['game_id']}")
    assert r.status_code == 404 and "expired" in r.json()["error"]
    assert client.get(f"/api/games/{c['game_id']}").status_code == 404


# ---------------------------------------------------------------------- replays of existing records
def test_replay_opens_records_of_evaluate_and_terminal_play(tmp_path):
    import evaluate
    from skipbo_env.play import main as play_main

    rec_dir = tmp_path / "records"
    assert evaluate.main(["--agents", "greedy", "random", "--games", "2", "--seed", "0", "--save-records",
                          str(rec_dir), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    saved = tmp_path / "terminal.json"
    keys = io.StringIO("x13>1\n" * 3 + "q\n")
    out = io.StringIO()
    assert play_main(["--opponents", "greedy", "--seed", "4", "--save", str(saved), "--delay", "0",
                      "--no-color"], stdin=keys, stdout=out, stderr=out) == 0
    web, client = make(records=[rec_dir, saved])
    listed = client.get("/api/records").json()["records"]
    assert [r["name"] for r in listed] == ["game_000000.json", "game_000001.json", "terminal.json"]
    for r in listed:
        rep = client.get(f"/api/records/{r['n']}").json()
        record = GameRecord.load(rec_dir / r["name"] if r["name"].startswith("game") else saved)
        assert len(rep["frames"]) == len(record.moves) + 1 == len(rep["moves"]) + 1
        assert all(f["full"] for f in rep["frames"])
        assert rep["result"] == record.to_dict()["result"]
        # the same file uploaded by the page
        assert client.post("/api/replay", json=json.loads((rec_dir / r["name"] if r["name"].startswith("game")
                                                            else saved).read_text())).json()["moves"] == rep["moves"]
        # every hand shown, but never the draw pile
        assert "draw_pile" not in json.dumps(rep)


# ---------------------------------------------------------------------- agents on offer
def test_agents_on_offer_and_pickles_need_the_flag(tmp_path):
    (tmp_path / "old.zip").write_bytes(b"PK\x03\x04 not really")
    web, client = make(agent_paths=[tmp_path])
    offered = client.get("/api/agents").json()
    assert {"random", "greedy", "heuristic"} <= set(offered["agents"]) and "old" not in offered["agents"]
    assert offered["allow_pickle"] is False
    assert offered["players"] == dict(SHIPPED_PLAYERS)  # each shipped network's table, for the seat lists
    r = client.post("/api/games", json={"seats": ["human", "ppo-4p"]})
    assert r.status_code == 400 and "it plays 4-player games" in r.json()["error"]
    web, client = make(agent_paths=[tmp_path], allow_pickle=True)
    assert "old" in client.get("/api/agents").json()["agents"]
    r = client.post("/api/games", json={"seats": ["human", "old"]})
    assert r.status_code == 400 and "cannot load agent" in r.json()["error"]
    from skipbo_env.agents import shipped_agent_path

    mine = tmp_path / "mine" / "my_agent.safetensors"
    mine.parent.mkdir()
    mine.write_bytes(shipped_agent_path("ppo-2p").read_bytes())
    web, client = make(agent_paths=[mine])
    offer = client.get("/api/agents").json()
    assert "my_agent" in offer["trained"] and "ppo-2p" in offer["trained"]
    assert offer["scripted"] == ["random", "greedy", "heuristic",
                                 "stock-chaser", "hand-emptier", "blocker", "high-first"]
    assert offer["search"] == ["search"] and not set(offer["trained"]) & {*offer["scripted"], "search"}
    helptext = " ".join(build_parser().format_help().split())
    assert "--allow-pickle" in helptext and "arbitrary code" in helptext


BROWSER_TABLES = [
    ("random", 2, False), ("greedy", 2, False), ("heuristic", 3, False), ("ppo-2p", 2, False),
    ("ppo-2p-plus", 2, False), ("turn-2p", 2, False), ("turn-2p-plus", 2, False), ("ppo-3p", 3, False),
    ("ppo-4p", 4, False), ("ppo-6p", 6, False), ("search", 2, False), ("search", 3, False), ("search", 4, True),
    ("search", 6, False),
]
"""Every shipped agent at a table it plays: each trained network at its number of seats, search at 2 and more."""


@pytest.mark.parametrize("agent,players,partner", BROWSER_TABLES, ids=lambda v: str(v))
def test_every_shipped_agent_plays_in_browser_games(agent, players, partner):
    """Play mode (a person and the agent) and watch mode (the agent and greedy): the agent's
    seats make moves and no game stops with an error."""
    if agent in SHIPPED or agent == "search":
        pytest.importorskip("safetensors")
    if agent == "search":
        pytest.importorskip("numba")
    web, client = make()
    assert agent in client.get("/api/agents").json()["agents"]
    g = create(client, ["human"] + [agent] * (players - 1), partner=partner, seed=2)
    gid, token = g["game_id"], g["links"][0]["token"]
    game = web.store.get(gid)
    snap = poll(client, gid, 0, token, since=0)
    agent_moves = sum(step["seat"] != 0 for step in snap["steps"])
    while agent_moves < 4 and not snap["table"]["over"]:
        assert not snap["error"], snap["error"]
        m = choose(snap["legal"])
        r = client.post(f"/api/games/{gid}/move",
                        json={"seat": 0, "token": token, "action": m["id"], "seen": snap["moves"]})
        assert r.status_code == 200, r.text
        snap = r.json()
        agent_moves += sum(step["seat"] != 0 for step in snap["steps"])
    assert not snap["error"] and agent_moves >= 4 and game.error is None
    w = create(client, [agent] * (players - 1) + ["greedy"], partner=partner, seed=2)
    snap, agent_moves = poll(client, w["game_id"], since=0), 0
    while agent_moves < 4 and not snap["table"]["over"]:
        snap = poll(client, w["game_id"], since=snap["moves"], advance=4)
        assert not snap["error"], snap["error"]
        agent_moves += sum(step["seat"] != players - 1 for step in snap["steps"])
    assert agent_moves >= 4


def test_page_and_static_files(api):
    web, client = api
    r = client.get("/")
    assert r.status_code == 200 and "Skip-Bo" in r.text and "default-src 'self'" in r.headers["content-security-policy"]
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert client.get("/static/../app.py").status_code == 404
