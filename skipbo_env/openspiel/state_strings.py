"""The ``python_skipbo`` state string: data only, parsed field by field.

Three lines, ``history=`` (every action with its player, ``-1`` for chance, replayed from the
initial state and checked against the legal ones), ``move_number=`` and ``skipbo=`` (empty, or for
a state made by ``resample_from_infostate`` the JSON of the sampled position the history
continues from). Nothing here unpickles or evaluates. See docs/openspiel.md ("Serialization").
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from ..rules import HAND_SIZE, WILD, GameConfig, GameState, StateError
from ..rules.config import MAX_PLAYERS

TAG_HISTORY = "history="
TAG_MOVE_NUMBER = "move_number="
TAG_BASE = "skipbo="
MAX_TEXT = 1 << 24
"""Longest state string read (16 MiB; a game at the move limit is far shorter)."""
_ENTRY = re.compile(r"(-1|[0-9])\:([0-9]{1,5})")
_EVENT_SHAPES = {"first": 2, "draw": 3, "move": 4}


class Base(NamedTuple):
    """A sampled position a history continues from (the Python side of a resampled state)."""

    first: int
    pending: int
    drawer: int
    events: list[tuple[Any, ...]]
    state: GameState


class Parsed(NamedTuple):
    history: list[tuple[int, int]]
    move_number: int
    base: Base | None


def format_state(history: list[tuple[int, int]], move_number: int, base: str) -> str:
    """The state string of a history (``(player, action)`` pairs), its move number and base JSON."""
    entries = ",".join(f"{p}:{a}" for p, a in history)
    return f"{TAG_HISTORY}{entries}\n{TAG_MOVE_NUMBER}{move_number}\n{TAG_BASE}{base}"


def base_json(first: int | None, pending: int, drawer: int, events: list[tuple[Any, ...]], state: GameState) -> str:
    """The ``skipbo=`` JSON of a sampled position."""
    data = {"first": first, "pending": pending, "drawer": drawer, "events": [list(e) for e in events],
            "state": state.to_dict()}
    return json.dumps(data, separators=(",", ":"))


def parse_state(text: Any, config: GameConfig) -> Parsed:
    """Read a state string of a game with ``config``; :class:`StateError` names the bad field."""
    if not isinstance(text, str):
        raise StateError("state", f"must be a str, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise StateError("state", f"is {len(text)} characters, more than {MAX_TEXT}")
    lines = text.split("\n")
    tags = (TAG_HISTORY, TAG_MOVE_NUMBER, TAG_BASE)
    if len(lines) != 3 or any(not line.startswith(tag) for line, tag in zip(lines, tags, strict=True)):
        raise StateError("state", "must be three lines: history=..., move_number=..., skipbo=... "
                         "(a python_skipbo state string; OpenSpiel's pickled form is not read)")
    history = _history(lines[0].removeprefix(TAG_HISTORY))
    number = lines[1].removeprefix(TAG_MOVE_NUMBER)
    if not (number.isascii() and number.isdigit() and len(number) <= 9):
        raise StateError("move_number", f"must be a non-negative integer, got {number[:40]!r}")
    base = lines[2].removeprefix(TAG_BASE)
    return Parsed(history, int(number), _base(base, config) if base else None)


def _history(text: str) -> list[tuple[int, int]]:
    if not text:
        return []
    out = []
    for i, entry in enumerate(text.split(",")):
        match = _ENTRY.fullmatch(entry)
        if match is None:
            raise StateError(f"history[{i}]", f"must be PLAYER:ACTION with PLAYER -1..{MAX_PLAYERS - 1}, "
                             f"got {entry[:40]!r}")
        out.append((int(match[1]), int(match[2])))
    return out


def _base(text: str, config: GameConfig) -> Base:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise StateError("skipbo", f"is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict) or sorted(data) != ["drawer", "events", "first", "pending", "state"]:
        raise StateError("skipbo", "must be an object with keys drawer, events, first, pending, state")
    state = GameState.from_dict(data["state"])
    if state.config != config:
        raise StateError("skipbo.state.config", "is not the configuration of this game")
    n = config.num_players
    first = _int("skipbo.first", data["first"], 0, n - 1)
    drawer = _int("skipbo.drawer", data["drawer"], -1, n - 1)
    pending = _int("skipbo.pending", data["pending"], 0, min(HAND_SIZE, len(state.draw_pile)))
    if pending and (drawer < 0 or state.is_over):
        raise StateError("skipbo.pending", "draws are pending only for a seat of a game not over")
    return Base(first, pending, drawer, _events(data["events"], config), state)


def _int(path: str, value: Any, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise StateError(path, f"must be an int in {low}..{high}, got {str(value)[:40]}")
    return value


def _events(data: Any, config: GameConfig) -> list[tuple[Any, ...]]:
    """The game log: ``["first", seat]``, ``["draw", seat, card or null]``, ``["move", seat, action, card or null]``."""
    if not isinstance(data, list) or len(data) > 2 * config.move_limit + 200:
        raise StateError("skipbo.events", "must be a list of at most two events a move")
    n = config.num_players
    out = []
    for i, event in enumerate(data):
        path = f"skipbo.events[{i}]"
        if not isinstance(event, list) or not event or _EVENT_SHAPES.get(event[0]) != len(event):
            raise StateError(path, 'must be ["first", seat], ["draw", seat, card] or ["move", seat, action, card]')
        seat = _int(f"{path}[1]", event[1], 0, n - 1)
        if event[0] == "move":
            _int(f"{path}[2]", event[2], 0, 999)
        if event[0] != "first" and event[-1] is not None:
            _int(f"{path}[{len(event) - 1}]", event[-1], 1, WILD)
        out.append((event[0], seat, *event[2:]))
    return out
