"""The ``scorer`` policy's old import path, which pickled checkpoints name.

Reading ``ScorerPolicy`` here warns and finds it in :mod:`skipbo_env.agents.scorer`
(``tests/test_agent_files.py`` loads such a checkpoint).
"""

from __future__ import annotations

from ..deprecation import moved_names

__getattr__ = moved_names(__name__, {"ScorerPolicy": "skipbo_env.agents.scorer:ScorerPolicy"})
