"""Validated, immutable game configuration (R6, R9, R23, R26, R27, §9 variants)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .cards import DECK_SIZE
from .errors import ConfigError

MIN_PLAYERS = 2
MAX_PLAYERS = 6
SHORT_GAME_STOCK = 10  # R26
DEFAULT_TURN_LIMIT = 1000
DEFAULT_MOVE_LIMIT = 20_000


def default_stock_size(num_players: int, short_game: bool = False) -> int:
    """30 cards for 2–4 players, 20 for 5–6 (R6); 10 in the short game (R26)."""
    if short_game:
        return SHORT_GAME_STOCK
    return 30 if num_players <= 4 else 20


def _resolve_stock_size(stock_size: int | None, num_players: int, short_game: bool) -> int:
    """The stock size a configuration stores: the default for ``None``, else ``stock_size`` checked."""
    if stock_size is None:
        return default_stock_size(num_players, short_game)
    _check_int("stock_size", stock_size, 1, DECK_SIZE // num_players)
    if short_game and stock_size != SHORT_GAME_STOCK:
        raise ConfigError(
            "stock_size",
            f"the short game (R26) deals stocks of {SHORT_GAME_STOCK}, got {stock_size}; drop stock_size or short_game",
        )
    return stock_size


def _check_int(field: str, value: Any, low: int, high: int | None) -> None:
    if type(value) is not int:
        raise ConfigError(field, f"must be an int, got {type(value).__name__} {repr(value)[:60]}")
    if value < low or (high is not None and value > high):
        allowed = f"be in {low}..{high}" if high is not None else f"be >= {low}"
        raise ConfigError(field, f"must {allowed}, got {value}")


def _check_bool(field: str, value: Any) -> None:
    if type(value) is not bool:
        raise ConfigError(field, f"must be true or false, got {value!r}")


@dataclass(frozen=True, init=False)
class GameConfig:
    """Settings of one game. Every field is validated on construction.

    Attributes:
        num_players: 2..6 (R6).
        stock_size: cards dealt to each stock. The constructor's ``None`` (its default) picks
            the default size, stored resolved: 30 for 2–4 players, 20 for 5–6 (R6), 10 in the
            short game (R26). Any size from 1 up to ``162 // num_players`` is accepted.
        short_game: the short game (R26): stocks of 10 cards.
        partner_game: the partner game (R27), 4 or 6 players, partners
            opposite (seats ``i`` and ``i + n/2``).
        allow_wild_discard: a wild may be put on a discard pile (R18). ``False``
            is source 001's variant (§9).
        must_play_stock: while the own stock top can be played, the turn may
            not end (no discard, no end-turn). Source 004's tip as a variant (§9).
        first_player: seat that moves first; ``None`` draws it from the game's
            random generator (R9).
        turn_limit: after this many completed turns the game ends as truncated
            with no winner (R23).
        move_limit: after this many moves (plays, discards, end turns) the game
            ends as truncated with no winner. It bounds a game in which one
            player keeps playing within a single turn, cycling cards through
            refills (R15) and reshuffles (R19), where the turn limit alone
            would never be reached (docs/rules.md).
    """

    num_players: int
    stock_size: int
    short_game: bool
    partner_game: bool
    allow_wild_discard: bool
    must_play_stock: bool
    first_player: int | None
    turn_limit: int
    move_limit: int

    def __init__(
        self,
        num_players: int = 2,
        stock_size: int | None = None,
        short_game: bool = False,
        partner_game: bool = False,
        allow_wild_discard: bool = True,
        must_play_stock: bool = False,
        first_player: int | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        move_limit: int = DEFAULT_MOVE_LIMIT,
    ) -> None:
        _check_int("num_players", num_players, MIN_PLAYERS, MAX_PLAYERS)
        for name, flag in (("short_game", short_game), ("partner_game", partner_game),
                           ("allow_wild_discard", allow_wild_discard), ("must_play_stock", must_play_stock)):
            _check_bool(name, flag)
        resolved_stock = _resolve_stock_size(stock_size, num_players, short_game)
        if partner_game and num_players not in (4, 6):
            raise ConfigError(
                "partner_game",
                f"needs 4 or 6 players (two teams, partners opposite), got {num_players}",
            )
        if first_player is not None:
            _check_int("first_player", first_player, 0, num_players - 1)
        _check_int("turn_limit", turn_limit, 1, None)
        _check_int("move_limit", move_limit, 1, None)
        values = {
            "num_players": num_players,
            "stock_size": resolved_stock,
            "short_game": short_game,
            "partner_game": partner_game,
            "allow_wild_discard": allow_wild_discard,
            "must_play_stock": must_play_stock,
            "first_player": first_player,
            "turn_limit": turn_limit,
            "move_limit": move_limit,
        }
        for name, value in values.items():  # frozen: set once, here
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ seats
    @property
    def num_teams(self) -> int:
        """Number of sides: teams in the partner game, players otherwise."""
        return self.num_players // 2 if self.partner_game else self.num_players

    def partner(self, seat: int) -> int | None:
        """The partner's seat (R27), or ``None`` outside the partner game."""
        if not self.partner_game:
            return None
        return (seat + self.num_players // 2) % self.num_players

    def team(self, seat: int) -> int:
        """The side a seat plays for: ``seat % (n/2)`` in the partner game, the seat otherwise."""
        return seat % self.num_teams

    def team_seats(self, team: int) -> tuple[int, ...]:
        """Seats of one side."""
        return tuple(s for s in range(self.num_players) if self.team(s) == team)

    def same_rules(self, other: GameConfig) -> bool:
        """Whether ``other`` is this game in every rule but who moves first (a match rotates it, and
        no decision or observation depends on it): what agents and network files made for one
        configuration accept."""
        return self == other or dataclasses.replace(other, first_player=self.first_player) == self

    # ---------------------------------------------------------- dict round trip
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict of every field (``stock_size`` resolved)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameConfig:
        """Build from a mapping; an unknown key fails with its name."""
        if not isinstance(data, Mapping):
            raise ConfigError("config", f"must be a mapping, got {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        for key in data:
            if key not in known:
                raise ConfigError(str(key), f"unknown key; allowed keys: {', '.join(sorted(known))}")
        return cls(**data)
