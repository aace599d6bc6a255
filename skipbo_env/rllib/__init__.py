"""Glue between ``skipbo_v0`` and Ray RLlib (optional extra: ``pip install ".[rllib]"``).

* :class:`SkipBoRLlibEnv` / :func:`register`: RLlib's PettingZoo wrapper
  around ``skipbo_env.env(**config)``, with the observation keys RLlib's
  masking module reads.
* :class:`ScriptedRLModule`: our scripted agents as fixed RLModules.
* :func:`build_ppo_config`, :func:`save`: masked PPO, self-play or against
  scripted agents (used by ``train_rllib.py``); :func:`env_runner_nodes`:
  which Ray nodes its env runners run on.
* :class:`RLlibAgent`: a trained checkpoint behind ``act(observation) -> int``;
  a bad checkpoint raises the package's one :class:`CheckpointError`.

See docs/scaling.md.
"""

from __future__ import annotations

from ..extras import require

# RLlib's own dependencies (dm-tree among them) come with the rllib extra, not with Ray core (the ray extra)
require("rllib", "the RLlib glue (skipbo_env.rllib)", "ray", "tree", "torch")

from ..agents.modelfile import CheckpointError  # noqa: E402
from ..agents.rllib_agent import RLlibAgent, is_rllib_checkpoint  # noqa: E402
from .env import ENV_NAME, SkipBoRLlibEnv, env_creator, register  # noqa: E402
from .modules import MaskedPPOModule, ScriptedRLModule  # noqa: E402
from .ppo_config import LEARNER, META_FILE, build_ppo_config, env_runner_nodes, make_mapping_fn, save  # noqa: E402

__all__ = [
    "CheckpointError",
    "ENV_NAME",
    "LEARNER",
    "META_FILE",
    "MaskedPPOModule",
    "RLlibAgent",
    "ScriptedRLModule",
    "SkipBoRLlibEnv",
    "build_ppo_config",
    "env_creator",
    "env_runner_nodes",
    "is_rllib_checkpoint",
    "make_mapping_fn",
    "register",
    "save",
]
