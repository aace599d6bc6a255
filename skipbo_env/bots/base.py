"""Scripted agents: ``act(observation) -> int`` over a decision rule.

A scripted agent reads the AEC observation dict through the decoder only, so it knows exactly
what a learning agent knows. Game loops call :meth:`ScriptedAgent.act_view` instead
(``reads_view``): the same fields read straight from the seat's view
(:func:`~skipbo_env.encoding.fields_from_view`), the same legal-move order; both entries choose
the same move from the same generator state (``tests/test_fast_agents.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..encoding import (
    ObservationFields,
    decode_observation,
    encode_action,
    fields_from_view,
    legal_moves_from_mask,
)
from ..rules import GameConfig, Move, SeatView
from .greedy import greedy_move
from .protocol import AgentBase


def _mask_of(observation: Mapping[str, Any]) -> np.ndarray:
    try:
        mask = np.asarray(observation["action_mask"])
    except (KeyError, TypeError) as exc:
        raise ValueError("observation must be a dict with 'observation' and 'action_mask'") from exc
    if not mask.any():
        raise ValueError("the action mask is all zeros: this seat is not to move")
    return mask


def _legal_by_id(view: SeatView, config: GameConfig) -> list[tuple[int, Move]]:
    """The seat's legal moves with their action ids, in action-id order (the mask's order)."""
    legal = sorted((encode_action(move, config), move) for move in view.legal_moves())
    if not legal:
        raise ValueError(f"seat {view.seat} is not to move")
    return legal


class ScriptedAgent(AgentBase):
    """Base of scripted agents: decode the observation, pick a legal move, encode it.

    Subclasses implement :meth:`choose`. Each agent owns its generator;
    :meth:`seed` resets it. The game loops ask :meth:`act_view` (``reads_view``).
    """

    name = "scripted"
    reads_view = True

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        self.config = config
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Mapping[str, Any]) -> int:
        mask = _mask_of(observation)
        fields = decode_observation(observation["observation"], self.config)
        legal = legal_moves_from_mask(mask, self.config)
        return encode_action(self.choose(fields, legal), self.config)

    def act_view(self, view: SeatView) -> int:
        """The action id :meth:`act` would return for this seat's observation, read from the view."""
        legal = _legal_by_id(view, self.config)
        return encode_action(self.choose(fields_from_view(view), [move for _, move in legal]), self.config)

    def choose(self, obs: ObservationFields, legal: Sequence[Move]) -> Move:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomAgent(ScriptedAgent):
    """A uniformly random legal action."""

    name = "random"

    def act(self, observation: Mapping[str, Any]) -> int:
        legal = np.flatnonzero(_mask_of(observation))
        return int(legal[self.rng.integers(len(legal))])

    def act_view(self, view: SeatView) -> int:
        legal = _legal_by_id(view, self.config)
        return legal[int(self.rng.integers(len(legal)))][0]


class GreedyAgent(ScriptedAgent):
    """Stock top first, then any other play except a hand wild, then a discard
    (:func:`skipbo_env.bots.greedy.greedy_move`)."""

    name = "greedy"

    def choose(self, obs: ObservationFields, legal: Sequence[Move]) -> Move:
        return greedy_move(obs, legal, self.rng)
