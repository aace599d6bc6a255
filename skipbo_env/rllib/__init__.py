"""Glue between Skip-Bo and Ray RLlib (optional extra: ``pip install "skipbo-env[rllib]"``).

* :class:`ScorerRLModule`: the action-scoring network as a PPO module (the default); :class:`MaskedPPOModule`
  RLlib's masking MLP; :class:`ScriptedRLModule` scripted agents as fixed modules.
* :class:`SkipBoRLlibVectorEnv` (the compiled vector env) and :class:`SkipBoRLlibEnv` (``skipbo_v0``), :func:`register`.
* :func:`build_ppo_config`, :func:`load_scorer_weights`, :func:`save`; ``skipbo train-rllib`` (:mod:`.trainer`).
* :class:`RLlibAgent`: a checkpoint behind ``act(observation) -> int``. See docs/scaling.md.
"""

from __future__ import annotations

from ..extras import require

# RLlib's own dependencies (dm-tree among them) come with the rllib extra, not with Ray core (the ray extra)
require("rllib", "the RLlib glue (skipbo_env.rllib)", "ray", "tree", "torch")

from ..agents.modelfile import CheckpointError  # noqa: E402
from ..agents.rllib_agent import RLlibAgent, is_rllib_checkpoint  # noqa: E402
from .env import ENV_NAME, VECTOR_ENV_NAME, SkipBoRLlibEnv, SkipBoRLlibVectorEnv, env_creator, register  # noqa: E402
from .modules import MaskedPPOModule, ScorerRLModule, ScriptedRLModule  # noqa: E402
from .ppo_config import (  # noqa: E402
    LEARNER,
    META_FILE,
    build_ppo_config,
    env_runner_nodes,
    learner_id,
    load_scorer_weights,
    make_mapping_fn,
    save,
    scorer_net_of,
)

__all__ = [
    "CheckpointError",
    "ENV_NAME",
    "VECTOR_ENV_NAME",
    "LEARNER",
    "META_FILE",
    "MaskedPPOModule",
    "RLlibAgent",
    "ScorerRLModule",
    "ScriptedRLModule",
    "SkipBoRLlibEnv",
    "SkipBoRLlibVectorEnv",
    "build_ppo_config",
    "env_creator",
    "env_runner_nodes",
    "is_rllib_checkpoint",
    "learner_id",
    "load_scorer_weights",
    "make_mapping_fn",
    "register",
    "save",
    "scorer_net_of",
]
