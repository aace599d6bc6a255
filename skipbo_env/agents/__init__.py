"""Agents behind one protocol, ``act(observation) -> int``: the user's face.

* ``make_agent(name, config, seed)`` builds a scripted agent by name
  (:data:`AGENTS`: ``random``, ``greedy``, ``heuristic``; they live in
  :mod:`skipbo_env.bots`, below the envs that seat them as opponents).
* ``load_agent(spec, config, seed, *, allow_pickle=False)`` takes a scripted
  name or the path of a safe agent file (``.safetensors``, :mod:`.agentfile`:
  loading it never unpickles anything) and returns the agent. Pickled
  checkpoints, a ``MaskablePPO`` ``.zip`` (:mod:`.ppo`) or an RLlib checkpoint
  directory (``train_rllib.py``; needs the ``rllib`` extra, :mod:`.rllib`), can
  run code when loaded and need ``allow_pickle=True``.
* ``load_agent("search")`` (or ``search:W``, ``search:W:C``) builds the search agent
  (:mod:`.search`: determinized turn search; it plays through ``act_view``).
* :mod:`.tournament` plays seat-balanced, deal-paired tournaments between
  agents and :mod:`.report` writes their tables and plots (``evaluate.py``).

In the repository the top-level ``agents`` package is this package under
its old name. See docs/agents.md and docs/architecture.md.
"""

from __future__ import annotations

from ..bots import GreedyAgent, HeuristicAgent, RandomAgent, ScriptedAgent
from .ppo import CheckpointError, PPOAgent
from .registry import (
    AGENTS,
    SHIPPED,
    Agent,
    agent_label,
    derive_seed,
    is_checkpoint_spec,
    known_agents,
    load_agent,
    make_agent,
    shipped_agent_path,
)
from .search import SearchAgent, parse_search_spec

__all__ = [
    "AGENTS",
    "SHIPPED",
    "Agent",
    "CheckpointError",
    "GreedyAgent",
    "HeuristicAgent",
    "PPOAgent",
    "RandomAgent",
    "ScriptedAgent",
    "SearchAgent",
    "agent_label",
    "derive_seed",
    "is_checkpoint_spec",
    "known_agents",
    "load_agent",
    "make_agent",
    "parse_search_spec",
    "shipped_agent_path",
]
