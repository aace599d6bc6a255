"""Value networks (``value-6p``): a seat's chance to win, read from its observation.

A :class:`ValueNet` maps the observation vector of one seat (:mod:`skipbo_env.encoding`, seats
relative to the observer, so it reads every seat's position alike) to the chance that this seat
wins the game, fitted to the winners of self-play games (:mod:`skipbo_env.training.value_recipe`,
``configs/value_6p.yaml``). The search agent reads it at the end of its simulations
(:class:`~skipbo_env.agents.search.SearchAgent`, ``value`` / ``value_net``): the shipped
``value-6p`` scores the 6-player search's horizon by default (docs/search.md).

Unlike the value head of a PPO agent, which reads the position of the seat about to move, a value
network was fitted on the positions of every seat at the start of every turn (the seat to move or
not), so the search may read it after only some of the other seats' turns (``depth``).

**Value files.** A network file of :mod:`skipbo_env.agents.netfile` (safetensors, no pickle:
loading runs no code) of the kind :data:`VALUE_KIND`: header key :data:`METADATA_KEY`, format
:data:`FORMAT`, ``observation_version`` (:data:`OBSERVATION_VERSION`), ``observation`` (the name of
the observation it reads, :data:`OBSERVATION`; files without it are ``v1``'s, and a file of
another observation is refused by name), and inputs the size of the game's observation. Every problem is a
:class:`~skipbo_env.agents.modelfile.CheckpointError` naming the file.
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
