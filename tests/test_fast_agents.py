"""The scripted agents' structured entry point (``act_view``) chooses exactly what the vector path
(``act``: encode the view, decode it back, pick from the mask) chooses, position by position."""

from __future__ import annotations

import pytest

from skipbo_env.bots import BOTS
from skipbo_env.encoding import decode_action, observe
from skipbo_env.rules import GameConfig, new_game

CONFIGS = [
    GameConfig(num_players=2),
    GameConfig(num_players=3, short_game=True),
    GameConfig(num_players=4, partner_game=True),
    GameConfig(num_players=6, stock_size=8),
    GameConfig(num_players=2, allow_wild_discard=False, must_play_stock=True),
]


def lockstep(config: GameConfig, name: str, games: int, seed: int) -> int:
    """Play ``games`` games where every seat is a pair (vector path, view path) of ``name`` agents
    seeded alike; every decision of the two must agree. Returns the number of positions checked."""
    checked = 0
    for g in range(games):
        state = new_game(config, seed=seed + g)
        n = config.num_players
        by_vector = [BOTS[name](config, seed=1000 * g + s) for s in range(n)]
        by_view = [BOTS[name](config, seed=1000 * g + s) for s in range(n)]
        while not state.is_over:
            seat = state.current
            expected = by_vector[seat].act(observe(state, seat))
            got = by_view[seat].act_view(state.view(seat))
            assert got == expected, f"{name}, game {g}, move {state.moves}: view path {got}, vector path {expected}"
            state.apply(decode_action(expected, config))
            checked += 1
    return checked


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.num_players}p-{c.stock_size}")
@pytest.mark.parametrize("name", ["random", "greedy", "heuristic"])
def test_view_path_matches_vector_path(config, name):
    games = 3 if name == "heuristic" else 6
    assert lockstep(config, name, games, seed=17) > 50 * games


@pytest.mark.slow
@pytest.mark.parametrize("name", ["greedy", "heuristic"])
def test_view_path_matches_vector_path_many_positions(name):
    total = sum(lockstep(config, name, 12, seed=100 + i) for i, config in enumerate(CONFIGS))
    assert total > 10_000


def test_act_view_refuses_a_seat_not_to_move():
    config = GameConfig()
    state = new_game(config, seed=0)
    other = 1 - state.current
    with pytest.raises(ValueError, match="not to move"):
        BOTS["greedy"](config, seed=0).act_view(state.view(other))
