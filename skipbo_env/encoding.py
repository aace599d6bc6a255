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
from typing import Any

import numpy as np

from .rules import (
    ALL_MOVES,
    DECK_SIZE,
    HAND_SIZE,
    NUM_SOLO_MOVES,
    WILD,
    Discard,
    GameConfig,
    GameState,
    Move,
    Play,
    SeatView,
    Source,
)
from .rules.cards import NUM_DISCARD_PILES
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


def decode_action(action: object, config: GameConfig) -> Move:
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


def encode_fields(fields: ObservationFields, config: GameConfig) -> np.ndarray:
    """The float32 vector of ``fields`` (layout: :func:`observation_layout`), written piece by piece."""
    layout = observation_layout(config)
    vec = np.zeros(layout.size, dtype=np.float32)

    def put(name: str, values: Any) -> None:
        layout.view(vec, name)[...] = values

    put("hand_counts", np.asarray(fields.hand_counts, dtype=np.float32) / HAND_SIZE)
    put("building_values", np.eye(BUILD_SLOTS, dtype=np.float32)[list(fields.building_values)])
    slots = np.eye(CARD_SLOTS, dtype=np.float32)
    for k, seat in enumerate(fields.seats):
        p = f"seat{k}."
        put(p + "stock_top", slots[_slot_of_card(seat.stock_top)])
        put(p + "stock_size", seat.stock_size / float(config.stock_size))  # type: ignore[arg-type]  # never None after GameConfig.__post_init__
        put(p + "hand_size", seat.hand_size / HAND_SIZE)
        put(p + "discard_tops", slots[[_slot_of_card(c) for c in seat.discard_tops]])
        put(p + "discard_seconds", slots[[_slot_of_card(c) for c in seat.discard_seconds]])
        put(p + "discard_counts", np.asarray(seat.discard_counts, dtype=np.float32) / COUNT_SCALE)
        put(p + "discard_sizes", np.asarray(seat.discard_sizes, dtype=np.float32) / DISCARD_SIZE_SCALE)
        put(p + "is_partner", float(seat.is_partner))
    put("draw_size", fields.draw_size / DECK_SIZE)
    put("completed_size", fields.completed_size / DECK_SIZE)
    put("turn", fields.turn / config.turn_limit)
    put("to_move", float(fields.to_move))
    return vec


def encode_view(view: SeatView) -> np.ndarray:
    """Observation vector of a seat view.

    The same float32 vector, bit for bit, as
    ``encode_fields(fields_from_view(view), view.config)`` (the readable
    reference; tests/test_encoding.py checks the equality), written straight
    from the view as one scatter of (index, value) pairs: the envs call this
    on every step. Offsets come from the layout (:func:`_plan`). Every scaled
    value is a Python float division rounded once to float32, which equals
    the reference's float32 division.
    """
    config = view.config
    plan = _plan(config)
    n, partner = config.num_players, view.partner
    stock_scale = float(config.stock_size)  # type: ignore[arg-type]  # never None after GameConfig.__post_init__
    build = plan.build
    idx = [build + b * BUILD_SLOTS + value for b, value in enumerate(view.building_values)]
    val = [1.0] * 4
    hand = view.hand_counts()
    idx += range(plan.hand, plan.hand + 13)
    val += [c / HAND_SIZE for c in hand[1:]]
    counts: list[int] = []
    for k in range(n):
        s = (view.seat + k) % n
        at = plan.seats[k]
        top = view.stock_tops[s]
        idx += (at.stock_top + (EMPTY_SLOT if top is None else top - 1), at.stock_size, at.hand_size)
        val += (1.0, view.stock_sizes[s] / stock_scale, view.hand_sizes[s] / HAND_SIZE)
        for d, pile in enumerate(view.discard_piles[s]):
            length = len(pile)
            idx += (
                at.discard_tops + d * CARD_SLOTS + (pile[-1] - 1 if length else EMPTY_SLOT),
                at.discard_seconds + d * CARD_SLOTS + (pile[-2] - 1 if length > 1 else EMPTY_SLOT),
                at.discard_sizes + d,
            )
            val += (1.0, 1.0, length / DISCARD_SIZE_SCALE)
            start = at.discard_counts + d * 13 - 1
            counts += [start + card for card in pile]
        if s == partner:
            idx.append(at.is_partner)
            val.append(1.0)
    idx += plan.tail
    val += (
        view.draw_size / DECK_SIZE,
        view.completed_size / DECK_SIZE,
        view.turn / config.turn_limit,
        float(view.to_move),
    )
    if counts:
        vec = np.bincount(counts, minlength=plan.size).astype(np.float32)
        vec /= plan.count_divisors
    else:
        vec = np.zeros(plan.size, dtype=np.float32)
    vec[idx] = val
    return vec


@dataclass(frozen=True)
class _SeatStarts:
    stock_top: int
    stock_size: int
    hand_size: int
    discard_tops: int
    discard_seconds: int
    discard_counts: int
    discard_sizes: int
    is_partner: int


@dataclass(frozen=True)
class _Plan:
    """The layout's offsets as plain ints, for :func:`encode_view`'s hot loop."""

    size: int
    hand: int
    build: int
    seats: tuple[_SeatStarts, ...]
    tail: tuple[int, ...]
    count_divisors: np.ndarray
    """Per vector entry: the discard-count scale at discard-count entries, 1 elsewhere."""


@functools.lru_cache(maxsize=64)
def _plan(config: GameConfig) -> _Plan:
    layout = observation_layout(config)
    seats = tuple(
        _SeatStarts(**{name: layout.start(f"seat{k}.{name}") for name, _ in SEAT_PIECES})
        for k in range(config.num_players)
    )
    div = np.ones(layout.size, dtype=np.float32)
    for k in range(config.num_players):
        layout.view(div, f"seat{k}.discard_counts")[...] = COUNT_SCALE
    tail = tuple(layout.start(name) for name, _ in TAIL_PIECES)
    return _Plan(layout.size, layout.start("hand_counts"), layout.start("building_values"), seats, tail, div)


class SeatBlockObserver:
    """Observation vectors of one game, kept up to date piece by piece (the AEC env's fast path).

    A seat's block of the vector (stock top and size, hand size, discard piles: every
    ``seat{k}.*`` piece but ``is_partner``) is the same whichever seat observes it; only its
    position (``k``, counted from the observer) differs. The observer keeps one block per seat
    and rewrites only the pieces a move changed (:meth:`touch_move`: a stock, one discard pile;
    hand sizes, the head and the tail are rewritten on every observation), then assembles an
    observation from the head (own hand, building piles), the blocks in the observer's seat
    order and the tail. The result equals :func:`encode_view` of the seat's view bit for bit
    (tests/test_aec_fast.py checks every seat after every move of many games), and like it
    reads only what the seat may see.

    The owner calls :meth:`touch_move` after every move it applies and :meth:`reset` when the
    game is replaced (or changed some other way).
    """

    def __init__(self, config: GameConfig) -> None:
        plan = _plan(config)
        self.config = config
        self.plan = plan
        n = config.num_players
        first = plan.seats[0]
        self._start = first.stock_top
        self._end = self._start + n * SEAT_WIDTH
        if any(at.stock_top != self._start + k * SEAT_WIDTH for k, at in enumerate(plan.seats)):
            raise AssertionError("seat blocks are not contiguous in the observation layout")  # pragma: no cover
        base = first.stock_top
        self._stock_top = first.stock_top - base
        self._stock_size = first.stock_size - base
        self._hand_size = first.hand_size - base
        self._tops = first.discard_tops - base
        self._seconds = first.discard_seconds - base
        self._counts = first.discard_counts - base
        self._sizes = first.discard_sizes - base
        self._stock_scale = float(config.stock_size)  # type: ignore[arg-type]  # never None after GameConfig.__post_init__
        self._count_scale = COUNT_SCALE.astype(np.float32)
        self._blocks = np.zeros((n, SEAT_WIDTH), dtype=np.float32)
        self._order = [np.array([(s + k) % n for k in range(n)]) for s in range(n)]
        self._partner = [config.partner(s) for s in range(n)]
        self._partner_at = [
            None if p is None else self._start + ((p - s) % n) * SEAT_WIDTH + first.is_partner - base
            for s, p in enumerate(self._partner)
        ]
        self._tail = list(plan.tail)
        self._dirty_stocks: set[int] = set()
        self._dirty_piles: set[tuple[int, int]] = set()
        self.reset()

    def reset(self) -> None:
        """Rewrite every piece at the next observation (a new or changed game)."""
        n = self.config.num_players
        self._dirty_stocks = set(range(n))
        self._dirty_piles = {(s, d) for s in range(n) for d in range(NUM_DISCARD_PILES)}

    def touch_move(self, seat: int, move: Move) -> None:
        """``seat`` just made ``move``: mark the stock or discard pile it changed."""
        if isinstance(move, Discard):
            self._dirty_piles.add((seat, move.discard_pile))
        elif isinstance(move, Play):
            source = move.source
            if source is Source.STOCK:
                self._dirty_stocks.add(seat)
            elif source is Source.DISCARD:
                self._dirty_piles.add((seat, move.discard_pile))  # type: ignore[arg-type]  # a discard-pile play names it
            elif source is Source.PARTNER_STOCK:
                self._dirty_stocks.add(self._partner[seat])  # type: ignore[arg-type]  # partner game only
            elif source is Source.PARTNER_DISCARD:
                self._dirty_piles.add((self._partner[seat], move.discard_pile))  # type: ignore[arg-type]

    def _refresh(self, state: GameState) -> None:
        blocks = self._blocks
        for s in self._dirty_stocks:
            stock = state.stocks[s]
            row = blocks[s]
            row[self._stock_top:self._stock_top + CARD_SLOTS] = 0.0
            row[self._stock_top + (stock[-1] - 1 if stock else EMPTY_SLOT)] = 1.0
            row[self._stock_size] = len(stock) / self._stock_scale
        for s, d in self._dirty_piles:
            pile = state.discards[s][d]
            row = blocks[s]
            length = len(pile)
            tops = self._tops + d * CARD_SLOTS
            row[tops:tops + CARD_SLOTS] = 0.0
            row[tops + (pile[-1] - 1 if length else EMPTY_SLOT)] = 1.0
            seconds = self._seconds + d * CARD_SLOTS
            row[seconds:seconds + CARD_SLOTS] = 0.0
            row[seconds + (pile[-2] - 1 if length > 1 else EMPTY_SLOT)] = 1.0
            counts = self._counts + d * 13
            row[counts:counts + 13] = (
                np.bincount(pile, minlength=14)[1:].astype(np.float32) / self._count_scale if length else 0.0
            )
            row[self._sizes + d] = length / DISCARD_SIZE_SCALE
        self._dirty_stocks.clear()
        self._dirty_piles.clear()
        blocks[:, self._hand_size] = [sum(hand) / HAND_SIZE for hand in state.hands]

    def observe(self, state: GameState, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (a new array): :func:`encode_view` of its view."""
        self._refresh(state)
        plan = self.plan
        vec = np.zeros(plan.size, dtype=np.float32)
        vec[self._start:self._end] = self._blocks[self._order[seat]].ravel()
        partner_at = self._partner_at[seat]
        if partner_at is not None:
            vec[partner_at] = 1.0
        hand = state.hands[seat]
        vec[plan.hand:plan.hand + 13] = [c / HAND_SIZE for c in hand[1:]]
        build = plan.build
        vec[[build + b * BUILD_SLOTS + len(p) for b, p in enumerate(state.building)]] = 1.0
        vec[self._tail] = (
            len(state.draw_pile) / DECK_SIZE,
            len(state.completed) / DECK_SIZE,
            state.turn / self.config.turn_limit,
            float(state.current == seat and not state.is_over),
        )
        return vec


def observe(state: GameState, seat: int, view: SeatView | None = None) -> dict[str, np.ndarray]:
    """The AEC observation dict of ``seat``: the vector of its view, and the mask.

    The mask comes from the rules' legal move list; it is all zeros unless
    ``seat`` is to move. ``view`` is ``state.view(seat)`` when the caller has it already.
    """
    if view is None:
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
    hand = tuple(_rint(layout.view(vec, "hand_counts"), HAND_SIZE).tolist())
    building = tuple(_onehots(layout.view(vec, "building_values"), "building_values").tolist())
    block = layout.seats(vec)

    def onehot_cards(name: str) -> list:
        return _cards_of_slots(_onehots(seat_piece(block, name), name))

    stock_tops = onehot_cards("stock_top")
    stock_sizes = _rint(seat_piece(block, "stock_size")[:, 0], config.stock_size).tolist()  # type: ignore[arg-type]  # never None after GameConfig.__post_init__
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
    "COUNT_SCALE",
    "HEAD_WIDTH",
    "IN_SEAT",
    "SEAT_PIECES",
    "SEAT_WIDTH",
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
    "piece_shape",
    "seat_piece",
]
