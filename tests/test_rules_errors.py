"""Illegal moves: each raises IllegalMoveError naming the move and the reason; nothing changes."""

from __future__ import annotations

import pytest
from conftest import W, make_state

from skipbo_env.rules import (
    END_TURN,
    Discard,
    GameOverError,
    IllegalMoveError,
    Play,
    SkipBoError,
    Source,
)


def _position(num_players=2, **kwargs):
    kwargs.setdefault("hands", {0: [3, 5, 9, 9, W]})
    kwargs.setdefault("stocks", {0: [8, 7]})
    kwargs.setdefault("discards", {0: [[4], [], [], []]})
    kwargs.setdefault("building", [2, 0, 0, 0])
    return make_state(num_players, **kwargs)


@pytest.mark.parametrize(
    ("move", "kwargs", "reason"),
    [
        (Play(Source.HAND, 0, card=7), {}, "the hand holds no 7"),
        (Play(Source.HAND, 0, card=5), {}, r"building pile 0 needs a 3 \(R12\), the card is a 5"),
        (Play(Source.HAND, 1, card=3), {}, r"building pile 1 needs a 1 \(R12\), the card is a 3"),
        (Play(Source.STOCK, 0), {}, r"building pile 0 needs a 3 \(R12\), the card is a 7"),
        # an empty own stock with the game still on: the partner game (R27)
        (Play(Source.STOCK, 0), {"num_players": 4, "partner_game": True, "stocks": {0: []}}, "stock is empty"),
        (Play(Source.DISCARD, 0, discard_pile=0), {}, r"building pile 0 needs a 3 \(R12\), the card is a 4"),
        (Play(Source.DISCARD, 0, discard_pile=2), {}, "discard pile 2 is empty"),
        (Play(Source.PARTNER_STOCK, 0), {}, r"partner cards can only be played in the partner game \(R27\)"),
        (Play(Source.PARTNER_DISCARD, 1, discard_pile=0), {}, "partner cards can only be played"),
        (Discard(7, 0), {}, "the hand holds no 7"),
        (Discard(W, 1), {"allow_wild_discard": False}, r"wilds may not be discarded \(allow_wild_discard is off\)"),
        (Discard(9, 1), {"stocks": {0: [8, 3]}, "must_play_stock": True}, "must_play_stock is on"),
        (END_TURN, {}, r"the hand still holds 5 card\(s\); end the turn by discarding \(R16, R21\)"),
        ("play 3", {}, "not a move: expected Play, Discard or EndTurn, got str"),
        (None, {}, "not a move: expected Play, Discard or EndTurn, got NoneType"),
        ([1, 0], {}, "not a move: expected Play, Discard or EndTurn, got list"),
    ],
)
def test_illegal_move_names_the_move_and_the_reason_and_changes_nothing(move, kwargs, reason):
    state = _position(**kwargs)
    before = state.to_dict()
    legal_before = state.legal_moves()
    with pytest.raises(IllegalMoveError, match=reason) as info:
        state.apply(move)
    assert not isinstance(info.value, GameOverError)
    assert str(info.value).startswith(f"illegal move {move}: ")
    assert info.value.move is move
    assert isinstance(info.value, SkipBoError) and isinstance(info.value, ValueError)
    assert state.to_dict() == before
    assert state.legal_moves() == legal_before


def test_a_move_of_another_seat_is_judged_for_the_seat_to_move():
    state = make_state(hands={0: [9, 9, 9, 9, 10], 1: [1, 2, 3, 4]}, current=0)
    with pytest.raises(IllegalMoveError, match="the hand holds no 1"):
        state.apply(Play(Source.HAND, 0, card=1))


def test_moves_equal_by_value_are_accepted():
    state = _position()
    state.apply(Play(Source.HAND, 0, card=3))  # a fresh object, not the table's
    assert state.building_values()[0] == 3


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (lambda: Play(Source.HAND, 4, card=1), r"build_pile must be an int in 0\.\.3, got 4"),
        (lambda: Play(Source.HAND, 0), r"card must be an int in 1\.\.12 or 13"),
        (lambda: Play(Source.HAND, 0, card=14), r"card must be an int"),
        (lambda: Play(Source.STOCK, 0, card=5), "card is only given for hand plays"),
        (lambda: Play(Source.DISCARD, 0), r"discard_pile must be an int in 0\.\.3"),
        (lambda: Play(Source.STOCK, 0, discard_pile=1), "discard_pile is only given for discard sources"),
        (lambda: Play("hand", 0, card=1), "source must be a Source"),
        (lambda: Discard(0, 0), "card must be an int"),
        (lambda: Discard(5, 4), r"discard_pile must be an int in 0\.\.3, got 4"),
    ],
)
def test_malformed_moves_cannot_be_built(make, pattern):
    with pytest.raises(ValueError, match=pattern):
        make()


def test_game_over_error_after_truncation_and_after_a_win():
    state = make_state(hands={0: [9, 9]}, stocks={0: [1]})
    state.apply(Play(Source.STOCK, 0))
    with pytest.raises(GameOverError, match=r"illegal move discard 9 -> discard 0: the game is over: seat 0 won"):
        state.apply(Discard(9, 0))
    state = make_state(hands={0: [9, 9]}, turn=9, turn_limit=10)
    state.apply(Discard(9, 0))
    with pytest.raises(GameOverError, match="truncated at the turn limit"):
        state.apply(Discard(9, 0))
