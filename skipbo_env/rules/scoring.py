"""Game points and match play (R24, R25, R27 team scoring, R9 deal passing left)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .config import GameConfig
from .errors import ConfigError
from .moves import Move
from .state import GameState, SeedLike, make_rng, new_game
from .view import SeatView

WIN_POINTS = 25
POINTS_PER_STOCK_CARD = 5
MATCH_TARGET = 500  # R25


def game_points(state: GameState) -> tuple[int, ...]:
    """Points of one finished game per side (R24; per team in the partner game, R27).

    The winning side scores 25 plus 5 for every card left in the other sides'
    stocks; everyone else scores 0. A truncated or unfinished game scores 0 for all.
    """
    cfg = state.config
    points = [0] * cfg.num_teams
    if state.winner is None:
        return tuple(points)
    side = cfg.team(state.winner)
    left = sum(len(state.stocks[s]) for s in range(cfg.num_players) if cfg.team(s) != side)
    points[side] = WIN_POINTS + POINTS_PER_STOCK_CARD * left
    return tuple(points)


Player = Callable[[SeatView], Move]
"""A player for :func:`play_game`/:func:`play_match`: a seat view in, a legal move out."""


def play_game(state: GameState, players: Sequence[Player]) -> GameState:
    """Play ``state`` to its end, asking ``players[seat]`` for each move of that seat."""
    if len(players) != state.config.num_players:
        raise ValueError(f"need {state.config.num_players} players, got {len(players)}")
    while not state.is_over:
        seat = state.current
        state.apply(players[seat](state.view(seat)))
    return state


@dataclass(frozen=True)
class MatchResult:
    """Outcome of a match: every game's final state, the points and the winning side."""

    games: tuple[GameState, ...]
    points_per_game: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    winner: int | None
    """The side that reached the target, or ``None`` if ``max_games`` ran out."""


def play_match(
    config: GameConfig,
    players: Sequence[Player],
    seed: SeedLike = None,
    target: int = MATCH_TARGET,
    max_games: int = 1000,
) -> MatchResult:
    """Play games until a side reaches ``target`` points (R25).

    The first game's first player comes from ``config.first_player`` or the
    seed; after each game the deal passes left (R9), so the next game's first
    player is one seat further. Each game draws its own seed from the match
    generator, so the same seed gives the same match.
    """
    if type(target) is not int or target < 1:
        raise ConfigError("target", f"must be an int >= 1, got {target!r}")
    if type(max_games) is not int or max_games < 1:
        raise ConfigError("max_games", f"must be an int >= 1, got {max_games!r}")
    rng = make_rng(seed)
    n = config.num_players
    first = int(rng.integers(n)) if config.first_player is None else config.first_player
    scores = [0] * config.num_teams
    games, points = [], []
    for g in range(max_games):
        game_config = dataclasses.replace(config, first_player=(first + g) % n)
        state = play_game(new_game(game_config, seed=int(rng.integers(2**63))), players)
        pts = game_points(state)
        games.append(state)
        points.append(pts)
        scores = [a + b for a, b in zip(scores, pts, strict=True)]
        leader = max(range(len(scores)), key=scores.__getitem__)
        if scores[leader] >= target:
            return MatchResult(tuple(games), tuple(points), tuple(scores), leader)
    return MatchResult(tuple(games), tuple(points), tuple(scores), None)
