"""The trained agents shipped inside the package (``skipbo_env/models/``): names and files.

Its own module (no imports from the rest of :mod:`skipbo_env.agents`) so that both the registry
and the search agent (whose learned value at the horizon is a shipped network's value head) can
find the files without importing each other.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SHIPPED: dict[str, str] = {
    "ppo-2p": "ppo_2p_default.safetensors", "turn-2p": "turn_2p.safetensors", "ppo-2p-plus": "ppo_2p_plus.safetensors",
    "ppo-3p": "ppo_3p.safetensors", "ppo-4p": "ppo_4p.safetensors", "ppo-6p": "ppo_6p.safetensors",
    "turn-2p-plus": "turn_2p.safetensors",
}
"""Trained agents shipped inside the package (``skipbo_env/models/``), by name; each has a model
card beside it (``<name>.md``). An agent of :data:`SHIPPED_POLICIES` names its turn network's file."""
SHIPPED_PLAYERS: dict[str, int] = {"ppo-2p": 2, "turn-2p": 2, "ppo-2p-plus": 2, "ppo-3p": 3, "ppo-4p": 4,
                                   "ppo-6p": 6, "turn-2p-plus": 2}
"""The number of players of the game each shipped agent plays (the classic rules without partners;
loading it for another table raises an error that names the difference)."""
SHIPPED_POLICIES: dict[str, tuple[str, float]] = {"turn-2p-plus": ("ppo-2p-plus", 0.5)}
"""Shipped agents that play two shipped networks together: the turn network of their file (in
:data:`SHIPPED`) and a shipped PPO agent's move probabilities with a weight
(:class:`~skipbo_env.agents.turnnet.TurnNetAgent`'s ``policy_net`` and ``policy``), by name."""
SHIPPED_VALUES: dict[str, str] = {"value-6p": "value_6p.safetensors"}
"""Value networks shipped inside the package (``skipbo_env/models/``, a model card beside each), by
name: not agents (they choose no move), read by the search agent
(:mod:`skipbo_env.agents.valuenet`)."""


def shipped_agent_path(name: str) -> Path:
    """The agent file of a shipped agent (see :data:`SHIPPED`)."""
    return _model_path(SHIPPED, name, "agent")


def shipped_value_path(name: str) -> Path:
    """The file of a shipped value network (see :data:`SHIPPED_VALUES`)."""
    return _model_path(SHIPPED_VALUES, name, "value network")


def shipped_model_path(name: str) -> Path:
    """The file of a shipped agent or value network, by name."""
    return shipped_value_path(name) if name in SHIPPED_VALUES else shipped_agent_path(name)


def _model_path(table: dict[str, str], name: str, what: str) -> Path:
    """The ``skipbo_env/models/`` file of ``name`` in ``table``; a ``ValueError`` listing ``table`` otherwise."""
    try:
        filename = table[name]
    except KeyError:
        raise ValueError(f"no shipped {what} {name!r}; shipped {what}s: {', '.join(sorted(table))}") from None
    return Path(str(resources.files("skipbo_env").joinpath("models").joinpath(filename)))
