"""End of the game: the immediate win (R22) and the turn limit (R23)."""

from __future__ import annotations

import pytest
from conftest import W, deal_deck, make_state, state_dict

from skipbo_env.rules import (
    END_TURN,
    Discard,
    GameConfig,
    GameOverError,
    GameState,
    IllegalMoveError,
    Play,
    Source,
    game_points,
    new_game,
)

STOCK0 = Play(Source.STOCK, 0)


def test_r22_last_stock_card_wins_at_once_mid_turn_with_cards_in_hand():
    state = make_state(hands={0: [5, 5, 9, 9, W]}, stocks={0: [1], 1: [3, 4]})
    state.apply(STOCK0)
    assert state.winner == 0 and state.winners == (0,)
    assert state.is_over and not state.truncated
    assert list(state.legal_moves()) == []
    assert state.hand_cards(0) == [5, 5, 9, 9, W]  # whatever remains in the hand
    assert state.current == 0 and state.turn == 0  # the turn never ended
    assert game_points(state) == (25 + 5 * 2, 0)


def test_r22_win_with_a_card_that_completes_a_pile():
    state = make_state(hands={0: [4]}, stocks={0: [12]}, building=[11, 0, 0, 0])
    state.apply(STOCK0)
    assert state.winner == 0
    assert state.building_values() == [0, 0, 0, 0] and len(state.completed) == 12


def test_r22_win_by_a_wild_from_the_stock():
    state = make_state(hands={0: [4]}, stocks={0: [W]}, building=[7, 0, 0, 0])
    state.apply(Play(Source.STOCK, 2))
    assert state.winner == 0 and state.building_values()[2] == 1


def test_r22_win_on_the_very_first_move_of_a_new_game():
    deck = deal_deck([[1], [2]])  # first player (seat 1) gets the 1, seat 0 the 2
    state = new_game(GameConfig(stock_size=1, first_player=1), deck=deck)
    assert state.stocks == [[2], [1]]
    state.apply(Play(Source.STOCK, 3))
    assert state.winner == 1 and game_points(state) == (0, 30)


def test_r22_anything_after_the_win_raises_game_over_and_changes_nothing():
    state = make_state(hands={0: [5, 9]}, stocks={0: [1]})
    state.apply(STOCK0)
    before = state.to_dict()
    for move in (Discard(5, 0), Play(Source.HAND, 1, card=5), END_TURN, "nonsense"):
        with pytest.raises(GameOverError, match="the game is over: seat 0 won") as info:
            state.apply(move)
        assert isinstance(info.value, IllegalMoveError)
        assert state.to_dict() == before


def test_r22_other_players_stocks_and_hands_are_left_as_they_are():
    state = make_state(hands={0: [9], 1: [7, 7]}, stocks={0: [1], 1: [5, 6, 7]})
    state.apply(STOCK0)
    assert state.stocks[1] == [5, 6, 7] and state.hand_cards(1) == [7, 7]


# ------------------------------------------------------------------ R23
def test_r23_turn_limit_truncates_without_a_winner():
    state = make_state(hands={0: [9, 9, 9, 9, 9], 1: [10, 10, 10, 10]}, draw=[11] * 6, turn_limit=3)
    state.apply(Discard(9, 0))
    state.apply(Discard(10, 0))
    assert state.turn == 2 and not state.is_over
    state.apply(Discard(9, 1))
    assert state.turn == 3
    assert state.truncated and state.is_over and state.winner is None and state.winners == ()
    assert list(state.legal_moves()) == []
    assert state.current == 0  # no next turn is started, so nobody refills
    assert state.hand_cards(0) == [9, 9, 9, 11]
    assert state.hand_cards(1) == [10, 10, 10, 11]
    assert game_points(state) == (0, 0)
    before = state.to_dict()
    with pytest.raises(GameOverError, match=r"truncated at the turn limit \(3\)"):
        state.apply(Discard(9, 0))
    assert state.to_dict() == before


def test_r23_plays_do_not_count_turns_only_ends_do():
    state = make_state(hands={0: [1, 2, 3, 9, 9]}, turn_limit=1)
    state.apply(Play(Source.HAND, 0, card=1))
    state.apply(Play(Source.HAND, 0, card=2))
    assert state.turn == 0 and not state.is_over
    state.apply(Discard(9, 0))
    assert state.truncated


def test_r23_end_turn_counts_a_turn():
    state = make_state(hands={0: []}, rest=("discard", 1, 0), turn_limit=1)
    state.apply(END_TURN)
    assert state.truncated and state.turn == 1


def test_r23_default_limit_is_1000_and_loaded_states_at_the_limit_are_truncated():
    assert GameConfig().turn_limit == 1000
    state = GameState.from_dict(state_dict(hands={0: [5]}, turn=1000))
    assert state.truncated and list(state.legal_moves()) == []
    state = GameState.from_dict(state_dict(hands={0: [5]}, turn=999))
    assert not state.is_over and state.legal_moves()


def test_r23_a_win_in_the_last_turn_beats_the_limit():
    state = make_state(hands={0: [9]}, stocks={0: [1]}, turn=4, turn_limit=5)
    state.apply(STOCK0)
    assert state.winner == 0 and not state.truncated


def test_r23_random_games_end_by_the_limit_when_stalled():
    """Uniform random 2-player play stalls: with a small limit every game here is truncated."""
    import numpy as np

    truncated = 0
    for seed in range(20):
        state = new_game(GameConfig(turn_limit=40), seed=seed)
        rng = np.random.default_rng(seed)
        while not state.is_over:
            moves = state.legal_moves()
            state.apply(moves[int(rng.integers(len(moves)))])
        assert state.turn == 40 or state.winner is not None
        truncated += state.truncated
    assert truncated >= 15


def test_r23_move_limit_ends_an_endless_turn():
    """R23 (decision, docs/rules.md): a player who never stops playing cycles cards for ever inside
    one turn; the move limit truncates such a game even though the turn counter is stuck."""
    from skipbo_env.encoding import action_mask, decode_action

    config = GameConfig(num_players=2, move_limit=2000)
    state = new_game(config, seed=0)
    turns = []
    while not state.is_over:
        lowest = int(action_mask(state.legal_moves(), config).nonzero()[0][0])
        state.apply(decode_action(lowest, config))
        turns.append(state.turn)
    assert state.moves == 2000 and state.truncated and state.winner is None
    assert state.turn < config.turn_limit and turns[-1000:] == [turns[-1]] * 1000  # stuck in one turn
    with pytest.raises(GameOverError, match="move limit"):
        state.apply(state.legal_moves()[0] if state.legal_moves() else END_TURN)
