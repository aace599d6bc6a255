"""Batched engine and vector environments (docs/vector.md).

``import skipbo_env`` does not import this package; importing it loads numba
(kernels compile on first use and are cached on disk). The SB3 ``VecEnv``
(which imports torch through stable-baselines3) loads on first access:

* :class:`BatchEngine`: B games of one configuration in arrays, stepped by
  compiled kernels, identical to the rules core (state dict bridge); its
  in-engine agents play the seats of a :class:`SeatKind` (the heuristic with
  a :class:`PlanCache`). The kernels are private to this package.
* :class:`LearnerBatch`: one learner seat per game, the other seats played
  inside the batch (in-engine random/greedy, or Python ``act`` callbacks).
* :class:`SkipBoVectorEnv`: Gymnasium ``VectorEnv`` (same-step autoreset).
* :class:`SkipBoVecEnv` and :func:`make_vec_env`: SB3 ``VecEnv`` for ``MaskablePPO``.
"""

from __future__ import annotations

from typing import Any

from ..extras import missing_extra

try:
    import numba  # noqa: F401 - the kernels compile with it
except ImportError as exc:
    raise missing_extra(exc, "fast", "the batched engine (skipbo_env.vector)") from exc

from .compiled_heuristic import PlanCache  # noqa: E402
from .engine import AGENT_KINDS, BatchEngine, SeatKind  # noqa: E402
from .gym_env import SkipBoVectorEnv  # noqa: E402
from .learner import LearnerBatch  # noqa: E402


def __getattr__(name: str) -> Any:
    if name in ("SkipBoVecEnv", "make_vec_env"):
        from . import sb3_env  # stable-baselines3 (the 'train' extra), which loads torch: on first access

        return getattr(sb3_env, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AGENT_KINDS", "BatchEngine", "LearnerBatch", "PlanCache", "SeatKind", "SkipBoVecEnv", "SkipBoVectorEnv",
           "make_vec_env"]
