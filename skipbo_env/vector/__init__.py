"""Batched engine and vector environments (docs/vector.md).

``import skipbo_env`` does not import this package; importing it loads numba (kernels compile on
first use and are cached). :class:`BatchEngine` steps B games in arrays, identical to the rules
core; :class:`LearnerBatch` plays one learner seat per game with the other seats inside the
batch; :class:`SkipBoVectorEnv` is the Gymnasium ``VectorEnv``; :class:`SkipBoVecEnv` and
:func:`make_vec_env` the SB3 ``VecEnv`` (loaded on first access: it imports torch). The kernels
are private to this package.
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
