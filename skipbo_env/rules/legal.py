"""The single legal-move generator (R11, R12, R16, R18, R21, R27, §9 variants).

It works from the information the mover sees (hand, tops, building pile
values), so the game state and a seat's view share it: legality is computed
in exactly one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import NUM_BUILDING_PILES, WILD
from .moves import (
    DISCARD_PLAYS,
    DISCARDS,
    END_TURN,
    HAND_PLAYS,
    PARTNER_DISCARD_PLAYS,
    PARTNER_STOCK_PLAYS,
    STOCK_PLAYS,
    Move,
)

_PILES = range(NUM_BUILDING_PILES)


def _plays_of(card: int, needs: Sequence[int], table: Sequence[Move], out: list[Move]) -> bool:
    """Append the plays of one top card; True when it has at least one."""
    if card == WILD:
        out.extend(table)
        return True
    found = False
    for b in _PILES:
        if needs[b] == card:
            out.append(table[b])
            found = True
    return found


def generate_legal_moves(
    hand_counts: Sequence[int],
    building_values: Sequence[int],
    stock_top: int | None,
    discard_tops: Sequence[int | None],
    partner_stock_top: int | None,
    partner_discard_tops: Sequence[int | None],
    allow_wild_discard: bool,
    must_play_stock: bool,
) -> list[Move]:
    """Every legal move of the seat to move, in a fixed order.

    Args:
        hand_counts: counts indexed by card value (index 0 unused, 13 = wild).
        building_values: the number each building pile shows, 0 (empty) to 11.
        stock_top: the mover's stock top, or ``None`` when the stock is empty.
        discard_tops: top card of each of the mover's four discard piles (``None`` if empty).
        partner_stock_top, partner_discard_tops: the partner's, or ``None``/empty
            outside the partner game (R27).
        allow_wild_discard: R18, or source 001's variant when ``False``.
        must_play_stock: the variant that forbids ending the turn while the
            stock top can be played.

    Order: hand plays (by pile for numbers, then wilds), stock plays,
    own discard-top plays, partner plays, discards (by value), end turn.
    """
    needs = [v + 1 for v in building_values]  # R12: a pile showing n takes n+1
    moves: list[Move] = []
    for b in _PILES:
        need = needs[b]
        if hand_counts[need]:
            moves.append(HAND_PLAYS[need][b])
    if hand_counts[WILD]:
        moves.extend(HAND_PLAYS[WILD])
    stock_playable = stock_top is not None and _plays_of(stock_top, needs, STOCK_PLAYS, moves)
    for d, top in enumerate(discard_tops):
        if top is not None:
            _plays_of(top, needs, DISCARD_PLAYS[d], moves)
    if partner_stock_top is not None:
        _plays_of(partner_stock_top, needs, PARTNER_STOCK_PLAYS, moves)
    for d, top in enumerate(partner_discard_tops):
        if top is not None:
            _plays_of(top, needs, PARTNER_DISCARD_PLAYS[d], moves)
    if must_play_stock and stock_playable:
        return moves  # the turn may not end while the stock top can be played
    hand_size = 0
    for value in range(1, WILD + 1):
        count = hand_counts[value]
        if count:
            hand_size += count
            if value != WILD or allow_wild_discard:
                moves.extend(DISCARDS[value])
    if hand_size == 0:
        moves.append(END_TURN)  # R21
    return moves
