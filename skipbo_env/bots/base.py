"""Scripted agents: ``act(observation) -> int`` over a decision rule.

``observation`` is the AEC observation dict of the seat to move:
``{"observation": float32 vector, "action_mask": int8 vector}`` (see
docs/observations.md), the agent protocol of :mod:`skipbo_env.agents`.
Scripted agents read it through the decoder only, so they know exactly what
a learning agent knows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..encoding import ObservationFields, decode_observation, encode_action, legal_moves_from_mask
from ..rules import GameConfig, Move
from .greedy import greedy_move


def _mask_of(observation: Mapping[str, Any]) -> np.ndarray:
    try:
        mask = np.asarray(observation["action_mask"])
    except (KeyError, TypeError) as exc:
        raise ValueError("observation must be a dict with 'observation' and 'action_mask'") from exc
    if not mask.any():
        raise ValueError("the action mask is all zeros: this seat is not to move")
    return mask


class ScriptedAgent:
    """Base of scripted agents: decode the observation, pick a legal move, encode it.

    Subclasses implement :meth:`choose`. Each agent owns its generator;
    :meth:`seed` resets it.
    """

    name = "scripted"

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


class GreedyAgent(ScriptedAgent):
    """Stock top first, then any other play except a hand wild, then a discard
    (:func:`skipbo_env.bots.greedy.greedy_move`)."""

    name = "greedy"

    def choose(self, obs: ObservationFields, legal: Sequence[Move]) -> Move:
        return greedy_move(obs, legal, self.rng)
