"""Registering ``SkipBo-v0`` with Gymnasium and ``skipbo_v0`` with PettingZoo, as both document it.

``import skipbo_env`` calls :func:`register_installed`: for each of the two libraries that is
installed, it imports it and registers the id there (string entry points: neither env module
loads). A library that is not installed is skipped, so ``import skipbo_env.rules`` works with
numpy alone. docs/environments.md ("Registration") gives the details and the cost.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable

GYMNASIUM_ID = "SkipBo-v0"
PETTINGZOO_ID = "skipbo_v0"
PETTINGZOO_REGISTRY_KEY = "skipbo-v0"
"""PettingZoo stores ids normalized from ``name_vN`` to ``name-vN``."""


def register_gymnasium() -> None:
    """Register ``SkipBo-v0`` (the single-agent env and its vector entry point) once."""
    import gymnasium  # not needed by the rules core: imported only where installed, to register

    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYMNASIUM_ID,
            entry_point="skipbo_env.single:SkipBoSingleEnv",
            vector_entry_point="skipbo_env.vector.gym_env:make_vector_env",
            # Gymnasium's conventions (its and SB3's check_env step unmasked random actions): an
            # illegal action ends the episode as a loss with a warning, as PettingZoo's env() does.
            # SkipBoSingleEnv(...) itself keeps illegal_action="raise"; pass it to make() to get that.
            kwargs={"illegal_action": "lose"},
        )


def register_pettingzoo() -> None:
    """Register ``skipbo_v0`` (the wrapped AEC env) once, where PettingZoo has a registry.

    PettingZoo gained its registry (``pettingzoo.register``/``make``) in recent
    releases; with an older one ``skipbo_env.env`` remains the way in.
    """
    import pettingzoo  # not needed by the rules core: imported only where installed, to register

    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None and PETTINGZOO_REGISTRY_KEY not in registry:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="skipbo_env.aec:env")


REGISTER: dict[str, Callable[[], None]] = {"gymnasium": register_gymnasium, "pettingzoo": register_pettingzoo}
"""The libraries the package registers with, and how."""


def installed(name: str) -> bool:
    """Whether ``import name`` can find the library (``sys.modules[name] = None`` blocks it, as for ``import``)."""
    if name in sys.modules:
        return sys.modules[name] is not None
    return importlib.util.find_spec(name) is not None


def register_installed() -> tuple[str, ...]:
    """Register with every library of :data:`REGISTER` that is installed; return their names.

    Idempotent: a second call registers nothing again. An installed library that fails to
    import raises its own error.
    """
    done = []
    for name, register in REGISTER.items():
        if installed(name):
            register()
            done.append(name)
    return tuple(done)
