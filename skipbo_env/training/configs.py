"""The shipped training configurations, by name: ``skipbo train --config quick``.

The YAML files live once, in the repository's top-level ``configs/``; the package reaches them
as ``skipbo_env/configs/`` (a link in the repository, package data in the wheel), so a name
works from any directory of an installed package. ``skipbo train --list-configs`` lists them
with their first comment line; ``skipbo train --print-config NAME`` prints one, to start one's
own from.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIGS_DIR = Path(__file__).resolve().parent.parent / "configs"
"""The folder of the shipped configuration files (``NAME.yaml``)."""
DEFAULT_CONFIG = "default"
"""The configuration ``skipbo train`` runs without ``--config``: ``ppo-2p``'s recipe."""


class UnknownConfigError(ValueError):
    """``--config`` names no shipped configuration and no file."""


def config_names() -> list[str]:
    """The names of the shipped configurations, sorted."""
    return sorted(path.stem for path in CONFIGS_DIR.glob("*.yaml"))


def _unknown(spec: str, what: str) -> UnknownConfigError:
    return UnknownConfigError(f"{spec!r} is {what}; shipped: {', '.join(config_names())} "
                              "(skipbo train --list-configs)")


def shipped_config(name: str) -> Path:
    """The file of the shipped configuration ``name``; an unknown name raises
    :class:`UnknownConfigError` listing the names."""
    if name not in config_names():
        raise _unknown(name, "not a shipped configuration")
    return CONFIGS_DIR / f"{name}.yaml"


def resolve_config(spec: str | os.PathLike) -> str:
    """The file that ``--config SPEC`` names: a shipped configuration's name (``quick``; a name
    wins over a file of the same name in the working directory), else ``spec`` itself when it is
    a path (it exists, holds a path separator or ends in ``.yaml``/``.yml``; a missing file is the
    loader's error). Anything else raises :class:`UnknownConfigError` listing the names."""
    text = os.fspath(spec)
    if text in config_names():
        return str(shipped_config(text))
    if os.path.lexists(text) or "/" in text or os.sep in text or text.endswith((".yaml", ".yml")):
        return text
    raise _unknown(text, "neither a shipped configuration nor a file")


def config_summary(name: str) -> str:
    """The first sentence of a shipped configuration's first comment line."""
    lines = shipped_config(name).read_text(encoding="utf-8").splitlines()
    first = lines[0].removeprefix("#").strip() if lines and lines[0].startswith("#") else ""
    return first.split(", one command:")[0].split(". ")[0].rstrip(":.")


def list_configs() -> str:
    """``skipbo train --list-configs``: each name with its summary, and how to use one."""
    names = config_names()
    width = max(map(len, names))
    lines = [f"  {name.ljust(width)}  {config_summary(name)}" for name in names]
    return "\n".join([
        "shipped configurations (skipbo train --config NAME):", *lines, "",
        "skipbo train --print-config NAME > my.yaml starts one of your own (skipbo train --config my.yaml).",
    ])
