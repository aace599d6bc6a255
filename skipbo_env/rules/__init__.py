"""The Skip-Bo rules (docs/rules.md, rule ids R1–R28), with no RL dependency.

Typical use::

    from skipbo_env.rules import GameConfig, new_game

    state = new_game(GameConfig(num_players=3), seed=0)
    while not state.is_over:
        move = state.legal_moves()[0]
        state.apply(move)
"""

from .cards import (
    DECK_SIZE,
    HAND_SIZE,
    NUMBERS,
    WILD,
    card_name,
    cards_until_playable,
    missing_numbers,
    numbers_missing,
    standard_deck,
)
from .config import GameConfig, default_stock_size
from .errors import ConfigError, GameOverError, IllegalMoveError, SkipBoError, StateError
from .illegal import IllegalReason, illegal_reason
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
from .sampling import sample_state, sample_states, unseen_cards, unseen_counts
from .scoring import MatchResult, Player, game_points, play_game, play_match
from .state import GameState, new_game, truncation_cause, validate_deck
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
    "IllegalReason",
    "MatchResult",
    "Move",
    "Play",
    "Player",
    "SeatView",
    "SkipBoError",
    "Source",
    "StateError",
    "card_name",
    "cards_until_playable",
    "default_stock_size",
    "game_points",
    "illegal_reason",
    "missing_numbers",
    "move_from_dict",
    "move_to_dict",
    "new_game",
    "numbers_missing",
    "play_game",
    "play_match",
    "sample_state",
    "sample_states",
    "standard_deck",
    "truncation_cause",
    "unseen_cards",
    "unseen_counts",
    "validate_deck",
]
