"""Named observations: each name is one frozen vector encoding, with its layout and decoder.

``v1`` (:mod:`.v1`) is the observation of every env and shipped agent. Envs take an observation's
name (``observation="v1"``), files record the name their network was trained on, and a new
encoding is a new module beside ``v1`` with its own entry in :data:`OBSERVATIONS`
(docs/observations.md, "Named observations").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..rules import ConfigError, GameConfig, SeatView
from ..rules.errors import shown
from . import v1


@dataclass(frozen=True)
class Observation:
    """One named observation: its layout for a game, its encoder and its decoder."""

    name: str
    layout: Callable[[GameConfig], Any]
    """The named pieces of the vector for a game (``layout(config).size``, ``.low``, ``.high``)."""
    encode: Callable[[SeatView], np.ndarray]
    """The float32 vector of a seat's view."""
    decode: Callable[[np.ndarray, GameConfig], Any]
    """A vector read back into its fields."""


OBSERVATIONS: dict[str, Observation] = {
    v1.NAME: Observation(v1.NAME, v1.observation_layout, v1.encode_view, v1.decode_observation),
}
"""Every observation this code computes, by name."""
DEFAULT_OBSERVATION = v1.NAME
"""The observation of envs and files that name none: ``v1``."""


def observation_spec(name: Any) -> Observation:
    """The observation called ``name``; :class:`~skipbo_env.rules.ConfigError` naming the known ones else."""
    spec = OBSERVATIONS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ConfigError("observation", f"unknown observation {shown(name, 80)}; known: {', '.join(OBSERVATIONS)}")
    return spec


__all__ = ["DEFAULT_OBSERVATION", "OBSERVATIONS", "Observation", "observation_spec"]
