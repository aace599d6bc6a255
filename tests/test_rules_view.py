"""The seat view (R3, R4, R28): what one seat may know, and nothing more."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import W, check_view_hides, hidden_reshuffle, make_state

from skipbo_env.rules import GameConfig, Play, Source, new_game


def _table():
    return make_state(
        3,
        hands={0: [1, 5, 9, W], 1: [2, 3, 7], 2: [12]},
        stocks={0: [4, 6], 1: [3, 11, 8], 2: [W]},
        discards={0: [[7, 6], [], [W], []], 2: [[], [], [], [1]]},
        building=[2, 0, [W, 2, 3, 4, 5], 0],
        completed=1,
        draw=[10, 10],
        current=1,
        turn=7,
    )


def test_view_holds_exactly_what_the_seat_may_know():
    state = _table()
    view = state.view(0)
    assert view.seat == 0 and view.config == state.config
    assert view.hand == (1, 5, 9, W)  # own hand, sorted (R3)
    assert view.stock_tops == (6, 8, W)  # only the tops are face up (R3, R7)
    assert view.stock_sizes == (2, 3, 1)
    assert view.discard_piles[0] == ((7, 6), (), (W,), ())  # whole discard piles were placed face up
    assert view.discard_piles[2] == ((), (), (), (1,))
    assert view.discard_tops(0) == (6, None, W, None)
    assert view.building_values == (2, 0, 5, 0)
    assert view.hand_sizes == (4, 3, 1)  # other hands only by size
    assert view.draw_size == len(state.draw_pile) and view.completed_size == 12
    assert view.current_player == 1 and view.turn == 7
    assert view.winner is None and not view.truncated and not view.is_over
    assert not view.to_move and list(view.legal_moves()) == []
    assert view.opponents() == (1, 2) and state.view(2).opponents() == (0, 1)
    assert view.partner is None and view.num_players == 3
    assert view.hand_counts()[W] == 1 and view.hand_counts()[5] == 1


def test_view_of_the_mover_gives_the_same_legal_moves_as_the_state():
    state = _table()
    view = state.view(1)
    assert view.to_move
    assert view.legal_moves() == state.legal_moves()
    assert Play(Source.HAND, 0, card=3) in view.legal_moves()
    assert not any(isinstance(m, Play) and m.source is Source.STOCK for m in view.legal_moves())  # the 8 fits nowhere



def test_view_is_a_snapshot():
    state = _table()
    view = state.view(1)
    state.apply(state.legal_moves()[0])
    assert view == _table().view(1)
    with pytest.raises(AttributeError):
        view.turn = 3  # type: ignore[misc]


def test_view_ignores_what_the_seat_cannot_see():
    """R3, R28: reshuffling hidden cards (draw pile, other hands, stocks below the top, completed) changes nothing."""
    state = _table()
    rng = np.random.default_rng(1)
    for seat in range(3):
        for _ in range(20):
            check_view_hides(state, seat, rng)
            shuffled = hidden_reshuffle(state, seat, rng)
            assert shuffled.hand_cards(seat) == state.hand_cards(seat)


def test_view_changes_when_a_visible_card_changes():
    """The check above can fail: a different own hand or stock top gives a different view."""
    a = _table()
    b = make_state(
        3,
        hands={0: [1, 5, 9, 10], 1: [2, 3, 7], 2: [12]},
        stocks={0: [4, 6], 1: [3, 11, 8], 2: [W]},
        discards={0: [[7, 6], [], [W], []], 2: [[], [], [], [1]]},
        building=[2, 0, [W, 2, 3, 4, 5], 0],
        completed=1,
        draw=[10, W],
        current=1,
        turn=7,
    )
    assert a.view(0) != b.view(0)
    assert a.view(1) == b.view(1)  # for seat 1 the difference is hidden


def test_view_after_the_end():
    state = make_state(hands={0: [9]}, stocks={0: [1]})
    state.apply(Play(Source.STOCK, 0))
    view = state.view(0)
    assert view.winner == 0 and view.is_over and not view.to_move and list(view.legal_moves()) == []
    truncated = make_state(hands={0: [9]}, turn=5, turn_limit=5)
    assert truncated.view(0).truncated and truncated.view(0).is_over


def test_bad_seat():
    state = new_game(GameConfig(), seed=0)
    for seat in (2, -1, "0", 1.0):
        with pytest.raises(ValueError, match=r"seat must be an int in 0\.\.1"):
            state.view(seat)


def test_partner_view():
    state = make_state(4, partner_game=True, hands={0: [5]}, stocks={2: [3, 1]})
    view = state.view(0)
    assert view.partner == 2 and view.stock_tops[2] == 1
    assert view.legal_moves() == state.legal_moves()
    assert Play(Source.PARTNER_STOCK, 0) in view.legal_moves()
