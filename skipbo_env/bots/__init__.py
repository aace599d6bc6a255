"""Scripted players, below the environments that seat them as opponents.

Each bot is a decision rule over what its seat may see (the decoded
observation: :class:`~skipbo_env.encoding.ObservationFields`) behind the
agent protocol ``act(observation) -> int``:

* ``random``: a uniformly random legal action (:class:`RandomAgent`);
* ``greedy``: stock first, then other plays, then a discard
  (:class:`GreedyAgent`, rules in :mod:`skipbo_env.bots.greedy`);
* ``heuristic``: a planner over the plays of the cards it can see
  (:class:`HeuristicAgent`, :mod:`skipbo_env.bots.heuristic`);
* ``stock-chaser``, ``hand-emptier``, ``blocker``, ``high-first``: players of distinct
  styles over one shared turn search (:mod:`skipbo_env.bots.styles`, docs/opponents.md).

:func:`make_bot` builds one by name; the envs use it for opponent names and
:mod:`skipbo_env.agents` adds trained agents on top (docs/agents.md).
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
