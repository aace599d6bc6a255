"""Observation vector and action table (docs/observations.md, docs/actions.md).

Data flows one way: ``SeatView`` -> :class:`ObservationFields` (named, readable
pieces) -> ``float32`` vector. :func:`decode_observation` inverts the last
step exactly, so agents and tests can read a vector back.

Seats in an observation are **relative**: index 0 is the observer, index 1
the next player to the left (who moves after the observer), and so on.

Action ids index the fixed move table of the rules
(:data:`skipbo_env.rules.ALL_MOVES`): the first 125 entries in every game,
all 145 in the partner game. Example: in a 2-player game action ``0`` is
``Play(HAND, build_pile=0, card=1)`` ("hand 1 onto building pile 0"), action
``52`` is ``Play(STOCK, build_pile=0)``, action ``124`` is ``EndTurn()``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .rules import (
    ALL_MOVES,
    DECK_SIZE,
    HAND_SIZE,
    NUM_SOLO_MOVES,
    WILD,
    GameConfig,
    GameState,
    Move,
    SeatView,
)
from .rules.moves import CANONICAL

# ====================================================================== actions
CARD_SLOTS = 14
"""One-hot slots of a card place: values 1..12 at 0..11, wild at 12, empty at 13."""
EMPTY_SLOT = 13
BUILD_SLOTS = 12
"""One-hot slots of a building pile value 0..11."""
DISCARD_SIZE_SCALE = 20.0


def num_actions(config: GameConfig) -> int:
    """125 actions, 145 in the partner game."""
    return len(ALL_MOVES) if config.partner_game else NUM_SOLO_MOVES


@functools.cache
def _action_ids(partner_game: bool) -> dict[Move, int]:
    moves = ALL_MOVES if partner_game else ALL_MOVES[:NUM_SOLO_MOVES]
    return {m: i for i, m in enumerate(moves)}


def encode_action(move: Move, config: GameConfig) -> int:
    """The action id of ``move``; raises ``ValueError`` for a move outside the table."""
    ids = _action_ids(config.partner_game)
    canonical = CANONICAL.get(move) if hasattr(move, "__dataclass_fields__") else None
    if canonical is None or canonical not in ids:
        raise ValueError(f"{move!r} has no action id in this game (partner_game={config.partner_game})")
    return ids[canonical]


def decode_action(action: int, config: GameConfig) -> Move:
    """The move of action id ``action``; raises ``ValueError`` when out of range."""
    n = num_actions(config)
    if isinstance(action, np.integer):
        action = int(action)
    if type(action) is not int or not 0 <= action < n:
        raise ValueError(f"action must be an int in 0..{n - 1}, got {action!r}")
    return ALL_MOVES[action]


def action_mask(legal: Iterable[Move], config: GameConfig) -> np.ndarray:
    """int8 mask over the action table, 1 for each move in ``legal`` (the rules' list)."""
    ids = _action_ids(config.partner_game)
    mask = np.zeros(num_actions(config), dtype=np.int8)
    for move in legal:
        mask[ids[move]] = 1
    return mask


def legal_moves_from_mask(mask: np.ndarray, config: GameConfig) -> list[Move]:
    """The moves a mask allows, in action-id order."""
    return [ALL_MOVES[i] for i in np.flatnonzero(np.asarray(mask))]


# ================================================================= observation
@dataclass(frozen=True)
class SeatFields:
    """What the observer knows of one seat (relative order)."""

    stock_top: int | None
    stock_size: int
    hand_size: int
    discard_tops: tuple[int | None, ...]
    """Top card of each of the four discard piles (``None`` if empty)."""
    discard_seconds: tuple[int | None, ...]
    """Card right below each top (``None`` if the pile holds fewer than 2)."""
    discard_counts: tuple[tuple[int, ...], ...]
    """Per pile, the count of each value 1..12 and wild (13 entries) in the whole pile."""
    discard_sizes: tuple[int, ...]
    is_partner: bool


@dataclass(frozen=True)
class ObservationFields:
    """The readable content of one observation vector."""

    hand_counts: tuple[int, ...]
    """Own hand: count of each value 1..12 and wild (13 entries)."""
    building_values: tuple[int, ...]
    seats: tuple[SeatFields, ...]
    """Index 0 is the observer, then the seats to the left in play order."""
    draw_size: int
    completed_size: int
    turn: int
    to_move: bool

    @property
    def me(self) -> SeatFields:
        return self.seats[0]

    @property
    def partner(self) -> SeatFields | None:
        return next((s for s in self.seats[1:] if s.is_partner), None)


def _card_of_slot(slot: int) -> int | None:
    return None if slot == EMPTY_SLOT else slot + 1


def _slot_of_card(card: int | None) -> int:
    return EMPTY_SLOT if card is None else card - 1


@dataclass(frozen=True)
class ObservationLayout:
    """Offsets of each named piece in the vector for one configuration."""

    config: GameConfig
    size: int
    pieces: tuple[tuple[str, int, int], ...]
    """(name, start, length) in order; see docs/observations.md."""
    low: np.ndarray
    high: np.ndarray

    def slice(self, name: str) -> slice:
        for piece, start, length in self.pieces:
            if piece == name:
                return slice(start, start + length)
        raise KeyError(name)


SEAT_PIECES = (
    ("stock_top", CARD_SLOTS),
    ("stock_size", 1),
    ("hand_size", 1),
    ("discard_tops", 4 * CARD_SLOTS),
    ("discard_seconds", 4 * CARD_SLOTS),
    ("discard_counts", 4 * 13),
    ("discard_sizes", 4),
    ("is_partner", 1),
)
SEAT_WIDTH = sum(length for _, length in SEAT_PIECES)
_COUNT_SCALE = np.array([12.0] * 12 + [18.0], dtype=np.float32)


@functools.lru_cache(maxsize=64)
def observation_layout(config: GameConfig) -> ObservationLayout:
    """The named pieces of the observation vector for ``config``."""
    pieces: list[tuple[str, int, int]] = []
    highs: list[np.ndarray] = []
    offset = 0

    def add(name: str, length: int, high: float = 1.0) -> None:
        nonlocal offset
        pieces.append((name, offset, length))
        highs.append(np.full(length, high, dtype=np.float32))
        offset += length

    add("hand_counts", 13)
    add("building_values", 4 * BUILD_SLOTS)
    for k in range(config.num_players):
        for name, length in SEAT_PIECES:
            high = DECK_SIZE / DISCARD_SIZE_SCALE if name == "discard_sizes" else 1.0
            add(f"seat{k}.{name}", length, high)
    add("draw_size", 1)
    add("completed_size", 1)
    add("turn", 1)
    add("to_move", 1)
    high = np.concatenate(highs)
    return ObservationLayout(config, offset, tuple(pieces), np.zeros_like(high), high)


def fields_from_view(view: SeatView) -> ObservationFields:
    """Everything the observation holds, read from the seat's view only."""
    n = view.num_players
    seats = []
    for k in range(n):
        s = (view.seat + k) % n
        piles = view.discard_piles[s]
        counts = []
        for pile in piles:
            c = [0] * 13
            for card in pile:
                c[card - 1] += 1
            counts.append(tuple(c))
        seats.append(
            SeatFields(
                stock_top=view.stock_tops[s],
                stock_size=view.stock_sizes[s],
                hand_size=view.hand_sizes[s],
                discard_tops=tuple(p[-1] if p else None for p in piles),
                discard_seconds=tuple(p[-2] if len(p) > 1 else None for p in piles),
                discard_counts=tuple(counts),
                discard_sizes=tuple(len(p) for p in piles),
                is_partner=view.partner == s,
            )
        )
    hand = [0] * 13
    for card in view.hand:
        hand[card - 1] += 1
    return ObservationFields(
        hand_counts=tuple(hand),
        building_values=tuple(view.building_values),
        seats=tuple(seats),
        draw_size=view.draw_size,
        completed_size=view.completed_size,
        turn=view.turn,
        to_move=view.to_move,
    )


def encode_fields(fields: ObservationFields, config: GameConfig) -> np.ndarray:
    """The float32 vector of ``fields`` (layout: :func:`observation_layout`)."""
    layout = observation_layout(config)
    vec = np.zeros(layout.size, dtype=np.float32)
    vec[0:13] = np.asarray(fields.hand_counts, dtype=np.float32) / HAND_SIZE
    for b, value in enumerate(fields.building_values):
        vec[13 + b * BUILD_SLOTS + value] = 1.0
    base = 13 + 4 * BUILD_SLOTS
    stock_scale = float(config.stock_size)
    for seat in fields.seats:
        vec[base + _slot_of_card(seat.stock_top)] = 1.0
        o = base + CARD_SLOTS
        vec[o] = seat.stock_size / stock_scale
        vec[o + 1] = seat.hand_size / HAND_SIZE
        o += 2
        for d in range(4):
            vec[o + d * CARD_SLOTS + _slot_of_card(seat.discard_tops[d])] = 1.0
            vec[o + 4 * CARD_SLOTS + d * CARD_SLOTS + _slot_of_card(seat.discard_seconds[d])] = 1.0
        o += 8 * CARD_SLOTS
        vec[o : o + 52] = (np.asarray(seat.discard_counts, dtype=np.float32) / _COUNT_SCALE).ravel()
        o += 52
        vec[o : o + 4] = np.asarray(seat.discard_sizes, dtype=np.float32) / DISCARD_SIZE_SCALE
        vec[o + 4] = float(seat.is_partner)
        base += SEAT_WIDTH
    vec[base] = fields.draw_size / DECK_SIZE
    vec[base + 1] = fields.completed_size / DECK_SIZE
    vec[base + 2] = fields.turn / config.turn_limit
    vec[base + 3] = float(fields.to_move)
    return vec


def encode_view(view: SeatView) -> np.ndarray:
    """Observation vector of a seat view.

    The same float32 vector, bit for bit, as
    ``encode_fields(fields_from_view(view), view.config)`` (the readable
    reference; tests/test_encoding.py checks the equality), written straight
    from the view: the envs call this on every step. Every scaled value is a
    Python float division rounded once to float32, which equals the
    reference's float32 division.
    """
    config = view.config
    layout = observation_layout(config)
    n, partner = config.num_players, view.partner
    stock_scale = float(config.stock_size)
    idx = [13 + b * BUILD_SLOTS + value for b, value in enumerate(view.building_values)]
    val = [1.0] * 4
    hand = view.hand_counts()
    idx += range(13)
    val += [c / HAND_SIZE for c in hand[1:]]
    counts: list[int] = []
    base = 13 + 4 * BUILD_SLOTS
    for k in range(n):
        s = (view.seat + k) % n
        top = view.stock_tops[s]
        o = base + CARD_SLOTS + 2
        idx += (base + (EMPTY_SLOT if top is None else top - 1), base + CARD_SLOTS, base + CARD_SLOTS + 1)
        val += (1.0, view.stock_sizes[s] / stock_scale, view.hand_sizes[s] / HAND_SIZE)
        for d, pile in enumerate(view.discard_piles[s]):
            length = len(pile)
            idx += (
                o + d * CARD_SLOTS + (pile[-1] - 1 if length else EMPTY_SLOT),
                o + (4 + d) * CARD_SLOTS + (pile[-2] - 1 if length > 1 else EMPTY_SLOT),
                o + 8 * CARD_SLOTS + 52 + d,
            )
            val += (1.0, 1.0, length / DISCARD_SIZE_SCALE)
            start = o + 8 * CARD_SLOTS + d * 13 - 1
            counts += [start + card for card in pile]
        if s == partner:
            idx.append(o + 8 * CARD_SLOTS + 56)
            val.append(1.0)
        base += SEAT_WIDTH
    idx += (base, base + 1, base + 2, base + 3)
    val += (
        view.draw_size / DECK_SIZE,
        view.completed_size / DECK_SIZE,
        view.turn / config.turn_limit,
        float(view.to_move),
    )
    if counts:
        vec = np.bincount(counts, minlength=layout.size).astype(np.float32)
        vec /= _count_divisors(config)
    else:
        vec = np.zeros(layout.size, dtype=np.float32)
    vec[idx] = val
    return vec


@functools.lru_cache(maxsize=64)
def _count_divisors(config: GameConfig) -> np.ndarray:
    """Per vector entry: the discard-count scale at discard-count entries, 1 elsewhere."""
    div = np.ones(observation_layout(config).size, dtype=np.float32)
    base = 13 + 4 * BUILD_SLOTS + CARD_SLOTS + 2 + 8 * CARD_SLOTS
    for k in range(config.num_players):
        for d in range(4):
            start = base + k * SEAT_WIDTH + d * 13
            div[start : start + 13] = _COUNT_SCALE
    return div


def observe(state: GameState, seat: int) -> dict[str, np.ndarray]:
    """The AEC observation dict of ``seat``: the vector of its view, and the mask.

    The mask comes from the rules' legal move list; it is all zeros unless
    ``seat`` is to move.
    """
    view = state.view(seat)
    if view.to_move:
        mask = action_mask(state.legal_moves(), state.config)
    else:
        mask = np.zeros(num_actions(state.config), dtype=np.int8)
    return {"observation": encode_view(view), "action_mask": mask}


def _onehots(block: np.ndarray, name: str) -> np.ndarray:
    """Slot index of each one-hot row of ``block`` (last axis); raises if a row is not one-hot."""
    hits = block > 0.5
    if not (hits.sum(axis=-1) == 1).all():
        raise ValueError(f"observation piece {name} holds a row that is not one-hot")
    return hits.argmax(axis=-1)


_SLOT_CARDS = (*range(1, 14), None)


def _cards_of_slots(slots: np.ndarray) -> list:
    """Cards (``None`` for the empty slot) from one-hot slot indexes, one or two levels deep."""
    rows = slots.tolist()
    if slots.ndim == 1:
        return [_SLOT_CARDS[i] for i in rows]
    return [tuple(_SLOT_CARDS[i] for i in row) for row in rows]


def _rint(values: np.ndarray, scale: np.ndarray | float) -> np.ndarray:
    return np.rint(values * scale).astype(np.int64)


def decode_observation(vec: np.ndarray, config: GameConfig) -> ObservationFields:
    """Read a vector made by :func:`encode_fields` back into its fields (exact inverse).

    Raises ``ValueError`` when the shape does not fit ``config`` or a one-hot
    piece is not one-hot.
    """
    layout = observation_layout(config)
    vec = np.asarray(vec)
    if vec.shape != (layout.size,):
        raise ValueError(f"observation must have shape ({layout.size},) for this config, got {vec.shape}")
    vec = vec.astype(np.float64)
    n = config.num_players
    hand = tuple(_rint(vec[0:13], HAND_SIZE).tolist())
    base = 13 + 4 * BUILD_SLOTS
    building = tuple(_onehots(vec[13:base].reshape(4, BUILD_SLOTS), "building_values").tolist())
    block = vec[base : base + n * SEAT_WIDTH].reshape(n, SEAT_WIDTH)
    stock_tops = _cards_of_slots(_onehots(block[:, 0:CARD_SLOTS], "stock_top"))
    o = CARD_SLOTS
    stock_sizes = _rint(block[:, o], config.stock_size).tolist()
    hand_sizes = _rint(block[:, o + 1], HAND_SIZE).tolist()
    o += 2
    tops = _cards_of_slots(_onehots(block[:, o : o + 4 * CARD_SLOTS].reshape(n, 4, CARD_SLOTS), "discard_tops"))
    o += 4 * CARD_SLOTS
    seconds = _cards_of_slots(
        _onehots(block[:, o : o + 4 * CARD_SLOTS].reshape(n, 4, CARD_SLOTS), "discard_seconds")
    )
    o += 4 * CARD_SLOTS
    counts = _rint(block[:, o : o + 52].reshape(n, 4, 13), _COUNT_SCALE.astype(np.float64)).tolist()
    o += 52
    sizes = _rint(block[:, o : o + 4], DISCARD_SIZE_SCALE).tolist()
    partners = (block[:, o + 4] > 0.5).tolist()
    seats = tuple(
        SeatFields(
            stock_top=stock_tops[k],
            stock_size=stock_sizes[k],
            hand_size=hand_sizes[k],
            discard_tops=tuple(tops[k]),
            discard_seconds=tuple(seconds[k]),
            discard_counts=tuple(tuple(c) for c in counts[k]),
            discard_sizes=tuple(sizes[k]),
            is_partner=partners[k],
        )
        for k in range(n)
    )
    tail = vec[base + n * SEAT_WIDTH :]
    return ObservationFields(
        hand_counts=hand,
        building_values=building,
        seats=seats,
        draw_size=int(np.rint(tail[0] * DECK_SIZE)),
        completed_size=int(np.rint(tail[1] * DECK_SIZE)),
        turn=int(np.rint(tail[2] * config.turn_limit)),
        to_move=bool(tail[3] > 0.5),
    )


__all__ = [
    "ObservationFields",
    "ObservationLayout",
    "SeatFields",
    "WILD",
    "action_mask",
    "decode_action",
    "decode_observation",
    "encode_action",
    "encode_fields",
    "encode_view",
    "fields_from_view",
    "legal_moves_from_mask",
    "num_actions",
    "observation_layout",
    "observe",
]
