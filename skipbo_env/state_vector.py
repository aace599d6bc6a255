"""The whole table as one ``float32`` vector: PettingZoo's ``state()`` (docs/state-vector.md).

For centralised critics: :func:`encode_state` writes everything on the table, hidden cards
included, in absolute seats (the draw and completed piles' order left out);
:func:`state_layout` names every piece and :func:`decode_state` reads a vector back into
:class:`StateFields`, the exact inverse.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .observations.v1 import BUILD_SLOTS, CARD_SLOTS, COUNT_SCALE, DISCARD_SIZE_SCALE, EMPTY_SLOT
from .rules import DECK_SIZE, HAND_SIZE, WILD, GameConfig, GameState
from .rules.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES

CARD_SCALE = float(WILD)
"""Divisor of a card in a sequence piece: values 1..12 and the wild (13) become (0, 1]; 0 is no card."""


def discard_capacity(config: GameConfig) -> int:
    """The most cards one discard pile can hold: the deck less one stock card per side.

    A card reaches a discard pile only while the game is on, and then every side (every
    player, or every team in the partner game, R22, R27) still has a card in a stock.
    """
    return DECK_SIZE - config.num_teams


_Pieces = list[tuple[str, tuple[int, ...], Any]]


def state_pieces(config: GameConfig) -> tuple[tuple[str, tuple[int, ...], Any], ...]:
    """``(name, shape, divisor)`` of every piece of the state vector of ``config``, in order.

    An entry of the vector is a whole number (a count, a size, a card, a 0/1 flag) divided by
    its piece's divisor (a number, or :data:`~skipbo_env.encoding.COUNT_SCALE` along the last
    axis of the count pieces).
    """
    n, capacity, counts = config.num_players, discard_capacity(config), COUNT_SCALE.astype(np.float64)
    head: _Pieces = [
        ("current_player", (n,), 1.0),
        ("building_values", (NUM_BUILDING_PILES, BUILD_SLOTS), 1.0),
        ("building_wilds", (NUM_BUILDING_PILES, BUILD_SLOTS - 1), 1.0),
        ("draw_counts", (13,), counts),
        ("draw_size", (1,), float(DECK_SIZE)),
        ("completed_counts", (13,), counts),
        ("completed_size", (1,), float(DECK_SIZE)),
    ]
    seat: _Pieces = [
        ("hand_counts", (13,), float(HAND_SIZE)),
        ("stock_top", (CARD_SLOTS,), 1.0),
        ("stock_size", (1,), float(config.stock_size)),
        ("stock_counts", (13,), counts),
        ("stock_cards", (config.stock_size,), CARD_SCALE),
        ("discard_tops", (NUM_DISCARD_PILES, CARD_SLOTS), 1.0),
        ("discard_counts", (NUM_DISCARD_PILES, 13), counts),
        ("discard_sizes", (NUM_DISCARD_PILES,), DISCARD_SIZE_SCALE),
        ("discard_piles", (NUM_DISCARD_PILES, capacity), CARD_SCALE),
    ]
    tail: _Pieces = [
        ("turn", (1,), float(config.turn_limit)),
        ("moves", (1,), float(config.move_limit)),
        ("winner", (n,), 1.0),
        ("truncated", (1,), 1.0),
    ]
    seats = [(f"seat{s}.{name}", shape, divisor) for s in range(n) for name, shape, divisor in seat]
    return tuple(head + seats + tail)


@dataclass(frozen=True)
class StateLayout:
    """Where each named piece lies in the state vector of one configuration (docs/state-vector.md)."""

    config: GameConfig
    size: int
    pieces: tuple[tuple[str, int, tuple[int, ...]], ...]
    """(name, start, shape) in order."""
    divisor: np.ndarray
    """What each entry's whole number is divided by (float64, one per entry)."""
    low: np.ndarray
    high: np.ndarray

    def start(self, name: str) -> int:
        """The first entry of piece ``name``."""
        return self._index[name][0]

    def slice(self, name: str) -> slice:
        """The entries of piece ``name``."""
        start, shape = self._index[name]
        return slice(start, start + int(np.prod(shape)))

    def view(self, vec: Any, name: str) -> Any:
        """Piece ``name`` of ``vec[..., size]`` (numpy array or torch tensor), shaped
        ``vec.shape[:-1] + piece shape``; a numpy view writes through to ``vec``."""
        start, shape = self._index[name]
        return vec[..., start : start + int(np.prod(shape))].reshape(*vec.shape[:-1], *shape)

    @functools.cached_property
    def _index(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        return {name: (start, shape) for name, start, shape in self.pieces}


@functools.lru_cache(maxsize=64)
def state_layout(config: GameConfig) -> StateLayout:
    """The named pieces of the state vector for ``config``, with its bounds.

    ``low`` is 0; ``high`` is 1 but on ``discard_sizes``, where it is
    ``discard_capacity(config) / 20``: every entry of every state lies within.
    """
    pieces, divisors, highs, offset = [], [], [], 0
    for name, shape, divisor in state_pieces(config):
        length = int(np.prod(shape))
        pieces.append((name, offset, shape))
        divisors.append(np.broadcast_to(np.asarray(divisor, dtype=np.float64), shape).ravel())
        high = discard_capacity(config) / DISCARD_SIZE_SCALE if name.endswith(".discard_sizes") else 1.0
        highs.append(np.full(length, high, dtype=np.float32))
        offset += length
    high_vec = np.concatenate(highs)
    return StateLayout(config, offset, tuple(pieces), np.concatenate(divisors), np.zeros_like(high_vec), high_vec)


_NO_CARDS = np.zeros(13, dtype=np.int64)


def _counts(cards: Any) -> np.ndarray:
    """Count of each value 1..12 and of wilds among ``cards``."""
    return np.bincount(cards, minlength=WILD + 1)[1:] if cards else _NO_CARDS


def encode_state(state: GameState) -> np.ndarray:
    """The float32 state vector of ``state`` (layout: :func:`state_layout`), a new array.

    Whole numbers are written piece by piece, then divided by the layout's divisors at once.
    Raises ``ValueError`` naming the pile when a discard pile holds more cards than
    :func:`discard_capacity` (no game played by the rules does).
    """
    config = state.config
    layout = state_layout(config)
    at = layout.start
    raw = np.zeros(layout.size, dtype=np.float64)
    raw[at("current_player") + state.current] = 1
    values, wilds = at("building_values"), at("building_wilds")
    for b, pile in enumerate(state.building):
        raw[values + b * BUILD_SLOTS + len(pile)] = 1  # 0..11 cards: a pile of 12 is set aside at once (R13)
        for i, card in enumerate(pile):
            raw[wilds + b * (BUILD_SLOTS - 1) + i] = card == WILD
    raw[layout.slice("draw_counts")] = _counts(state.draw_pile)
    raw[at("draw_size")] = len(state.draw_pile)
    raw[layout.slice("completed_counts")] = _counts(state.completed)
    raw[at("completed_size")] = len(state.completed)
    capacity = discard_capacity(config)
    for s in range(config.num_players):
        stock, seat = state.stocks[s], f"seat{s}."
        raw[layout.slice(seat + "hand_counts")] = state.hands[s][1:]
        raw[at(seat + "stock_top") + (stock[-1] - 1 if stock else EMPTY_SLOT)] = 1
        raw[at(seat + "stock_size")] = len(stock)
        raw[layout.slice(seat + "stock_counts")] = _counts(stock)
        raw[at(seat + "stock_cards") : at(seat + "stock_cards") + len(stock)] = stock[::-1]
        tops, counts = at(seat + "discard_tops"), at(seat + "discard_counts")
        sizes, piles = at(seat + "discard_sizes"), at(seat + "discard_piles")
        for d, pile in enumerate(state.discards[s]):
            if len(pile) > capacity:
                raise ValueError(f"seat {s} discard pile {d} holds {len(pile)} cards, more than {capacity}")
            raw[tops + d * CARD_SLOTS + (pile[-1] - 1 if pile else EMPTY_SLOT)] = 1
            raw[counts + d * 13 : counts + d * 13 + 13] = _counts(pile)
            raw[sizes + d] = len(pile)
            raw[piles + d * capacity : piles + d * capacity + len(pile)] = pile[::-1]
    raw[at("turn")] = state.turn
    raw[at("moves")] = state.moves
    if state.winner is not None:
        raw[at("winner") + state.winner] = 1
    raw[at("truncated")] = state.truncated
    return (raw / layout.divisor).astype(np.float32)


@dataclass(frozen=True)
class StateFields:
    """The content of a state vector, in :class:`~skipbo_env.rules.GameState`'s conventions
    (every pile bottom to top, the last card on top; 13 is a wild)."""

    current_player: int
    building: tuple[tuple[int, ...], ...]
    """The four building piles' cards, wilds included."""
    draw_counts: tuple[int, ...]
    """Count of each value 1..12, then wilds, in the draw pile (its order is not in the vector)."""
    completed_counts: tuple[int, ...]
    """The same for the completed pile."""
    hands: tuple[tuple[int, ...], ...]
    """Per seat, count of each value 1..12, then wilds."""
    stocks: tuple[tuple[int, ...], ...]
    discards: tuple[tuple[tuple[int, ...], ...], ...]
    """Per seat, the four discard piles."""
    turn: int
    moves: int
    winner: int | None
    truncated: bool


def _cards_top_first(cards: np.ndarray) -> tuple[int, ...]:
    """Cards of a sequence piece (top first, zero padded, as whole numbers), bottom to top."""
    return tuple(int(c) for c in cards[cards > 0][::-1])


def decode_state(vec: np.ndarray, config: GameConfig) -> StateFields:
    """Read a vector made by :func:`encode_state` back into its :class:`StateFields` (exact).

    The pieces that repeat others (building values, tops, sizes and counts of stocks and
    discard piles) are not read. Raises ``ValueError`` when the shape does not fit ``config``.
    """
    layout = state_layout(config)
    vec = np.asarray(vec)
    if vec.shape != (layout.size,):
        raise ValueError(f"state vector must have shape ({layout.size},) for this config, got {vec.shape}")
    raw = np.rint(vec.astype(np.float64) * layout.divisor).astype(np.int64)
    n = config.num_players

    def get(name: str) -> np.ndarray:
        return layout.view(raw, name)

    def counts(name: str) -> tuple[int, ...]:
        return tuple(get(name).tolist())

    wilds = get("building_wilds")
    building = tuple(
        tuple(WILD if wilds[b, i] else i + 1 for i in range(size))
        for b, size in enumerate(get("building_values").argmax(axis=-1).tolist())
    )
    winner = np.flatnonzero(get("winner"))
    return StateFields(
        current_player=int(get("current_player").argmax()),
        building=building,
        draw_counts=counts("draw_counts"),
        completed_counts=counts("completed_counts"),
        hands=tuple(counts(f"seat{s}.hand_counts") for s in range(n)),
        stocks=tuple(_cards_top_first(get(f"seat{s}.stock_cards")) for s in range(n)),
        discards=tuple(tuple(_cards_top_first(row) for row in get(f"seat{s}.discard_piles")) for s in range(n)),
        turn=int(get("turn")[0]),
        moves=int(get("moves")[0]),
        winner=int(winner[0]) if len(winner) else None,
        truncated=bool(get("truncated")[0]),
    )


__all__ = [
    "CARD_SCALE",
    "StateFields",
    "StateLayout",
    "decode_state",
    "discard_capacity",
    "encode_state",
    "state_layout",
    "state_pieces",
]
