"""What a resumed run may change, and how its model comes back.

``train.py --resume RUN_DIR`` reloads the run's complete ``config.yaml`` with command-line
overrides: the PPO training settings (:data:`RESUMABLE_PPO`), opponents, evaluation, totals and
``n_envs`` may change; the game and the network (:data:`NETWORK_PPO`) may not. The checkpoint
must hold the configuration's policy class and architecture. See docs/training.md.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from ..agents.ppo import CheckpointError, check_spaces, load_maskable_ppo
from ..agents.scorer import ScorerPolicy
from ..rules import ConfigError
from .settings import PPOSettings, TrainConfig

RESUMABLE_PPO = ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range",
                 "ent_coef", "vf_coef", "max_grad_norm")
"""PPO settings a resumed run may change; the other fields of ``ppo`` shape the network and may not."""
NETWORK_PPO = tuple(f.name for f in dataclasses.fields(PPOSettings) if f.name not in RESUMABLE_PPO)


def load_run_config(run_dir: str | os.PathLike, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """The configuration saved in a run folder, with overrides (e.g. a larger total_timesteps).

    Raises:
        CheckpointError: ``run_dir`` holds no ``config.yaml``.
        ConfigError: the saved configuration is empty, incomplete or invalid (the message names the
            file), or an override changes the game or the network.
    """
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise CheckpointError(run_dir, "not a run folder (no config.yaml)")
    cfg = TrainConfig.from_yaml(path, overrides, complete=True)
    saved = TrainConfig.from_yaml(path, complete=True)
    if cfg.game != saved.game:
        raise ConfigError("game", "cannot change the game settings of a run on resume")
    for name in NETWORK_PPO:
        if getattr(cfg.ppo, name) != getattr(saved.ppo, name):
            raise ConfigError(f"ppo.{name}", "cannot change the network of a run on resume")
    return dataclasses.replace(cfg, runs_dir=str(Path(run_dir).parent), name=Path(run_dir).name)


def load_for_resume(path: Path, cfg: TrainConfig, n_envs: int) -> Any:
    """The checkpointed model with the configuration's training settings and ``n_envs`` in place of the
    stored ones, checked against the run's game. No env is attached: sb3 would reseed it with the run's
    first seed, and a resumed run continues on fresh env streams."""
    model = load_maskable_ppo(path, n_envs=n_envs, **{name: getattr(cfg.ppo, name) for name in RESUMABLE_PPO})
    check_spaces(path, model.observation_space, model.action_space, cfg.game)
    check_policy(path, model.policy, cfg.ppo)
    return model


def check_policy(path: str | os.PathLike, policy: Any, ppo: PPOSettings) -> None:
    """Raise :class:`CheckpointError` unless ``policy`` is of the class and architecture ``ppo`` describes."""
    kinds: dict[type, str] = {MaskableActorCriticPolicy: "mlp", ScorerPolicy: "scorer"}
    kind = kinds.get(type(policy), type(policy).__name__)
    if kind != ppo.policy:
        raise CheckpointError(path, f"its policy is {kind}, the run's configuration says ppo.policy: {ppo.policy}")
    if ppo.policy == "scorer":
        got = {"net_arch": list(policy.context_arch), "scorer_arch": list(policy.scorer_arch)}
        if list(policy.value_arch) != list(policy.context_arch):
            got["net_arch"] = [list(policy.context_arch), list(policy.value_arch)]
        want = {"net_arch": list(ppo.net_arch), "scorer_arch": list(ppo.scorer_arch)}
    else:
        got, want = {"net_arch": policy.net_arch}, {"net_arch": list(ppo.net_arch)}
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[ppo.activation]
    for name in got:
        if got[name] != want[name]:
            raise CheckpointError(path, f"its policy network has {name} {got[name]}, the run's configuration "
                                        f"says ppo.{name}: {want[name]}")
    if policy.activation_fn is not activation:
        raise CheckpointError(path, f"its policy network uses {policy.activation_fn.__name__}, the run's "
                                    f"configuration says ppo.activation: {ppo.activation}")


__all__ = ["NETWORK_PPO", "RESUMABLE_PPO", "CheckpointError", "check_policy", "load_for_resume", "load_run_config"]
