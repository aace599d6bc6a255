"""Value networks (``value-6p``): a seat's chance to win, read from its observation.

A :class:`ValueNet` maps one seat's observation vector to the chance that this seat wins, fitted
to the winners of self-play games (:mod:`skipbo_env.training.value_recipe`); the search agent
reads it at its horizon (``value`` / ``value_net``). Value files are network files
(:mod:`.netfile`) of the kind :data:`VALUE_KIND` that record the observation they read
(:data:`OBSERVATION`) and are refused by name on another. See docs/agents.md ("Network files").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..observations import observation_spec
from ..rules import GameConfig
from .netfile import MLP, NetKind, is_net_file, load_net, write_net

FORMAT = "skipbo-value-net"
FORMAT_VERSION = 1
METADATA_KEY = "skipbo_value_net"
OBSERVATION_VERSION = 1
"""Version of the value files' observation field (a new encoding is a new observation name)."""
OBSERVATION = "v1"
"""The observation value networks read (:mod:`skipbo_env.observations`, docs/observations.md)."""

VALUE_KIND = NetKind(what="value file", format=FORMAT, format_version=FORMAT_VERSION, metadata_key=METADATA_KEY,
                     inputs_field="observation_version", inputs_version=OBSERVATION_VERSION,
                     inputs=lambda game: observation_spec(OBSERVATION).layout(game).size, inputs_name="observations",
                     observation=OBSERVATION)
"""The value files' kind (:mod:`skipbo_env.agents.netfile`)."""


class ValueNet:
    """A seat's win chance from its observation: the sigmoid of an :class:`~skipbo_env.agents.netfile.MLP`'s
    output (a logit)."""

    def __init__(self, net: MLP, game: GameConfig, description: dict[str, Any] | None = None) -> None:
        self.net = net
        self.game = game
        self.description = description or {}

    def win_chance(self, observations: np.ndarray) -> np.ndarray:
        """Per row of ``observations`` (``(R, obs_size)``): the observing seat's chance to win (0..1)."""
        logits = self.net.scores(observations).astype(np.float64)
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -60.0, 60.0)))


def is_value_file(path: str | os.PathLike) -> bool:
    """True when ``path`` is a safetensors file whose header holds a value-network description."""
    return is_net_file(path, VALUE_KIND)


def load_value_net(path: str | os.PathLike, config: GameConfig | None = None) -> ValueNet:
    """The value network of file ``path`` (with ``config``: it must be the file's game)."""
    net, desc = load_net(path, VALUE_KIND, config)
    return ValueNet(net, desc["game"], desc)


def write_value_net(path: str | os.PathLike, net: MLP, game: GameConfig, provenance: dict[str, Any]) -> Path:
    """Write ``net`` (logit output) as value file ``path`` (atomically; checked by the loader's rules first)."""
    return write_net(path, VALUE_KIND, net, game, provenance)


__all__ = ["VALUE_KIND", "ValueNet", "is_value_file", "load_value_net", "write_value_net"]
