"""Game records: a dealt game plus its moves, saved as JSON and replayed exactly.

A record (``"format": "skipbo-record"``, version 1) holds a label per seat, the state dict before
the first move (the deal and the game's generator, so replaying reproduces every reshuffle), the
move dicts in order and an informative ``result`` that :meth:`GameRecord.from_dict` checks
against the replay. Like every machine format of the package it counts from 0 (seats, piles,
``turns``). docs/play.md ("Records and replay") shows the format.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .files import MIB, FileReadError, read_text_bounded
from .rules import GameState, IllegalMoveError, Move, game_points, move_from_dict, move_to_dict
from .rules.errors import StateError

FORMAT = "skipbo-record"
VERSION = 1
MAX_FILE = 64 * MIB
"""Largest record file read (bytes): a game at the default move limit (20,000 moves) takes under 2 MB."""
MAX_LABEL = 64
"""Characters kept of a player label (longer labels are cut, with an ellipsis)."""


def clean_label(label: Any) -> str:
    """A player label safe to print: control characters (escape sequences, CR, LF, ...) become
    spaces and the text is cut to :data:`MAX_LABEL` characters. A record file is input from
    anyone; its labels must not be able to drive the terminal that replays it."""
    text = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in str(label))
    text = " ".join(text.split()) or "?"
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


@dataclass(frozen=True)
class GameRecord:
    initial_state: dict[str, Any]
    moves: tuple[Move, ...]
    players: tuple[str, ...]

    @classmethod
    def start(cls, state: GameState, players: Sequence[str]) -> GameRecorder:
        """Begin recording a game from ``state`` (usually a fresh deal); labels are cleaned (:func:`clean_label`)."""
        return GameRecorder(state.to_dict(), [clean_label(p) for p in players])

    def replay(self) -> Iterator[tuple[GameState, Move | None]]:
        """Yield ``(state, move)`` pairs: the initial state with ``None``, then
        the state after each move with that move. The same state object is
        advanced; copy it to keep a snapshot."""
        state = GameState.from_dict(self.initial_state)
        yield state, None
        for i, move in enumerate(self.moves):
            try:
                state.apply(move)
            except IllegalMoveError as exc:
                raise StateError(f"moves[{i}]", f"does not replay: {exc}") from exc
            yield state, move

    def final_state(self) -> GameState:
        *_, (state, _) = self.replay()
        return state

    def to_dict(self) -> dict[str, Any]:
        final = self.final_state()
        return {
            "format": FORMAT,
            "version": VERSION,
            "players": list(self.players),
            "initial_state": self.initial_state,
            "moves": [move_to_dict(m) for m in self.moves],
            "result": result_of(final),
        }

    @classmethod
    def from_dict(cls, data: Any) -> GameRecord:
        """Validate and load; the moves must replay legally and match ``result``."""
        if not isinstance(data, dict):
            raise StateError("record", f"must be an object, got {type(data).__name__}")
        for key in ("format", "version", "players", "initial_state", "moves"):
            if key not in data:
                raise StateError("record", f"missing key {key!r}")
        if data["format"] != FORMAT or data["version"] != VERSION:
            raise StateError("record", f"not a {FORMAT} version {VERSION} record")
        if not isinstance(data["moves"], list):
            raise StateError("record.moves", "must be a list")
        moves = []
        for i, m in enumerate(data["moves"]):
            try:
                moves.append(move_from_dict(m))
            except ValueError as exc:
                raise StateError(f"record.moves[{i}]", str(exc)) from exc
        initial = GameState.from_dict(data["initial_state"])  # validates before anything else
        players = data["players"]
        n = initial.config.num_players
        if not isinstance(players, list) or len(players) != n or not all(isinstance(p, str) for p in players):
            raise StateError("record.players", f"must be a list of {n} strings (a label per seat)")
        record = cls(data["initial_state"], tuple(moves), tuple(clean_label(p) for p in players))
        final = record.final_state()
        if "result" in data and data["result"] != result_of(final):
            raise StateError("record.result", f"says {data['result']}, the replay gives {result_of(final)}")
        return record

    def save(self, path: str | os.PathLike) -> Path:
        """Write the record as JSON atomically (a temporary file, then a rename)."""
        return write_json_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> GameRecord:
        """The record of the JSON file ``path`` (a regular file of at most :data:`MAX_FILE` bytes),
        checked by :meth:`from_dict`.

        Raises:
            StateError: the file is missing, not a regular file (a FIFO, a device), too large, not
                UTF-8 JSON, or not a record that replays (the message names the file or the field).
        """
        try:
            data = json.loads(read_text_bounded(path, MAX_FILE, "game record"))
        except FileReadError as exc:
            raise StateError(str(path), exc.problem) from None
        except ValueError as exc:  # not JSON; an integer too long to read
            raise StateError(str(path), f"not valid JSON: {exc}") from None
        except RecursionError:
            raise StateError(str(path), "not a record: its JSON is nested too deeply") from None
        return cls.from_dict(data)


class GameRecorder:
    """Collects moves while a game is played; :meth:`record` freezes them."""

    def __init__(self, initial_state: dict[str, Any], players: list[str]) -> None:
        self.initial_state = initial_state
        self.players = players
        self.moves: list[Move] = []

    def add(self, move: Move) -> None:
        self.moves.append(move)

    def record(self) -> GameRecord:
        return GameRecord(self.initial_state, tuple(self.moves), tuple(self.players))


def result_of(state: GameState) -> dict[str, Any]:
    return {
        "winner": state.winner,
        "winners": list(state.winners),
        "truncated": state.truncated,
        "turns": state.turn,
        "points": list(game_points(state)),
    }


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    """Write JSON to ``path`` through a temporary file in the same folder and a rename."""
    return write_bytes_atomic(path, json.dumps(data).encode("utf-8"))


TEMP_PREFIX = ".tmp-"
"""Temporary files of :func:`write_bytes_atomic` are named ``.tmp-<name>.<random>`` next to the target."""


def _file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the process umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder, fsynced, and a
    rename: a kill at any moment leaves either the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, _file_mode())  # mkstemp makes 0600; a saved file gets the usual mode
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_npz_atomic(path: str | os.PathLike, arrays: dict[str, Any]) -> Path:
    """Write ``arrays`` as a compressed ``.npz`` to ``path`` atomically (:func:`write_bytes_atomic`)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return write_bytes_atomic(path, buf.getvalue())
