"""Skip-Bo (classic 162-card rules) as a reinforcement-learning environment.

* ``skipbo_env.env(**config)`` / ``skipbo_env.raw_env(**config)``: the
  PettingZoo AEC env ``skipbo_v0``, wrapped as PettingZoo's classic envs are
  or unwrapped; ``skipbo_env.skipbo_v0`` is the same module under
  PettingZoo's naming (``from skipbo_env import skipbo_v0``).
* ``gymnasium.make("SkipBo-v0", ...)`` or ``skipbo_env.SkipBoSingleEnv(...)``:
  the single-agent env (a learner against opponents).
* ``pettingzoo.make("aec", "skipbo_v0", ...)``: the wrapped AEC env through
  PettingZoo's registry.
* ``skipbo_env.rules``: the game itself, with no RL dependency.

Importing the package registers both envs; it imports numpy, gymnasium and
pettingzoo, never torch or stable-baselines3. See docs/environments.md.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import gymnasium
import pettingzoo

from . import aec as skipbo_v0
from .aec import env, raw_env
from .single import SkipBoSingleEnv

try:
    __version__ = version("skipbo-env")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

GYMNASIUM_ID = "SkipBo-v0"
PETTINGZOO_ID = "skipbo_v0"
PETTINGZOO_REGISTRY_KEY = "skipbo-v0"
"""PettingZoo stores ids normalized from ``name_vN`` to ``name-vN``."""


def _register() -> None:
    """Register both envs once (a re-import does not register again).

    PettingZoo gained its registry (``pettingzoo.register``/``make``) in
    recent releases; with an older PettingZoo only the Gymnasium id is
    registered and ``skipbo_env.env`` remains the way in.
    """
    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(id=GYMNASIUM_ID, entry_point="skipbo_env.single:SkipBoSingleEnv")
    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None and PETTINGZOO_REGISTRY_KEY not in registry:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="skipbo_env.aec:env")

_register()

__all__ = [
    "GYMNASIUM_ID",
    "PETTINGZOO_ID",
    "PETTINGZOO_REGISTRY_KEY",
    "SkipBoSingleEnv",
    "__version__",
    "env",
    "raw_env",
    "skipbo_v0",
]
