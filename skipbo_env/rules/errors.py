"""Typed errors of the rules layer.

Every error subclasses :class:`SkipBoError` and :class:`ValueError`, so callers
can catch one family or the standard exception, and every message names the
offending field, move or state entry.
"""

from __future__ import annotations

from typing import Any


class SkipBoError(ValueError):
    """Base class of every error the rules layer raises on bad input."""


class ConfigError(SkipBoError):
    """A game configuration field is unknown or out of range."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class IllegalMoveError(SkipBoError):
    """A move is not legal in the current state; the state is unchanged."""

    def __init__(self, move: Any, reason: str) -> None:
        self.move = move
        self.reason = reason
        super().__init__(f"illegal move {move}: {reason}")


class GameOverError(IllegalMoveError):
    """A move was attempted after the game ended (won or truncated)."""


class StateError(SkipBoError):
    """A serialized state or an explicit deck is corrupt or impossible."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


def shown(value: object, width: int = 60) -> str:
    """``repr(value)`` cut to ``width`` characters, for naming a bad value in a message (a value
    nested too deeply to print, or an int too long to print, is named by its type)."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return f"a {type(value).__name__} too large to show"
    return text if len(text) <= width else text[: width - 3] + "..."

