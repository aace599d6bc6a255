"""Scripted players, below the environments that seat them as opponents.

Each bot is a decision rule over what its seat may see (:class:`~skipbo_env.encoding.ObservationFields`)
behind ``act(observation) -> int``: ``random`` (:class:`RandomAgent`), ``greedy``
(:class:`GreedyAgent`), ``heuristic`` (:class:`HeuristicAgent`) and the styles ``stock-chaser``,
``hand-emptier``, ``blocker``, ``high-first`` (:mod:`.styles`). :func:`make_bot` builds one by
name; :mod:`skipbo_env.agents` adds trained agents on top. See docs/agents.md and
docs/opponents.md.
"""

from __future__ import annotations

from ..rules import GameConfig
from .base import GreedyAgent, RandomAgent, ScriptedAgent
from .heuristic import HeuristicAgent
from .protocol import Agent, AgentBase, as_agent, view_observation
from .styles import STYLES

BOTS: dict[str, type[ScriptedAgent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    **STYLES,
}
"""Scripted agents by name."""


def make_bot(name: str, config: GameConfig, seed: int | None = None) -> ScriptedAgent:
    """A scripted agent by name (see :data:`BOTS`); unknown names fail with the list of known ones."""
    try:
        cls = BOTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(BOTS))}") from None
    return cls(config, seed=seed)


__all__ = [
    "BOTS",
    "Agent",
    "AgentBase",
    "GreedyAgent",
    "HeuristicAgent",
    "RandomAgent",
    "ScriptedAgent",
    "as_agent",
    "make_bot",
    "view_observation",
]
