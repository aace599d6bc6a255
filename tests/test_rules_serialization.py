"""The state dict (docs/state-format.md): exact round trip and validation of corrupt dicts."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import W, check_card_count, state_dict

from skipbo_env.rules import Discard, GameConfig, GameState, Play, Source, StateError, new_game
from skipbo_env.rules.serialization import rng_from_dict, rng_to_dict

DOC = Path(__file__).resolve().parent.parent / "docs" / "state-format.md"


def _play_some(state: GameState, moves: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if state.is_over:
            return
        legal = state.legal_moves()
        plays = [m for m in legal if isinstance(m, Play)]
        pick = plays or legal
        state.apply(pick[int(rng.integers(len(pick)))])


@pytest.mark.parametrize(
    "config",
    [
        GameConfig(),
        GameConfig(num_players=3, short_game=True),
        GameConfig(num_players=4, partner_game=True, stock_size=5),
        GameConfig(num_players=6, partner_game=True, must_play_stock=True, allow_wild_discard=False),
        GameConfig(num_players=5, first_player=4, turn_limit=50),
    ],
)
def test_round_trip_is_exact_and_json_safe(config):
    state = new_game(config, seed=7)
    for step in range(300):
        data = state.to_dict()
        text = json.dumps(data)
        assert json.loads(text) == data
        loaded = GameState.from_dict(json.loads(text))
        assert loaded.to_dict() == data
        if state.is_over:
            break
        _play_some(state, 1, seed=step)


def test_loaded_state_continues_exactly_like_the_original_generator_included():
    """After a load, reshuffles (R19) use the saved generator: the two games stay identical."""
    state = new_game(GameConfig(stock_size=20), seed=3)
    _play_some(state, 50, seed=0)
    twin = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    recycles = 0
    for step in range(3000):
        if state.is_over:
            break
        completed_before = len(state.completed)
        _play_some(state, 1, seed=step)
        _play_some(twin, 1, seed=step)
        recycles += completed_before > 0 and state.completed == [] and len(state.draw_pile) > 0
        assert twin.to_dict() == state.to_dict()
    assert recycles > 0


def test_rng_round_trip():
    rng = np.random.default_rng(2024)
    rng.integers(10, size=3)
    again = rng_from_dict(json.loads(json.dumps(rng_to_dict(rng))))
    assert again.integers(1 << 60, size=5).tolist() == rng.integers(1 << 60, size=5).tolist()
    dxsm = np.random.Generator(np.random.PCG64DXSM(5))
    assert rng_to_dict(rng_from_dict(rng_to_dict(dxsm))) == rng_to_dict(dxsm)
    with pytest.raises(StateError, match="rng: only"):
        rng_to_dict(np.random.Generator(np.random.MT19937(0)))


def test_hands_are_read_and_written_in_increasing_order():
    state = GameState.from_dict(state_dict(hands={0: [1, 5, 9, W]}))
    assert state.to_dict()["hands"][0] == [1, 5, 9, W]
    data = state_dict(hands={0: [1, 5, 9, W]})
    data["hands"][0] = [9, 1, W, 5]
    with pytest.raises(StateError, match=r"hands\[0\]: must list its cards in increasing order"):
        GameState.from_dict(data)  # a hand is kept as counts: no silent sort


def test_the_documented_example_loads_and_round_trips():
    text = DOC.read_text()
    block = re.search(r"```json\n(.*?)\n```", text, re.S)
    assert block, "docs/state-format.md must hold a ```json example"
    data = json.loads(block.group(1))
    state = GameState.from_dict(data)
    assert state.to_dict() == data
    check_card_count(state)
    # The example is the game the document describes.
    game = new_game(GameConfig(short_game=True, first_player=0), seed=2024)
    hand = Source.HAND
    for move in (
        Discard(10, 1),
        Play(hand, 0, card=W), Play(Source.STOCK, 0), Play(hand, 0, card=3), Play(hand, 0, card=4), Discard(10, 2),
        Play(hand, 0, card=W), Play(hand, 0, card=6), Discard(9, 0),
    ):
        game.apply(move)
    assert game.to_dict() == data


# ------------------------------------------------------------------ corrupt
def _set(path: str, value):
    def edit(d):
        *parents, last = re.findall(r"[^.\[\]]+", path)
        target = d
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return edit


def _drop_draw_card(d):
    d["draw_pile"].pop()


def _nineteen_wilds(d):
    d["draw_pile"].append(W)


def _building_1_3(d):
    d["building_piles"][0] = [1, 3]
    d["draw_pile"].remove(3)
    d["draw_pile"].append(2)


def _pile_of_12(d):
    d["building_piles"][0] = list(range(1, 13))
    for c in range(1, 13):
        d["draw_pile"].remove(c)


def _unknown_key(d):
    d["score"] = 0


def _missing_key(d):
    del d["turn"]


def _stock_too_big(d):
    d["stocks"][1] += d["draw_pile"][:26]
    del d["draw_pile"][:26]


def _hand_of_six(d):
    d["hands"][1] = d["draw_pile"][:6]
    del d["draw_pile"][:6]


def _empty_stock_no_winner(d):
    d["draw_pile"] += d["stocks"][1]
    d["stocks"][1] = []


def _winner_with_cards_in_stock(d):
    d["winner"] = 0


def _winner_not_current(d):
    d["draw_pile"] += d["stocks"][1]
    d["stocks"][1] = []
    d["winner"] = 1


def _winner_and_truncated(d):
    d["draw_pile"] += d["stocks"][0]
    d["stocks"][0] = []
    d["winner"] = 0
    d["turn"] = d["config"]["turn_limit"]
    d["moves"] = d["turn"]


def _partner_with_3(d):
    d["config"]["partner_game"] = True
    d["config"]["num_players"] = 3


def _incomplete_completed(d):
    d["completed"] = d["draw_pile"][:5]
    del d["draw_pile"][:5]


def _three_discard_piles(d):
    d["discard_piles"][0] = [[], [], []]


def _wrong_hand_count(d):
    d["hands"].append([])


CORRUPT = [
    (_drop_draw_card, "cards", r"holds 11 x \d+|holds \d+ x \w+ in all.*162 cards"),
    (_nineteen_wilds, "cards", r"19 x SB in all, expected 18"),
    (_building_1_3, "building_piles[0][1]", r"position 1 of a building pile must be a 2 or a wild, got 3"),
    (_pile_of_12, "building_piles[0]", r"holds 12 cards, at most 11"),
    (_set("current_player", 2), "current_player", r"must be an int in 0\.\.1, got 2"),
    (_set("current_player", -1), "current_player", r"must be an int in 0\.\.1"),
    (_set("current_player", True), "current_player", r"must be an int"),
    (_unknown_key, "state", r"unknown key\(s\): score"),
    (_missing_key, "state", r"missing key\(s\): turn"),
    (_set("draw_pile", "abc"), "draw_pile", r"must be a list, got str"),
    (_set("hands.0", [5, "6"]), "hands[0][1]", r"not a card"),
    (_set("hands.0", [5, 0]), "hands[0][1]", r"not a card"),
    (_set("turn", "3"), "turn", r"must be an int in 0\.\.1000"),
    (_set("turn", 1001), "turn", r"must be an int in 0\.\.1000, got 1001"),
    (_set("winner", 5), "winner", r"must be an int in 0\.\.1"),
    (_set("building_piles", [[], [], []]), "building_piles", r"must have 4 entries, got 3"),
    (_three_discard_piles, "discard_piles[0]", r"must have 4 entries, got 3"),
    (_wrong_hand_count, "hands", r"must have 2 entries, got 3"),
    (_set("stocks", {"0": []}), "stocks", r"must be a list, got dict"),
    (_stock_too_big, "stocks[1]", r"holds 31 cards, at most 30 allowed"),
    (_hand_of_six, "hands[1]", r"holds 6 cards, at most 5"),
    (_incomplete_completed, "completed", r"not a multiple of 12"),
    (_empty_stock_no_winner, "stocks", r"seat\(s\) \[1\] are empty but that side is not the winner"),
    (_winner_with_cards_in_stock, "winner", r"seat 0 cannot have won: the stock\(s\) of seat\(s\) \[0\] are not empty"),
    (_winner_not_current, "winner", r"must be the seat that moved last \(0\)"),
    (_winner_and_truncated, "winner", r"cannot also have reached the turn limit"),
    (_set("format", "chess"), "format", r"must be 'skipbo-state'"),
    (_set("version", 2), "version", r"unsupported version 2"),
    (_set("config", [2]), "config", r"must be a mapping"),
    (_set("config.num_players", 7), "config.num_players", r"must be in 2\.\.6, got 7"),
    (_set("config.stock_size", "30"), "config.stock_size", r"must be an int"),
    (_set("config.colour", "red"), "config.colour", r"unknown key"),
    (_partner_with_3, "config.partner_game", r"needs 4 or 6 players"),
    (_set("rng", None), "rng", r"must be an object"),
    (_set("rng.bit_generator", "MT19937"), "rng.bit_generator", r"must be one of"),
    (_set("rng.state", "12ab"), "rng.state", r"decimal string of a 128-bit integer"),
    (_set("rng.state", "\u00b2"), "rng.state", r"decimal string"),
    (_set("rng.inc", 5), "rng.inc", r"decimal string"),
    (_set("rng.state", str(2**128)), "rng.state", r"128-bit"),
    (_set("rng.has_uint32", 2), "rng.has_uint32", r"must be 0 or 1"),
    (_set("rng.has_uint32", True), "rng.has_uint32", r"must be 0 or 1"),
    (_set("rng.uinteger", -1), "rng.uinteger", r"0\.\.2\*\*32-1"),
    (_set("rng.extra", 1), "rng", r"unknown key\(s\): extra"),
]


@pytest.mark.parametrize(("corrupt", "path", "pattern"), CORRUPT, ids=[c[1] + "-" + c[0].__name__ for c in CORRUPT])
def test_corrupt_state_dicts_raise_state_error_naming_the_path(corrupt, path, pattern):
    data = state_dict(hands={0: [1, 2, 3, 4, 5], 1: [6, 7]}, building=[3, 0, 0, 0])
    GameState.from_dict(copy.deepcopy(data))  # valid before the edit
    corrupt(data)
    with pytest.raises(StateError, match=pattern) as info:
        GameState.from_dict(data)
    assert info.value.path == path
    assert str(info.value).startswith(f"{path}: ")


def test_partner_game_outcome_checks():
    data = state_dict(4, partner_game=True, stocks={0: [], 2: [5]}, hands={0: [7, 8]})
    GameState.from_dict(data)  # one empty stock per side is fine in the partner game (R27)
    data = state_dict(4, partner_game=True, stocks={0: [], 2: []})
    with pytest.raises(StateError, match=r"stocks: the stock\(s\) of seat\(s\) \[0, 2\] are empty"):
        GameState.from_dict(data)
    data = state_dict(4, partner_game=True, stocks={0: [], 2: [4]}, winner=0)
    with pytest.raises(StateError, match=r"winner: seat 0 cannot have won.*\[2\]"):
        GameState.from_dict(data)


def test_not_a_mapping():
    with pytest.raises(StateError, match="state: must be an object, got list"):
        GameState.from_dict([])
