"""Agents behind one protocol, ``act(observation) -> int``.

``make_agent(name, config, seed)`` builds a scripted agent by name.
"""

from __future__ import annotations

from skipbo_env.rules import GameConfig

from .base import Agent, GreedyAgent, RandomAgent, ScriptedAgent

AGENTS: dict[str, type[ScriptedAgent]] = {"random": RandomAgent, "greedy": GreedyAgent}


def make_agent(name: str, config: GameConfig, seed: int | None = None) -> ScriptedAgent:
    """A scripted agent by name (see ``AGENTS``); unknown names fail with the list of known ones."""
    try:
        cls = AGENTS[name]
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}") from None
    return cls(config, seed=seed)


__all__ = ["AGENTS", "Agent", "GreedyAgent", "RandomAgent", "ScriptedAgent", "make_agent"]
