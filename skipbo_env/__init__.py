"""Skip-Bo (classic 162-card rules) as a reinforcement-learning environment.

* ``skipbo_env.env(**config)`` / ``skipbo_env.raw_env(**config)``: the PettingZoo AEC env
  ``skipbo_v0`` (``skipbo_env.skipbo_v0`` is the same module under PettingZoo's naming);
* ``gymnasium.make("SkipBo-v0", ...)`` or ``skipbo_env.SkipBoSingleEnv(...)``: one learner
  against opponents; ``pettingzoo.make("aec", "skipbo_v0", ...)`` through PettingZoo's registry;
* ``skipbo_env.rules``: the game itself, with no RL dependency.

Importing the package registers both ids where the libraries are installed; the env modules
load on first use. See docs/environments.md and docs/architecture.md.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .registration import GYMNASIUM_ID, PETTINGZOO_ID, PETTINGZOO_REGISTRY_KEY, register_installed

try:
    __version__ = version("skipbo-env")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

_LAZY = {"env": "aec", "raw_env": "aec", "SkipBoSingleEnv": "single"}
"""Attributes that load their env module (and with it gymnasium/pettingzoo) on first access."""


def __getattr__(name: str) -> Any:
    if name == "skipbo_v0":
        return importlib.import_module(".aec", __name__)
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


register_installed()

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
