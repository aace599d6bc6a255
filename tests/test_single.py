"""Gymnasium single-agent env SkipBo-v0 (skipbo_env/single.py, docs/environments.md)."""

from __future__ import annotations

import pickle
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import skipbo_env
from skipbo_env.encoding import decode_action
from skipbo_env.rules import WILD, ConfigError, Discard, GameConfig, IllegalMoveError, Play, Source, new_game
from skipbo_env.single import SkipBoSingleEnv


def position(config: GameConfig, to_move: int, stocks: dict[int, list[int]], seed: int = 1) -> dict:
    """A fresh deal where ``to_move`` moves first and the given seats' stocks are replaced.

    Replaced stock cards go under the draw pile; the new stock cards are taken from it.
    """
    data = new_game(config, seed=seed).to_dict()
    first = data["current_player"]
    data["hands"][to_move], data["hands"][first] = data["hands"][first], data["hands"][to_move]
    data["current_player"] = to_move
    for seat, cards in stocks.items():
        data["draw_pile"] = data["stocks"][seat] + data["draw_pile"]
        for card in cards:
            data["draw_pile"].remove(card)
        data["stocks"][seat] = list(cards)
    return data


def first_action(env: SkipBoSingleEnv, predicate) -> int:
    for action in np.flatnonzero(env.action_masks()):
        if predicate(decode_action(int(action), env.config)):
            return int(action)
    raise AssertionError("no such legal action")


def is_stock_play(move) -> bool:
    return isinstance(move, Play) and move.source is Source.STOCK


def random_episode(env: SkipBoSingleEnv, seed: int, rng: np.random.Generator) -> list:
    obs, info = env.reset(seed=seed)
    out = [(obs.tobytes(), info["learner"])]
    done = False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        obs, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
        assert env.observation_space.contains(obs)
        out.append((obs.tobytes(), reward, terminated, truncated))
        done = terminated or truncated
    return out


# ------------------------------------------------------------ checkers
@pytest.mark.parametrize(
    "config",
    [dict(num_players=2), dict(num_players=4, partner_game=True, opponents=["greedy", "random", "greedy"])],
)
def test_gymnasium_and_sb3_env_checkers(config):
    # the checkers step with unmasked random actions: illegal ones must end the episode, not raise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checkers' advice on Box bounds and the human render's print
        env = gymnasium.make("SkipBo-v0", illegal_action="lose", render_mode="ansi", **config)
        gymnasium_check_env(env.unwrapped)
        sb3_check_env(SkipBoSingleEnv(illegal_action="lose", **config))


def test_registration_and_spaces():
    env = gymnasium.make("SkipBo-v0", num_players=3, opponents="greedy")
    assert env.spec.id == skipbo_env.GYMNASIUM_ID == "SkipBo-v0"
    single = env.unwrapped
    assert isinstance(single, SkipBoSingleEnv)
    assert single.observation_space.shape == (620,) and single.observation_space.dtype == np.float32
    assert single.action_space.n == 125
    obs, info = env.reset(seed=0)
    assert obs.shape == (620,) and info["learner"] in ("player_0", "player_1", "player_2")
    mask = env.get_wrapper_attr("action_masks")()  # how SB3 and sb3-contrib reach it through wrappers
    assert mask.dtype == bool and mask.any()


# ------------------------------------------------------------ rewards: the learner's own only
def test_opponent_win_gives_the_learner_minus_one():
    config = GameConfig(num_players=2)
    data = position(config, to_move=0, stocks={1: [WILD]})
    for shaping in (False, True):
        env = SkipBoSingleEnv(num_players=2, learner_seat=0, opponents="greedy", reward_shaping=shaping)
        env.reset(seed=0, options={"state": data})
        obs, reward, terminated, truncated, info = env.step(first_action(env, lambda m: isinstance(m, Discard)))
        assert env.aec.rewards["player_1"] > 0  # the opponent's winning step paid the opponent ...
        assert reward == -1.0  # ... and the learner gets its own loss, never that reward
        assert terminated and not truncated and info["winners"] == ["player_1"]
        assert not env.action_masks().any()


def test_learner_win_and_partner_win_give_plus_one():
    env = SkipBoSingleEnv(num_players=3, learner_seat=1, opponents="random")
    env.reset(seed=0, options={"state": position(GameConfig(num_players=3), to_move=1, stocks={1: [WILD]})})
    _, reward, terminated, _, info = env.step(first_action(env, is_stock_play))
    assert (reward, terminated, info["winners"]) == (1.0, True, ["player_1"])

    # partner game: the learner (seat 0) discards; seat 1 moves; the partner (seat 2) plays its last card
    config = GameConfig(num_players=4, partner_game=True)
    data = position(config, to_move=0, stocks={0: [], 2: [WILD]})
    env = SkipBoSingleEnv(**config.to_dict(), learner_seat=0, opponents="greedy")
    env.reset(seed=0, options={"state": data})
    _, reward, terminated, _, info = env.step(first_action(env, lambda m: isinstance(m, Discard)))
    assert (reward, terminated, info["winners"]) == (1.0, True, ["player_0", "player_2"])


def test_truncation_gives_zero():
    env = SkipBoSingleEnv(num_players=2, learner_seat=0, first_player=0, turn_limit=2, opponents="greedy")
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(first_action(env, lambda m: isinstance(m, Discard)))
    assert (reward, terminated, truncated, info["winners"]) == (0.0, False, True, [])


def test_shaping_rewards_only_the_learners_stock_cards():
    config = GameConfig(num_players=2)
    data = position(config, to_move=0, stocks={0: [5, WILD], 1: [12, WILD]})
    env = SkipBoSingleEnv(num_players=2, learner_seat=0, opponents="greedy", reward_shaping=True)
    env.reset(seed=0, options={"state": data})
    _, reward, *_ = env.step(first_action(env, is_stock_play))
    assert reward == pytest.approx(0.01)
    _, reward, *_ = env.step(first_action(env, lambda m: isinstance(m, Discard)))
    assert reward == 0.0  # the opponent's stock play (shaped for it) is not the learner's


# ------------------------------------------------------------ episodes
def test_random_masked_episodes_end_with_a_result():
    rng = np.random.default_rng(0)
    env = SkipBoSingleEnv(num_players=3, stock_size=3, opponents=["random", "random"])
    results = set()
    for seed in range(10):
        episode = random_episode(env, seed, rng)
        *_, (_, reward, terminated, truncated) = episode
        assert terminated != truncated
        assert reward in (-1.0, 1.0) if terminated else reward == 0.0
        assert all(r == 0.0 for _, r, *_ in episode[1:-1])
        results.add(reward)
    assert {-1.0, 1.0} <= results  # random play also stalls into truncations (0)


def test_same_seed_same_episode_and_random_seats():
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    a = SkipBoSingleEnv(num_players=4, stock_size=4, opponents=["greedy", "random", "random"])
    b = SkipBoSingleEnv(num_players=4, stock_size=4, opponents=["greedy", "random", "random"])
    assert random_episode(a, 3, rng_a) == random_episode(b, 3, rng_b)
    seats = set()
    for seed in range(12):
        _, info = a.reset(seed=seed)
        seats.add(info["learner"])
    assert len(seats) >= 3
    a.reset(seed=5)
    b.reset(seed=5)
    a.reset()
    b.reset()
    assert a.aec.game.to_dict() == b.aec.game.to_dict()  # unseeded resets continue the generator


def test_opponents_move_first_inside_reset():
    calls = []

    class Recorder:
        def act(self, observation):
            calls.append(observation)
            return int(np.flatnonzero(observation["action_mask"])[-1])  # a discard or end turn (highest ids)

    env = SkipBoSingleEnv(num_players=3, first_player=1, learner_seat=0, opponents=Recorder())
    obs, info = env.reset(seed=0)
    assert env.aec.game.current == 0 and env.aec.game.turn == 2 and info["turn"] == 2
    assert len(calls) >= 2 and all(c["action_mask"].any() for c in calls)
    assert np.array_equal(obs, env.aec.observe("player_0")["observation"])
    assert np.array_equal(env.action_masks(), env.aec.observe("player_0")["action_mask"].astype(bool))


def test_illegal_learner_action():
    env = SkipBoSingleEnv(num_players=2, learner_seat=0)
    env.reset(seed=2)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.aec.game.to_dict()
    with pytest.raises(IllegalMoveError, match="illegal move"):
        env.step(illegal)
    assert env.aec.game.to_dict() == before
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # the episode goes on
    with pytest.raises(ValueError, match="action must be an int"):
        env.step(125)

    lose = SkipBoSingleEnv(num_players=2, learner_seat=0, illegal_action="lose")
    lose.reset(seed=2)
    _, reward, terminated, truncated, info = lose.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    with pytest.raises(RuntimeError, match="reset"):
        lose.step(0)


def test_step_before_reset_and_bad_configs():
    with pytest.raises(RuntimeError, match="reset"):
        SkipBoSingleEnv().step(0)
    with pytest.raises(ConfigError, match="opponents"):
        SkipBoSingleEnv(num_players=3, opponents=["greedy"])
    with pytest.raises(ConfigError, match="unknown agent 'ppo-9000'"):
        SkipBoSingleEnv(opponents="ppo-9000")
    with pytest.raises(ConfigError, match="act"):
        SkipBoSingleEnv(opponents=[42])
    with pytest.raises(ConfigError, match="learner_seat"):
        SkipBoSingleEnv(num_players=2, learner_seat=2)
    with pytest.raises(ConfigError, match="illegal_action"):
        SkipBoSingleEnv(illegal_action="ignore")
    with pytest.raises(ConfigError, match="unknown key"):
        SkipBoSingleEnv(opponent="greedy")


def test_games_that_end_before_the_learner_moves_are_dealt_again():
    env = SkipBoSingleEnv(num_players=2, stock_size=1, learner_seat=1, first_player=0, opponents="greedy")
    redeals = 0
    for seed in range(30):
        _, info = env.reset(seed=seed)
        assert not env.aec.game.is_over and env.aec.game.current == 1
        redeals += info["redeals"]
    assert redeals > 0
    never = SkipBoSingleEnv(num_players=2, turn_limit=1, learner_seat=1, first_player=0)
    with pytest.raises(RuntimeError, match="before the learner's first move"):
        never.reset(seed=0)


def test_render_shows_the_learners_view():
    env = SkipBoSingleEnv(num_players=3, learner_seat=2, render_mode="ansi")
    env.reset(seed=0)
    assert env.render().startswith("player_2's view")
    full = SkipBoSingleEnv(num_players=3, learner_seat=2, render_mode="ansi", render_full=True)
    full.reset(seed=0)
    assert full.render().startswith("full information")
    # "human" shows a picture in a window: tests/test_render.py


def test_pickled_env_continues_identically():
    env = SkipBoSingleEnv(num_players=3, opponents="greedy")
    env.reset(seed=9)
    clone = pickle.loads(pickle.dumps(env))
    rng_a, rng_b = np.random.default_rng(4), np.random.default_rng(4)
    for _ in range(30):
        la, lb = np.flatnonzero(env.action_masks()), np.flatnonzero(clone.action_masks())
        assert np.array_equal(la, lb)
        ra = env.step(int(la[rng_a.integers(len(la))]))
        rb = clone.step(int(lb[rng_b.integers(len(lb))]))
        assert np.array_equal(ra[0], rb[0]) and ra[1:4] == rb[1:4]
        if ra[2] or ra[3]:
            break


# ------------------------------------------------------------ SB3
def _make_env(rank: int):
    def make():
        return SkipBoSingleEnv(num_players=2, stock_size=5, opponents="greedy", turn_limit=200)

    return make


def test_maskable_ppo_under_vec_envs():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    for vec_cls in (SubprocVecEnv, DummyVecEnv):
        vec = vec_cls([_make_env(i) for i in range(2)])
        try:
            vec.seed(0)
            model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, seed=0, verbose=0)
            model.learn(total_timesteps=256)
            assert model.num_timesteps >= 256
        finally:
            vec.close()
