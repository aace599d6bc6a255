"""Sampling the hidden cards (skipbo_env.rules.sampling): every sample is a legal state
(R1: the 162 cards), shows the seat exactly its view (R3, R4, R28), fills the hidden places
uniformly from the unseen cards, and is reproducible from the generator."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import W, check_card_count, make_state

from skipbo_env.rules import (
    DECK_SIZE,
    GameConfig,
    GameState,
    Play,
    StateError,
    new_game,
    sample_state,
    sample_states,
    unseen_cards,
    unseen_counts,
)
from skipbo_env.rules.cards import EXPECTED_COUNTS, WILD

CONFIGS = [GameConfig(num_players=k) for k in range(2, 7)] + [
    GameConfig(num_players=4, partner_game=True),
    GameConfig(num_players=6, partner_game=True),
    GameConfig(num_players=3, short_game=True),
]


def _play_to(state: GameState, rng: np.random.Generator, stop: int) -> tuple[GameState, bool]:
    """Play ``stop`` moves (plays preferred 4 to 1, so piles complete and the draw pile runs out).
    Returns the state and whether a reshuffle of the completed pile happened (R19)."""
    reshuffled = False
    for _ in range(stop):
        if state.is_over:
            break
        moves = state.legal_moves()
        plays = [m for m in moves if isinstance(m, Play)]
        pick = plays if plays and rng.random() < 0.8 else list(moves)
        before = len(state.draw_pile)
        state.apply(pick[int(rng.integers(len(pick)))])
        reshuffled |= len(state.draw_pile) > before
    return state, reshuffled


def _positions(seed: int, count: int):
    """(state, seat, reshuffled) at random stopping points of random games of every config."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        config = CONFIGS[i % len(CONFIGS)]
        state = new_game(config, seed=int(rng.integers(2**31)))
        state, reshuffled = _play_to(state, rng, int(rng.integers(0, 1500)))
        for seat in range(config.num_players):
            yield state, seat, reshuffled


def _same_view(a, b) -> bool:
    """Equal views, the completed pile's cards included (SeatView's == leaves them out for now)."""
    return a == b and a.completed_cards == b.completed_cards


def _hidden_multiset(state: GameState, seat: int) -> list[int]:
    cards = list(state.draw_pile)
    for s in range(state.config.num_players):
        if s != seat:
            cards += state.hand_cards(s)
        cards += state.stocks[s][:-1]
    return sorted(cards)


def test_samples_are_legal_states_with_the_same_view():
    """R1, R3, R4, R28: every sample holds the 162 cards, loads through from_dict and shows the
    seat exactly its view; the hidden places hold exactly the unseen cards."""
    seen_completed = seen_reshuffled = seen_over = 0
    for state, seat, reshuffled in _positions(1, 48):
        view = state.view(seat)
        seen_completed += bool(state.completed)
        seen_reshuffled += reshuffled
        seen_over += state.is_over
        assert unseen_cards(view) == _hidden_multiset(state, seat)
        for sample in sample_states(view, np.random.default_rng(seat), 3):
            check_card_count(sample)
            assert GameState.from_dict(sample.to_dict()).to_dict() == sample.to_dict()
            assert _same_view(sample.view(seat), view)
            assert _hidden_multiset(sample, seat) == unseen_cards(view)
            assert sample.current == state.current and sample.turn == state.turn
            assert sample.winner == state.winner and sample.is_over == state.is_over
            assert sample.moves <= state.moves  # never closer to the move limit than the real game
    assert seen_completed and seen_reshuffled and seen_over  # the positions cover R13, R19 and R22


def test_sampled_states_play_on():
    """Legal moves apply to a sampled state until the game ends, reshuffles included (R19)."""
    rng = np.random.default_rng(7)
    for i, config in enumerate(CONFIGS):
        state, _ = _play_to(new_game(config, seed=i), rng, 300)
        if state.is_over:
            continue
        sample = sample_state(state.view(state.current), rng)
        assert sample.legal_moves() == state.legal_moves()  # the mover's options are all public
        sample, _ = _play_to(sample, rng, 20_000)
        assert sample.is_over
        check_card_count(sample)


def test_same_generator_same_samples():
    state, _ = _play_to(new_game(GameConfig(num_players=3), seed=3), np.random.default_rng(3), 400)
    view = state.view(1)
    a = sample_states(view, np.random.default_rng(42), 5)
    b = sample_states(view, np.random.default_rng(42), 5)
    c = sample_states(view, np.random.default_rng(43), 5)
    assert [s.to_dict() for s in a] == [s.to_dict() for s in b]
    assert [s.to_dict() for s in a] != [s.to_dict() for s in c]
    # each sampled state has its own generator: later reshuffles (R19) differ between samples
    assert len({str(s.to_dict()["rng"]) for s in a}) == 5


def test_the_view_is_all_that_matters():
    """Two real states with the same view give the same samples (information discipline)."""
    state, _ = _play_to(new_game(GameConfig(num_players=4, partner_game=True), seed=5), np.random.default_rng(5), 700)
    assert state.completed  # the position has a completed pile (R13)
    other = sample_state(state.view(0), np.random.default_rng(11))  # another real state, same view
    assert _same_view(other.view(0), state.view(0)) and other.to_dict() != state.to_dict()
    a = sample_states(state.view(0), np.random.default_rng(1), 3)
    b = sample_states(other.view(0), np.random.default_rng(1), 3)
    assert [s.to_dict() for s in a] == [s.to_dict() for s in b]


def test_hidden_cards_follow_the_unseen_multiset():
    """Over many samples of one position, every hidden place draws each card value with
    frequency unseen[value] / unseen_total (chi-square test on the other hand's cards and on
    the stock cards below the top, and a direct count for wilds)."""
    state, _ = _play_to(new_game(GameConfig(), seed=11), np.random.default_rng(11), 120)
    seat = state.current
    view = state.view(seat)
    counts = unseen_counts(view)
    total = sum(counts)
    other = 1 - seat
    samples = sample_states(view, np.random.default_rng(0), 4000)
    hand_freq = np.zeros(WILD + 1)
    stock_freq = np.zeros(WILD + 1)
    for s in samples:
        hand_freq += np.asarray(s.hands[other])
        for card in s.stocks[other][:-1]:
            stock_freq[card] += 1
    expected = np.asarray(counts, dtype=float) / total
    for freq in (hand_freq, stock_freq):
        n = freq.sum()
        values = [v for v in range(1, WILD + 1) if counts[v] > 0]
        chi2 = sum((freq[v] - n * expected[v]) ** 2 / (n * expected[v]) for v in values)
        # df = len(values) - 1 <= 12; P(chi2_12 > 40) < 1e-4 (cards within a sample are not
        # independent draws, which only lowers the variance)
        assert chi2 < 40, (chi2, freq.tolist(), (n * expected).round(1).tolist())
        assert freq[W] / n == pytest.approx(counts[W] / total, abs=0.02)
    # the draw pile's top card is uniform too: the first card the next refill takes
    tops = np.bincount([s.draw_pile[-1] for s in samples], minlength=WILD + 1)
    assert tops[W] / len(samples) == pytest.approx(counts[W] / total, abs=0.03)


def test_unseen_counts_by_hand():
    """The unseen multiset is the deck minus hand, stock tops, discards, building piles and the
    completed pile (R1, R3, R4, R13)."""
    state = make_state(
        hands={0: [1, 2, W], 1: [5, 5]},
        stocks={0: [7, 8, 9], 1: [12, 11]},
        discards={0: [[3], [], [], []], 1: [[], [], [4, 4], []]},
        building=[[1, W, 3], [], [], []],
        completed=list(range(1, 13)),
    )
    view = state.view(0)
    assert view.building_piles == ((1, W, 3), (), (), ())
    assert view.completed_cards == tuple(range(1, 13))
    counts = unseen_counts(view)
    seen = {1: 3, 2: 2, 3: 3, 4: 3, 9: 2, 11: 2, W: 2}  # hand, tops 9 and 11, discards, building, completed
    for value in range(1, WILD + 1):
        assert counts[value] == EXPECTED_COUNTS[value] - seen.get(value, 1), value
    assert sum(counts) == DECK_SIZE - (3 + 2 + 3 + 3 + 12)
    # the other hand (5, 5), the stocks below the tops (7, 8 and 12) and the draw pile are unseen
    assert 5 in unseen_cards(view) and len(unseen_cards(view)) == len(state.draw_pile) + 2 + 2 + 1


def test_impossible_views_are_refused():
    state = new_game(GameConfig(), seed=0)
    view = state.view(state.current)
    rng = np.random.default_rng(0)
    too_many = dataclasses.replace(view, discard_piles=((tuple([W] * 19), (), (), ()), ((), (), (), ())))
    with pytest.raises(StateError, match=r"sees (19|2[0-9]) x SB but the deck holds only 18"):
        sample_state(too_many, rng)
    wrong_size = dataclasses.replace(view, draw_size=view.draw_size + 1)
    with pytest.raises(StateError, match=r"cards are unseen but the hidden places .* hold"):
        sample_state(wrong_size, rng)
    no_piles = dataclasses.replace(view, building_piles=())
    with pytest.raises(StateError, match=r"building_piles"):
        unseen_counts(no_piles)
    with pytest.raises(ValueError, match=r"n must be an int >= 0"):
        sample_states(view, rng, -1)
    with pytest.raises(TypeError, match=r"numpy Generator"):
        sample_states(view, 0, 1)  # type: ignore[arg-type]


def test_truncated_view_stays_truncated():
    state = make_state(hands={0: [9]}, turn=5, turn_limit=5)
    sample = sample_state(state.view(1), np.random.default_rng(0))
    assert sample.truncated and _same_view(sample.view(1), state.view(1))
