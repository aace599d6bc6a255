"""The trained agents shipped inside the package (``skipbo_env/models/``): names and files.

Its own module (no imports from the rest of :mod:`skipbo_env.agents`) so that both the registry
and the search agent (whose learned value at the horizon is a shipped network's value head) can
find the files without importing each other.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SHIPPED: dict[str, str] = {"ppo-2p": "ppo_2p_default.safetensors", "turn-2p": "turn_2p.safetensors"}
"""Trained agents shipped inside the package (``skipbo_env/models/``), by name; each has a model
card beside it (``<name>.md``)."""


def shipped_agent_path(name: str) -> Path:
    """The agent file of a shipped agent (see :data:`SHIPPED`)."""
    try:
        filename = SHIPPED[name]
    except KeyError:
        raise ValueError(f"no shipped agent {name!r}; shipped agents: {', '.join(sorted(SHIPPED))}") from None
    return Path(str(resources.files("skipbo_env").joinpath("models").joinpath(filename)))
