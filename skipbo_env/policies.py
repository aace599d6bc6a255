"""Simple scripted policies over the decoded observation.

These are the decision rules behind the random and greedy baselines; the
agents in ``agents/`` wrap them behind ``act(observation) -> int``. They read
only :class:`~skipbo_env.encoding.ObservationFields` (what the observation
vector holds) and the legal moves, never the game state.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .encoding import ObservationFields, fields_from_view
from .rules import WILD, Discard, EndTurn, Move, Play, SeatView, Source

Policy = Callable[[ObservationFields, list[Move], np.random.Generator], Move]


def random_move(obs: ObservationFields, legal: list[Move], rng: np.random.Generator) -> Move:
    """A uniformly random legal move."""
    return legal[int(rng.integers(len(legal)))]


def greedy_move(obs: ObservationFields, legal: list[Move], rng: np.random.Generator) -> Move:
    """Stock first, then any other play except a hand wild, then a discard.

    Ties are broken uniformly with ``rng``. The discard is the highest number
    card in hand (a wild only if nothing else is left), placed where it extends
    a descending run (the pile top is one higher), else on an empty pile, else
    on the pile with the highest top.
    """
    stock = [m for m in legal if isinstance(m, Play) and m.source is Source.STOCK]
    if stock:
        return stock[int(rng.integers(len(stock)))]
    plays = [
        m for m in legal
        if isinstance(m, Play) and not (m.source is Source.HAND and m.card == WILD)
    ]
    if plays:
        return plays[int(rng.integers(len(plays)))]
    discards = [m for m in legal if isinstance(m, Discard)]
    if discards:
        return _pick_discard(obs, discards, rng)
    if any(isinstance(m, EndTurn) for m in legal):
        return next(m for m in legal if isinstance(m, EndTurn))
    return legal[int(rng.integers(len(legal)))]  # only hand wilds are playable


def _pick_discard(obs: ObservationFields, discards: list[Discard], rng: np.random.Generator) -> Discard:
    numbers = [m.card for m in discards if m.card != WILD]
    card = max(numbers) if numbers else WILD
    tops = obs.me.discard_tops

    def rank(move: Discard) -> tuple[int, int]:
        top = tops[move.discard_pile]
        if top is not None and top != WILD and top == card + 1:
            return (0, 0)
        if top is None:
            return (1, 0)
        return (2, -(top if top != WILD else 0))

    options = [m for m in discards if m.card == card]
    best = min(rank(m) for m in options)
    options = [m for m in options if rank(m) == best]
    return options[int(rng.integers(len(options)))]


def as_player(policy: Policy, seed: int | None = None) -> Callable[[SeatView], Move]:
    """Turn a policy into a ``Player`` for :func:`skipbo_env.rules.play_game`."""
    rng = np.random.default_rng(seed)

    def player(view: SeatView) -> Move:
        return policy(fields_from_view(view), view.legal_moves(), rng)

    return player
