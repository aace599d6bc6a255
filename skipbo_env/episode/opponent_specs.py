"""Opponent specs: who sits in the seats other than the learner's, checked once for every env path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..bots import BOTS, as_agent
from ..rules import ConfigError, GameConfig


def opponent_specs(specs: Any, config: GameConfig) -> list[str | Any]:
    """One opponent spec per other seat, listed from the learner's left.

    ``specs`` is one spec for every other seat or a sequence of ``n - 1``
    (in the partner game entry ``n/2 - 1`` is the learner's partner). A spec
    is a scripted agent name (:data:`skipbo_env.bots.BOTS`) or an object with
    ``act(observation) -> int``; anything else raises :class:`ConfigError`
    naming the entry.
    """
    n = config.num_players
    if isinstance(specs, str) or not isinstance(specs, Sequence):
        specs = [specs] * (n - 1)
    if len(specs) != n - 1:
        raise ConfigError("opponents", f"needs one spec per other seat ({n - 1}) or a single spec, got {len(specs)}")
    for i, spec in enumerate(specs):
        if isinstance(spec, str):
            if spec not in BOTS:
                raise ConfigError(f"opponents[{i}]", f"unknown agent {spec!r}; known agents: {', '.join(sorted(BOTS))}")
            continue
        try:
            as_agent(spec)
        except TypeError:
            raise ConfigError(
                f"opponents[{i}]", f"must be an agent name or an object with act(observation) -> int, got {spec!r}"
            ) from None
    return list(specs)
