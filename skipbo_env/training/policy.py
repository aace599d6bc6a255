"""The ``scorer`` policy under the name that pickled checkpoints use.

The policy itself (:class:`~skipbo_env.agents.scorer.ScorerPolicy`, its feature computation and
network) lives in :mod:`skipbo_env.agents.scorer`, below the agents that play it. A MaskablePPO
checkpoint (``.zip``) saved before it moved there names its class by its old module path,
``skipbo_env.training.policy.ScorerPolicy``; this module keeps that name importable so that
such checkpoints still load (and gives training the names it uses).
"""

from __future__ import annotations

from ..agents.scorer import FEATURES_VERSION, ScorerPolicy, game_of_spaces

__all__ = ["FEATURES_VERSION", "ScorerPolicy", "game_of_spaces"]
