"""A server-drawn match key stays secret: no record or answer rebuilds a game not yet played.

The attack: a finished game's record holds its PCG64 generator; the generator's increment is
four words of numpy's SeedSequence output, and for entropy of at most four 32-bit words
SeedSequence is a bijection, so :func:`seeds_behind` inverts it to the seed the game was
dealt from. The test checks the inversion works (it finds each finished game's own seed), and
that nothing it finds, fed to the project's seed derivations, deals the next game.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from skipbo_env.agents import derive_seed  # noqa: E402
from skipbo_env.rules import new_game  # noqa: E402
from skipbo_env.web.app import WebApp  # noqa: E402
from skipbo_env.web.matches import keyed_seed, match_deal  # noqa: E402

M32 = 0xFFFFFFFF
INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
MIX_L, MIX_R = 0xCA01F9DD, 0x4973F715


def _unshift(x: int) -> int:
    return x ^ (x >> 16)  # x ^ (x >> 16) is its own inverse on 32 bits


def _inv(a: int) -> int:
    return pow(a, -1, 1 << 32)


def _consts(init: int, mult: int, n: int) -> list[tuple[int, int]]:
    """(before, after) of each hash step's constant."""
    out, h = [], init
    for _ in range(n):
        out.append((h, (h * mult) & M32))
        h = (h * mult) & M32
    return out


def _unhash(value: int, before: int, after: int) -> int:
    return ((_unshift(value) * _inv(after)) & M32) ^ before


def pool_of(words: list[int]) -> list[int]:
    """SeedSequence's pool from words 4..7 of ``generate_state(8)`` (the PCG64 increment)."""
    consts = _consts(INIT_B, MULT_B, 8)[4:]
    return [_unhash(w, b, a) for w, (b, a) in zip(words, consts, strict=True)]


def entropy_of(pool: list[int]) -> int:
    """The (at most 128-bit) int seed whose SeedSequence has ``pool``: mix_entropy run backwards."""
    mixer = list(pool)
    consts = _consts(INIT_A, MULT_A, 16)
    steps = [(s, d) for s in range(4) for d in range(4) if s != d]
    for k in reversed(range(len(steps))):
        src, dst = steps[k]
        before, after = consts[4 + k]
        y = _unshift(((mixer[src] ^ before) * after) & M32)
        mixer[dst] = ((_unshift(mixer[dst]) + MIX_R * y) * _inv(MIX_L)) & M32
    words = [_unhash(mixer[i], *consts[i]) for i in range(4)]
    return sum(w << (32 * i) for i, w in enumerate(words))


def seeds_behind(rng_dict: dict) -> list[int]:
    """Every int seed that ``numpy.random.default_rng(seed)`` turns into this generator's increment."""
    inc = int(rng_dict["inc"]) >> 1  # PCG64 keeps (initseq << 1) | 1: the top bit is lost
    out = []
    for top in (0, 1 << 127):
        initseq = inc | top
        v2, v3 = initseq >> 64, initseq & ((1 << 64) - 1)
        seed = entropy_of(pool_of([v2 & M32, v2 >> 32, v3 & M32, v3 >> 32]))
        if int(np.random.default_rng(seed).bit_generator.state["state"]["inc"]) == int(rng_dict["inc"]):
            out.append(seed)
    return out


def test_the_inversion_finds_a_games_seed():
    for seed in (0, 7, 2**31 - 1, 2**63 - 5, keyed_seed(99, "deal", 3)):
        assert seed in seeds_behind(new_game(seed=seed).to_dict()["rng"])


def _deal_text(state) -> str:
    return json.dumps([state.hands, state.stocks, sorted(state.draw_pile), state.current])


def _rebuilds(candidate: int, config, first: int, game_no: int) -> list:
    """The deals of game ``game_no`` an attacker makes from a recovered number."""
    return [match_deal(config, candidate, game_no, first), match_deal(config, candidate, game_no, first, keyed=True),
            new_game(config, seed=derive_seed(candidate, game_no, 0))]


@pytest.mark.parametrize("seats", [["greedy", "random"], ["greedy", "heuristic", "random"]])
def test_no_finished_game_rebuilds_the_next_deal(seats):
    web = WebApp()
    client = TestClient(web.app, raise_server_exceptions=False)
    g = client.post("/api/games", json={"seats": seats, "short": True, "target": 100_000}).json()
    gid, game = g["game_id"], web.store.get(g["game_id"])
    for game_no in range(3):
        assert client.get(f"/api/games/{gid}/record").status_code == 409  # nothing before the end
        while not client.get(f"/api/games/{gid}", params={"since": 0, "advance": 50}).json()["table"]["over"]:
            pass
        record = client.get(f"/api/games/{gid}/record").json()
        found = _all_rngs(record)
        assert keyed_seed(game.seed, "deal", game_no) in found  # the attack works: this game's seed
        assert game.seed not in found
        assert client.post(f"/api/games/{gid}/next", json={}).status_code == 200
        secret_deal = _deal_text(game.state)
        for candidate in found:
            for deal in _rebuilds(candidate, game.config, game.first, game_no + 1):
                assert _deal_text(deal) != secret_deal


def _all_rngs(record: dict) -> list[int]:
    """Seeds behind every generator state anywhere in a record."""
    found: list[int] = []

    def walk(node):
        if isinstance(node, dict):
            if "inc" in node and "bit_generator" in node:
                found.extend(seeds_behind(node))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(record)
    return found


def test_a_small_drawn_seed_would_have_been_found():
    """The attack on the old scheme (a 31-bit seed, game 0 dealt from it): one record gives the seed."""
    seed = 1_234_567_891
    state = match_deal(new_game(seed=0).config, seed, 0)
    assert seed in seeds_behind(state.to_dict()["rng"])
