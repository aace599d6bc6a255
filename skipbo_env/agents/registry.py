"""Agents by name or file: the registry and the loader of :mod:`skipbo_env.agents`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeGuard

import numpy as np

from ..bots import BOTS, AgentBase, ScriptedAgent, make_bot
from ..observations import DEFAULT_OBSERVATION
from ..rules import GameConfig
from .agentfile import check_observation
from .modelfile import CheckpointError, short_repr
from .ppo import PPOAgent
from .rllib_agent import RLlibAgent, is_rllib_checkpoint
from .search import SearchAgent, parse_search_spec
from .shipped import SHIPPED, SHIPPED_PLAYERS, SHIPPED_POLICIES, SHIPPED_VALUES, shipped_agent_path
from .turnnet import TurnNetAgent, is_turn_agent_file
from .valuenet import is_value_file

AGENTS: dict[str, type[ScriptedAgent]] = BOTS
"""Scripted agents by name (the bots layer's registry: ``random``, ``greedy``, ``heuristic``)."""


SEARCH = "search"
"""The search agent (:mod:`skipbo_env.agents.search`): ``search``, ``search:W`` or ``search:W:C``
(W sampled worlds, C candidate turns per search). Needs the ``fast`` extra (numba), and in the
2-player game, where it reads a shipped network's value, the ``train`` extra."""


def is_search_spec(spec: object) -> TypeGuard[str]:
    """True when ``spec`` names the search agent (``search`` or ``search:...``)."""
    return isinstance(spec, str) and (spec == SEARCH or spec.startswith(SEARCH + ":"))


def known_agents() -> list[str]:
    """Every name :func:`load_agent` accepts: scripted agents, shipped trained agents, then ``search``."""
    return [*AGENTS, *SHIPPED, SEARCH]


def make_agent(name: str, config: GameConfig, seed: int | None = None) -> ScriptedAgent:
    """A scripted agent by name (see :data:`AGENTS`); unknown names fail with the list of known ones.

    ``heuristic`` plans with the compiled planner when numba is installed (the ``fast``
    extra; :func:`skipbo_env.vector.compiled_heuristic.compiled_heuristic`: the same moves, about
    12 times faster per search), else with the Python planner.
    """
    if name == "heuristic":
        try:
            from ..vector.compiled_heuristic import compiled_heuristic  # the fast extra (numba)
        except ImportError:  # no numba: the Python planner plays the same moves
            pass
        else:
            return compiled_heuristic(config, seed)
    return make_bot(name, config, seed)


def is_checkpoint_spec(spec: str | os.PathLike) -> bool:
    """True when ``spec`` names a file rather than a scripted agent: it is a path
    object, holds a path separator, ends in ``.safetensors`` or ``.zip`` or is an existing file."""
    if isinstance(spec, os.PathLike):
        return True
    return "/" in spec or os.sep in spec or spec.endswith((".safetensors", ".zip")) or Path(spec).is_file()


def load_agent(
    spec: str | os.PathLike, config: GameConfig, seed: int | None = None, *, allow_pickle: bool = False,
    observation: str = DEFAULT_OBSERVATION,
) -> AgentBase:
    """The agent that ``spec`` names: a key of ``AGENTS``, a shipped agent (:data:`SHIPPED`:
    ``ppo-2p``, ``turn-2p``, ``ppo-2p-plus``, ``turn-2p-plus`` for 2 players, ``ppo-3p``, ``ppo-4p``,
    ``ppo-6p`` for 3, 4 and 6; :data:`SHIPPED_PLAYERS`), the search agent (``search``, ``search:W``,
    ``search:W:C``, see :data:`SEARCH`), or the path of an agent file
    (``.safetensors``, written by ``train.py --export``, or a turn-agent file written by the
    ``turnnet`` recipe; safe to load from anyone).

    With ``allow_pickle=True`` also a MaskablePPO checkpoint (``.zip``) or an RLlib
    checkpoint directory (one holding ``rllib_checkpoint.json``; needs the ``rllib``
    extra). Both are pickles: loading one can run any code its author put in it, so
    they are refused unless the caller opts in (for files it made or trusts).

    ``observation`` names the observation the caller hands the agent (an env's): a network
    file trained on another is refused by name.

    Raises:
        ValueError: an unknown name (the message lists the known ones), or a
            model file that is missing, unreadable, pickled without the opt-in, or made
            for another observation or other observation/action sizes
            (:class:`~skipbo_env.agents.modelfile.CheckpointError`, naming the file and the problem).
    """
    if not isinstance(spec, str | os.PathLike):
        raise ValueError(f"an agent spec must be a name or a path, got {short_repr(spec)}")
    if isinstance(spec, str) and spec in AGENTS:
        return make_agent(spec, config, seed)
    if isinstance(spec, str) and spec in SHIPPED:
        if not is_turn_agent_file(shipped_agent_path(spec)):  # a turn agent reads views, whatever the observation
            check_observation(shipped_agent_path(spec), {"observation": DEFAULT_OBSERVATION}, observation)  # v1's
        try:
            if spec in SHIPPED_POLICIES:  # two shipped networks together
                network, weight = SHIPPED_POLICIES[spec]
                return TurnNetAgent(shipped_agent_path(spec), config, seed, policy=weight,
                                    policy_net=PPOAgent(shipped_agent_path(network), config))
            return _file_agent(shipped_agent_path(spec), config, seed, False, observation)
        except CheckpointError as exc:  # a shipped agent asked to play another table
            raise CheckpointError(exc.path, f"the shipped agent {spec!r} does not play this game (it plays "
                                            f"{SHIPPED_PLAYERS[spec]}-player games): {exc.problem}") from None
    if isinstance(spec, str) and spec in SHIPPED_VALUES:
        raise ValueError(f"{spec!r} is a shipped value network, not an agent: the search agent reads it "
                         "(SearchSettings(value_net=...)); known agents: " + ", ".join(known_agents()))
    if is_search_spec(spec):
        return SearchAgent(config, seed, parse_search_spec(spec))
    try:
        rllib, file = is_rllib_checkpoint(spec), is_checkpoint_spec(spec)
    except (OSError, ValueError) as exc:  # a name too long for a path, a NUL character
        raise ValueError(f"unknown agent {short_repr(os.fspath(spec))}: not a name, and not a path this system "
                         f"can look up ({getattr(exc, 'strerror', None) or exc})") from None
    if rllib:
        check_observation(spec, {"observation": DEFAULT_OBSERVATION}, observation)  # a checkpoint records none: v1
        return RLlibAgent(spec, config, seed, allow_pickle=allow_pickle)  # refused before ray loads
    if file:
        return _file_agent(spec, config, seed, allow_pickle, observation)
    raise ValueError(
        f"unknown agent {short_repr(spec)}; known agents: {', '.join(known_agents())}, "
        "or the path of an agent file (.safetensors)"
    )


def _file_agent(path: str | os.PathLike, config: GameConfig, seed: int | None, allow_pickle: bool,
                observation: str) -> AgentBase:
    """The agent of a model file: a turn-agent file (:mod:`skipbo_env.agents.turnnet`, told by its
    header) plays as :class:`~skipbo_env.agents.turnnet.TurnNetAgent`; anything else as a
    :class:`PPOAgent` (which checks it; torch and sb3 load only then)."""
    if is_turn_agent_file(path):
        return TurnNetAgent(path, config, seed)
    if is_value_file(path):
        raise CheckpointError(
            path,
            "a value file (a value network the search agent reads: SearchSettings(value_net=...)), not an agent file",
        )
    return PPOAgent(path, config, seed, allow_pickle=allow_pickle, observation=observation)


def agent_label(spec: str | os.PathLike) -> str:
    """A short name for reports and seats: the agent name, or a model file's name without its suffix."""
    return Path(spec).stem if is_checkpoint_spec(spec) else str(spec)


def derive_seed(*words: int, bits: int = 63) -> int:
    """A seed derived from integer ``words``: the first 64-bit word of numpy's
    ``SeedSequence(words)``, as a non-negative 63-bit int (its top 63 bits: tournament
    seeds) or, with ``bits=32``, its low 32 bits (the sequence's first 32-bit word:
    terminal play's agent seeds)."""
    if bits not in (32, 63):
        raise ValueError(f"bits must be 32 or 63, got {bits!r}")
    word = int(np.random.SeedSequence(list(words)).generate_state(1, dtype=np.uint64)[0])
    return word >> (64 - bits) if bits == 63 else word & ((1 << bits) - 1)
