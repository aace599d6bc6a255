"""PPO configuration for ``skipbo_v0`` on RLlib: policies, seat mapping, checkpoints.

Two set-ups (:func:`build_ppo_config`):

* **self-play** (``opponents=()``): every seat maps to the one trained module
  :data:`LEARNER`.
* **against scripted agents** (``opponents=("greedy", ...)``): in each episode
  one side (a seat, or a team of two partners in the partner game), chosen
  from the episode id, plays :data:`LEARNER`; the other seats play the
  scripted modules ``scripted_<name>`` in turn, which are never trained.

The trained module's checkpoint lies at
``<checkpoint>/learner_group/learner/rl_module/learner``; :func:`save` also
writes :data:`META_FILE` there with the env config, so
:class:`skipbo_env.agents.rllib_agent.RLlibAgent` can check a checkpoint against a game.
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from ..aec import GAME_KEYS
from ..agents.rllib_agent import LEARNER, META_FILE
from ..rules import GameConfig
from .env import register
from .modules import MaskedPPOModule, ScriptedRLModule

"""File written next to an RLlib checkpoint: env config, learner module id, opponents."""

SCRIPTED = ("random", "greedy", "heuristic")


def game_config(env_config: Mapping[str, Any]) -> GameConfig:
    """The :class:`GameConfig` part of an env config (the env's own keys are ignored)."""
    return GameConfig.from_dict({k: v for k, v in env_config.items() if k in GAME_KEYS})


def learner_seats(config: GameConfig, episode_key: str) -> tuple[int, ...]:
    """The seats the learner plays in the episode ``episode_key``: one side, picked by a
    stable hash of the key (so every agent of one episode agrees)."""
    side = zlib.crc32(str(episode_key).encode()) % config.num_teams
    return config.team_seats(side)


def make_mapping_fn(config: GameConfig, opponents: Sequence[str]):
    """The ``policy_mapping_fn`` for :func:`build_ppo_config` (see the module doc)."""
    opponents = tuple(opponents)

    def mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        if not opponents:
            return LEARNER
        seat = int(str(agent_id).rsplit("_", 1)[1])
        ours = learner_seats(config, getattr(episode, "id_", ""))
        if seat in ours:
            return LEARNER
        others = [s for s in range(config.num_players) if s not in ours]
        return f"scripted_{opponents[others.index(seat) % len(opponents)]}"

    return mapping


def build_ppo_config(
    env_config: Mapping[str, Any] | None = None,
    *,
    opponents: Sequence[str] = (),
    num_env_runners: int = 1,
    envs_per_runner: int = 1,
    cpus_per_runner: float = 1,
    train_batch_size: int = 4000,
    minibatch_size: int = 256,
    num_epochs: int = 4,
    lr: float = 3e-4,
    hidden: Sequence[int] = (256, 256),
    seed: int | None = 0,
) -> PPOConfig:
    """A new-API-stack ``PPOConfig`` training :data:`LEARNER` on ``skipbo_v0``.

    ``env_config`` goes unchanged to ``skipbo_env.env(**env_config)``.
    ``opponents`` names scripted agents (empty: self-play). Each remote env
    runner reserves ``cpus_per_runner`` Ray CPUs: Ray starts it on a node
    with that many free, so on a cluster the runners fill the nodes' CPUs
    (see :func:`env_runner_nodes`). Raises ``ValueError`` for an unknown
    opponent name or a non-positive size.
    """
    env_config = dict(env_config or {})
    config = game_config(env_config)
    bad = [o for o in opponents if o not in SCRIPTED]
    if bad:
        raise ValueError(f"unknown opponent(s) {bad}; scripted agents: {', '.join(SCRIPTED)}")
    for name, value in {
        "num_env_runners": num_env_runners + 1,
        "envs_per_runner": envs_per_runner,
        "train_batch_size": train_batch_size,
        "minibatch_size": minibatch_size,
        "num_epochs": num_epochs,
    }.items():
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int (num_env_runners may be 0), got {value!r}")
    if type(cpus_per_runner) not in (int, float) or not cpus_per_runner > 0:
        raise ValueError(f"cpus_per_runner must be a positive number, got {cpus_per_runner!r}")
    env_name = register()
    specs = {
        LEARNER: RLModuleSpec(
            module_class=MaskedPPOModule,
            model_config=DefaultModelConfig(fcnet_hiddens=list(hidden), fcnet_activation="relu"),
        )
    }
    for i, name in enumerate(dict.fromkeys(opponents)):
        specs[f"scripted_{name}"] = RLModuleSpec(
            module_class=ScriptedRLModule,
            model_config={
                "agent": name,
                "game": config.to_dict(),
                "seed": None if seed is None else seed + i,
            },
        )
    runners: dict[str, Any] = {  # RLlib annotates the CPUs as int; Ray reserves fractions too
        "num_env_runners": num_env_runners,
        "num_envs_per_env_runner": envs_per_runner,
        "num_cpus_per_env_runner": cpus_per_runner,
    }
    ppo = (
        PPOConfig()
        .environment(env_name, env_config=env_config)
        .multi_agent(
            policies=set(specs),
            policy_mapping_fn=make_mapping_fn(config, opponents),
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .env_runners(**runners)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
        )
        .debugging(seed=seed)
    )
    return ppo


def _node_id(_runner: Any) -> str:
    return ray.get_runtime_context().get_node_id()


def env_runner_nodes(algo: Any) -> dict[str, int]:
    """How many of ``algo``'s remote env runners run on each Ray node: ``{node id: count}``
    (the ids ``ray list nodes`` shows); empty when the driver samples alone
    (``num_env_runners=0``)."""
    return dict(Counter(algo.env_runner_group.foreach_env_runner(_node_id, local_env_runner=False)))


def save(algo: Any, directory: str | Path, env_config: Mapping[str, Any], opponents: Sequence[str]) -> Path:
    """Save ``algo`` to ``directory`` (RLlib checkpoint) plus :data:`META_FILE`; return the path."""
    directory = Path(directory).resolve()
    algo.save_to_path(str(directory))
    meta = {"env_config": dict(env_config), "module_id": LEARNER, "opponents": list(opponents)}
    (directory / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return directory
