"""Stable-Baselines3 ``VecEnv`` over the batched engine, ready for sb3-contrib's ``MaskablePPO``.

    env = make_vec_env(GameConfig(num_players=2), n_envs=64, opponents="greedy", seed=0)
    model = MaskablePPO("MlpPolicy", env, seed=0).learn(10_000)

Every sub-env is one slot of a :class:`~skipbo_env.vector.learner.LearnerBatch`: a flat float32
observation, ``Discrete`` actions, masks through each sub-env's ``action_masks``, and SB3's
autoreset (``terminal_observation``, ``TimeLimit.truncated``). See docs/vector.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from ..observations import observation_spec
from ..rules import ConfigError, GameConfig
from .engine import OBSERVATION, check_engine_observation
from .learner import LearnerBatch

VEC_OPTIONS = ("learner_seat", "illegal_action", "reward_shaping")
"""Keyword options of :func:`make_vec_env` besides the game configuration."""


class _Slot:
    """What ``get_attr``/``env_method``/``set_attr`` see as sub-env ``index``."""

    render_mode = None

    def __init__(self, owner: SkipBoVecEnv, index: int) -> None:
        self._owner = owner
        self.index = index

    @property
    def config(self) -> GameConfig:
        return self._owner.config

    @property
    def learner_seat(self) -> int:
        return int(self._owner.batch.learner[self.index])

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions in this sub-env."""
        return self._owner.batch.action_masks()[self.index]

    def set_opponents(self, opponents: Any) -> None:
        """Opponents are shared by the batch: replace them for every sub-env (see ``LearnerBatch``)."""
        self._owner.batch.set_opponents(opponents)


class SkipBoVecEnv(VecEnv):
    """``num_envs`` Skip-Bo games for one learner seat each, stepped together by the batched engine.

    Args:
        config: the game configuration of every sub-env.
        num_envs: number of games.
        opponents, learner_seat, illegal_action, reward_shaping: see
            :mod:`skipbo_env.vector.learner`.
        observation: the observation's name; the engine writes ``"v1"`` (another raises ConfigError).
        seed: seeds every game, in-engine agent, named opponent and learner-seat draw. SB3's
            ``seed(s)`` (called by the algorithms) reseeds at the next
            ``reset()`` from the first sub-env's seed ``s``.

    ``infos[i]`` is empty while a game runs; when it ends it holds
    ``terminal_observation``, ``TimeLimit.truncated``, ``winners`` (seats),
    ``illegal_action`` and ``redeals`` (re-deals of the game now starting).
    """

    def __init__(
        self,
        config: GameConfig,
        num_envs: int,
        opponents: Any = "random",
        learner_seat: int | None = None,
        seed: int | None = None,
        illegal_action: str = "raise",
        reward_shaping: bool = False,
        observation: str = OBSERVATION,
    ) -> None:
        self.observation: str = check_engine_observation(observation)
        self.batch = LearnerBatch(config, num_envs, opponents, learner_seat, seed, illegal_action, reward_shaping)
        self.config = config  # LearnerBatch has checked it
        self._slots = [_Slot(self, i) for i in range(num_envs)]
        self._actions: np.ndarray | None = None
        self._started = False
        layout = observation_spec(self.observation).layout(config)
        super().__init__(
            num_envs,
            spaces.Box(layout.low, layout.high, dtype=np.float32),
            spaces.Discrete(self.batch.engine.num_actions),
        )

    # ------------------------------------------------------------------ VecEnv API
    def reset(self):
        """Deal every game; the learners' observations.

        A seed set by ``seed()`` reseeds everything first (once); otherwise the
        games come from the generators as they stand, so a seeded env stays
        deterministic across resets.
        """
        obs = self.batch.reset(seed=self._seeds[0])
        self._reset_seeds()
        self._reset_options()
        self._started = True
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        result = self.batch.step(actions)
        dones = result.terminated | result.truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones).tolist():
            infos[i] = {
                "terminal_observation": result.final_obs[i],
                "TimeLimit.truncated": bool(result.truncated[i]),
                "winners": result.winners[i],
                "illegal_action": bool(result.illegal[i]),
                "redeals": int(result.redeals[i]),
            }
        return result.obs, result.rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool masks of the learners' legal actions."""
        return self.batch.action_masks().copy()

    def close(self) -> None:
        """Nothing to release."""

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    def _targets(self, indices: None | int | Iterable[int]) -> list[_Slot]:
        return [self._slots[i] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: None | int | Iterable[int] = None) -> list[Any]:
        return [getattr(slot, attr_name) for slot in self._targets(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: None | int | Iterable[int] = None) -> None:
        for slot in self._targets(indices):
            if not hasattr(slot, attr_name):
                raise AttributeError(f"sub-envs have no attribute {attr_name!r}")
            setattr(slot, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: None | int | Iterable[int] = None, **method_kwargs: Any
    ) -> list[Any]:
        return [getattr(slot, method_name)(*method_args, **method_kwargs) for slot in self._targets(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: None | int | Iterable[int] = None) -> list[bool]:
        return [False for _ in self._targets(indices)]


def make_vec_env(
    config: GameConfig | Mapping[str, Any] | None = None,
    n_envs: int = 64,
    opponents: Any = "random",
    seed: int | None = None,
    **options: Any,
) -> SkipBoVecEnv:
    """The SB3 ``VecEnv`` of ``n_envs`` games; ``config`` is a ``GameConfig`` or a mapping of its fields.

    ``options``: ``learner_seat``, ``illegal_action``, ``reward_shaping``
    (see :class:`SkipBoVecEnv`). Wrap it in SB3's ``VecMonitor`` to log
    episode returns and lengths.
    """
    if config is None:
        config = GameConfig()
    elif isinstance(config, Mapping):
        config = GameConfig.from_dict(config)
    if type(n_envs) is not int or n_envs < 1:
        raise ConfigError("n_envs", f"must be an int >= 1, got {n_envs!r}")
    unknown = sorted(set(options) - set(VEC_OPTIONS))
    if unknown:
        raise ConfigError(unknown[0], f"unknown option; allowed: {', '.join(VEC_OPTIONS)}")
    return SkipBoVecEnv(config, n_envs, opponents=opponents, seed=seed, **options)
