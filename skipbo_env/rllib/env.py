"""``skipbo_v0`` for RLlib: RLlib's own PettingZoo wrapper plus a key rename; the batched vector env.

RLlib's :class:`~ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv` turns
the AEC env into a ``MultiAgentEnv`` (one agent acts per step; the seats'
final rewards are reported when the game ends). RLlib's action-masking
module (``ActionMaskingTorchRLModule``) expects each observation as
``{"observations": ..., "action_mask": float}``; our AEC env gives
``{"observation": float32, "action_mask": int8}``. :class:`SkipBoRLlibEnv`
renames the key and casts the mask, nothing more. :class:`SkipBoRLlibVectorEnv` is the compiled
vector env (``SkipBo-v0``'s, scripted opponents) for RLlib's single-agent env runners.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

import skipbo_env

ENV_NAME = "skipbo_v0"
"""Name under which :func:`register` makes the env known to RLlib."""
VECTOR_ENV_NAME = "skipbo_vector_v0"
"""Name under which :func:`register` makes :class:`SkipBoRLlibVectorEnv` known to RLlib."""


def rllib_observation(obs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Our AEC observation as RLlib's masking module reads it.

    ``{"observation": vec, "action_mask": int8}`` becomes
    ``{"observations": vec, "action_mask": float32}``.
    """
    return {
        "observations": np.asarray(obs["observation"], dtype=np.float32),
        "action_mask": np.asarray(obs["action_mask"], dtype=np.float32),
    }


def rllib_observation_space(space: spaces.Dict) -> spaces.Dict:
    """The observation space matching :func:`rllib_observation`."""
    box, mask = space["observation"], space["action_mask"]
    if not isinstance(box, spaces.Box) or not isinstance(mask, spaces.Box):
        raise TypeError(f"the AEC env's observation space holds two Boxes, got {space}")
    return spaces.Dict(
        {
            "observations": spaces.Box(box.low, box.high, dtype=np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (mask.shape[0],), dtype=np.float32),
        }
    )


class SkipBoRLlibEnv(PettingZooEnv):
    """``skipbo_env.env(**env_config)`` as an RLlib multi-agent env.

    ``env_config`` is passed unchanged to :func:`skipbo_env.env` (number of
    players, partner game, short game, turn limit, reward shaping, ...), so a
    bad key fails with the env's own :class:`~skipbo_env.rules.ConfigError`.
    Agent ids are the AEC env's ``player_0`` .. ``player_{n-1}``.
    """

    def __init__(self, env_config: Mapping[str, Any] | None = None) -> None:
        super().__init__(skipbo_env.env(**dict(env_config or {})))
        # PettingZooEnv copied the AEC env's spaces (RLlib types them as plain Spaces)
        aec_spaces = cast("dict[str, spaces.Dict]", self.observation_spaces)
        per_agent: dict[str, spaces.Space] = {
            aid: rllib_observation_space(space) for aid, space in aec_spaces.items()
        }
        self.observation_spaces = {aid: space for aid, space in per_agent.items()}  # RLlib's key type
        self.observation_space = spaces.Dict(per_agent)
        # PettingZooEnv takes the agent ids from a set; keep the seat order.
        self.agents = list(self.env.possible_agents)
        self.possible_agents = list(self.env.possible_agents)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, infos = super().reset(seed=seed, options=options)
        return {aid: rllib_observation(o) for aid, o in obs.items()}, infos

    def step(self, action):
        obs, rewards, terminateds, truncateds, infos = super().step(action)
        return {aid: rllib_observation(o) for aid, o in obs.items()}, rewards, terminateds, truncateds, infos


class SkipBoRLlibVectorEnv(VectorEnv):
    """``num_envs`` games of ``SkipBo-v0`` on the compiled batched engine, for RLlib's single-agent env
    runners (``gym_env_vectorize_mode="vector_entry_point"``): the learner against scripted seats,
    next-step autoreset (what RLlib expects), and :func:`rllib_observation`'s dict as observations.

    ``env_config`` holds ``num_envs`` and the vector env's keywords
    (:func:`skipbo_env.vector.make_vector_env`: game fields, ``opponents``, ``reward_shaping``, ...).
    """

    def __init__(self, env_config: Mapping[str, Any] | None = None) -> None:
        from ..vector.gym_env import make_vector_env  # the fast extra (numba)

        config = dict(env_config or {})
        self.num_envs = int(config.pop("num_envs", 1))
        self.env = make_vector_env(self.num_envs, autoreset_mode="next_step", **config)
        self.metadata = dict(self.env.metadata)
        actions = self.env.single_action_space
        if not isinstance(actions, spaces.Discrete):
            raise TypeError(f"the vector env's actions are Discrete, got {actions}")
        mask = spaces.Box(0.0, 1.0, (int(actions.n),), dtype=np.float32)
        self.single_observation_space = rllib_observation_space(
            spaces.Dict({"observation": self.env.single_observation_space, "action_mask": mask}))
        self.single_action_space = self.env.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = self.env.action_space

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._observations(obs, infos), infos

    def step(self, actions: Any):
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._observations(obs, infos), rewards, terminations, truncations, infos

    @staticmethod
    def _observations(obs: np.ndarray, infos: dict[str, Any]) -> dict[str, np.ndarray]:
        return {"observations": obs, "action_mask": infos["action_mask"].astype(np.float32)}


def env_creator(env_config: Mapping[str, Any] | None = None) -> SkipBoRLlibEnv:
    """The creator registered with RLlib (``env_config`` is RLlib's ``EnvContext``, a dict)."""
    return SkipBoRLlibEnv(env_config)


def vector_env_creator(env_config: Mapping[str, Any] | None = None) -> SkipBoRLlibVectorEnv:
    """The creator of :data:`VECTOR_ENV_NAME` (RLlib adds ``num_envs`` to the env config)."""
    return SkipBoRLlibVectorEnv(env_config)


def register(vector: bool = False) -> str:
    """Register :data:`ENV_NAME` (or with ``vector``, :data:`VECTOR_ENV_NAME`) with Ray Tune's env
    registry and return the name.

    Each process that builds an algorithm must call it; env runners on other
    nodes receive the registration through Ray.
    """
    if vector:
        register_env(VECTOR_ENV_NAME, vector_env_creator)
        return VECTOR_ENV_NAME
    register_env(ENV_NAME, env_creator)
    return ENV_NAME
