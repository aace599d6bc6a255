"""Old names kept for a while: a module ``__getattr__`` that finds each at its new place and warns once.

``__getattr__ = moved_names(__name__, {"OLD": "new.module:NEW"})`` at the end of a module keeps
``module.OLD`` (and ``from module import OLD``, and pickles that name it) working, with one
``DeprecationWarning`` per name and process naming the new place.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def moved_names(module: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module``: ``moved`` maps each old name to ``"new.module:name"``;
    any other missing name raises ``AttributeError`` as usual."""
    targets = dict(moved)
    warned: set[str] = set()

    def __getattr__(name: str) -> Any:
        target = targets.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, new = target.partition(":")
        if name not in warned:
            warned.add(name)
            warnings.warn(f"{module}.{name} moved to {where}.{new}; the old name will be removed",
                          DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(where), new)

    return __getattr__
