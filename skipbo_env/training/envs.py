"""The training environment: SkipBo-v0 whose opponents are drawn anew each episode.

The draw weights (a scripted mix, the current curriculum stage, snapshots of
the learner for self-play) live in each environment process and are changed
between rollouts with ``VecEnv.env_method("set_weights", weights)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..rules import ConfigError, GameConfig
from ..single import SkipBoSingleEnv


class OpponentDraws:
    """Weighted opponent draws shared by both training paths.

    A weight key is a scripted agent name (passed on as the name, so the env
    builds and reseeds it) or the path of a MaskablePPO snapshot (loaded once
    and cached as a :class:`agents.ppo.PPOAgent`).
    """

    def __init__(self, config: GameConfig, weights: Mapping[str, float]) -> None:
        self.config = config
        self._snapshots: dict[str, Any] = {}
        self.set_weights(weights)

    def set_weights(self, weights: Mapping[str, float]) -> None:
        specs = list(weights)
        w = np.asarray([float(weights[s]) for s in specs], dtype=np.float64)
        if not specs or (w < 0).any() or w.sum() <= 0:
            raise ConfigError("opponents", f"weights must be >= 0 and not all zero, got {dict(weights)}")
        self._specs, self._probs = specs, w / w.sum()

    def draw(self, rng: np.random.Generator) -> list[Any]:
        """One opponent per other seat, drawn independently."""
        picks = rng.choice(len(self._specs), size=self.config.num_players - 1, p=self._probs)
        return [self._agent(self._specs[i]) for i in picks]

    def _agent(self, spec: str) -> Any:
        from agents import AGENTS, is_checkpoint_spec

        if spec in AGENTS:
            return spec
        if not is_checkpoint_spec(spec):
            raise ConfigError("opponents", f"unknown agent {spec!r}")
        if spec not in self._snapshots:
            from agents.ppo import PPOAgent

            self._snapshots[spec] = PPOAgent(spec, self.config)
        return self._snapshots[spec]


class OpponentDrawEnv(SkipBoSingleEnv):
    """:class:`SkipBoSingleEnv` that draws every opponent seat from ``weights`` on each reset.

    A weight key is a scripted agent name or the path of a MaskablePPO
    snapshot. Draws use the env's own generator, seeded by the first
    ``reset(seed=...)``, so a seeded run draws the same opponents.
    """

    def __init__(self, weights: Mapping[str, float], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._draws = OpponentDraws(self.config, weights)
        self._draw_rng = np.random.default_rng()

    def set_weights(self, weights: Mapping[str, float]) -> None:
        """Replace the opponent weights (applies from the next episode)."""
        self._draws.set_weights(weights)

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None):
        if seed is not None:
            self._draw_rng = np.random.default_rng(seed)
        self.set_opponents(self._draws.draw(self._draw_rng))
        return super().reset(seed=seed, options=options)


def make_training_env(game: GameConfig, weights: Mapping[str, float], reward_shaping: bool) -> OpponentDrawEnv:
    return OpponentDrawEnv(
        weights,
        **game.to_dict(),
        reward_shaping=reward_shaping,
        opponents="random",
    )
