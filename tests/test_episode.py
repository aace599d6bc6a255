"""The episode contract (skipbo_env/episode/): one set of rewards on every path.

The AEC env, the single-agent env, the batched learner and behaviour-cloning
data each turn a game into the learner's rewards; here all four play the same
games (same deal, same deterministic players) and must hand the learner the
same rewards, shaping included. Also: the shaping predicate and its action-id
mask agree, and every env checks its options and opponent specs the same way
(the game loop's own tests: tests/test_game_loop.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env.aec import raw_env
from skipbo_env.bots import make_bot
from skipbo_env.encoding import decode_action, num_actions
from skipbo_env.episode import (
    STOCK_CARD_REWARD,
    decisions,
    is_shaped_move,
    shaped_actions,
    terminal_rewards,
)
from skipbo_env.rules import ALL_MOVES, ConfigError, GameConfig, Play, Source, new_game
from skipbo_env.single import SkipBoSingleEnv
from skipbo_env.training.pretrain import _Deal, _play
from skipbo_env.vector import LearnerBatch

GAMES = [  # (config, learner seat, player per seat, deal seed)
    (GameConfig(num_players=2, stock_size=6, first_player=0), 0, ("greedy", "heuristic"), 3),
    (GameConfig(num_players=2, stock_size=8, first_player=1), 1, ("heuristic", "greedy"), 11),
    (GameConfig(num_players=3, stock_size=5, first_player=2), 2, ("greedy", "random", "heuristic"), 5),
    (GameConfig(num_players=4, partner_game=True, stock_size=4, first_player=1), 1,
     ("greedy", "heuristic", "random", "greedy"), 7),
    (GameConfig(num_players=2, stock_size=20, first_player=0, turn_limit=12), 0, ("greedy", "greedy"), 2),
]
"""Small stocks so games end quickly; the last one is truncated at its turn limit (reward 0)."""


def players(config: GameConfig, names: tuple[str, ...]) -> list:
    return [make_bot(name, config, seed=100 + seat) for seat, name in enumerate(names)]


def credit(rewards: list[float], reward: float, learner_moved: bool) -> None:
    """The learner's reward per decision: its own step's reward, plus what arrives before its next move."""
    if learner_moved:
        rewards.append(reward)
    elif rewards:
        rewards[-1] += reward


def aec_rewards(config, learner, names, start) -> list[float]:
    env = raw_env(**config.to_dict(), reward_shaping=True)
    env.reset(options={"state": start})
    bots, me, out = players(config, names), f"player_{learner}", []
    while not env.game.is_over:
        seat = env.game.current
        env.step(bots[seat].act(env.observe(f"player_{seat}")))
        credit(out, env.rewards[me], seat == learner)
    return out


def single_rewards(config, learner, names, start) -> list[float]:
    bots = players(config, names)
    n = config.num_players
    opponents = [bots[(learner + k) % n] for k in range(1, n)]
    env = SkipBoSingleEnv(**config.to_dict(), opponents=opponents, learner_seat=learner, reward_shaping=True)
    obs, info = env.reset(options={"state": start})
    out, done = [], False
    while not done:
        action = bots[learner].act({"observation": obs, "action_mask": info["action_mask"]})
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(reward)
        done = terminated or truncated
    return out


def batch_rewards(config, learner, names, start) -> list[float]:
    bots = players(config, names)
    n = config.num_players
    opponents = [bots[(learner + k) % n] for k in range(1, n)]
    batch = LearnerBatch(config, 1, opponents=opponents, learner_seat=learner, seed=0, reward_shaping=True)
    batch.reset()
    batch.engine.load(0, start)  # the game to compare; its learner is to move
    obs = batch._finish_observations()
    out = []
    while True:
        mask = batch.action_masks()[0].astype(np.int8)
        result = batch.step(np.array([bots[learner].act({"observation": obs[0], "action_mask": mask})]))
        out.append(float(result.rewards[0]))
        if result.terminated[0] or result.truncated[0]:
            return out
        obs = result.obs


def cloning_returns(config, learner, names, seed) -> list[float]:
    deal = _Deal(learner, names, tuple(100 + s for s in range(config.num_players)), seed)
    _, _, _, returns, _, _ = _play(config, names[learner], [deal], None, gamma=1.0, shaping=True)
    return returns


def returns_of(rewards: list[float]) -> list[float]:
    ret, out = 0.0, []
    for r in reversed(rewards):
        ret = r + 1.0 * ret
        out.append(ret)
    return out[::-1]


@pytest.mark.parametrize("config,learner,names,seed", GAMES)
def test_the_four_paths_give_the_learner_the_same_rewards(config, learner, names, seed):
    start = new_game(config, seed=seed).to_dict()
    aec = aec_rewards(config, learner, names, start)
    assert len(aec) > 1
    assert single_rewards(config, learner, names, start) == aec
    assert batch_rewards(config, learner, names, start) == pytest.approx(aec, abs=1e-12)
    assert cloning_returns(config, learner, names, seed) == pytest.approx(returns_of(aec), abs=1e-12)
    final = start_to_end(config, names, start)
    expected_terminal = terminal_rewards(config, final.winner)[learner]
    shaping = sum(aec) - expected_terminal
    assert shaping == pytest.approx(STOCK_CARD_REWARD * round(shaping / STOCK_CARD_REWARD), abs=1e-12)
    assert shaping >= 0


def start_to_end(config, names, start):
    from skipbo_env.rules import GameState

    state = GameState.from_dict(start)
    for _ in decisions(state, players(config, names)):
        pass
    return state


def test_terminal_rewards_follow_the_sides():
    two = GameConfig(num_players=2)
    assert terminal_rewards(two, 1) == (-1.0, 1.0)
    assert terminal_rewards(two, None) == (0.0, 0.0)
    partners = GameConfig(num_players=6, partner_game=True)  # teams: seats 0/3, 1/4, 2/5
    assert terminal_rewards(partners, 4) == (-1.0, 1.0, -1.0, -1.0, 1.0, -1.0)


@pytest.mark.parametrize("partner_game", [False, True])
def test_the_shaping_mask_is_the_shaping_predicate(partner_game):
    config = GameConfig(num_players=4, partner_game=partner_game)
    mask = shaped_actions(partner_game)
    assert mask.shape == (num_actions(config),) and not mask.flags.writeable
    for action, shaped in enumerate(mask):
        move = decode_action(action, config)
        assert shaped == is_shaped_move(move)
        assert shaped == (isinstance(move, Play) and move.source in (Source.STOCK, Source.PARTNER_STOCK))
    assert mask.sum() == (8 if partner_game else 4)
    assert ALL_MOVES[int(np.flatnonzero(mask)[0])] == Play(Source.STOCK, 0)


def test_opponent_specs_are_checked_the_same_way_by_every_env():
    config = GameConfig(num_players=3)
    for make in (
        lambda spec: SkipBoSingleEnv(num_players=3, opponents=spec),
        lambda spec: LearnerBatch(config, 2, opponents=spec),
    ):
        with pytest.raises(ConfigError, match=r"opponents\[1\]: unknown agent 'nobody'; known agents"):
            make(["greedy", "nobody"])
        with pytest.raises(ConfigError, match="needs one spec per other seat"):
            make(["greedy"] * 3)
        with pytest.raises(ConfigError, match=r"opponents\[0\]: must be an agent name or an object with act"):
            make([3, "greedy"])
