"""What one seat may know of a game (R3, R4, R28).

A :class:`SeatView` holds exactly what a player at the table knows: their own hand, every stock's
top and size, every discard pile in full, the building piles (and their actual cards), the other
hand sizes, the draw and completed pile sizes (and the completed cards as a sorted multiset),
whose turn it is, the turn counter, seat order and partners. Nothing else is copied from the
state, so no hidden card can influence it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cards import WILD
from .config import GameConfig
from .legal import generate_legal_moves
from .moves import Move


@dataclass(frozen=True)
class SeatView:
    """One seat's knowledge; all seat-indexed tuples use absolute seat numbers.

    A game makes the view of each seat (:meth:`skipbo_env.rules.GameState.view`); tests and
    tools may build one by hand.
    """

    seat: int
    config: GameConfig
    hand: tuple[int, ...]
    """Own hand, sorted (13 = wild)."""
    stock_tops: tuple[int | None, ...]
    """Face-up stock top per seat, ``None`` for an empty stock."""
    stock_sizes: tuple[int, ...]
    discard_piles: tuple[tuple[tuple[int, ...], ...], ...]
    """Per seat, four discard piles, bottom to top."""
    building_values: tuple[int, ...]
    """The number each building pile shows, 0 (empty) to 11."""
    hand_sizes: tuple[int, ...]
    draw_size: int
    completed_size: int
    current_player: int
    turn: int
    winner: int | None
    truncated: bool
    building_piles: tuple[tuple[int, ...], ...] = ()
    """The building piles' actual cards, bottom to top, wilds included (face up, R4, R12).
    Defaults to empty for views built by hand; :meth:`GameState.view` always fills it."""
    completed_cards: tuple[int, ...] = field(default=(), compare=False)
    """The completed pile's cards, sorted: every seat saw them on the building piles before
    they were set aside (R13); only their order is hidden. Empty until a pile completes and
    again after a reshuffle (R19). Defaults to empty for views built by hand.

    Not part of ``==`` (yet): the tests' ``hidden_reshuffle`` (tests/conftest.py) still
    treats the completed pile's cards as hidden and mixes them with the unseen cards; once
    it keeps them in place, this field can compare like the others. Code that must tell
    two views apart by everything a seat knows compares it explicitly."""

    # ------------------------------------------------------------ derived
    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def partner(self) -> int | None:
        """The partner's seat in the partner game (R27), else ``None``."""
        return self.config.partner(self.seat)

    @property
    def is_over(self) -> bool:
        return self.winner is not None or self.truncated

    @property
    def to_move(self) -> bool:
        """True when this seat is to move and the game is on."""
        return self.current_player == self.seat and not self.is_over

    def hand_counts(self) -> list[int]:
        counts = [0] * (WILD + 1)
        for card in self.hand:
            counts[card] += 1
        return counts

    def discard_tops(self, seat: int) -> tuple[int | None, ...]:
        return tuple(p[-1] if p else None for p in self.discard_piles[seat])

    def opponents(self) -> tuple[int, ...]:
        """Other seats in play order starting left of this seat."""
        n = self.num_players
        return tuple((self.seat + k) % n for k in range(1, n))

    def legal_moves(self) -> tuple[Move, ...]:
        """The seat's legal moves (the rules' own generator); empty unless it is to move."""
        if not self.to_move:
            return ()
        partner = self.partner
        return tuple(generate_legal_moves(
            self.hand_counts(),
            self.building_values,
            self.stock_tops[self.seat],
            self.discard_tops(self.seat),
            None if partner is None else self.stock_tops[partner],
            () if partner is None else self.discard_tops(partner),
            self.config.allow_wild_discard,
            self.config.must_play_stock,
        ))
