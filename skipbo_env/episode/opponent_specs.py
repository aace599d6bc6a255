"""Opponent specs: who sits in the seats other than the learner's, checked once for every env path.

A spec names an agent (any name or file the agent registry knows,
:func:`skipbo_env.agents.load_agent`: ``"random"``, ``"greedy"``, ``"heuristic"``, ``"ppo-2p"``,
``"turn-2p"``, ``"search:8:4"``, the path of an agent file) or is an object with
``act(observation) -> int``. :func:`opponent_specs` checks the list's shape and each entry's
type; :func:`load_opponent` builds the agent a name stands for.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from typing import Any

from ..bots import BOTS, AgentBase, as_agent, make_bot
from ..observations import DEFAULT_OBSERVATION
from ..rules import ConfigError, GameConfig
from ..rules.errors import shown

AGENT_LOADER = "skipbo_env.agents.registry:load_agent"
"""The agent registry's loader, where names other than the scripted ones resolve. The envs sit
below the agents layer (the agents use the batched engine), so they load it by this entry point
when a spec names a trained agent, the search or a file, the way Gymnasium loads an env from its
``entry_point``; the scripted names (:data:`skipbo_env.bots.BOTS`) resolve here, loading nothing."""

OpponentSpec = str | os.PathLike | AgentBase
"""One checked opponent spec: a name, a file path, or an agent (a user's object wrapped with
:func:`~skipbo_env.bots.as_agent`)."""


def opponent_specs(specs: Any, config: GameConfig) -> list[OpponentSpec]:
    """One opponent spec per other seat, listed from the learner's left.

    ``specs`` is one spec for every other seat or a sequence of ``n - 1``
    (in the partner game entry ``n/2 - 1`` is the learner's partner). A spec
    is an agent name or file (see the module docstring; resolved by :func:`load_opponent`)
    or an object with ``act(observation) -> int`` (returned wrapped by
    :func:`~skipbo_env.bots.as_agent`); anything else raises :class:`ConfigError` naming the entry.
    """
    n = config.num_players
    if isinstance(specs, bytes | bytearray):
        raise ConfigError(
            "opponents", f"must be an agent name (a str), an agent, or a list of them; got bytes {specs[:40]!r}"
        )
    if isinstance(specs, str | os.PathLike) or not isinstance(specs, Sequence):
        specs = [specs] * (n - 1)
    if len(specs) != n - 1:
        raise ConfigError("opponents", f"needs one spec per other seat ({n - 1}) or a single spec, got {len(specs)}")
    checked: list[OpponentSpec] = []
    for i, spec in enumerate(specs):
        if isinstance(spec, str | os.PathLike):
            checked.append(spec)
            continue
        try:
            checked.append(as_agent(spec))
        except TypeError:
            raise ConfigError(
                f"opponents[{i}]",
                f"must be an agent name or an object with act(observation) -> int, got {shown(spec, 80)}",
            ) from None
    return checked


def load_opponent(spec: str | os.PathLike, config: GameConfig, index: int, seed: int | None = None, *,
                  observation: str = DEFAULT_OBSERVATION) -> AgentBase:
    """The agent that the name or file ``spec`` (entry ``index`` of the opponents) stands for, seeded with ``seed``,
    to be handed the env's observation ``observation``.

    A scripted name is built by :func:`skipbo_env.bots.make_bot`; any other name or file by the
    agent registry (:data:`AGENT_LOADER`), which needs the extras that agent needs (a trained
    agent: ``train``; the search: ``fast``).

    Raises:
        ConfigError: an unknown name, a file that holds no agent, or an agent made for another
            table (a 2-player agent at a 4-player table) or trained on another observation, naming the entry.
        skipbo_env.extras.MissingExtraError: the agent needs an extra that is not installed.
    """
    if isinstance(spec, str) and spec in BOTS:
        return make_bot(spec, config, seed)
    module, name = AGENT_LOADER.split(":")
    load_agent: Callable[..., AgentBase] = getattr(importlib.import_module(module), name)
    try:
        return load_agent(spec, config, seed, observation=observation)
    except ValueError as exc:  # an unknown name, not an agent file, or an agent for another table
        raise ConfigError(f"opponents[{index}]", str(exc)) from None
