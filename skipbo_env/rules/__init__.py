"""The Skip-Bo rules (RULES.md R1–R28), with no RL dependency.

Typical use::

    from skipbo_env.rules import GameConfig, new_game

    state = new_game(GameConfig(num_players=3), seed=0)
    while not state.is_over:
        move = state.legal_moves()[0]
        state.apply(move)
"""

from .cards import DECK_SIZE, HAND_SIZE, NUMBERS, WILD, card_name, standard_deck
from .config import GameConfig, default_stock_size
from .errors import ConfigError, GameOverError, IllegalMoveError, SkipBoError, StateError
from .moves import (
    ALL_MOVES,
    END_TURN,
    NUM_SOLO_MOVES,
    Discard,
    EndTurn,
    Move,
    Play,
    Source,
    move_from_dict,
    move_to_dict,
)
from .scoring import MatchResult, Player, game_points, play_game, play_match
from .state import GameState, new_game, validate_deck
from .view import SeatView

__all__ = [
    "ALL_MOVES",
    "DECK_SIZE",
    "END_TURN",
    "HAND_SIZE",
    "NUMBERS",
    "NUM_SOLO_MOVES",
    "WILD",
    "ConfigError",
    "Discard",
    "EndTurn",
    "GameConfig",
    "GameOverError",
    "GameState",
    "IllegalMoveError",
    "MatchResult",
    "Move",
    "Play",
    "Player",
    "SeatView",
    "SkipBoError",
    "Source",
    "StateError",
    "card_name",
    "default_stock_size",
    "game_points",
    "move_from_dict",
    "move_to_dict",
    "new_game",
    "play_game",
    "play_match",
    "standard_deck",
    "validate_deck",
]
