"""Registering ``SkipBo-v0`` with Gymnasium and ``skipbo_v0`` with PettingZoo.

``import skipbo_env`` (and so ``import skipbo_env.rules``) must not load
Gymnasium or PettingZoo: the rules core runs with numpy alone. Yet
``import skipbo_env`` followed by ``gymnasium.make("SkipBo-v0")`` must work in
either import order. So :func:`register_when_loaded` registers at once with
each library that is already imported, and for one that is not it adds a
finder to ``sys.meta_path`` that registers right after that library's own
module has run, the first time anything imports it. Nothing is imported
early, and the entry points are strings, so registering loads neither env.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

GYMNASIUM_ID = "SkipBo-v0"
PETTINGZOO_ID = "skipbo_v0"
PETTINGZOO_REGISTRY_KEY = "skipbo-v0"
"""PettingZoo stores ids normalized from ``name_vN`` to ``name-vN``."""


def register_gymnasium() -> None:
    """Register ``SkipBo-v0`` (the single-agent env) once."""
    import gymnasium  # optional for the rules core: imported only to register

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
    import pettingzoo  # optional for the rules core: imported only to register

    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None and PETTINGZOO_REGISTRY_KEY not in registry:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="skipbo_env.aec:env")


_REGISTER: dict[str, Callable[[], None]] = {"gymnasium": register_gymnasium, "pettingzoo": register_pettingzoo}


class _ThenRegister(importlib.abc.Loader):
    """A library's own loader, followed by our registration once its module has run."""

    def __init__(self, loader: Any, register: Callable[[], None]) -> None:
        self._loader = loader
        self._register = register

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._register()

    def __getattr__(self, name: str) -> Any:  # resource readers, is_package, ...: the library's loader
        return getattr(self._loader, name)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of a watched library on its first import."""

    def __init__(self, names: list[str]) -> None:
        self.pending = set(names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.pending:
            return None
        self.pending.discard(fullname)
        if not self.pending and self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None  # not installed, or found by another finder: import it as usual
        spec.loader = _ThenRegister(spec.loader, _REGISTER[fullname])
        return spec


def register_when_loaded() -> None:
    """Register with every library already imported; register with the others when they are imported."""
    pending = []
    for name, register in _REGISTER.items():
        if name in sys.modules:
            register()
        else:
            pending.append(name)
    if pending and not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport(pending))
