"""Gymnasium ``VectorEnv`` over the batched engine (same-step autoreset).

    envs = SkipBoVectorEnv(GameConfig(num_players=2), num_envs=256, opponents="greedy")
    obs, infos = envs.reset(seed=0)

Observations are ``(num_envs, obs_size)`` float32, actions one id per game, masks in
``infos["action_mask"]`` and :meth:`SkipBoVectorEnv.action_masks`. Autoreset is ``SAME_STEP``
(``final_obs`` in the infos) or ``next_step``. Opponents, learner seat, rewards, re-deals and
illegal actions follow :mod:`skipbo_env.vector.learner`. See docs/vector.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..aec import parse_config
from ..observations import observation_spec
from ..rules import ConfigError, GameConfig
from .engine import OBSERVATION, check_engine_observation
from .learner import LearnerBatch

VECTOR_DEFAULTS: dict[str, Any] = {
    "opponents": "random",
    "learner_seat": None,
    "illegal_action": "raise",
    "reward_shaping": False,
    "seed": None,
    "autoreset_mode": "same_step",
    "observation": OBSERVATION,
}
"""The vector env's own keyword configuration (game keys come on top), with defaults."""


def make_vector_env(num_envs: int = 1, **config: Any) -> SkipBoVectorEnv:
    """``SkipBo-v0``'s vector entry point: ``gymnasium.make_vec("SkipBo-v0", num_envs=64,
    vector_mode="vector_entry_point", num_players=2, opponents="greedy")`` returns a
    :class:`SkipBoVectorEnv` over the batched engine (needs the ``fast`` extra). Keywords
    are the single-agent env's (every ``GameConfig`` field, ``opponents``, ``learner_seat``,
    ``illegal_action``, ``reward_shaping``, ``observation``: the engine writes ``"v1"``) plus ``seed`` and
    ``autoreset_mode``; an unknown one raises ConfigError."""
    game, options = parse_config(config, VECTOR_DEFAULTS)
    return SkipBoVectorEnv(game, num_envs, **options)


class SkipBoVectorEnv(VectorEnv):
    """``num_envs`` Skip-Bo games for one learner seat each, as a Gymnasium vector env."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        config: GameConfig,
        num_envs: int,
        opponents: Any = "random",
        learner_seat: int | None = None,
        seed: int | None = None,
        illegal_action: str = "raise",
        reward_shaping: bool = False,
        autoreset_mode: str | AutoresetMode = "same_step",
        observation: str = OBSERVATION,
    ) -> None:
        self.observation: str = check_engine_observation(observation)
        self.batch = LearnerBatch(config, num_envs, opponents, learner_seat, seed, illegal_action, reward_shaping)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self._held = np.zeros(num_envs, bool)  # next-step mode: games whose new deal is returned next step
        self.config = config  # LearnerBatch has checked it
        self.num_envs = num_envs
        layout = observation_spec(self.observation).layout(config)
        # seeded spaces: their batched copies (batch_space) sample the same on every run with this seed
        self.single_observation_space = spaces.Box(layout.low, layout.high, dtype=np.float32, seed=seed)
        self.single_action_space = spaces.Discrete(self.batch.engine.num_actions, seed=seed)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._started = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal every game (reseeding everything when ``seed`` is given); ``options`` must be None."""
        if options:
            raise ValueError(f"reset options are not supported by the vector env, got {sorted(options)}")
        super().reset(seed=seed)
        obs = self.batch.reset(seed=seed)
        self._started = True
        self._held[:] = False
        return obs, self._infos()

    def step(self, actions: Any):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        next_step = self.autoreset_mode is AutoresetMode.NEXT_STEP
        result = self.batch.step(np.asarray(actions).reshape(self.num_envs), hold=self._held if next_step else None)
        infos = self._infos()
        ended = result.terminated | result.truncated
        if next_step:
            self._held = ended
            if ended.any():
                result.obs[ended] = result.final_obs[ended]
                infos["action_mask"][ended] = 0
                infos.update(final_info=self._final_info(result, ended), _final_info=ended)
            return result.obs, result.rewards, result.terminated, result.truncated, infos
        if ended.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(ended).tolist():
                final_obs[i] = result.final_obs[i]
            infos.update(final_obs=final_obs, _final_obs=ended, final_info=self._final_info(result, ended),
                         _final_info=ended)
        return result.obs, result.rewards, result.terminated, result.truncated, infos

    def _final_info(self, result: Any, ended: np.ndarray) -> np.ndarray:
        """Each ended game's winners and whether an illegal action ended it (None for the others)."""
        final_info = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(ended).tolist():
            final_info[i] = {"winners": result.winners[i], "illegal_action": bool(result.illegal[i])}
        return final_info

    def set_opponents(self, opponents: Any) -> None:
        """Replace the opponents of every game (the constructor's spec); games in progress go on with them."""
        self.batch.set_opponents(opponents)

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool masks of the learners' legal actions."""
        return self.batch.action_masks().copy()

    def _infos(self) -> dict[str, Any]:
        ones = np.ones(self.num_envs, bool)
        return {
            "action_mask": self.batch.action_masks().astype(np.int8),
            "_action_mask": ones,
            "learner_seat": self.batch.learner.copy(),
            "_learner_seat": ones,
            "redeals": self.batch.redeals.copy(),
            "_redeals": ones,
        }


def _autoreset_mode(value: Any) -> AutoresetMode:
    """``"same_step"``/``"next_step"`` (or the enum) as Gymnasium's :class:`AutoresetMode`."""
    modes = {"same_step": AutoresetMode.SAME_STEP, "next_step": AutoresetMode.NEXT_STEP}
    if isinstance(value, AutoresetMode) and value in modes.values():
        return value
    if isinstance(value, str) and value in modes:
        return modes[value]
    raise ConfigError("autoreset_mode", f"must be one of {sorted(modes)}, got {value!r}")
