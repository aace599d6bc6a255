"""Agents behind one protocol, ``act(observation) -> int``.

* ``make_agent(name, config, seed)`` builds a scripted agent by name
  (:data:`AGENTS`: ``random``, ``greedy``, ``heuristic``).
* ``load_agent(spec, config, seed)`` takes a scripted name, the path of a
  trained ``MaskablePPO`` checkpoint (``.zip``) or of an RLlib checkpoint
  directory (``train_rllib.py``; needs the ``rllib`` extra) and returns the agent.

See docs/agents.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from skipbo_env.rules import GameConfig

from .base import Agent, GreedyAgent, RandomAgent, ScriptedAgent
from .heuristic import HeuristicAgent

AGENTS: dict[str, type[ScriptedAgent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
}


def make_agent(name: str, config: GameConfig, seed: int | None = None) -> ScriptedAgent:
    """A scripted agent by name (see ``AGENTS``); unknown names fail with the list of known ones."""
    try:
        cls = AGENTS[name]
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}") from None
    return cls(config, seed=seed)


def is_checkpoint_spec(spec: str | os.PathLike) -> bool:
    """True when ``spec`` names a file rather than a scripted agent: it is a path
    object, holds a path separator, ends in ``.zip`` or is an existing file."""
    if isinstance(spec, os.PathLike):
        return True
    return "/" in spec or os.sep in spec or spec.endswith(".zip") or Path(spec).is_file()


def load_agent(spec: str | os.PathLike, config: GameConfig, seed: int | None = None) -> Agent:
    """The agent that ``spec`` names: a key of ``AGENTS``, a MaskablePPO checkpoint path,
    or an RLlib checkpoint directory (one holding ``rllib_checkpoint.json``).

    Raises:
        ValueError: an unknown name (the message lists the known ones), or a
            checkpoint that is missing, unreadable or made for other
            observation/action sizes (:class:`agents.ppo.CheckpointError`,
            naming the file and the mismatch).
    """
    if not isinstance(spec, str | os.PathLike):
        raise ValueError(f"an agent spec must be a name or a path, got {spec!r}")
    if isinstance(spec, str) and spec in AGENTS:
        return make_agent(spec, config, seed)
    if Path(spec).is_dir() and (Path(spec) / "rllib_checkpoint.json").is_file():
        from skipbo_env.rllib.agent import RLlibAgent  # needs the rllib extra

        return RLlibAgent(spec, config, seed)
    if is_checkpoint_spec(spec):
        from .ppo import PPOAgent

        return PPOAgent(spec, config, seed)
    raise ValueError(
        f"unknown agent {spec!r}; known agents: {', '.join(sorted(AGENTS))}, "
        "or the path of a MaskablePPO checkpoint (.zip)"
    )


def agent_label(spec: str | os.PathLike) -> str:
    """A short name for reports: the agent name, or a checkpoint's file name without ``.zip``."""
    return Path(spec).stem if is_checkpoint_spec(spec) else str(spec)


__all__ = [
    "AGENTS",
    "Agent",
    "GreedyAgent",
    "HeuristicAgent",
    "RandomAgent",
    "ScriptedAgent",
    "agent_label",
    "is_checkpoint_spec",
    "load_agent",
    "make_agent",
]
