"""Agents behind one protocol, ``act(observation) -> int``: the user's face.

:class:`Agent` is the protocol and :class:`AgentBase` its optional capabilities (``act_view``,
``act_batch``, ``seed``, the flags ``batched`` and ``reads_view``); :func:`as_agent` wraps a
user's object. ``make_agent`` builds a scripted agent by name; ``load_agent(spec, config, seed,
*, allow_pickle=False)`` takes a scripted or shipped name, ``search[:W[:C]]`` or a safe agent file
(pickled checkpoints need ``allow_pickle=True``). :mod:`.tournament` and :mod:`.report` play and
report tournaments. See docs/agents.md.
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
