"""The episode contract: what every env path and the imitation data agree on, and the one game loop.

The PettingZoo AEC env (:mod:`skipbo_env.aec`), the single-agent env (:mod:`skipbo_env.single`),
the batched learner (:mod:`skipbo_env.vector.learner`) and behaviour-cloning data
(:mod:`skipbo_env.training.pretrain`) all use it. One module per concept:

* :mod:`~skipbo_env.episode.rewards`: terminal rewards (+1 to the winning side, -1 to the
  others, 0 when truncated) and the optional stock-card shaping;
* :mod:`~skipbo_env.episode.options`: the illegal-action modes (``"raise"``, ``"lose"``), the
  env flags, the learner's seat, and the redeal cap with its error;
* :mod:`~skipbo_env.episode.opponent_specs`: one opponent spec per other seat, and the agent a
  name stands for (:func:`load_opponent`, through the agent registry);
* :mod:`~skipbo_env.episode.loop`: the one game loop (:class:`GameLoop`, stepped a decision at
  a time; :func:`decisions`, its generator form; :func:`play_batched`, many games in lockstep),
  which imitation data, tournaments, terminal play, the browser table and benchmarks drive.

Truncation wording lives in the rules (:func:`skipbo_env.rules.truncation_cause`): their own
errors word it too.
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
