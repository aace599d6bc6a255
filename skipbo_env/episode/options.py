"""The env options every env path checks the same way, and the redeal cap.

Illegal-action modes (:data:`ILLEGAL_ACTION_MODES`: ``"raise"`` changes nothing, ``"lose"`` ends
the episode with :data:`~skipbo_env.episode.rewards.ILLEGAL_ACTION_REWARD`), the flags
(:func:`check_flag`), the learner's seat (:func:`check_learner_seat`: ``None`` or a seat) and
re-deals (:data:`MAX_REDEALS`, :func:`redeal_error`: a game that ends before the learner's first
move is dealt again, a bounded number of times). Each bad value raises
:class:`~skipbo_env.rules.ConfigError` naming the option.
"""

from __future__ import annotations

from typing import Any

from ..rules import ConfigError, GameConfig

ILLEGAL_ACTION_MODES = ("raise", "lose")
"""What an env does with an illegal learner action: raise, or end the episode as a loss."""
MAX_REDEALS = 100
"""Deals in a row that may end before the learner's first move before a reset gives up."""


def check_illegal_action(mode: Any) -> str:
    """``mode`` if it is one of :data:`ILLEGAL_ACTION_MODES`, else :class:`ConfigError`."""
    if mode not in ILLEGAL_ACTION_MODES:
        raise ConfigError("illegal_action", f"must be one of {ILLEGAL_ACTION_MODES}, got {mode!r}")
    return mode


def check_flag(key: str, value: Any) -> bool:
    """``value`` if it is a bool (``reward_shaping``, ``render_full``), else :class:`ConfigError`."""
    if type(value) is not bool:
        raise ConfigError(key, f"must be true or false, got {value!r}")
    return value


def check_learner_seat(seat: Any, config: GameConfig) -> int | None:
    """``seat`` if it is ``None`` or a seat of ``config``, else :class:`ConfigError`."""
    n = config.num_players
    if seat is not None and (type(seat) is not int or not 0 <= seat < n):
        raise ConfigError("learner_seat", f"must be None or an int in 0..{n - 1}, got {seat!r}")
    return seat


def redeal_error() -> RuntimeError:
    """The error of a reset whose deals all ended before the learner's first move."""
    return RuntimeError(
        f"{MAX_REDEALS} deals in a row ended before the learner's first move; "
        "raise stock_size, turn_limit or move_limit"
    )
