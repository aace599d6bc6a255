"""The action table, and the AEC observation dict of a seat (docs/actions.md, docs/observations.md).

Action ids index the fixed move table of the rules (:data:`skipbo_env.rules.ALL_MOVES`): the first
125 entries in every game, all 145 in the partner game. Example: in a 2-player game action ``0`` is
``Play(HAND, build_pile=0, card=1)``, ``52`` is ``Play(STOCK, build_pile=0)``, ``124`` is ``EndTurn()``.
:func:`observe` pairs a named observation's vector (:mod:`skipbo_env.observations`) with the mask.
The observation names below (``encode_view``, ``observation_layout``, ...) are observation ``v1``'s.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np

from .observations import DEFAULT_OBSERVATION, observation_spec
from .observations.v1 import (  # the default observation's names, for readers written for v1
    COUNT_SCALE,
    DISCARD_SIZE_SCALE,
    HEAD_WIDTH,
    IN_SEAT,
    SEAT_PIECES,
    SEAT_WIDTH,
    ObservationFields,
    ObservationLayout,
    SeatFields,
    decode_observation,
    encode_view,
    fields_from_view,
    observation_layout,
    piece_shape,
    seat_piece,
)
from .rules import ALL_MOVES, NUM_SOLO_MOVES, WILD, GameConfig, GameState, Move, SeatView
from .rules.moves import CANONICAL


# ====================================================================== actions
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


def observe(state: GameState, seat: int, view: SeatView | None = None, *,
            observation: str = DEFAULT_OBSERVATION) -> dict[str, np.ndarray]:
    """The AEC observation dict of ``seat``: the vector of its view (observation ``observation``,
    :mod:`skipbo_env.observations`), and the mask.

    The mask comes from the rules' legal move list; it is all zeros unless
    ``seat`` is to move. ``view`` is ``state.view(seat)`` when the caller has it already.
    An unknown ``observation`` raises :class:`~skipbo_env.rules.ConfigError` naming the known ones.
    """
    encode = observation_spec(observation).encode
    if view is None:
        view = state.view(seat)
    if view.to_move:
        mask = action_mask(state.legal_moves(), state.config)
    else:
        mask = np.zeros(num_actions(state.config), dtype=np.int8)
    return {"observation": encode(view), "action_mask": mask}


__all__ = [
    "COUNT_SCALE",
    "DISCARD_SIZE_SCALE",
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
    "encode_view",
    "fields_from_view",
    "legal_moves_from_mask",
    "num_actions",
    "observation_layout",
    "observe",
    "piece_shape",
    "seat_piece",
]
