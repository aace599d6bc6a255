"""The ``scorer`` policy under the name that pickled checkpoints use.

The policy itself (:class:`~skipbo_env.agents.scorer.ScorerPolicy`, its feature computation and
network) lives in :mod:`skipbo_env.agents.scorer`, below the agents that play it; import it from
there. A MaskablePPO checkpoint (``.zip``) saved while the class lived here names it by this
module's path, ``skipbo_env.training.policy.ScorerPolicy``: this re-export keeps such checkpoints
loadable (``tests/test_agent_files.py`` loads one).
"""

from __future__ import annotations

from ..agents.scorer import ScorerPolicy

__all__ = ["ScorerPolicy"]
