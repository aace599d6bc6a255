"""The vectorised training environments of a run.

``subproc``/``dummy``: ``n_envs`` :class:`OpponentDrawEnv` copies (processes,
or one process), each drawing its opponents per episode from weights set
between rollouts with ``VecEnv.env_method("set_weights", weights)``.
``batched``: one :class:`skipbo_env.vector.SkipBoVecEnv` of ``n_envs`` games
sharing one set of opponents, redrawn at every rollout
(:class:`~skipbo_env.training.opponents.BatchedOpponents`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from ..rules import GameConfig
from ..single import SkipBoSingleEnv
from ..vector import make_vec_env as make_batched_vec_env
from .opponents import OpponentDraws
from .settings import TrainConfig


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
    return OpponentDrawEnv(weights, **game.to_dict(), reward_shaping=reward_shaping, opponents="random")


def make_vec_env(cfg: TrainConfig, weights: dict[str, float], seed: int) -> VecEnv:
    """The run's vectorised environment (see the module docstring), wrapped in ``VecMonitor``
    for episode statistics."""
    if cfg.vec_env == "batched":
        venv = make_batched_vec_env(cfg.game, cfg.n_envs, opponents="random", seed=seed,
                                    reward_shaping=cfg.reward_shaping)
        return VecMonitor(venv)

    def build():
        return make_training_env(cfg.game, weights, cfg.reward_shaping)

    fns = [build] * cfg.n_envs
    venv = SubprocVecEnv(fns) if cfg.vec_env == "subproc" and cfg.n_envs > 1 else DummyVecEnv(fns)
    venv.seed(seed)
    return VecMonitor(venv)
