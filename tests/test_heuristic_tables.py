"""The heuristic's weights by table: every path that seats the heuristic plays a table's weights."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import make_state

from skipbo_env.agents.search import SearchAgent, SearchSettings, search_weights
from skipbo_env.bots import make_bot
from skipbo_env.bots.heuristic import (
    CHAIN_WEIGHTS,
    DEFAULT_WEIGHTS,
    TABLE_WEIGHTS,
    HeuristicAgent,
    HeuristicWeights,
    default_weights,
    plan_turn,
)
from skipbo_env.encoding import decode_action, fields_from_view
from skipbo_env.rules import GameConfig, Play, Source, new_game

pytest.importorskip("numba")
from skipbo_env.vector import PlanCache  # noqa: E402
from skipbo_env.vector.compiled_heuristic import compiled_heuristic, compiled_plan, weights_vector  # noqa: E402

TABLES = (2, 3, 4, 5, 6)


def test_the_two_player_game_keeps_the_reference_weights():
    assert default_weights(2) is DEFAULT_WEIGHTS
    assert 2 not in TABLE_WEIGHTS


def test_every_multi_player_table_has_its_own_weights():
    for n in (3, 4, 5, 6):
        assert isinstance(default_weights(n), HeuristicWeights)
        assert default_weights(n) != DEFAULT_WEIGHTS, n
        assert default_weights(n).stock_detour > 0, n


@pytest.mark.parametrize("players", TABLES)
def test_every_path_plays_the_tables_weights(players):
    config = GameConfig(num_players=players)
    weights = default_weights(players)
    assert HeuristicAgent(config).policy.weights == weights
    assert make_bot("heuristic", config).policy.weights == weights
    assert compiled_heuristic(config).policy.weights == weights
    np.testing.assert_array_equal(PlanCache(2, players).weights, np.tile(weights_vector(weights), (2 * players, 1)))
    assert SearchSettings().for_table(config).weights == search_weights(players)
    given = replace(DEFAULT_WEIGHTS, danger=1.0)
    assert HeuristicAgent(config, weights=given).policy.weights == given  # given weights win
    assert SearchSettings(weights=given).for_table(config).weights == given


@pytest.mark.parametrize("players", TABLES)
def test_search_plans_with_the_chain_weights_where_the_heuristic_credits_hand_plays_more(players):
    """At 3 to 6 players the heuristic credits a hand play 5; the search's candidates and rollouts
    keep the chain weights (1), its documented strength measured with them; 2 players: one set."""
    config = GameConfig(num_players=players)
    expected = DEFAULT_WEIGHTS if players == 2 else CHAIN_WEIGHTS
    assert search_weights(players) == expected
    assert default_weights(players).hand_play == (1.0 if players == 2 else 5.0)
    assert replace(default_weights(players), hand_play=1.0) == expected
    search = SearchAgent(config, settings=SearchSettings(worlds=2, candidates=2, value=0.0, net_opponents=0.0))
    assert search.weights == expected and search.settings.weights == expected


def _stock_chain_position(players: int):
    """Stock 5 over a pile showing 3; the hand holds 1 2 3 4: the 4 alone reaches the stock."""
    stocks = {seat: [12, 12] for seat in range(players)}
    stocks[0] = [12, 5]
    return make_state(players, hands={0: [1, 2, 3, 4, 12]}, stocks=stocks, building=[3, 0, 0, 0])


@pytest.mark.parametrize("players", (3, 4, 6))
def test_multi_player_heuristic_takes_the_shortest_chain_to_its_stock(players):
    """R14: the stock card under the top is turned up once the top is played; at 3 to 6
    players the heuristic plays the stock first (hand 4, stock 5) and keeps 1 2 3 for the card
    turned up, where the 2-player weights play 1 2 3 on an empty pile first."""
    state = _stock_chain_position(players)
    agent = make_bot("heuristic", state.config, seed=0)
    moves = []
    for _ in range(2):
        move = decode_action(agent.act_view(state.view(0)), state.config)
        moves.append(move)
        state.apply(move)
    assert moves == [Play(Source.HAND, 0, card=4), Play(Source.STOCK, 0)]
    reference = plan_turn(fields_from_view(_stock_chain_position(players).view(0)),
                          GameConfig(num_players=players), DEFAULT_WEIGHTS)
    assert reference[0] == Play(Source.HAND, 1, card=1)


@pytest.mark.parametrize("players", (3, 4, 6))
def test_compiled_planner_plans_the_same_at_every_table(players):
    view = _stock_chain_position(players).view(0)
    obs, config = fields_from_view(view), GameConfig(num_players=players)
    assert compiled_plan(obs, config) == plan_turn(obs, config)


def test_plan_cache_rows_plan_with_their_own_weights():
    """A batch seat given other weights (``PlanCache.set_weights``) plays as the heuristic agent
    with those weights: turn by turn, the engine's game equals the rules layer's."""
    from skipbo_env.vector import BatchEngine, SeatKind

    config = GameConfig(num_players=3)
    other = replace(DEFAULT_WEIGHTS, refill=90.0, wild_spent=1.0, hand_play=3.0, danger=0.0)
    state = new_game(config, seed=11)
    engine = BatchEngine(config, 2, seed=0)
    engine.load_state(0, state)
    engine.load_state(1, state)
    plans = PlanCache(2, 3)
    plans.set_weights(np.array([0]), 1, other)  # game 0 only: game 1 keeps the table's weights
    agents = [HeuristicAgent(config, seed=s, weights=other if s == 1 else None) for s in range(3)]
    differs = False
    for _ in range(45):
        if state.is_over:
            break
        seat = state.current
        while not state.is_over and state.current == seat:
            state.apply(decode_action(agents[seat].act_view(state.view(seat)), config))
        engine.play_until(np.array([(seat + 1) % 3] * 2), SeatKind.HEURISTIC, plans)
        assert engine.to_state(0).to_dict() == state.to_dict()
        differs |= engine.to_state(1).to_dict() != state.to_dict()
    assert differs  # the weights given to seat 1 of game 0 changed its play


def test_set_weights_refuses_bad_input():
    plans = PlanCache(2, 3)
    with pytest.raises(ValueError, match="seat must be in 0..2"):
        plans.set_weights(np.array([0]), 3, DEFAULT_WEIGHTS)
    with pytest.raises(TypeError, match="HeuristicWeights"):
        plans.set_weights(np.array([0]), 0, {"danger": 1.0})


@pytest.mark.parametrize("bad, message", [
    ({"danger": float("nan")}, "danger must be a finite number"),
    ({"refill": "30"}, "refill must be a finite number"),
    ({"stock": True}, "stock must be a finite number"),
    ({"max_nodes": 0}, r"max_nodes must be an int in 1\.\.1000000"),
    ({"max_nodes": 2.5}, r"max_nodes must be an int in 1\.\.1000000"),
    ({"unseen_card": 1.5}, r"unseen_card must be in 0\.\.1"),
    ({"seat_decay": -0.1}, r"seat_decay must be in 0\.\.1"),
    ({"dry_cards": -1.0}, "dry_cards must be >= 0"),
])
def test_weights_refuse_values_the_planner_cannot_use(bad, message):
    with pytest.raises(ValueError, match=message):
        replace(DEFAULT_WEIGHTS, **bad)
