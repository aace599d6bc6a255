"""The networks of the package in plain torch, below every framework adapter.

:class:`ScorerNet` is the action-scoring actor-critic (observation vectors and legal-action masks in,
masked logits and values out) that makes Skip-Bo learnable by PPO; the SB3 policy
(:class:`~skipbo_env.agents.scorer.ScorerPolicy`, ``ppo.policy: scorer``) and the CleanRL-style recipe
(:mod:`skipbo_env.recipes.cleanrl_ppo`) train it. It imports no RL library (torch and numpy only) and
needs the ``train`` extra's torch. docs/training.md describes it.
"""

from ..extras import require

require("train", "the action-scoring network (skipbo_env.nets)", "torch")

from .scorer_features import (  # noqa: E402
    ACTION_PIECES,
    FEATURES_VERSION,
    SCORER_OBSERVATION,
    game_of_spaces,
    scorer_tensor_shapes,
)
from .scorer_net import DEFAULT_SIZES, MASKED_LOGIT, ActionScorer, ScorerNet  # noqa: E402

__all__ = [
    "ACTION_PIECES",
    "DEFAULT_SIZES",
    "FEATURES_VERSION",
    "MASKED_LOGIT",
    "SCORER_OBSERVATION",
    "ActionScorer",
    "ScorerNet",
    "game_of_spaces",
    "scorer_tensor_shapes",
]
