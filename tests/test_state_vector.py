"""The global state vector (skipbo_env/state_vector.py, PettingZoo ``state()``, docs/state-vector.md).

Every piece is checked against the rules core's :class:`GameState`, read here on its own terms
(not through the encoder's helpers), over random games of every configuration.
"""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skipbo_env
from skipbo_env.aec import raw_env
from skipbo_env.bots.greedy import greedy_move
from skipbo_env.encoding import fields_from_view
from skipbo_env.rules import WILD, GameConfig, GameState, new_game
from skipbo_env.state_vector import (
    StateFields,
    decode_state,
    discard_capacity,
    encode_state,
    state_layout,
    state_pieces,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"
CONFIGS: dict[str, dict[str, Any]] = {
    "2p": dict(num_players=2),
    "3p-stock4": dict(num_players=3, stock_size=4),
    "4p-partner-stock3": dict(num_players=4, partner_game=True, stock_size=3),
    "5p-stock3-first4": dict(num_players=5, stock_size=3, first_player=4),
    "6p-partner-stock2": dict(num_players=6, partner_game=True, stock_size=2),
    "2p-short-limit": dict(num_players=2, short_game=True, turn_limit=25),
    "3p-variants-moves": dict(num_players=3, allow_wild_discard=False, must_play_stock=True, move_limit=150),
}


def played_states(config: GameConfig, seed: int, max_moves: int = 600):
    """States along a game of greedy and random moves (every move), ending with the last one."""
    rng = np.random.default_rng(seed)
    state = new_game(config, seed=seed)
    yield state
    while not state.is_over and state.moves < max_moves:
        legal = state.legal_moves()
        if rng.random() < 0.6:
            move = greedy_move(fields_from_view(state.view(state.current)), legal, rng)
        else:
            move = legal[int(rng.integers(len(legal)))]
        state.apply(move)
        yield state


def counts(cards) -> tuple[int, ...]:
    return tuple(list(cards).count(v) for v in range(1, WILD + 1))


def check_against_game(vec: np.ndarray, state: GameState) -> None:
    """Every piece of ``vec`` against ``state``, whole numbers times the documented scales."""
    config = state.config
    layout = state_layout(config)
    assert vec.dtype == np.float32 and vec.shape == (layout.size,)
    assert (vec >= layout.low).all() and (vec <= layout.high).all(), "outside the state space's bounds"
    n, size = config.num_players, config.stock_size
    scale = np.array([12] * 12 + [18])

    def piece(name: str, times=1.0) -> np.ndarray:
        return np.rint(layout.view(vec.astype(np.float64), name) * times).astype(int)

    def onehot(card):
        row = np.zeros(14, dtype=int)
        row[13 if card is None else card - 1] = 1
        return row

    assert piece("current_player").tolist() == [int(s == state.current) for s in range(n)]
    for b, pile in enumerate(state.building):  # a pile's value is its length (R12)
        assert piece("building_values")[b].tolist() == [int(v == len(pile)) for v in range(12)]
        assert piece("building_wilds")[b].tolist() == [int(i < len(pile) and pile[i] == WILD) for i in range(11)]
    assert tuple(piece("draw_counts", scale)) == counts(state.draw_pile)
    assert piece("draw_size", 162)[0] == len(state.draw_pile)
    assert tuple(piece("completed_counts", scale)) == counts(state.completed)
    assert piece("completed_size", 162)[0] == len(state.completed)
    capacity = discard_capacity(config)
    for s in range(n):
        stock = state.stocks[s]
        assert tuple(piece(f"seat{s}.hand_counts", 5)) == tuple(state.hands[s][1:])
        assert piece(f"seat{s}.stock_top").tolist() == onehot(stock[-1] if stock else None).tolist()
        assert piece(f"seat{s}.stock_size", size)[0] == len(stock)
        assert tuple(piece(f"seat{s}.stock_counts", scale)) == counts(stock)
        assert piece(f"seat{s}.stock_cards", 13).tolist() == stock[::-1] + [0] * (size - len(stock))
        for d, pile in enumerate(state.discards[s]):
            assert piece(f"seat{s}.discard_tops")[d].tolist() == onehot(pile[-1] if pile else None).tolist()
            assert tuple(piece(f"seat{s}.discard_counts", scale)[d]) == counts(pile)
            assert piece(f"seat{s}.discard_sizes", 20)[d] == len(pile)
            assert piece(f"seat{s}.discard_piles", 13)[d].tolist() == pile[::-1] + [0] * (capacity - len(pile))
    assert piece("turn", config.turn_limit)[0] == state.turn
    assert piece("moves", config.move_limit)[0] == state.moves
    assert piece("winner").tolist() == [int(s == state.winner) for s in range(n)]
    assert piece("truncated")[0] == state.truncated


def fields_of(state: GameState) -> StateFields:
    """What ``decode_state`` must return for ``state``."""
    return StateFields(
        current_player=state.current,
        building=tuple(map(tuple, state.building)),
        draw_counts=counts(state.draw_pile),
        completed_counts=counts(state.completed),
        hands=tuple(tuple(hand[1:]) for hand in state.hands),
        stocks=tuple(map(tuple, state.stocks)),
        discards=tuple(tuple(map(tuple, piles)) for piles in state.discards),
        turn=state.turn,
        moves=state.moves,
        winner=state.winner,
        truncated=state.truncated,
    )


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_piece_matches_the_game_over_whole_games(name):
    config = GameConfig(**CONFIGS[name])
    space = raw_env(**CONFIGS[name]).state_space
    seen = dict(states=0, won=0, truncated=0, completed=0, wild_built=0, deep_discard=0)
    for seed in range(2):
        for state in played_states(config, seed):
            vec = encode_state(state)
            check_against_game(vec, state)
            assert decode_state(vec, config) == fields_of(state)
            assert space.contains(vec)
            seen["states"] += 1
            seen["won"] += state.winner is not None
            seen["truncated"] += state.truncated
            seen["completed"] += bool(state.completed)
            seen["wild_built"] += any(WILD in pile for pile in state.building)
            seen["deep_discard"] += any(len(p) >= 3 for piles in state.discards for p in piles)
    assert seen["won"] + seen["truncated"] == 2, "both games reach their end"
    assert seen["completed"] and seen["wild_built"] and seen["deep_discard"], seen


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(2, 6),
    partner=st.booleans(),
    stock=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_state_vector_round_trips_on_drawn_games(players, partner, stock, seed):
    config = GameConfig(num_players=players, partner_game=partner and players in (4, 6), stock_size=stock)
    for i, state in enumerate(played_states(config, seed, max_moves=300)):
        if i % 4 == 0 or state.is_over:
            vec = encode_state(state)
            check_against_game(vec, state)
            assert decode_state(vec, config) == fields_of(state)


# ------------------------------------------------------------------ the env's state()
def test_env_state_is_the_games_state_vector_and_in_its_space():
    env = skipbo_env.env(num_players=4, partner_game=True, stock_size=3)
    env.reset(seed=2)
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    steps = 0
    for _agent in env.agent_iter():
        vec = env.state()
        assert np.array_equal(vec, encode_state(raw.game)) and env.state_space.contains(vec)
        obs, _, terminated, truncated, _ = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        env.step(None if terminated or truncated else int(legal[rng.integers(len(legal))]))
        steps += 1
    assert raw.game.is_over and env.state_space.contains(env.state())
    check_against_game(env.state(), raw.game)
    assert steps > 20


def test_state_before_reset_fails_clearly():
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        raw_env().state()
    with pytest.raises(AssertionError, match="reset"):  # PettingZoo's OrderEnforcingWrapper message
        skipbo_env.env().state()


@pytest.mark.parametrize("config", [dict(num_players=2), dict(num_players=6, partner_game=True, turn_limit=30)])
def test_pettingzoo_state_test_passes(config):
    """PettingZoo's own state checks (its api_test does not call state())."""
    state_test = importlib.import_module("pettingzoo.test.state_test")  # the module, not the function
    env = skipbo_env.env(**config)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state_test.test_state_space(env)
        state_test.test_state(env, num_cycles=200)
    assert [str(w.message) for w in caught] == []


def test_state_sees_hidden_cards_and_decode_checks_the_shape():
    """The state is the whole table: swapping a hidden card changes it (unlike an observation)."""
    config = GameConfig(num_players=2, first_player=0)
    state = new_game(config, seed=0)
    data = state.to_dict()
    card = data["stocks"][1][0]  # the bottom of seat 1's stock: hidden from every seat (R3)
    other = next(i for i, c in enumerate(data["draw_pile"]) if c != card)
    data["stocks"][1][0], data["draw_pile"][other] = data["draw_pile"][other], card
    swapped = GameState.from_dict(data)
    assert all(state.view(s) == swapped.view(s) for s in range(2))
    assert not np.array_equal(encode_state(state), encode_state(swapped))
    with pytest.raises(ValueError, match=r"shape \(1773,\) for this config, got \(1772,\)"):
        decode_state(np.zeros(1772, dtype=np.float32), config)


def test_an_overfull_discard_pile_is_an_error():
    state = new_game(GameConfig(num_players=2), seed=0)
    state.discards[1][2] = [5] * (discard_capacity(state.config) + 1)
    with pytest.raises(ValueError, match="seat 1 discard pile 2 holds 161 cards, more than 160"):
        encode_state(state)


def test_layout_bounds_and_sizes():
    for n in range(2, 7):
        for partner in (False, True) if n in (4, 6) else (False,):
            config = GameConfig(num_players=n, partner_game=partner)
            layout = state_layout(config)
            capacity, stock = discard_capacity(config), config.stock_size
            assert capacity == 162 - (n // 2 if partner else n)
            width = 153 + stock + 4 * capacity
            assert layout.size == 2 * n + 123 + width * n
            assert [name for name, _, _ in layout.pieces] == [name for name, _, _ in state_pieces(config)]
            assert (layout.low == 0).all() and layout.low.dtype == layout.high.dtype == np.float32
            sizes = np.zeros(layout.size, dtype=bool)
            for s in range(n):
                sizes[layout.slice(f"seat{s}.discard_sizes")] = True
            assert (layout.high[sizes] == np.float32(capacity / 20)).all() and (layout.high[~sizes] == 1).all()


# ------------------------------------------------------------------ the doc
def _doc_table_rows(text: str, first_header: str) -> list[list[str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_state_vector_doc_matches_the_layout():
    text = (DOCS / "state-vector.md").read_text()
    for config in (
        GameConfig(num_players=2),
        GameConfig(num_players=3, stock_size=7),
        GameConfig(num_players=6, partner_game=True),
    ):
        layout = state_layout(config)
        n, stock, capacity = config.num_players, config.stock_size, discard_capacity(config)
        width = 153 + stock + 4 * capacity
        names = {"n": n, "S": stock, "C": capacity, "W": width}
        documented = {}
        for name, offset, length, *_ in _doc_table_rows(text, "piece"):
            name, offset, length = name.strip("`"), offset.strip("`"), length.strip("`")
            for s in range(n) if "{s}" in name else [None]:
                here = {**names, "s": s}
                documented[name.replace("{s}", str(s))] = (eval(offset, {}, here), eval(length, {}, here))
        actual = {name: (start, int(np.prod(shape))) for name, start, shape in layout.pieces}
        assert documented == actual, config
    for row in _doc_table_rows(text, "players"):
        n, partner = int(row[0][0]), "partner" in row[0]
        config = GameConfig(num_players=n, partner_game=partner)
        assert [int(x) for x in row[1:4]] == [config.stock_size, discard_capacity(config), state_layout(config).size]
    assert re.search(r"`2n \+ 123 \+ W·n`", text)
