"""A turn on hand-built positions: R2, R5, R10–R21, the worked examples E1–E4, the variants."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FULL_PILE, W, check_card_count, deal_deck, make_state

from skipbo_env.rules import (
    ALL_MOVES,
    END_TURN,
    WILD,
    Discard,
    EndTurn,
    GameConfig,
    IllegalMoveError,
    Play,
    Source,
    new_game,
)


def hand(card: int, pile: int) -> Play:
    return Play(Source.HAND, pile, card=card)


def stock(pile: int) -> Play:
    return Play(Source.STOCK, pile)


def from_discard(discard_pile: int, pile: int) -> Play:
    return Play(Source.DISCARD, pile, discard_pile=discard_pile)


def plays(state) -> list[Play]:
    return [m for m in state.legal_moves() if isinstance(m, Play)]


def apply_all(state, *moves) -> None:
    for move in moves:
        state.apply(move)
        check_card_count(state)


# ------------------------------------------------------------ worked examples
def test_e1_seed_000_example():
    """E1: pile 4, stock 6 (then 8), hand 1 5 7 9 12: build 5, 6, 7, 8, 9; 12 stuck; 1 on an empty pile."""
    state = make_state(hands={0: [1, 5, 7, 9, 12]}, stocks={0: [11, 8, 6]}, building=[4, 0, 0, 0])
    apply_all(state, hand(5, 0), stock(0))
    assert state.stocks[0][-1] == 8  # R14: the next stock card is revealed
    apply_all(state, hand(7, 0), stock(0), hand(9, 0))
    assert state.building_values() == [9, 0, 0, 0]
    assert not any(isinstance(m, Play) and m.card == 12 for m in state.legal_moves())
    assert hand(1, 1) in state.legal_moves()
    apply_all(state, hand(1, 1))
    assert state.hand_cards(0) == [12]
    apply_all(state, Discard(12, 0))
    assert state.discards[0][0] == [12]
    assert state.building_values() == [9, 1, 0, 0]
    assert state.stocks[0] == [11]
    assert state.current == 1 and state.turn == 1


def test_e2_seed_003_example():
    """E2: stock 5 (then 7), pile 3, hand 4 8 9 11 wild: 4, stock 5, wild as 6, stock 7."""
    state = make_state(hands={0: [4, 8, 9, 11, W]}, stocks={0: [2, 7, 5]}, building=[3, 0, 0, 0])
    apply_all(state, hand(4, 0), stock(0))
    assert state.stocks[0][-1] == 7
    apply_all(state, hand(W, 0))
    assert state.building_values()[0] == 6  # R2: the wild stands for 6 here
    apply_all(state, stock(0))
    assert state.building[0] == [1, 2, 3, 4, 5, W, 7]
    assert state.stocks[0] == [2]  # two stock cards gone
    assert state.hand_cards(0) == [8, 9, 11]  # with cards still in hand
    assert state.current == 0 and state.winner is None


def test_e3_seed_004_example():
    """E3: 2 players, stock 30: hand 1, 2 on an empty space, stock 3 on top, discard: 2 left, 29 in stock."""
    stock0 = [12] * 12 + [11] * 12 + [10] * 5 + [3]
    stock1 = [9] * 12 + [8] * 12 + [7] * 6
    deck = deal_deck([stock0, stock1], draw_top=[5, 6, 4, 2, 1])
    state = new_game(GameConfig(num_players=2, first_player=0), deck=deck)
    assert state.hand_cards(0) == [1, 2, 4, 5, 6] and len(state.stocks[0]) == 30
    apply_all(state, hand(1, 2), hand(2, 2), stock(2), Discard(6, 0))
    assert state.building[2] == [1, 2, 3]  # three cards built
    assert state.discards[0][0] == [6]  # one discarded
    assert state.hand_cards(0) == [4, 5]  # two left in hand
    assert len(state.stocks[0]) == 29
    assert state.current == 1 and state.hand_size(1) == 5


def test_e4_fifth_pile_and_completion_frees_a_space():
    """E4: piles 3, 5, 8, 11: no fifth pile for a 1; a 12 on the 11 frees the space for the 1."""
    state = make_state(hands={0: [1, 12, 6, 6, 9]}, building=[3, 5, 8, 11])
    assert not any(isinstance(m, Play) and m.card == 1 for m in state.legal_moves())  # R5
    apply_all(state, hand(12, 3))
    assert state.building_values() == [3, 5, 8, 0]
    assert state.completed == FULL_PILE
    assert hand(1, 3) in state.legal_moves()
    apply_all(state, hand(1, 3))
    assert state.building_values() == [3, 5, 8, 1]


def test_e4_a_wild_completes_the_pile_too():
    state = make_state(hands={0: [1, W, 7, 7, 7]}, building=[3, 5, 8, 11])
    apply_all(state, hand(W, 3))
    assert state.completed == list(range(1, 12)) + [W]
    assert hand(1, 3) in state.legal_moves()


# ------------------------------------------------------------------ R2, R12
def test_r2_wild_stands_for_what_the_pile_needs():
    state = make_state(hands={0: [W, W, W, W, 5]}, stocks={0: [9]}, building=[0, 8, 11, 3])
    assert [m for m in plays(state) if m.card == W] == [hand(W, b) for b in range(4)]
    apply_all(state, hand(W, 0), hand(W, 1))
    assert state.building_values()[:2] == [1, 9]  # a 1 on the empty pile, a 9 on the 8
    assert plays(state) == [hand(W, b) for b in range(4)]  # the hand 5 fits nowhere
    state2 = make_state(hands={0: [2, 10, W, W, 4]}, building=[0, 8, 0, 0])
    apply_all(state2, hand(W, 0), hand(W, 1))
    assert state2.building[:2] == [[W], [1, 2, 3, 4, 5, 6, 7, 8, W]]
    assert plays(state2) == [hand(2, 0), hand(10, 1)]


def test_r12_empty_space_takes_only_a_one_or_a_wild():
    state = make_state(hands={0: [1, 2, W, 12, 7]})
    assert plays(state) == [hand(1, b) for b in range(4)] + [hand(W, b) for b in range(4)]


def test_r12_pile_showing_n_takes_n_plus_one_and_piles_may_show_the_same_number():
    state = make_state(hands={0: [4, 4, 8, 5, 10]}, building=[3, 3, 0, 7])
    assert plays(state) == [hand(4, 0), hand(4, 1), hand(8, 3)]
    apply_all(state, hand(4, 0), hand(4, 1))
    assert state.building_values() == [4, 4, 0, 7]
    assert plays(state) == [hand(5, 0), hand(5, 1), hand(8, 3)]


def test_r12_any_player_continues_any_pile():
    state = make_state(hands={0: [1, 9, 9, 9, 9], 1: [2, 3]}, draw=[8, 8, 8])
    apply_all(state, hand(1, 0), Discard(9, 0))
    assert state.current == 1
    apply_all(state, hand(2, 0), hand(3, 0))
    assert state.building_values() == [3, 0, 0, 0]


def test_r12_legal_move_details_distinct_piles_and_multiset_hand():
    """A 1 onto either of two empty spaces are distinct moves; two equal hand cards give one move per pile."""
    state = make_state(hands={0: [1, 1, 9, 9, 9]}, building=[2, 0, 5, 0])
    assert plays(state) == [hand(1, 1), hand(1, 3)]
    discards = [m for m in state.legal_moves() if isinstance(m, Discard)]
    assert discards == [Discard(c, d) for c in (1, 9) for d in range(4)]


# ------------------------------------------------------------------ R5, R11
def test_r5_discard_pile_has_no_size_limit_and_there_are_four():
    long_pile = [7] * 12 + [8] * 12 + [9] * 6
    state = make_state(hands={0: [10, 10, 10, 11, 12]}, discards={0: [long_pile, [], [], []]})
    assert {m.discard_pile for m in state.legal_moves() if isinstance(m, Discard)} == {0, 1, 2, 3}
    apply_all(state, Discard(10, 0))
    assert len(state.discards[0][0]) == 31
    assert len(state.building) == 4 and all(len(p) == 4 for p in state.discards)


def test_r11_only_own_hand_stock_top_and_discard_tops_are_playable():
    """Not other players' piles, not a card beneath a top, not a building pile."""
    state = make_state(
        hands={0: [9, 9, 9, 10, 10]},
        stocks={0: [1, 7], 1: [2, 1]},
        discards={0: [[1, 8], [], [], []], 1: [[1], [W], [], []]},
    )
    assert plays(state) == []  # seat 1's 1 and wild, and the 1s beneath tops, are out of reach
    assert all(isinstance(m, Discard) for m in state.legal_moves())
    state2 = make_state(hands={0: [9, 9, 9, 10, 10]}, stocks={0: [7, 1]}, discards={0: [[8, 1], [W], [], []]})
    assert plays(state2) == (
        [stock(b) for b in range(4)]
        + [from_discard(0, b) for b in range(4)]
        + [from_discard(1, b) for b in range(4)]
    )


def test_r11_r17_no_move_takes_a_card_from_a_building_pile_or_into_the_hand():
    sources = {m.source for m in ALL_MOVES if isinstance(m, Play)}
    assert sources == set(Source)
    assert all(s.name in {"HAND", "STOCK", "DISCARD", "PARTNER_STOCK", "PARTNER_DISCARD"} for s in sources)
    assert len(ALL_MOVES) == 145 and len(set(ALL_MOVES)) == 145
    # Discard moves only ever take hand cards (by value); there is no discard-to-discard or stock-to-hand move.
    assert {type(m) for m in ALL_MOVES} == {Play, Discard, EndTurn}


def test_r17_stock_and_discard_cards_go_only_to_building_piles():
    state = make_state(hands={0: [9, 9, 9, 10, 10]}, stocks={0: [5, 1]}, discards={0: [[4, 2], [], [], []]})
    apply_all(state, stock(0), from_discard(0, 0))
    assert state.building[0] == [1, 2]
    assert state.hand_cards(0) == [9, 9, 9, 10, 10]  # the hand did not change
    assert state.discards[0] == [[4], [], [], []]


# -------------------------------------------------------------- R10 refill
def test_r10_refill_at_the_start_of_the_turn_holding_two_draws_three():
    state = make_state(
        hands={0: [9, 9, 9, 9, 10], 1: [4, 6]}, stocks={1: [2, 3, 4, 5, 6, 7]}, draw=[12, 1, 3]
    )
    before = len(state.draw_pile)
    apply_all(state, Discard(10, 1))
    assert state.current == 1
    assert state.hand_cards(1) == [1, 3, 4, 6, 12]  # 2 held + the top three of the draw pile
    assert len(state.draw_pile) == before - 3
    assert len(state.stocks[1]) == 6  # stock cards never count as hand cards


def test_r10_full_hand_draws_nothing_and_empty_hand_draws_five():
    state = make_state(hands={0: [9, 9, 9, 9, 10], 1: []}, draw=[1, 2, 3, 4, 5, 6])
    apply_all(state, Discard(9, 0))
    assert state.hand_cards(1) == [2, 3, 4, 5, 6]
    assert state.draw_pile[-1] == 1


# ------------------------------------------------------------------ R13, R14
def test_r13_a_pile_reaching_12_goes_to_the_completed_pile_at_once():
    state = make_state(hands={0: [12, 1, 7, 7, 7]}, building=[list(range(1, 6)) + [W] + list(range(7, 12)), 0, 0, 0])
    apply_all(state, hand(12, 0))
    assert state.completed == [1, 2, 3, 4, 5, W, 7, 8, 9, 10, 11, 12]
    assert state.building_values() == [0, 0, 0, 0]
    apply_all(state, hand(1, 0))  # a new 1 in the same space, same turn
    assert state.building_values() == [1, 0, 0, 0]
    assert state.current == 0


def test_r13_completion_from_stock_and_discard_tops():
    state = make_state(
        hands={0: [7, 7, 7, 8, 8]}, stocks={0: [3, 12]}, discards={0: [[W], [], [], []]}, building=[11, 10, 0, 0]
    )
    apply_all(state, stock(0), from_discard(0, 1))
    assert state.building_values() == [0, 11, 0, 0]
    assert len(state.completed) == 12


def test_r14_next_stock_card_turned_up_and_playable_the_same_turn():
    state = make_state(hands={0: [9, 9, 9, 9, 10]}, stocks={0: [4, 3, 2, 1]})
    for expected_top in (1, 2, 3, 4):
        assert state.stocks[0][-1] == expected_top
        assert stock(0) in state.legal_moves()
        apply_all(state, stock(0))
    assert state.building_values()[0] == 4
    assert state.winner == 0  # the last stock card (R22)


# ------------------------------------------------------------------ R15
def test_r15_emptying_the_hand_draws_five_and_the_turn_goes_on():
    state = make_state(hands={0: [1, 2]}, draw=[9, 8, 7, 3, 4, 5, 6, 10])
    apply_all(state, hand(1, 0), hand(2, 0))
    assert state.hand_cards(0) == [3, 4, 5, 6, 10]  # the top five of the draw pile
    assert state.current == 0 and state.turn == 0 and state.winner is None


def test_r15_repeats():
    state = make_state(hands={0: [1, 2]}, draw=[9, 9, 9, 9, 9, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3])
    apply_all(state, hand(1, 0), hand(2, 0))
    assert state.hand_cards(0) == [3, 4, 5, 6, 7]
    apply_all(state, *(hand(c, 0) for c in (3, 4, 5, 6, 7)))
    assert state.hand_cards(0) == [8, 9, 10, 11, 12]
    apply_all(state, *(hand(c, 0) for c in (8, 9, 10, 11, 12)))
    assert state.hand_cards(0) == [9, 9, 9, 9, 9]  # a third hand, same turn
    assert state.building_values() == [0, 0, 0, 0] and len(state.completed) == 12
    assert state.current == 0 and state.turn == 0 and state.winner is None  # never a win


def test_r15_discarding_is_not_emptying_by_play():
    """R16: discarding the last hand card ends the turn; the player draws only at their next turn."""
    state = make_state(hands={0: [9], 1: [2]}, draw=[1, 2, 3, 4, 5, 7, 7, 7, 7])
    apply_all(state, Discard(9, 0))
    assert state.hand_size(0) == 0 and state.current == 1
    assert state.hand_cards(1) == [2, 7, 7, 7, 7]
    apply_all(state, Discard(7, 0))
    assert state.current == 0 and state.hand_cards(0) == [1, 2, 3, 4, 5]


# ------------------------------------------------------------------ R16, R18
def test_r16_may_stop_with_plays_available_any_card_any_pile():
    state = make_state(hands={0: [1, 1, 5, 5, W]}, stocks={0: [1]}, discards={0: [[8], [], [], []]})
    moves = state.legal_moves()
    assert stock(0) in moves and hand(1, 0) in moves
    assert [m for m in moves if isinstance(m, Discard)] == [Discard(c, d) for c in (1, 5, W) for d in range(4)]
    assert END_TURN not in moves  # R21: only with an empty hand
    apply_all(state, Discard(5, 0))  # onto an 8: any card on any own pile
    assert state.discards[0][0] == [8, 5]
    assert state.current == 1 and state.turn == 1
    assert state.hand_cards(0) == [1, 1, 5, W]


def test_r18_wild_discarded_then_played_as_any_number():
    state = make_state(hands={0: [W, 9, 9, 9, 9], 1: [9, 9, 9, 9]}, building=[6, 0, 0, 0])
    assert Discard(W, 2) in state.legal_moves()
    apply_all(state, Discard(W, 2))
    apply_all(state, Discard(9, 0))
    assert state.current == 0
    assert [m for m in plays(state) if m.source is Source.DISCARD] == [from_discard(2, b) for b in range(4)]
    apply_all(state, from_discard(2, 0))
    assert state.building[0][-1] == WILD and state.building_values()[0] == 7


# ------------------------------------------------------------------ R19, R20
def _recycle_position(seed: int):
    return make_state(
        hands={0: [5]},
        building=[4, 0, 0, 0],
        completed=2,
        rest=("discard", 1, 0),
        seed=seed,
    )


def test_r19_recycle_uses_the_games_own_generator():
    state = _recycle_position(seed=0)
    assert state.draw_pile == [] and len(state.completed) == 24
    twin = state.copy()
    expected = np.array(state.completed, dtype=np.int64)
    probe = state.copy().rng
    probe.shuffle(expected)
    expected = expected.tolist()
    apply_all(state, hand(5, 0))
    assert state.completed == []
    assert state.hand_cards(0) == sorted(expected[-5:])
    assert state.draw_pile == expected[:-5]
    assert state.building_values() == [5, 0, 0, 0]  # unfinished piles are never recycled
    # Same generator state -> same new draw pile.
    apply_all(twin, hand(5, 0))
    assert twin.draw_pile == state.draw_pile
    assert twin.rng.bit_generator.state == state.rng.bit_generator.state


def test_r19_different_generator_state_gives_a_different_draw_pile():
    piles = set()
    for seed in range(4):
        state = _recycle_position(seed=seed)
        state.apply(hand(5, 0))
        piles.add(tuple(state.draw_pile))
    assert len(piles) == 4


def test_r19_the_just_completed_pile_is_recycled_when_the_hand_empties():
    """R13 then R15 then R19: a last hand card completing a pile refills from that very pile."""
    state = make_state(hands={0: [12]}, building=[11, 0, 0, 0], rest=("discard", 1, 0))
    assert state.draw_pile == [] and state.completed == []
    apply_all(state, hand(12, 0))
    assert state.completed == []
    assert state.hand_size(0) == 5 and len(state.draw_pile) == 7
    assert sorted(state.hand_cards(0) + state.draw_pile) == FULL_PILE


def test_r19_refill_at_turn_start_draws_the_rest_then_recycles():
    state = make_state(
        hands={0: [9, 9, 9, 9, 9], 1: []}, draw=[2, 3], completed=1, rest=("discard", 1, 1)
    )
    apply_all(state, Discard(9, 0))
    assert state.hand_size(1) == 5
    assert 2 in state.hand_cards(1) and 3 in state.hand_cards(1)
    assert len(state.draw_pile) == 9 and state.completed == []


def test_r19_nothing_else_is_recycled():
    state = make_state(
        hands={0: [5], 1: [7, 7]},
        building=[4, 3, 0, 0],
        completed=1,
        discards={0: [[9, 9], [], [], []]},
        rest=("discard", 1, 0),
    )
    fixed = (state.stocks, state.discards, state.hands[1], state.building[1])
    fixed = [repr(x) for x in fixed]
    apply_all(state, hand(5, 0))
    assert [repr(x) for x in (state.stocks, state.discards, state.hands[1], state.building[1])] == fixed
    assert len(state.draw_pile) == 7


def test_r20_draw_fewer_when_both_piles_run_out():
    state = make_state(hands={0: [5]}, building=[4, 0, 0, 0], draw=[1, 2], rest=("discard", 1, 0))
    apply_all(state, hand(5, 0))
    assert state.hand_cards(0) == [1, 2] and state.draw_pile == []
    assert state.current == 0 and state.turn == 0  # the turn goes on


def test_r20_draw_none_and_the_turn_goes_on():
    state = make_state(hands={0: [5]}, stocks={0: [9, 6]}, building=[4, 0, 0, 0], rest=("discard", 1, 0))
    apply_all(state, hand(5, 0))
    assert state.hand_size(0) == 0
    assert list(state.legal_moves()) == [stock(0), END_TURN]


# ------------------------------------------------------------------ R21
def test_r21_empty_hand_plays_stock_and_discard_tops_then_ends_without_discarding():
    state = make_state(
        hands={0: [], 1: [8]},
        stocks={0: [9, 1]},
        discards={0: [[3, 2], [], [], []]},
        rest=("discard", 1, 3),
    )
    assert list(state.legal_moves()) == [*(stock(b) for b in range(4)), END_TURN]
    apply_all(state, stock(1), from_discard(0, 1), from_discard(0, 1))
    assert state.building_values() == [0, 3, 0, 0]
    assert list(state.legal_moves()) == [END_TURN]
    apply_all(state, EndTurn())
    assert state.current == 1 and state.turn == 1
    assert state.hand_cards(1) == [8]  # nothing to draw (R20)
    assert state.discards[0] == [[], [], [], []]


def test_r21_end_turn_is_illegal_with_cards_in_hand():
    state = make_state(hands={0: [3]})
    assert END_TURN not in state.legal_moves()
    before = state.to_dict()
    with pytest.raises(IllegalMoveError, match=r"end turn: the hand still holds 1 card"):
        state.apply(EndTurn())
    assert state.to_dict() == before


def test_r21_empty_hand_after_drawing_nothing_mid_turn_may_end_the_turn():
    state = make_state(hands={0: [1]}, rest=("discard", 1, 0))
    apply_all(state, hand(1, 2))
    assert state.hand_size(0) == 0
    assert END_TURN in state.legal_moves()
    apply_all(state, END_TURN)
    assert state.current == 1


# ------------------------------------------------------------------ variants
def test_variant_no_wild_discard():
    state = make_state(hands={0: [W, 4, 4, 9, 9]}, building=[1, 0, 0, 0], allow_wild_discard=False)
    assert not any(isinstance(m, Discard) and m.card == WILD for m in state.legal_moves())
    assert Discard(4, 0) in state.legal_moves()
    before = state.to_dict()
    with pytest.raises(IllegalMoveError, match=r"wilds may not be discarded \(allow_wild_discard is off\)"):
        state.apply(Discard(W, 0))
    assert state.to_dict() == before


def test_variant_no_wild_discard_hand_of_only_wilds_still_has_a_move():
    state = make_state(
        hands={0: [W, W]}, stocks={0: [9]}, building=[11, 3, 0, 5], allow_wild_discard=False
    )
    assert list(state.legal_moves()) == [hand(W, b) for b in range(4)]
    apply_all(state, hand(W, 0), hand(W, 1))  # the hand empties -> R15 draws 5 more
    assert state.hand_size(0) == 5


def test_variant_must_play_stock_forbids_ending_the_turn():
    state = make_state(hands={0: [9, 9, 9, 9, 10]}, stocks={0: [7, 1]}, must_play_stock=True)
    assert list(state.legal_moves()) == [stock(b) for b in range(4)]
    before = state.to_dict()
    with pytest.raises(IllegalMoveError, match="must_play_stock is on"):
        state.apply(Discard(9, 0))
    assert state.to_dict() == before
    apply_all(state, stock(0))
    assert Discard(9, 0) in state.legal_moves()  # 7 is not playable: the turn may end


def test_variant_must_play_stock_blocks_end_turn_too():
    state = make_state(hands={0: []}, stocks={0: [7, 1]}, must_play_stock=True, rest=("discard", 1, 0))
    assert list(state.legal_moves()) == [stock(b) for b in range(4)]
    with pytest.raises(IllegalMoveError, match="must_play_stock is on"):
        state.apply(EndTurn())


def test_variant_must_play_stock_leaves_other_plays_allowed():
    state = make_state(hands={0: [1, 9, 9, 9, 9]}, stocks={0: [7, W]}, must_play_stock=True)
    moves = state.legal_moves()
    assert hand(1, 0) in moves and stock(3) in moves
    assert not any(isinstance(m, Discard) for m in moves)
