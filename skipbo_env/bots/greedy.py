"""The greedy scripted policy over the decoded observation.

These are the decision rules behind the greedy baseline;
:mod:`skipbo_env.bots.base` wraps them behind ``act(observation) -> int``. They read
only :class:`~skipbo_env.encoding.ObservationFields` (what the observation
vector holds) and the legal moves, never the game state.

A policy is a callable ``policy(obs, legal, rng) -> Move`` (:data:`Policy`):
``legal`` is the rules' legal move list of the seat to move, ``rng`` the
agent's own generator (used only to break ties).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from ..encoding import ObservationFields
from ..rules import WILD, Discard, EndTurn, Move, Play, Source, cards_until_playable

_T = TypeVar("_T")

Policy = Callable[[ObservationFields, Sequence[Move], np.random.Generator], Move]

def card_of_play(obs: ObservationFields, move: Play) -> int | None:
    """The card a play moves, as far as the observation shows it (own and partner tops)."""
    if move.source is Source.HAND:
        return move.card
    if move.source is Source.STOCK:
        return obs.me.stock_top
    if move.source is Source.DISCARD:
        return obs.me.discard_tops[move.source_pile]
    partner = obs.partner
    if partner is None:
        return None
    if move.source is Source.PARTNER_STOCK:
        return partner.stock_top
    return partner.discard_tops[move.source_pile]


def _pick(options: Sequence[_T], rng: np.random.Generator) -> _T:
    return options[int(rng.integers(len(options)))]


def greedy_move(obs: ObservationFields, legal: Sequence[Move], rng: np.random.Generator) -> Move:
    """Stock first, then any other play except a hand wild, then a discard.

    The priorities are fixed; within each, the choice is:

    * **stock play** (a wild stock top fits every pile): onto the highest pile,
      so piles complete and their cards come back through the draw pile (R19);
    * **other play** (hand numbers, own or partner discard tops, the partner's
      stock top; never a wild from the hand): first one that makes the own
      stock top playable next, then numbers before wilds, then hand cards
      before discard tops (an empty hand is refilled, R15). A wild from a
      discard top goes where it makes the stock playable, else on the highest pile;
    * **discard** (:func:`greedy_discard`): a wild if the hand holds one (a
      wild on a discard top can be played next turn, so it is never stuck
      there), else the number card farthest from fitting any building pile,
      placed to extend a descending run.

    Remaining ties are broken uniformly with ``rng``.
    """
    building = obs.building_values
    stock = [m for m in legal if isinstance(m, Play) and m.source is Source.STOCK]
    if stock:
        high = max(building[m.build_pile] for m in stock)
        return _pick([m for m in stock if building[m.build_pile] == high], rng)
    plays = [
        m for m in legal
        if isinstance(m, Play) and not (m.source is Source.HAND and m.card == WILD)
    ]
    if plays:
        stock_top = obs.me.stock_top

        def rank(move: Play) -> tuple[int, int, int, int]:
            card = card_of_play(obs, move)
            shows = building[move.build_pile] + 1
            enables = stock_top is not None and stock_top != WILD and shows == stock_top - 1
            is_wild = card == WILD
            return (
                0 if enables else 1,
                1 if is_wild else 0,
                0 if move.source is Source.HAND else 1,
                -shows if is_wild else 0,
            )

        best = min(rank(m) for m in plays)
        return _pick([m for m in plays if rank(m) == best], rng)
    discards = [m for m in legal if isinstance(m, Discard)]
    if discards:
        return greedy_discard(obs, discards, rng)
    for move in legal:
        if isinstance(move, EndTurn):
            return move
    return _pick(legal, rng)  # only hand wilds can be played and none may be discarded


def greedy_discard(obs: ObservationFields, discards: list[Discard], rng: np.random.Generator) -> Discard:
    """The greedy player's discard (R16), see :func:`greedy_move`.

    The card: a wild if allowed and held, else the number that needs the most
    cards on the building piles before it fits (:func:`cards_until_playable`),
    the higher number on a tie. The pile, best first: one whose top is one
    higher (a descending run), one whose top is the same number, an empty
    pile, one whose top is higher (the lowest such top), one whose top is
    lower (the highest such top), a pile topped by a wild last. A wild goes
    on an empty pile, else on another wild, else on the highest number.
    """
    cards = {m.card for m in discards}
    numbers = [c for c in cards if c != WILD]
    if WILD in cards or not numbers:
        card = WILD
    else:
        card = max(numbers, key=lambda c: (cards_until_playable(c, obs.building_values), c))
    tops = obs.me.discard_tops

    def rank(move: Discard) -> tuple[int, int]:
        top = tops[move.discard_pile]
        if card == WILD:
            if top is None:
                return (0, 0)
            return (1, 0) if top == WILD else (2, -top)
        if top is None:
            return (2, 0)
        if top == WILD:
            return (5, 0)
        if top == card + 1:
            return (0, 0)
        if top == card:
            return (1, 0)
        return (3, top) if top > card else (4, -top)

    options = [m for m in discards if m.card == card]
    best = min(rank(m) for m in options)
    return _pick([m for m in options if rank(m) == best], rng)
