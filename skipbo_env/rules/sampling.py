"""Sampling the hidden cards: full game states consistent with what one seat knows.

Determinization (OpenSpiel's "resample from infostate"): from a
:class:`~skipbo_env.rules.view.SeatView`, :func:`sample_states` draws complete
:class:`~skipbo_env.rules.state.GameState` s the seat cannot tell from the real game, the unseen
cards dealt uniformly over the hidden places. Each sample consumes one permutation and one
63-bit seed from the caller's generator (same generator state, same samples); a view no real
game can produce raises :class:`~skipbo_env.rules.errors.StateError`. docs/search.md ("Sampling
the hidden cards") states what is kept and every decision.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .cards import DECK_SIZE, EXPECTED_COUNTS, WILD, card_name
from .errors import StateError
from .state import GameState
from .view import SeatView

__all__ = ["HiddenSizes", "hidden_sizes", "sample_state", "sample_states", "seen_counts", "unseen_cards",
           "unseen_counts"]


def seen_counts(view: SeatView) -> list[int]:
    """Counts (index 0 unused, 13 = wild) of every card the seat has seen and can place:
    own hand, stock tops, discard piles, building piles and completed pile."""
    counts = [0] * (WILD + 1)
    for card in view.hand:
        counts[card] += 1
    for top in view.stock_tops:
        if top is not None:
            counts[top] += 1
    for piles in view.discard_piles:
        for pile in piles:
            for card in pile:
                counts[card] += 1
    for pile in view.building_piles:
        for card in pile:
            counts[card] += 1
    for card in view.completed_cards:
        counts[card] += 1
    return counts


def unseen_counts(view: SeatView) -> list[int]:
    """Counts of the unseen cards: the deck (R1) minus :func:`seen_counts`.

    Raises:
        StateError: the view shows more copies of a card than the deck holds, or its
            building piles do not match their values.
    """
    _check_building(view)
    seen = seen_counts(view)
    out = [0] * (WILD + 1)
    for value in range(1, WILD + 1):
        left = EXPECTED_COUNTS[value] - seen[value]
        if left < 0:
            raise StateError(
                "view",
                f"the seat sees {seen[value]} x {card_name(value)} but the deck holds only "
                f"{EXPECTED_COUNTS[value]} (R1): no game has this view",
            )
        out[value] = left
    return out


def unseen_cards(view: SeatView) -> list[int]:
    """The unseen cards as a sorted list (see :func:`unseen_counts`)."""
    counts = unseen_counts(view)
    return [v for v in range(1, WILD + 1) for _ in range(counts[v])]


class HiddenSizes(NamedTuple):
    """How many cards each hidden place of a view holds."""

    hands: list[int]
    """Per seat, 0 for the viewer."""
    stocks: list[int]
    """Per seat, the cards below the face-up top."""
    draw: int
    total: int


def hidden_sizes(view: SeatView) -> HiddenSizes:
    """How many cards each hidden place holds (see :class:`HiddenSizes`)."""
    n = view.config.num_players
    hands = [0 if s == view.seat else view.hand_sizes[s] for s in range(n)]
    stocks = [max(0, size - 1) for size in view.stock_sizes]
    total = sum(hands) + sum(stocks) + view.draw_size
    return HiddenSizes(hands, stocks, view.draw_size, total)


def _check_building(view: SeatView) -> None:
    if len(view.building_piles) != len(view.building_values):
        raise StateError(
            "view.building_piles",
            f"holds {len(view.building_piles)} piles but the view shows {len(view.building_values)} building "
            "values (a hand-built view without the pile cards cannot be sampled)",
        )
    for b, (pile, value) in enumerate(zip(view.building_piles, view.building_values, strict=True)):
        if len(pile) != value:
            raise StateError(f"view.building_piles[{b}]", f"holds {len(pile)} cards but shows {value}")
    if len(view.hand) != view.hand_sizes[view.seat]:
        raise StateError("view.hand", f"holds {len(view.hand)} cards but hand_sizes says {view.hand_sizes[view.seat]}")
    if len(view.completed_cards) != view.completed_size:
        raise StateError(
            "view.completed_cards",
            f"holds {len(view.completed_cards)} cards but completed_size is {view.completed_size}",
        )


def _plan(view: SeatView) -> tuple[np.ndarray, HiddenSizes]:
    counts = unseen_counts(view)
    pool = np.repeat(np.arange(WILD + 1, dtype=np.int64), counts)
    sizes = hidden_sizes(view)
    if pool.size != sizes.total:
        raise StateError(
            "view",
            f"{pool.size} cards are unseen but the hidden places (other hands, stocks below their tops, "
            f"draw pile) hold {sizes.total}: no game of {DECK_SIZE} cards (R1) has this view",
        )
    return pool, sizes


def sample_states(view: SeatView, rng: np.random.Generator, n: int) -> list[GameState]:
    """``n`` full states consistent with ``view``, drawn with ``rng`` (see the module docstring)."""
    if not isinstance(view, SeatView):
        raise TypeError(f"view must be a SeatView, got {type(view).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    if type(n) is not int or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    pool, sizes = _plan(view)
    config = view.config
    seat = view.seat
    num = config.num_players
    hand_sizes, stock_below = sizes.hands, sizes.stocks
    own_hand = [0] * (WILD + 1)
    for card in view.hand:
        own_hand[card] += 1
    moves = view.turn
    if view.truncated and view.turn < config.turn_limit:
        moves = config.move_limit  # truncated by the move limit: keep it so
    building = [list(p) for p in view.building_piles]
    completed = list(view.completed_cards)
    out = []
    for _ in range(n):
        cards = rng.permutation(pool).tolist()
        pos = 0
        hands = []
        for s in range(num):
            if s == seat:
                hands.append(list(own_hand))
                continue
            h = [0] * (WILD + 1)
            for card in cards[pos : pos + hand_sizes[s]]:
                h[card] += 1
            pos += hand_sizes[s]
            hands.append(h)
        stocks = []
        for s in range(num):
            below = cards[pos : pos + stock_below[s]]
            pos += stock_below[s]
            top = view.stock_tops[s]
            stocks.append(below + [top] if top is not None else [])
        draw_pile = cards[pos:]
        state_rng = np.random.default_rng(int(rng.integers(0, 2**63)))
        out.append(
            GameState(
                config,
                draw_pile,
                hands,
                stocks,
                [[list(p) for p in view.discard_piles[s]] for s in range(num)],
                [list(p) for p in building],
                list(completed),
                view.current_player,
                view.turn,
                view.winner,
                state_rng,
                moves,
            )
        )
    return out


def sample_state(view: SeatView, rng: np.random.Generator) -> GameState:
    """One full state consistent with ``view`` (``sample_states(view, rng, 1)[0]``)."""
    return sample_states(view, rng, 1)[0]

