"""The partner game (R27) and the absence of any channel between partners (R28)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import W, check_card_count, check_view_hides, make_state

from skipbo_env.rules import (
    ALL_MOVES,
    END_TURN,
    NUM_SOLO_MOVES,
    Discard,
    GameConfig,
    IllegalMoveError,
    Play,
    SeatView,
    Source,
    game_points,
    new_game,
)

P_STOCK = Source.PARTNER_STOCK
P_DISCARD = Source.PARTNER_DISCARD


def partner_state(**kwargs):
    kwargs.setdefault("partner_game", True)
    return make_state(4, **kwargs)


def test_r27_partners_sit_opposite():
    assert [GameConfig(num_players=4, partner_game=True).partner(s) for s in range(4)] == [2, 3, 0, 1]
    assert [GameConfig(num_players=6, partner_game=True).partner(s) for s in range(6)] == [3, 4, 5, 0, 1, 2]


def test_r27_partner_stock_and_discard_tops_are_playable():
    state = partner_state(
        hands={0: [9, 9, 9, 9, 10]},
        stocks={0: [12], 1: [1], 2: [3, 1], 3: [1]},
        discards={1: [[1], [], [], []], 2: [[], [4, W], [], []], 3: [[1], [], [], []]},
    )
    plays = [m for m in state.legal_moves() if isinstance(m, Play)]
    assert plays == [Play(P_STOCK, b) for b in range(4)] + [
        Play(P_DISCARD, b, discard_pile=1) for b in range(4)
    ]  # seats 1 and 3 (opponents) offer nothing, nor does the card beneath the partner's wild
    state.apply(Play(P_STOCK, 0))
    assert state.stocks[2] == [3]  # R14 for the partner's stock too
    state.apply(Play(P_DISCARD, 0, discard_pile=1))
    state.apply(Play(P_STOCK, 0))
    state.apply(Play(P_DISCARD, 0, discard_pile=1))
    assert state.building[0] == [1, W, 3, 4]
    assert state.discards[2] == [[], [], [], []] and state.stocks[2] == []
    assert state.winner is None  # seat 0's own stock still holds a card
    check_card_count(state)


def test_r27_discards_only_on_own_piles_and_hands_stay_separate():
    state = partner_state(hands={0: [9, 9, 9, 9, 10], 2: [1, 1, 1, 1]})
    assert not any(isinstance(m, Play) and m.card == 1 for m in state.legal_moves())  # the partner's 1s
    discards = [m for m in state.legal_moves() if isinstance(m, Discard)]
    assert {m.card for m in discards} == {9, 10}
    state.apply(Discard(10, 3))
    assert state.discards[0][3] == [10] and state.discards[2] == [[], [], [], []]
    assert state.hand_cards(2) == [1, 1, 1, 1]


def test_r27_empty_own_stock_is_no_win_and_the_player_keeps_playing():
    state = partner_state(
        hands={0: [9, 9, 9, 9, 10], 1: [9], 2: [9], 3: [9]},
        stocks={0: [1], 2: [3, 2]},
        draw=[11] * 12,
    )
    state.apply(Play(Source.STOCK, 0))
    assert state.stocks[0] == [] and state.winner is None and not state.is_over
    state.apply(Discard(10, 0))
    for seat in (1, 2, 3):
        assert state.current == seat
        state.apply(Discard(9, 0) if 9 in state.hand_cards(seat) else Discard(11, 0))
    assert state.current == 0 and state.hand_size(0) == 5  # seat 0 takes turns as usual
    assert state.legal_moves()[0] == Play(P_STOCK, 0)  # and helps the partner
    state.apply(Play(P_STOCK, 0))
    assert state.winner is None
    state.apply(Play(P_STOCK, 0))  # the team's last stock card
    assert state.winner == 0 and state.winners == (0, 2) and state.is_over
    assert list(state.legal_moves()) == []


def test_r27_own_last_stock_card_wins_when_the_partners_stock_is_already_empty():
    state = partner_state(hands={0: [9]}, stocks={0: [1], 2: [], 1: [5], 3: [6, 7]})
    state.apply(Play(Source.STOCK, 0))
    assert state.winner == 0 and state.winners == (0, 2)
    assert game_points(state) == (25 + 5 * 3, 0)  # R27: 5 per card left in the opposing stocks


def test_r27_partner_win_in_six_player_game():
    state = make_state(
        6, partner_game=True, hands={4: [9]}, stocks={4: [], 1: [1], 0: [5, 5], 2: [6], 3: [7], 5: [8]},
        current=4,
    )
    assert state.config.partner(4) == 1
    state.apply(Play(P_STOCK, 2))
    assert state.winner == 4 and state.winners == (1, 4)
    assert game_points(state) == (0, 25 + 5 * 5, 0)


def test_r27_must_play_stock_ignores_the_partners_stock():
    state = partner_state(hands={0: [9, 9, 9, 9, 10]}, stocks={0: [7], 2: [1]}, must_play_stock=True)
    moves = state.legal_moves()
    assert Play(P_STOCK, 0) in moves and Discard(9, 0) in moves


def test_r27_partner_moves_only_in_the_partner_game():
    solo = make_state(4, hands={0: [9, 9, 9, 9, 10]}, stocks={2: [1]}, discards={2: [[1], [], [], []]})
    assert all(m.source not in (P_STOCK, P_DISCARD) for m in solo.legal_moves() if isinstance(m, Play))
    before = solo.to_dict()
    for move in (Play(P_STOCK, 0), Play(P_DISCARD, 0, discard_pile=0)):
        with pytest.raises(IllegalMoveError, match=r"partner cards can only be played in the partner game \(R27\)"):
            solo.apply(move)
    assert solo.to_dict() == before
    assert ALL_MOVES.index(Play(P_STOCK, 0)) >= NUM_SOLO_MOVES


def test_r27_empty_partner_sources_are_illegal_with_a_reason():
    state = partner_state(hands={0: [9, 9, 9, 9, 10]}, stocks={2: []}, stock_fill=3)
    with pytest.raises(IllegalMoveError, match="stock is empty"):
        state.apply(Play(P_STOCK, 0))
    with pytest.raises(IllegalMoveError, match="discard pile 1 is empty"):
        state.apply(Play(P_DISCARD, 0, discard_pile=1))


def test_r27_random_partner_games_only_end_with_both_stocks_empty():
    """Play-first random games: a side wins only with both stocks empty; empty-stock seats keep playing."""
    turns_with_empty_own_stock = 0
    wins = 0
    for seed in range(30):
        cfg = GameConfig(num_players=4, partner_game=True, stock_size=3, turn_limit=200)
        state = new_game(cfg, seed=seed)
        rng = np.random.default_rng(seed)
        while not state.is_over:
            seat = state.current
            if not state.stocks[seat] and state.stocks[cfg.partner(seat)]:
                turns_with_empty_own_stock += 1
            plays = [m for m in state.legal_moves() if isinstance(m, Play)]
            moves = plays or state.legal_moves()
            state.apply(moves[int(rng.integers(len(moves)))])
        if state.winner is not None:
            wins += 1
            assert all(not state.stocks[s] for s in state.winners)
            assert any(state.stocks[s] for s in range(4) if s not in state.winners)
    assert wins > 0 and turns_with_empty_own_stock > 0


# ------------------------------------------------------------------ R28
def test_r28_the_view_holds_nothing_of_the_partners_hand():
    state = partner_state(hands={0: [1, 2, 3, 4, 5], 2: [6, 7, 8, 9]})
    view = state.view(0)
    assert view.hand == (1, 2, 3, 4, 5)
    assert view.hand_sizes == (5, 0, 4, 0)
    other = partner_state(hands={0: [1, 2, 3, 4, 5], 2: [W, W, W, W]})
    assert other.view(0) == view  # the partner's cards do not reach the view
    check_view_hides(state, 0, np.random.default_rng(0))


def test_r28_no_channel_between_partners():
    """The view has no field for messages; everything in it is derived from the table."""
    fields = {f.name for f in dataclasses.fields(SeatView)}
    assert fields == {
        "seat", "config", "hand", "stock_tops", "stock_sizes", "discard_piles", "building_values",
        "hand_sizes", "draw_size", "completed_size", "current_player", "turn", "winner", "truncated",
        "building_piles", "completed_cards",  # the cards every player saw go onto the building piles (R12, R13)
    }
    # Whatever the partner did before (the order of its moves), the same table gives the same view.
    a = partner_state(hands={0: [9, 9, 9, 9, 10], 2: [4, 5]}, current=0)
    b = partner_state(hands={0: [9, 9, 9, 9, 10], 2: [4, 5]}, current=0, seed=99)
    assert a.view(0).hand == b.view(0).hand and a.view(2).hand == (4, 5)
    assert END_TURN not in a.legal_moves()
