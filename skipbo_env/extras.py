"""Optional extras: what each needs, and the error that names a missing one.

``pip install skipbo-env`` gives the rules, the envs and the scripted agents
(numpy, gymnasium, pettingzoo). The other features are extras
(``pyproject.toml``): ``fast`` (the compiled batched engine and vector envs:
numba), ``train`` (trained agents, tournaments, training: torch,
stable-baselines3, sb3-contrib, safetensors, ...), ``render`` (frames for
``render_mode="rgb_array"``), ``web`` (the browser table), ``rllib``, and
``all``. A feature whose extra is missing raises :func:`missing_extra`'s
ImportError, which names the extra and the install command.
"""

from __future__ import annotations

import importlib.util


class MissingExtraError(ImportError):
    """A feature needs an optional extra that is not installed."""


def require(extra: str, feature: str, *modules: str) -> None:
    """Raise :class:`MissingExtraError` unless every top-level module in ``modules`` is installed;
    nothing is imported (a cheap check for a package's ``__init__``)."""
    for name in modules:
        if importlib.util.find_spec(name) is None:
            raise missing_extra(ModuleNotFoundError(f"No module named {name!r}", name=name), extra, feature)


def missing_extra(exc: ImportError, extra: str, feature: str) -> MissingExtraError:
    """The error to raise (``from exc``) when importing what ``feature`` needs failed."""
    what = exc.name or str(exc)
    error = MissingExtraError(
        f"{feature} needs the '{extra}' extra ({what} is not installed): pip install 'skipbo-env[{extra}]'"
    )
    error.name = exc.name
    return error
