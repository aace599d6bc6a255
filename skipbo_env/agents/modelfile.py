"""What every model file shares: the checkpoint error, the header read, the fit to a game.

Agent files (:mod:`.agentfile`), network files (:mod:`.netfile`), MaskablePPO checkpoints
(:mod:`.ppo`), RLlib checkpoints (:mod:`.rllib_agent`) and the training runs that write them all
raise :class:`CheckpointError`; :func:`read_header` reads a safetensors file's description and
its tensors' names, dtypes and shapes (a regular file of bounded size, no tensor read);
:func:`check_spaces` checks a PPO network's spaces against a game.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..encoding import num_actions, observation_layout
from ..extras import missing_extra
from ..files import FileReadError, check_readable
from ..rules import GameConfig
from ..rules.errors import shown

TensorHeader = dict[str, tuple[tuple[int, ...], str]]
"""A safetensors file's tensors as its header declares them: name -> (shape, dtype name such as ``"F32"``)."""


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


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to 80 characters, for naming a bad value read from a file in a message."""
    return shown(value, 80)


def read_header(path: str | os.PathLike, limit: int, what: str, unreadable: str) -> tuple[dict[str, str], TensorHeader]:
    """The metadata of the safetensors file ``path`` and its tensors' shapes and dtypes, from its
    header alone (no tensor is read).

    ``path`` must be a regular file of at most ``limit`` bytes (checked before the safetensors
    library opens it: a FIFO or a device is refused at once); ``what`` names the kind of file in
    that error, ``unreadable`` is the problem reported when the header cannot be parsed.

    Raises:
        CheckpointError: missing, not a regular file, too large, or an unreadable header.
    """
    try:
        check_readable(path, limit, what)
    except FileReadError as exc:
        raise CheckpointError(path, exc.problem) from None
    try:  # the train extra (safetensors)
        from safetensors import safe_open
    except ImportError as exc:
        raise missing_extra(exc, "train", f"reading a {what}") from exc
    try:
        with safe_open(str(Path(path)), framework="np") as f:
            metadata = dict(f.metadata() or {})
            tensors = {}
            for name in f.keys():
                part = f.get_slice(name)
                tensors[name] = (tuple(int(n) for n in part.get_shape()), str(part.get_dtype()))
    except Exception as exc:  # safetensors raises its own error kinds for a bad header
        raise CheckpointError(path, f"{unreadable} ({type(exc).__name__}: {exc})") from None
    return metadata, tensors
