"""The learner's rewards: terminal rewards and the optional stock-card shaping.

:func:`terminal_rewards`: +1 to every seat of the winning side, -1 to every other seat, 0 to all
when the game is truncated (turn limit R23 or move limit). With ``reward_shaping`` the mover also
gets :data:`STOCK_CARD_REWARD` for each card it plays from its own (or its partner's) stock
(:func:`is_shaped_move`, :func:`shaping_reward`, :func:`shaped_actions`); the terminal rewards
are the same either way. An illegal action under ``"lose"`` earns :data:`ILLEGAL_ACTION_REWARD`.
"""

from __future__ import annotations

import functools

import numpy as np

from ..rules import ALL_MOVES, NUM_SOLO_MOVES, GameConfig, Move, Play, Source

WIN_REWARD = 1.0
"""Terminal reward of every seat of the winning side."""
LOSS_REWARD = -1.0
"""Terminal reward of every other seat when a side wins."""
ILLEGAL_ACTION_REWARD = -1.0
"""Reward of a learner whose illegal action ended its episode (``illegal_action="lose"``)."""
STOCK_CARD_REWARD = 0.01
"""Shaping reward per own (or partner's) stock card played, when ``reward_shaping`` is on."""

_SHAPED_SOURCES = (Source.STOCK, Source.PARTNER_STOCK)


def terminal_rewards(config: GameConfig, winner: int | None) -> tuple[float, ...]:
    """Per seat, the reward at the end of a game won by seat ``winner`` (``None``: truncated)."""
    if winner is None:
        return (0.0,) * config.num_players
    side = config.team(winner)
    return tuple(WIN_REWARD if config.team(s) == side else LOSS_REWARD for s in range(config.num_players))


def is_shaped_move(move: Move) -> bool:
    """True for a move that earns the shaping reward: a play from the mover's own stock
    or, in the partner game, from the partner's stock."""
    return isinstance(move, Play) and move.source in _SHAPED_SOURCES


def shaping_reward(move: Move, reward_shaping: bool) -> float:
    """The mover's shaping reward for ``move`` (0 with shaping off)."""
    return STOCK_CARD_REWARD if reward_shaping and is_shaped_move(move) else 0.0


@functools.cache
def shaped_actions(partner_game: bool) -> np.ndarray:
    """Bool mask over the action ids of a game: True where :func:`is_shaped_move` holds
    (the batched engine's form of the shaping rule)."""
    n = len(ALL_MOVES) if partner_game else NUM_SOLO_MOVES
    mask = np.array([is_shaped_move(m) for m in ALL_MOVES[:n]], dtype=bool)
    mask.setflags(write=False)
    return mask
