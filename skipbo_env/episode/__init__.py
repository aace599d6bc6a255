"""The episode contract: what every env path and the imitation data agree on, and the one game loop.

One module per concept: :mod:`.rewards` (terminal rewards and the stock-card shaping),
:mod:`.options` (illegal-action modes, flags, the learner's seat, the redeal cap),
:mod:`.opponent_specs` (one opponent spec per other seat, :func:`load_opponent`) and
:mod:`.loop` (the one game loop: :class:`GameLoop`, :func:`decisions`, :func:`play_batched`).
The AEC env, the single-agent env, the batched learner and behaviour-cloning data all use it
(docs/environments.md, "The episode contract").
"""

from .loop import AgentError, Decision, GameLoop, decisions, play_batched
from .opponent_specs import load_opponent, opponent_specs
from .options import (
    ILLEGAL_ACTION_MODES,
    MAX_REDEALS,
    check_flag,
    check_illegal_action,
    check_learner_seat,
    redeal_error,
)
from .rewards import (
    ILLEGAL_ACTION_REWARD,
    LOSS_REWARD,
    STOCK_CARD_REWARD,
    WIN_REWARD,
    is_shaped_move,
    shaped_actions,
    shaping_reward,
    terminal_rewards,
)

__all__ = [
    "ILLEGAL_ACTION_MODES",
    "ILLEGAL_ACTION_REWARD",
    "LOSS_REWARD",
    "MAX_REDEALS",
    "STOCK_CARD_REWARD",
    "WIN_REWARD",
    "AgentError",
    "Decision",
    "GameLoop",
    "check_flag",
    "check_illegal_action",
    "check_learner_seat",
    "decisions",
    "is_shaped_move",
    "load_opponent",
    "opponent_specs",
    "play_batched",
    "redeal_error",
    "shaped_actions",
    "shaping_reward",
    "terminal_rewards",
]
