"""The compiled heuristic planner (``skipbo_env.vector.compiled_heuristic``) plans exactly what the Python
planner (``skipbo_env.bots.heuristic.plan_turn``) plans: same sequence of moves from every position,
so the heuristic agent plays the same games with either (the documented tables do not move)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("numba")

from skipbo_env.agents import load_agent  # noqa: E402
from skipbo_env.bots import make_bot  # noqa: E402
from skipbo_env.bots.heuristic import DEFAULT_WEIGHTS, HeuristicAgent, plan_turn  # noqa: E402
from skipbo_env.encoding import decode_action, fields_from_view  # noqa: E402
from skipbo_env.rules import GameConfig, new_game  # noqa: E402
from skipbo_env.vector.compiled_heuristic import compiled_plan  # noqa: E402

CONFIGS = [
    GameConfig(num_players=2),
    GameConfig(num_players=3, short_game=True),
    GameConfig(num_players=4, partner_game=True),
    GameConfig(num_players=6, stock_size=8),
    GameConfig(num_players=6, partner_game=True, stock_size=6),
    GameConfig(num_players=2, allow_wild_discard=False, must_play_stock=True),
]

WEIGHTS = [
    DEFAULT_WEIGHTS,
    replace(DEFAULT_WEIGHTS, max_nodes=40),  # the node budget binds
    replace(DEFAULT_WEIGHTS, dry_cards=0.0, danger=80.0, seat_decay=0.9, unseen_card=0.2),
    replace(DEFAULT_WEIGHTS, refill=90.0, wild_spent=1.0, own_reach=30.0, own_unseen_card=0.7),
    replace(DEFAULT_WEIGHTS, stock_detour=7.0, stock_need=4.0, danger=20.0),  # shortest chains, stock set-up
]


def compare_games(config: GameConfig, games: int, seed: int, random_share: float = 0.3, weight_sets: int = 5) -> int:
    """Walk games (heuristic moves mixed with random ones, for odd positions) and compare both
    planners under the first ``weight_sets`` weight sets at every decision. Returns the number of positions."""
    checked = 0
    for g in range(games):
        rng = np.random.default_rng(seed + g)
        state = new_game(config, seed=seed + g)
        agents = [make_bot("heuristic", config, seed=s) for s in range(config.num_players)]
        while not state.is_over:
            view = state.view(state.current)
            fields = fields_from_view(view)
            for weights in WEIGHTS[:weight_sets]:
                expected = plan_turn(fields, config, weights)
                got = compiled_plan(fields, config, weights)
                assert got == expected, (
                    f"{config.num_players}p game {g} move {state.moves} weights {weights}: "
                    f"compiled {got}, Python {expected}"
                )
            if rng.random() < random_share:
                legal = view.legal_moves()
                move = legal[int(rng.integers(len(legal)))]
            else:
                move = decode_action(agents[state.current].act_view(view), config)
            state.apply(move)
            checked += 1
    return checked


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.num_players}p-{c.stock_size}-{c.partner_game}")
def test_compiled_plans_equal_python_plans(config):
    assert compare_games(config, 2, seed=31) > 100


@pytest.mark.slow
def test_compiled_plans_equal_python_plans_many_positions():
    total = sum(compare_games(config, 5, seed=500 + 10 * i, weight_sets=2) for i, config in enumerate(CONFIGS))
    assert total > 6_000


@pytest.mark.parametrize("config", CONFIGS[:3], ids=lambda c: f"{c.num_players}p")
def test_compiled_agent_plays_the_same_games(config):
    """Whole games, every seat a heuristic: the compiled agent's moves equal the Python agent's
    (plan cache and greedy fallback included)."""
    for g in range(2):
        state = new_game(config, seed=70 + g)
        python = [HeuristicAgent(config, seed=s) for s in range(config.num_players)]
        compiled = [load_agent("heuristic", config, seed=s) for s in range(config.num_players)]
        while not state.is_over:
            view = state.view(state.current)
            expected = python[state.current].act_view(view)
            assert compiled[state.current].act_view(view) == expected
            state.apply(decode_action(expected, config))


def test_registry_heuristic_is_compiled():
    agent = load_agent("heuristic", GameConfig(), seed=0)
    assert isinstance(agent, HeuristicAgent)
    assert agent.policy.planner is compiled_plan
    assert make_bot("heuristic", GameConfig()).policy.planner is plan_turn

