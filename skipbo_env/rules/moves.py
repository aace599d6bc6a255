"""Typed moves (R11, R16, R21, R27).

A move is a small frozen value: :class:`Play` (one card onto a building pile, from a ``source``),
:class:`Discard` (a hand card onto an own discard pile, ending the turn, R16) or :class:`EndTurn`
(an empty hand that cannot be refilled, R21). Every possible move exists once in
:data:`ALL_MOVES`, a fixed table in a documented order; legal move lists hold these very objects,
and moves compare by value. See docs/actions.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from .cards import CARD_VALUES, NUM_BUILDING_PILES, NUM_DISCARD_PILES, WILD, card_name


class Source(IntEnum):
    """Where a played card comes from."""

    HAND = 0
    STOCK = 1
    DISCARD = 2
    PARTNER_STOCK = 3
    PARTNER_DISCARD = 4


_DISCARD_SOURCES = (Source.DISCARD, Source.PARTNER_DISCARD)


def _check_pile(name: str, value: object, count: int) -> None:
    if type(value) is not int or not 0 <= value < count:
        raise ValueError(f"{name} must be an int in 0..{count - 1}, got {value!r}")


def _check_card(value: object) -> None:
    if type(value) is not int or value not in CARD_VALUES:
        raise ValueError(f"card must be an int in 1..12 or {WILD} (wild), got {value!r}")


@dataclass(frozen=True, slots=True)
class Play:
    """Play one card onto building pile ``build_pile`` (0..3)."""

    source: Source
    build_pile: int
    card: int | None = None
    discard_pile: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.source, Source):
            raise ValueError(f"source must be a Source, got {self.source!r}")
        _check_pile("build_pile", self.build_pile, NUM_BUILDING_PILES)
        if self.source is Source.HAND:
            _check_card(self.card)
        elif self.card is not None:
            raise ValueError(f"card is only given for hand plays, not {self.source.name}")
        if self.source in _DISCARD_SOURCES:
            _check_pile("discard_pile", self.discard_pile, NUM_DISCARD_PILES)
        elif self.discard_pile is not None:
            raise ValueError(f"discard_pile is only given for discard sources, not {self.source.name}")

    @property
    def hand_card(self) -> int:
        """The card of a hand play; ``ValueError`` for the other sources (they name no card)."""
        if self.card is None:
            raise ValueError(f"a {self.source.name} play names no card")
        return self.card

    @property
    def source_pile(self) -> int:
        """The discard pile a discard or partner-discard play takes from; ``ValueError`` for the other
        sources (they name none)."""
        if self.discard_pile is None:
            raise ValueError(f"a {self.source.name} play names no discard pile")
        return self.discard_pile

    def __str__(self) -> str:
        if self.source is Source.HAND:
            origin = f"hand {card_name(self.hand_card)}"
        elif self.source in _DISCARD_SOURCES:
            owner = "partner discard" if self.source is Source.PARTNER_DISCARD else "discard"
            origin = f"{owner} {self.discard_pile}"
        else:
            origin = "partner stock" if self.source is Source.PARTNER_STOCK else "stock"
        return f"play {origin} -> building {self.build_pile}"


@dataclass(frozen=True, slots=True)
class Discard:
    """Put hand card ``card`` on own discard pile ``discard_pile`` (0..3) and end the turn."""

    card: int
    discard_pile: int

    def __post_init__(self) -> None:
        _check_card(self.card)
        _check_pile("discard_pile", self.discard_pile, NUM_DISCARD_PILES)

    def __str__(self) -> str:
        return f"discard {card_name(self.card)} -> discard {self.discard_pile}"


@dataclass(frozen=True, slots=True)
class EndTurn:
    """End the turn with an empty hand (R21); legal only when the hand is empty."""

    def __str__(self) -> str:
        return "end turn"


Move = Play | Discard | EndTurn

# --------------------------------------------------------------- move tables
# Canonical objects, indexed for fast legal-move generation.
HAND_PLAYS: dict[int, tuple[Play, ...]] = {
    v: tuple(Play(Source.HAND, b, card=v) for b in range(NUM_BUILDING_PILES)) for v in CARD_VALUES
}
STOCK_PLAYS: tuple[Play, ...] = tuple(Play(Source.STOCK, b) for b in range(NUM_BUILDING_PILES))
DISCARD_PLAYS: tuple[tuple[Play, ...], ...] = tuple(
    tuple(Play(Source.DISCARD, b, discard_pile=d) for b in range(NUM_BUILDING_PILES))
    for d in range(NUM_DISCARD_PILES)
)
PARTNER_STOCK_PLAYS: tuple[Play, ...] = tuple(
    Play(Source.PARTNER_STOCK, b) for b in range(NUM_BUILDING_PILES)
)
PARTNER_DISCARD_PLAYS: tuple[tuple[Play, ...], ...] = tuple(
    tuple(Play(Source.PARTNER_DISCARD, b, discard_pile=d) for b in range(NUM_BUILDING_PILES))
    for d in range(NUM_DISCARD_PILES)
)
DISCARDS: dict[int, tuple[Discard, ...]] = {
    v: tuple(Discard(v, d) for d in range(NUM_DISCARD_PILES)) for v in CARD_VALUES
}
END_TURN = EndTurn()

ALL_MOVES: tuple[Move, ...] = (
    *(m for v in CARD_VALUES for m in HAND_PLAYS[v]),
    *STOCK_PLAYS,
    *(m for row in DISCARD_PLAYS for m in row),
    *(m for v in CARD_VALUES for m in DISCARDS[v]),
    END_TURN,
    *PARTNER_STOCK_PLAYS,
    *(m for row in PARTNER_DISCARD_PLAYS for m in row),
)
"""Every move, in a fixed order: hand plays (value 1..12, wild; pile 0..3),
stock plays, own discard-top plays (discard pile 0..3, building pile 0..3),
discards (value, discard pile), end turn, then the partner-only moves
(partner stock, partner discard tops). Non-partner games use the first
:data:`NUM_SOLO_MOVES` entries."""

NUM_SOLO_MOVES = ALL_MOVES.index(END_TURN) + 1

CANONICAL: dict[Move, Move] = {m: m for m in ALL_MOVES}
"""Maps any move equal to a table entry to the table's own object."""


# ------------------------------------------------------------ move <-> dict
def move_to_dict(move: Move) -> dict:
    """JSON-safe dict of a move, e.g. ``{"kind": "play", "source": "hand", "card": 5, "build_pile": 2}``."""
    if isinstance(move, Play):
        out: dict = {"kind": "play", "source": move.source.name.lower(), "build_pile": move.build_pile}
        if move.card is not None:
            out["card"] = move.card
        if move.discard_pile is not None:
            out["discard_pile"] = move.discard_pile
        return out
    if isinstance(move, Discard):
        return {"kind": "discard", "card": move.card, "discard_pile": move.discard_pile}
    if isinstance(move, EndTurn):
        return {"kind": "end_turn"}
    raise TypeError(f"not a move: {move!r}")


def move_from_dict(data: dict) -> Move:
    """Inverse of :func:`move_to_dict`; a malformed dict raises ``ValueError`` naming the problem."""
    if not isinstance(data, dict) or "kind" not in data:
        raise ValueError(f"a move dict needs a 'kind' key, got {data!r}")
    kind = data["kind"]
    fields = {k: v for k, v in data.items() if k != "kind"}
    try:
        if kind == "play":
            source = fields.pop("source", None)
            names = {s.name.lower(): s for s in Source}
            if source not in names:
                raise ValueError(f"source must be one of {sorted(names)}, got {source!r}")
            return CANONICAL.get(Play(names[source], **fields)) or Play(names[source], **fields)
        if kind == "discard":
            return CANONICAL[Discard(**fields)]
        if kind == "end_turn" and not fields:
            return END_TURN
    except TypeError as exc:
        raise ValueError(f"bad fields for a {kind!r} move: {exc}") from exc
    raise ValueError(f"unknown move kind or fields: {data!r}")
