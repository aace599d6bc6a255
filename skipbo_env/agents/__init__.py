"""Agents behind one protocol, ``act(observation) -> int``: the user's face.

* :class:`Agent` is the protocol (``act`` only); :class:`AgentBase` adds the optional
  capabilities with their defaults (``act_view``, ``act_batch``, ``seed``) and the declared
  flags ``batched`` and ``reads_view`` that tell a game loop how to ask the agent; every agent
  of the package derives from it, and :func:`as_agent` wraps a user's object that has only
  ``act`` (:mod:`skipbo_env.bots.protocol`).
* ``make_agent(name, config, seed)`` builds a scripted agent by name
  (:data:`AGENTS`: ``random``, ``greedy``, ``heuristic``; they live in
  :mod:`skipbo_env.bots`, below the envs that seat them as opponents).
* ``load_agent(spec, config, seed, *, allow_pickle=False)`` takes a scripted
  name or the path of a safe agent file (``.safetensors``, :mod:`.agentfile`:
  loading it never unpickles anything) and returns the agent. Pickled
  checkpoints, a ``MaskablePPO`` ``.zip`` (:mod:`.ppo`) or an RLlib checkpoint
  directory (``train_rllib.py``; needs the ``rllib`` extra, :mod:`.rllib_agent`), can
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
from ..bots.protocol import Agent, AgentBase, NeedsViewError, as_agent, view_observation
from .modelfile import CheckpointError
from .ppo import PPOAgent
from .registry import (
    AGENTS,
    SHIPPED,
    SHIPPED_PLAYERS,
    SHIPPED_POLICIES,
    agent_label,
    derive_seed,
    is_checkpoint_spec,
    known_agents,
    load_agent,
    make_agent,
    shipped_agent_path,
)
from .search import SearchAgent, SearchSettings, parse_search_spec

__all__ = [
    "AGENTS",
    "SHIPPED",
    "SHIPPED_PLAYERS",
    "SHIPPED_POLICIES",
    "Agent",
    "AgentBase",
    "CheckpointError",
    "GreedyAgent",
    "HeuristicAgent",
    "NeedsViewError",
    "PPOAgent",
    "RandomAgent",
    "ScriptedAgent",
    "SearchAgent",
    "SearchSettings",
    "agent_label",
    "as_agent",
    "derive_seed",
    "is_checkpoint_spec",
    "known_agents",
    "load_agent",
    "make_agent",
    "parse_search_spec",
    "shipped_agent_path",
    "view_observation",
]
