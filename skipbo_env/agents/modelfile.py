"""What every model file shares: the one checkpoint error, and the check that a network fits a game.

Agent files (:mod:`.agentfile`), network files (:mod:`.netfile`), MaskablePPO checkpoints
(:mod:`.ppo`), RLlib checkpoints (:mod:`.rllib_agent`) and the training runs that write them all raise
:class:`CheckpointError`; the PPO loaders check a network's spaces with :func:`check_spaces`.
"""

from __future__ import annotations

import os
from typing import Any

from ..encoding import num_actions, observation_layout
from ..rules import GameConfig


class CheckpointError(ValueError):
    """A model file or checkpoint that is missing, corrupt, or does not fit the game or the run.

    The one checkpoint error of the package: PPO and RLlib agents, training
    runs (resume, export) all raise it. ``path`` names the file, ``problem``
    says what is wrong with it.
    """

    def __init__(self, path: str | os.PathLike, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def check_spaces(path: str | os.PathLike, obs_space: Any, action_space: Any, config: GameConfig) -> None:
    """Raise :class:`CheckpointError` unless the spaces are a flat ``Box`` of the
    observation size and a ``Discrete`` of the action count of ``config``."""
    want_obs = observation_layout(config).size
    want_actions = num_actions(config)
    shape = getattr(obs_space, "shape", None)
    if shape != (want_obs,):
        raise CheckpointError(
            path,
            f"observation shape {shape} does not match this game's ({want_obs},) "
            f"({config.num_players} players, partner_game={config.partner_game})",
        )
    n = getattr(action_space, "n", None)
    if n is None or int(n) != want_actions:
        raise CheckpointError(
            path,
            f"action space {action_space} does not match this game's Discrete({want_actions}) "
            f"(partner_game={config.partner_game})",
        )
