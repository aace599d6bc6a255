"""Golden recorded games: both engines must replay them exactly (tests/golden/README.md).

Each file of ``tests/golden/games/`` holds one game recorded by
``tests/golden/make_golden.py``: the configuration, the seed of
``new_game(config, seed=...)``, every move (move dict and action id), the end
facts and SHA-256 hashes of the initial state, of the state every 50 moves and
of the final state (the state dict serialized with sorted keys, no spaces).

* ``test_rules_core_replay``: the rules core deals from the seed and replays
  every move: each one legal, its dict and action id in agreement, the same
  checkpoints, end facts and final state.
* ``test_engine_replay_loaded``: the batched engine loads the rules core's
  deal (state dict bridge) and steps the recorded action ids.
* ``test_engine_replay_dealt``: the batched engine deals the game itself from
  the generator ``new_game(config, seed)`` starts from (``numpy.random.default_rng(seed)``,
  put into the slot through a loaded state dict, then ``reset``) and steps the action ids.

A change that moves both engines the same way (another order of random draws,
another refill rule) fails here even though the differential test of
``tests/test_vector_engine.py`` still passes.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skipbo_env.encoding import decode_action, encode_action
from skipbo_env.rules import GameConfig, move_from_dict, move_to_dict, new_game
from skipbo_env.rules.serialization import rng_to_dict

GAMES_DIR = Path(__file__).resolve().parent / "golden" / "games"
GAME_FILES = sorted(GAMES_DIR.glob("*.json"))
REGENERATE = "regenerate with `python tests/golden/make_golden.py` only if the change of behaviour is intended"


def state_hash(state_dict: dict) -> str:
    """SHA-256 of the state dict serialized canonically, as make_golden.py records it."""
    text = json.dumps(state_dict, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache
def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


@pytest.fixture(params=GAME_FILES, ids=[p.stem for p in GAME_FILES])
def game(request) -> dict[str, Any]:
    return _load(request.param)


def differing_keys(actual: dict, expected: dict) -> str:
    """The top-level keys of two state dicts whose values differ, for failure messages."""
    keys = sorted(set(actual) | set(expected))
    return ", ".join(k for k in keys if actual.get(k) != expected.get(k)) or "none"


def check_final(game: dict, final: dict, engine: str) -> None:
    expected = game["final_state"]
    assert final == expected, (
        f"{engine}: final state of {game['name']} differs in: {differing_keys(final, expected)}; {REGENERATE}"
    )
    assert state_hash(final) == game["final_state_sha256"], "the recorded final state and its hash disagree"


def check_checkpoint(game: dict, moves: int, state_dict_of) -> None:
    """At a recorded checkpoint, the state hash must match (locates the first divergence)."""
    expected = game["checkpoint_sha256"].get(str(moves))
    if expected is not None:
        actual = state_dict_of()
        assert state_hash(actual) == expected, (
            f"state after move {moves} differs from the recording (first divergence after move "
            f"{moves - game['checkpoint_every']}); now at turn {actual['turn']}, "
            f"seat {actual['current_player']} to move"
        )


# ------------------------------------------------------------------ the files themselves
def test_golden_set_covers_the_configs():
    games = [_load(p) for p in GAME_FILES]
    assert len(games) >= 30, f"only {len(games)} golden games in {GAMES_DIR}"
    configs = [g["config"] for g in games]
    assert {c["num_players"] for c in configs} == {2, 3, 4, 5, 6}
    assert {c["num_players"] for c in configs if c["partner_game"]} == {4, 6}
    for field, value in (("short_game", True), ("allow_wild_discard", False), ("must_play_stock", True)):
        assert any(c[field] == value for c in configs), f"no golden game with {field}={value}"
    assert any(c["first_player"] is not None for c in configs)
    assert len({c["stock_size"] for c in configs}) >= 8  # explicit stock sizes, 1 up to 70
    won = [g for g in games if g["winner"] is not None]
    at_turn_limit = [g for g in games if g["truncated"] and g["turns"] >= g["config"]["turn_limit"]]
    at_move_limit = [g for g in games if g["truncated"] and g["moves_count"] >= g["config"]["move_limit"]]
    assert len(won) >= 15 and len(at_turn_limit) >= 4 and len(at_move_limit) >= 3
    assert any(g["winner"] is not None and g["config"]["partner_game"] for g in games)
    events = {k: sum(g["events"][k] for g in games) for k in games[0]["events"]}
    assert all(count > 0 for count in events.values()), events  # reshuffles, partner plays, end turns...
    assert {p for g in games for p in g["players"]} >= {"greedy", "heuristic", "random"}
    assert sum(p.stat().st_size for p in GAME_FILES) < 2_000_000


def test_file_is_consistent(game):
    config = GameConfig.from_dict(game["config"])
    assert config.to_dict() == game["config"]
    assert len(game["actions"]) == len(game["moves"]) == game["moves_count"]
    assert len(game["players"]) == config.num_players
    assert state_hash(game["final_state"]) == game["final_state_sha256"]
    assert game["final_state"]["moves"] == game["moves_count"] and game["final_state"]["turn"] == game["turns"]
    assert game["truncated"] == (game["winner"] is None)


# ------------------------------------------------------------------ rules core
def test_rules_core_replay(game):
    config = GameConfig.from_dict(game["config"])
    state = new_game(config, seed=game["seed"])
    assert state_hash(state.to_dict()) == game["initial_state_sha256"], f"the deal differs; {REGENERATE}"
    for i, (action, recorded) in enumerate(zip(game["actions"], game["moves"], strict=True)):
        assert not state.is_over, f"the game ended after {i} moves, the recording has {game['moves_count']}"
        move = move_from_dict(recorded)
        assert move_to_dict(move) == recorded, f"move {i}: dict round trip"
        assert encode_action(move, config) == action, f"move {i}: {recorded} is not action {action}"
        assert decode_action(action, config) == move, f"move {i}: action {action} is not {recorded}"
        assert move in state.legal_moves(), (
            f"move {i} ({move}) is illegal for seat {state.current} at turn {state.turn}; {REGENERATE}"
        )
        state.apply(move)
        check_checkpoint(game, state.moves, state.to_dict)
    assert state.is_over, f"the game is not over after the {game['moves_count']} recorded moves"
    assert state.winner == game["winner"]
    assert list(state.winners) == game["winners"]
    assert state.truncated == game["truncated"]
    assert state.turn == game["turns"]
    assert state.moves == game["moves_count"]
    check_final(game, state.to_dict(), "rules core")


# ------------------------------------------------------------------ batched engine
def _engine(config: GameConfig):
    vector = pytest.importorskip("skipbo_env.vector")
    return vector.BatchEngine(config, 1, seed=0)


def replay_on_engine(engine, game: dict) -> None:
    from skipbo_env.rules import IllegalMoveError

    assert state_hash(engine.export(0)) == game["initial_state_sha256"], f"the deal differs; {REGENERATE}"
    for i, action in enumerate(game["actions"]):
        assert not engine.done[0], f"the game ended after {i} moves, the recording has {game['moves_count']}"
        try:
            engine.step(np.array([action], dtype=np.int64))
        except IllegalMoveError as exc:
            pytest.fail(f"move {i} (action {action}, {game['moves'][i]}) refused by the engine: {exc}")
        assert int(engine.moves[0]) == i + 1
        check_checkpoint(game, i + 1, lambda: engine.export(0))
    assert engine.done[0], f"the game is not over after the {game['moves_count']} recorded moves"
    assert int(engine.status[0]) == (2 if game["truncated"] else 1)
    assert int(engine.winner[0]) == (-1 if game["winner"] is None else game["winner"])
    assert int(engine.turn[0]) == game["turns"]
    assert int(engine.moves[0]) == game["moves_count"]
    state = engine.to_state(0)
    assert state.winner == game["winner"] and list(state.winners) == game["winners"]
    assert state.truncated == game["truncated"]
    check_final(game, engine.export(0), "batched engine")


def test_engine_replay_loaded(game):
    """The rules core's deal, loaded through the state dict bridge, then the recorded action ids."""
    config = GameConfig.from_dict(game["config"])
    engine = _engine(config)
    engine.load(0, new_game(config, seed=game["seed"]).to_dict())
    replay_on_engine(engine, game)


def test_engine_replay_dealt(game):
    """The engine deals the game itself from the generator ``new_game(config, seed)`` starts from."""
    config = GameConfig.from_dict(game["config"])
    engine = _engine(config)
    holder = engine.export(0)  # any valid position of this config carries the generator into the slot
    holder["rng"] = rng_to_dict(np.random.default_rng(game["seed"]))
    engine.load(0, holder)
    engine.reset([0])
    replay_on_engine(engine, game)
