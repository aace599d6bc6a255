"""Scoring (R24, R27), match play (R25, R9 deal passing left) and determinism."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import make_state

from skipbo_env.bots.greedy import greedy_move
from skipbo_env.encoding import fields_from_view
from skipbo_env.rules import (
    ConfigError,
    GameConfig,
    Play,
    Source,
    game_points,
    new_game,
    play_game,
    play_match,
)
from skipbo_env.rules.scoring import MATCH_TARGET


def random_move(obs, legal, rng):
    """A uniformly random legal move (a policy for :func:`as_player`)."""
    return legal[int(rng.integers(len(legal)))]


def as_player(policy, seed=None):
    """A ``policy(obs, legal, rng)`` as a ``Player`` for :func:`skipbo_env.rules.play_game`."""
    rng = np.random.default_rng(seed)
    return lambda view: policy(fields_from_view(view), view.legal_moves(), rng)


def _won(num_players, stocks, winner=0, **config):
    """A state won by ``winner``: its stock (and its partner's) emptied by its last stock play."""
    stocks = dict(stocks)
    stocks[winner] = [1]
    state = make_state(num_players, hands={winner: [9]}, stocks=stocks, current=winner, **config)
    state.apply(Play(Source.STOCK, 0))
    assert state.winner == winner
    return state


def test_e5_opponents_hold_4_and_9_stock_cards():
    state = _won(3, {1: [12] * 4, 2: [11] * 9})
    assert game_points(state) == (90, 0, 0)


def test_r24_example_3_6_and_8_cards_give_110():
    state = _won(4, {1: [12] * 3, 2: [11] * 6, 3: [10] * 8}, winner=0)
    assert game_points(state) == (110, 0, 0, 0)


def test_r24_hands_and_discard_piles_do_not_count():
    plain = _won(2, {1: [12] * 4})
    loaded = make_state(
        2, hands={0: [9], 1: [5, 6, 7, 8]}, stocks={0: [1], 1: [12] * 4}, discards={1: [[3] * 10, [], [], []]}
    )
    loaded.apply(Play(Source.STOCK, 0))
    assert game_points(plain) == game_points(loaded) == (45, 0)


def test_r24_winner_is_any_seat():
    state = _won(3, {0: [4, 4], 2: [5]}, winner=1)
    assert game_points(state) == (0, 25 + 15, 0)


def test_r24_unfinished_and_truncated_games_score_nothing():
    assert game_points(new_game(GameConfig(), seed=0)) == (0, 0)
    state = make_state(hands={0: [9]}, turn=10, turn_limit=10)
    assert state.truncated and game_points(state) == (0, 0)


def test_r27_team_scoring_counts_the_opposing_stocks():
    state = _won(4, {1: [12] * 4, 2: [], 3: [11] * 5}, partner_game=True)
    assert game_points(state) == (25 + 5 * 9, 0)
    state = _won(6, {1: [3], 2: [4, 4], 4: [5] * 3, 5: [6] * 4, 3: []}, partner_game=True)
    assert game_points(state) == (25 + 5 * 10, 0, 0)


# ------------------------------------------------------------------ matches
def _greedy_players(n, seed=0):
    return [as_player(greedy_move, seed + s) for s in range(n)]


@pytest.mark.parametrize(
    "config",
    [GameConfig(), GameConfig(num_players=3, short_game=True), GameConfig(num_players=4, partner_game=True)],
)
def test_r25_match_ends_when_a_side_reaches_500(config):
    result = play_match(config, _greedy_players(config.num_players), seed=5)
    assert result.winner is not None
    assert len(result.scores) == config.num_teams
    assert result.scores[result.winner] >= MATCH_TARGET == 500
    before_last = [s - p for s, p in zip(result.scores, result.points_per_game[-1], strict=True)]
    assert max(before_last) < 500  # it ended as soon as the target was reached
    assert [sum(col) for col in zip(*result.points_per_game, strict=True)] == list(result.scores)
    for game, points in zip(result.games, result.points_per_game, strict=True):
        assert game.is_over and game_points(game) == points


def test_r9_deal_passes_left_each_game():
    config = GameConfig(num_players=3, short_game=True)
    result = play_match(config, _greedy_players(3), seed=11)
    first = int(np.random.default_rng(11).integers(3))  # the first game's first player comes from the seed
    assert len(result.games) >= 4
    for g, game in enumerate(result.games):
        assert game.config.first_player == (first + g) % 3
    given = play_match(dataclasses.replace(config, first_player=2), _greedy_players(3), seed=11, target=100)
    assert [g.config.first_player for g in given.games] == [(2 + g) % 3 for g in range(len(given.games))]


def test_match_game_seeds_come_from_the_match_generator():
    """Game g is new_game(config with the passed deal, seed = the match generator's next draw)."""
    config = GameConfig(short_game=True)
    result = play_match(config, _greedy_players(2, seed=3), seed=21, target=60)
    rng = np.random.default_rng(21)
    first = int(rng.integers(2))
    players = _greedy_players(2, seed=3)
    for g, game in enumerate(result.games):
        replay = new_game(dataclasses.replace(config, first_player=(first + g) % 2), seed=int(rng.integers(2**63)))
        play_game(replay, players)
        assert replay.to_dict() == game.to_dict()


def test_match_truncated_games_score_zero_and_max_games():
    config = GameConfig(turn_limit=5)
    randoms = [as_player(random_move, s) for s in range(2)]
    result = play_match(config, randoms, seed=0, max_games=3)
    assert result.winner is None and len(result.games) == 3
    assert all(g.truncated for g in result.games)
    assert result.points_per_game == ((0, 0),) * 3 and result.scores == (0, 0)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"target": 0}, "target"), ({"target": "500"}, "target"), ({"max_games": 0}, "max_games")],
)
def test_match_argument_errors(kwargs, field):
    with pytest.raises(ConfigError, match=f"{field}: must be an int >= 1"):
        play_match(GameConfig(), _greedy_players(2), seed=0, **kwargs)


def test_play_game_needs_one_player_per_seat():
    with pytest.raises(ValueError, match="need 3 players, got 2"):
        play_game(new_game(GameConfig(num_players=3), seed=0), _greedy_players(2))


# ------------------------------------------------------------------ determinism
def _trajectory(config, seed, policy_seed):
    state = new_game(config, seed=seed)
    rng = np.random.default_rng(policy_seed)
    dicts = [state.to_dict()]
    while not state.is_over:
        moves = state.legal_moves()
        plays = [m for m in moves if isinstance(m, Play)]
        pick = plays if plays and rng.random() < 0.8 else moves
        state.apply(pick[int(rng.integers(len(pick)))])
        dicts.append(state.to_dict())
    return dicts


@pytest.mark.parametrize(
    "config",
    [
        GameConfig(turn_limit=300),
        GameConfig(num_players=6, partner_game=True, short_game=True, turn_limit=300),
        GameConfig(num_players=3, stock_size=8, must_play_stock=True, allow_wild_discard=False, turn_limit=300),
    ],
)
def test_same_seed_same_game_step_by_step(config):
    a = _trajectory(config, seed=17, policy_seed=4)
    b = _trajectory(config, seed=17, policy_seed=4)
    assert len(a) > 20
    assert a == b
    assert _trajectory(config, seed=18, policy_seed=4)[0] != a[0]


def test_same_generator_state_same_game():
    a = new_game(GameConfig(), seed=np.random.default_rng(99))
    b = new_game(GameConfig(), seed=99)
    assert a.to_dict() == b.to_dict()


def test_bad_seed():
    for seed in (-1, 1.5, "3"):
        with pytest.raises(ValueError, match="seed must be a non-negative int"):
            new_game(GameConfig(), seed=seed)


def test_same_seed_same_match():
    config = GameConfig(num_players=4, partner_game=True, short_game=True)
    a = play_match(config, _greedy_players(4, seed=1), seed=8)
    b = play_match(config, _greedy_players(4, seed=1), seed=8)
    assert a.points_per_game == b.points_per_game and a.scores == b.scores and a.winner == b.winner
    assert [g.to_dict() for g in a.games] == [g.to_dict() for g in b.games]
    c = play_match(config, _greedy_players(4, seed=1), seed=9)
    assert [g.to_dict() for g in c.games] != [g.to_dict() for g in a.games]
