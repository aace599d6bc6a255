"""Shared helpers for the rules tests: hand-built positions, decks and invariant checks.

Positions are written compactly and completed into a valid state dict: every
card not placed explicitly goes below the explicit draw-pile cards (or to a
chosen place), so the 162-card count of R1 always holds. Every list of cards
has its top at the END, as in the state dict (docs/state-format.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from skipbo_env.rules import GameConfig, GameState, standard_deck
from skipbo_env.rules.cards import EXPECTED_COUNTS, WILD, card_counts
from skipbo_env.rules.serialization import rng_to_dict

W = WILD
FULL_PILE = list(range(1, 13))
"""The cards of one completed building pile, 1..12."""


class _Pool:
    """The cards not yet placed; taking a card that is not left fails loudly."""

    def __init__(self) -> None:
        self.counts = card_counts(standard_deck())

    def take(self, cards: Sequence[int], where: str) -> list[int]:
        for card in cards:
            if self.counts[card] <= 0:
                raise AssertionError(f"test setup: no {card} left for {where}")
            self.counts[card] -= 1
        return list(cards)

    def take_high(self, count: int, where: str) -> list[int]:
        """The highest number cards left (12s first), wilds last: rarely playable filler."""
        rest = [v for v in (*range(12, 0, -1), WILD) for _ in range(self.counts[v])]
        if count > len(rest):
            raise AssertionError(f"test setup: only {len(rest)} cards left for {where}")
        return self.take(rest[:count], where)

    def remaining(self, rng: np.random.Generator) -> list[int]:
        cards = [v for v in range(1, WILD + 1) for _ in range(self.counts[v])]
        rng.shuffle(cards)
        return cards


def _per_seat(value: Mapping[int, Any] | Sequence[Any] | None, n: int, default: Any) -> list[Any]:
    if value is None:
        return [default() for _ in range(n)]
    if isinstance(value, Mapping):
        return [list(value.get(s, default())) for s in range(n)]
    assert len(value) == n, f"test setup: need {n} entries, got {len(value)}"
    return [list(v) for v in value]


KNOWN_POSITION = dict(
    hands={0: [1, 5, 9, 12, W], 1: [2, 3, 6, 7, 10], 2: [4, 8, 11]},
    stocks={0: [11, 4], 1: [12, 8], 2: [10, W]},
    discards={0: [[12, 10], [3], [], [W]], 1: [[], [9, 8, 7, 6, 5], [], []]},
    building=(2, 0, 6, 11),
    completed=1,
    current=0,
    turn=7,
)
"""A 3-seat position, seat 0 to move in the rules' turn 7, that the render and display tests show
(``state_dict(3, **KNOWN_POSITION)``)."""


def state_dict(
    num_players: int = 2,
    *,
    hands: Mapping[int, Sequence[int]] | Sequence[Sequence[int]] | None = None,
    stocks: Mapping[int, Sequence[int]] | Sequence[Sequence[int]] | None = None,
    stock_fill: int = 5,
    discards: Mapping[int, Sequence[Sequence[int]]] | None = None,
    building: Sequence[int | Sequence[int]] = (0, 0, 0, 0),
    completed: int | Sequence[int] = 0,
    draw: Sequence[int] = (),
    rest: str | tuple[str, int, int] = "draw",
    current: int = 0,
    turn: int = 0,
    winner: int | None = None,
    seed: int = 0,
    **config: Any,
) -> dict[str, Any]:
    """A valid state dict from a compact description.

    Args:
        hands: cards per seat (a mapping seat -> cards, or one list per seat).
        stocks: stock per seat, bottom to top; a seat not given gets
            ``stock_fill`` filler cards, the highest numbers left (12s first).
        discards: seat -> up to four discard piles (bottom to top).
        building: per building pile either the value it shows (filled with
            the number cards 1..v) or its explicit cards.
        completed: a number of completed piles (each 1..12) or explicit cards.
        draw: cards on top of the draw pile (last element is the top).
        rest: where the remaining cards go: ``"draw"`` (below ``draw``),
            or ``("discard", seat, pile)`` (below that pile's given cards).
        seed: seeds the order of the remaining cards and the state's generator.
        config: ``GameConfig`` fields besides ``num_players``.
    """
    cfg = GameConfig(num_players=num_players, **config)
    n = cfg.num_players
    rng = np.random.default_rng(seed)
    pool = _Pool()
    hand_lists = [sorted(pool.take(h, f"hand {s}")) for s, h in enumerate(_per_seat(hands, n, list))]
    building_piles = []
    for b, spec in enumerate(building):
        cards = list(range(1, spec + 1)) if isinstance(spec, int) else list(spec)
        building_piles.append(pool.take(cards, f"building pile {b}"))
    completed_cards = (
        pool.take(FULL_PILE * completed, "completed")
        if isinstance(completed, int)
        else pool.take(completed, "completed")
    )
    discard_piles = [[[], [], [], []] for _ in range(n)]
    for seat, piles in (discards or {}).items():
        for d, pile in enumerate(piles):
            discard_piles[seat][d] = pool.take(pile, f"discard {seat}/{d}")
    top_of_draw = pool.take(draw, "draw pile")
    given_stocks = dict(enumerate(stocks)) if isinstance(stocks, Sequence) else dict(stocks or {})
    stock_lists: list[list[int]] = [[] for _ in range(n)]
    for seat, stock in given_stocks.items():
        stock_lists[seat] = pool.take(stock, f"stock {seat}")
    for seat in range(n):
        if seat not in given_stocks:
            stock_lists[seat] = pool.take_high(stock_fill, f"stock {seat}")
    remaining = pool.take(pool.remaining(rng), "rest")
    if rest == "draw":
        draw_pile = remaining + top_of_draw
    else:
        kind, seat, pile = rest
        assert kind == "discard", f"test setup: unknown rest place {rest!r}"
        discard_piles[seat][pile] = remaining + discard_piles[seat][pile]
        draw_pile = top_of_draw
    return {
        "format": "skipbo-state",
        "version": 1,
        "config": cfg.to_dict(),
        "draw_pile": draw_pile,
        "hands": hand_lists,
        "stocks": stock_lists,
        "discard_piles": discard_piles,
        "building_piles": building_piles,
        "completed": completed_cards,
        "current_player": current,
        "turn": turn,
        "moves": turn,
        "winner": winner,
        "rng": rng_to_dict(np.random.default_rng(seed + 1)),
    }


def make_state(num_players: int = 2, **kwargs: Any) -> GameState:
    """``GameState.from_dict(state_dict(...))``: the position, validated by the loader."""
    return GameState.from_dict(state_dict(num_players, **kwargs))


def deck_with_top(top: Sequence[int], seed: int = 0) -> list[int]:
    """A 162-card deck whose last ``len(top)`` cards are ``top`` (last is the top card).

    The cards below are the rest of the deck in an order fixed by ``seed``.
    """
    pool = _Pool()
    placed = pool.take(top, "deck top")
    return pool.take(pool.remaining(np.random.default_rng(seed)), "deck rest") + placed


def deal_deck(stocks: Sequence[Sequence[int]], draw_top: Sequence[int] = (), seed: int = 0) -> list[int]:
    """An explicit deck that deals exactly ``stocks`` (seat order starting with the first player).

    ``stocks[k]`` is the stock of the k-th player served (the first player is
    ``k = 0``), bottom to top; all stocks must have the same size. Dealing
    gives one card at a time round-robin from the top of the deck, so the
    deck's top (end) is ``stocks[0][0], stocks[1][0], ..., stocks[0][1], ...``
    read from the end. ``draw_top`` is what lies on the draw pile afterwards
    (last element on top).
    """
    size = len(stocks[0])
    assert all(len(s) == size for s in stocks)
    dealt_in_order = [stocks[k][i] for i in range(size) for k in range(len(stocks))]
    return deck_with_top(list(draw_top) + dealt_in_order[::-1], seed)


# ------------------------------------------------------------ invariant checks
def all_cards(state: GameState) -> list[int]:
    """Every card of the state, wherever it lies."""
    cards = list(state.draw_pile) + list(state.completed)
    for seat in range(state.config.num_players):
        cards += state.hand_cards(seat)
        cards += state.stocks[seat]
        for pile in state.discards[seat]:
            cards += pile
    for pile in state.building:
        cards += pile
    return cards


def check_card_count(state: GameState) -> None:
    """R1: the 162 cards, twelve of each number and 18 wilds, all accounted for."""
    counts = [0] * (WILD + 1)
    for pile in (state.draw_pile, state.completed, *state.stocks, *state.building):
        for card in pile:
            counts[card] += 1
    for piles in state.discards:
        for pile in piles:
            for card in pile:
                counts[card] += 1
    for hand in state.hands:
        for value in range(1, WILD + 1):
            counts[value] += hand[value]
    assert counts == EXPECTED_COUNTS, f"card counts {counts[1:]} != {EXPECTED_COUNTS[1:]}"


def hidden_reshuffle(state: GameState, seat: int, rng: np.random.Generator) -> GameState:
    """A copy of ``state`` with every card ``seat`` cannot see shuffled among the same places.

    Hidden from ``seat``: the draw pile order, the other players' hands, every
    stock card below the top (the seat's own included) and the completed pile.
    The sizes of all places stay the same.
    """
    other = state.copy()
    n = state.config.num_players
    others = [s for s in range(n) if s != seat]
    pool = list(other.draw_pile) + list(other.completed)
    for s in others:
        pool += other.hand_cards(s)
    for stock in other.stocks:
        pool += stock[:-1]
    rng.shuffle(pool)
    pos = 0

    def take(count: int) -> list[int]:
        nonlocal pos
        out = pool[pos : pos + count]
        pos += count
        return out

    other.draw_pile = take(len(state.draw_pile))
    other.completed = take(len(state.completed))
    for s in others:
        counts = [0] * (WILD + 1)
        for card in take(state.hand_size(s)):
            counts[card] += 1
        other.hands[s] = counts
    for s in range(n):
        stock = state.stocks[s]
        if stock:
            other.stocks[s] = take(len(stock) - 1) + [stock[-1]]
    assert pos == len(pool)
    return other


def check_view_hides(state: GameState, seat: int, rng: np.random.Generator) -> None:
    """The seat's view does not change when the cards it cannot see are reshuffled."""
    shuffled = hidden_reshuffle(state, seat, rng)
    assert shuffled.view(seat) == state.view(seat)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
