"""Observation ``v1``: the float32 vector of a seat's view, piece by named piece (docs/observations.md).

:func:`encode_view` writes it, :func:`observation_layout` names its pieces, :func:`decode_observation`
reads it back into :class:`ObservationFields` (what :func:`fields_from_view` reads from the view).
Seats are relative: index 0 is the observer, 1 the next player to the left, and so on. Every
shipped agent was trained on it; its bytes never change (a new encoding is a new module).
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..rules import DECK_SIZE, HAND_SIZE, WILD, GameConfig, SeatView

NAME = "v1"
"""The observation's name, recorded in the files of the networks trained on it."""
CARD_SLOTS = 14
"""One-hot slots of a card place: values 1..12 at 0..11, wild at 12, empty at 13."""
EMPTY_SLOT = 13
BUILD_SLOTS = 12
"""One-hot slots of a building pile value 0..11."""
DISCARD_SIZE_SCALE = 20.0


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


def _slot_of_card(card: int | None) -> int:
    return EMPTY_SLOT if card is None else card - 1


HEAD_PIECES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("hand_counts", (13,)),
    ("building_values", (4, BUILD_SLOTS)),
)
"""The pieces before the seat blocks: (name, shape)."""
SEAT_PIECES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("stock_top", (CARD_SLOTS,)),
    ("stock_size", (1,)),
    ("hand_size", (1,)),
    ("discard_tops", (4, CARD_SLOTS)),
    ("discard_seconds", (4, CARD_SLOTS)),
    ("discard_counts", (4, 13)),
    ("discard_sizes", (4,)),
    ("is_partner", (1,)),
)
"""The pieces of one seat block (relative seat ``k`` is named ``seat{k}.<piece>``): (name, shape)."""
TAIL_PIECES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("draw_size", (1,)),
    ("completed_size", (1,)),
    ("turn", (1,)),
    ("to_move", (1,)),
)
"""The pieces after the seat blocks: (name, shape)."""


def _length(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape))


def _width(pieces: tuple[tuple[str, tuple[int, ...]], ...]) -> int:
    return sum(_length(shape) for _, shape in pieces)


def _starts(pieces: tuple[tuple[str, tuple[int, ...]], ...], offset: int = 0) -> dict[str, int]:
    out = {}
    for name, shape in pieces:
        out[name] = offset
        offset += _length(shape)
    return out


SEAT_WIDTH = _width(SEAT_PIECES)
"""Entries of one seat block (185)."""
HEAD_WIDTH = _width(HEAD_PIECES) + _width(TAIL_PIECES)
"""Entries outside the seat blocks (65): the vector has ``HEAD_WIDTH + SEAT_WIDTH * players`` entries."""
IN_SEAT = _starts(SEAT_PIECES)
"""Offset of each seat piece inside a seat block."""
PIECE_SHAPES = dict(HEAD_PIECES + SEAT_PIECES + TAIL_PIECES)
"""Shape of each piece by its name (seat pieces without the ``seat{k}.`` prefix)."""
_IN_SEAT_SLICES = {name: (IN_SEAT[name], IN_SEAT[name] + _length(shape)) for name, shape in SEAT_PIECES}
COUNT_SCALE = np.array([12.0] * 12 + [18.0], dtype=np.float32)
"""Divisor of a discard pile's count of each value 1..12 and of wilds (the deck holds 12 of each number, 18 wilds)."""


def piece_shape(name: str) -> tuple[int, ...]:
    """The shape of a piece, by its layout name (``seat2.discard_tops`` has the shape of ``discard_tops``)."""
    return PIECE_SHAPES[name.rpartition(".")[2]]


def seat_piece(block: Any, name: str) -> Any:
    """Piece ``name`` of seat blocks ``block[..., SEAT_WIDTH]`` (numpy or torch), shaped
    ``block.shape[:-1] + piece shape``: the named view of every seat at once."""
    start, stop = _IN_SEAT_SLICES[name]
    return block[..., start:stop].reshape(*block.shape[:-1], *PIECE_SHAPES[name])


@dataclass(frozen=True)
class ObservationLayout:
    """Where each named piece lies in the vector of one configuration (OpenSpiel's observer style).

    Pieces are named ``hand_counts``, ``building_values``, ``seat{k}.<piece>``
    for relative seat ``k`` (0 is the observer) and every piece of
    :data:`SEAT_PIECES`, then ``draw_size``, ``completed_size``, ``turn``,
    ``to_move``; docs/observations.md lists them. The encoder, the decoder and
    every reader (policies, the batched engine's check) take offsets from here.
    """

    config: GameConfig
    size: int
    pieces: tuple[tuple[str, int, int], ...]
    """(name, start, length) in order; see docs/observations.md."""
    low: np.ndarray
    high: np.ndarray

    def start(self, name: str) -> int:
        """The first entry of piece ``name``."""
        return self._index[name][0]

    def slice(self, name: str) -> slice:
        """The entries of piece ``name``."""
        start, length = self._index[name]
        return slice(start, start + length)

    def view(self, vec: Any, name: str) -> Any:
        """Piece ``name`` of ``vec[..., size]`` (numpy array or torch tensor), shaped
        ``vec.shape[:-1] + piece shape``; a numpy view writes through to ``vec``."""
        start, length = self._index[name]
        return vec[..., start : start + length].reshape(*vec.shape[:-1], *piece_shape(name))

    def seats(self, vec: Any) -> Any:
        """The seat blocks of ``vec[..., size]``, shaped ``(..., players, SEAT_WIDTH)``; read
        pieces from it with :func:`seat_piece`."""
        start = self.start("seat0.stock_top")
        stop = start + self.config.num_players * SEAT_WIDTH
        return vec[..., start:stop].reshape(*vec.shape[:-1], self.config.num_players, SEAT_WIDTH)

    @functools.cached_property
    def _index(self) -> dict[str, tuple[int, int]]:
        return {name: (start, length) for name, start, length in self.pieces}


@functools.lru_cache(maxsize=64)
def observation_layout(config: GameConfig) -> ObservationLayout:
    """The named pieces of the observation vector for ``config``."""
    pieces: list[tuple[str, int, int]] = []
    highs: list[np.ndarray] = []
    offset = 0

    def add(name: str, shape: tuple[int, ...], high: float = 1.0) -> None:
        nonlocal offset
        length = _length(shape)
        pieces.append((name, offset, length))
        highs.append(np.full(length, high, dtype=np.float32))
        offset += length

    for name, shape in HEAD_PIECES:
        add(name, shape)
    for k in range(config.num_players):
        for name, shape in SEAT_PIECES:
            piece_high = DECK_SIZE / DISCARD_SIZE_SCALE if name == "discard_sizes" else 1.0
            add(f"seat{k}.{name}", shape, piece_high)
    for name, shape in TAIL_PIECES:
        add(name, shape)
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


def encode_view(view: SeatView) -> np.ndarray:
    """The float32 observation vector of a seat view (layout: :func:`observation_layout`).

    The vector is the head (own hand, building piles), one block per seat in the observer's
    order (relative seat ``k`` is absolute seat ``(view.seat + k) % n``) and the tail, each
    piece written from the view. The envs call this on every step, and most pieces are the
    same as at the last step: a seat block is the same whichever seat observes it (but for
    ``is_partner``), and its discard piles change about once a turn. So the parts are kept by
    their content, as the bytes of their float32 entries (:func:`_hand_part`,
    :func:`_building_part`, :func:`_stock_part`, :func:`_discard_part`), and the vector is
    their concatenation. :func:`decode_observation` reads it back into
    :func:`fields_from_view`'s fields, and the batched engine's compiled observer writes the
    same vector bit for bit (tests/test_encoding.py, tests/test_vector_engine.py).
    """
    config = view.config
    n = config.num_players
    stock_scale = float(config.stock_size)
    partner = view.partner
    parts = [_hand_part(view.hand), _building_part(view.building_values)]
    for k in range(n):
        s = (view.seat + k) % n
        parts.append(_stock_part(view.stock_tops[s], view.stock_sizes[s], view.hand_sizes[s], stock_scale))
        parts.append(_discard_part(view.discard_piles[s], s == partner))
    parts.append(_TAIL.pack(
        view.draw_size / DECK_SIZE, view.completed_size / DECK_SIZE, view.turn / config.turn_limit,
        float(view.to_move),
    ))
    return np.frombuffer(b"".join(parts), dtype=np.float32).copy()


_TAIL = struct.Struct(f"={len(TAIL_PIECES)}f")
"""The tail pieces (``draw_size``, ``completed_size``, ``turn``, ``to_move``) as float32 bytes."""
_STOCK_PIECES = ("stock_top", "stock_size", "hand_size")
"""The first pieces of a seat block (:func:`_stock_part`); the others are :func:`_discard_part`'s."""
_DISCARD_AT = IN_SEAT["discard_tops"]
_TOPS, _SECONDS, _COUNTS, _SIZES, _IS_PARTNER = (
    IN_SEAT[name] - _DISCARD_AT for name in ("discard_tops", "discard_seconds", "discard_counts", "discard_sizes",
                                             "is_partner")
)
_COUNT_SCALES = COUNT_SCALE.tolist()
assert tuple(name for name, _ in SEAT_PIECES[: len(_STOCK_PIECES)]) == _STOCK_PIECES
assert _DISCARD_AT == _width(SEAT_PIECES[: len(_STOCK_PIECES)])
assert tuple(name for name, _ in HEAD_PIECES) == ("hand_counts", "building_values")


def _float32_bytes(values: list[float]) -> bytes:
    """``values`` as float32 bytes. Each value here is a float64 quotient of two integers that
    float32 holds exactly; rounded to float32 it equals numpy's float32 quotient (float64 has
    more than twice float32's precision, so rounding twice gives the same float)."""
    return struct.pack(f"={len(values)}f", *values)


@functools.lru_cache(maxsize=16384)
def _hand_part(hand: tuple[int, ...]) -> bytes:
    """The ``hand_counts`` piece: the own hand's count of each value and of wilds."""
    return _float32_bytes([hand.count(card) / HAND_SIZE for card in range(1, WILD + 1)])


@functools.lru_cache(maxsize=16384)
def _building_part(building_values: tuple[int, ...]) -> bytes:
    """The ``building_values`` piece: the one-hot of each building pile's value."""
    part = [0.0] * _length(PIECE_SHAPES["building_values"])
    for b, value in enumerate(building_values):
        part[b * BUILD_SLOTS + value] = 1.0
    return _float32_bytes(part)


@functools.lru_cache(maxsize=16384)
def _stock_part(stock_top: int | None, stock_size: int, hand_size: int, stock_scale: float) -> bytes:
    """A seat's ``stock_top``, ``stock_size`` and ``hand_size`` pieces."""
    part = [0.0] * _DISCARD_AT
    part[IN_SEAT["stock_top"] + _slot_of_card(stock_top)] = 1.0
    part[IN_SEAT["stock_size"]] = stock_size / stock_scale
    part[IN_SEAT["hand_size"]] = hand_size / HAND_SIZE
    return _float32_bytes(part)


@functools.lru_cache(maxsize=4096)
def _discard_part(piles: tuple[tuple[int, ...], ...], is_partner: bool) -> bytes:
    """The rest of a seat block: per discard pile its top, the card below the top, its count of
    each value and of wilds, its size; then ``is_partner``."""
    part = [0.0] * (SEAT_WIDTH - _DISCARD_AT)
    for d, pile in enumerate(piles):
        part[_TOPS + d * CARD_SLOTS + _slot_of_card(pile[-1] if pile else None)] = 1.0
        part[_SECONDS + d * CARD_SLOTS + _slot_of_card(pile[-2] if len(pile) > 1 else None)] = 1.0
        for card in set(pile):
            part[_COUNTS + d * 13 + card - 1] = pile.count(card) / _COUNT_SCALES[card - 1]
        part[_SIZES + d] = len(pile) / DISCARD_SIZE_SCALE
    part[_IS_PARTNER] = float(is_partner)
    return _float32_bytes(part)


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
    """Read a vector made by :func:`encode_view` back into its fields (exact inverse: the
    fields of :func:`fields_from_view` of the same view).

    Raises ``ValueError`` when the shape does not fit ``config`` or a one-hot
    piece is not one-hot.
    """
    layout = observation_layout(config)
    vec = np.asarray(vec)
    if vec.shape != (layout.size,):
        raise ValueError(f"observation must have shape ({layout.size},) for this config, got {vec.shape}")
    vec = vec.astype(np.float64)
    n = config.num_players
    hand = tuple(_rint(layout.view(vec, "hand_counts"), HAND_SIZE).tolist())
    building = tuple(_onehots(layout.view(vec, "building_values"), "building_values").tolist())
    block = layout.seats(vec)

    def onehot_cards(name: str) -> list:
        return _cards_of_slots(_onehots(seat_piece(block, name), name))

    stock_tops = onehot_cards("stock_top")
    stock_sizes = _rint(seat_piece(block, "stock_size")[:, 0], config.stock_size).tolist()
    hand_sizes = _rint(seat_piece(block, "hand_size")[:, 0], HAND_SIZE).tolist()
    tops = onehot_cards("discard_tops")
    seconds = onehot_cards("discard_seconds")
    counts = _rint(seat_piece(block, "discard_counts"), COUNT_SCALE.astype(np.float64)).tolist()
    sizes = _rint(seat_piece(block, "discard_sizes"), DISCARD_SIZE_SCALE).tolist()
    partners = (seat_piece(block, "is_partner")[:, 0] > 0.5).tolist()
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

    def scalar(name: str, scale: float) -> int:
        return int(np.rint(layout.view(vec, name)[0] * scale))

    return ObservationFields(
        hand_counts=hand,
        building_values=building,
        seats=seats,
        draw_size=scalar("draw_size", DECK_SIZE),
        completed_size=scalar("completed_size", DECK_SIZE),
        turn=scalar("turn", config.turn_limit),
        to_move=bool(layout.view(vec, "to_move")[0] > 0.5),
    )


__all__ = [
    "BUILD_SLOTS",
    "CARD_SLOTS",
    "COUNT_SCALE",
    "DISCARD_SIZE_SCALE",
    "EMPTY_SLOT",
    "HEAD_PIECES",
    "HEAD_WIDTH",
    "IN_SEAT",
    "NAME",
    "PIECE_SHAPES",
    "SEAT_PIECES",
    "SEAT_WIDTH",
    "TAIL_PIECES",
    "ObservationFields",
    "ObservationLayout",
    "SeatFields",
    "decode_observation",
    "encode_view",
    "fields_from_view",
    "observation_layout",
    "piece_shape",
    "seat_piece",
]
