"""The vector environments over the batched engine.

* ``LearnerBatch`` plays the same episodes as ``SkipBoSingleEnv`` from the
  same states (observations, masks, rewards, ends, step by step), with
  Python-callback opponents and with the in-engine ones checked against the rules.
* The Gymnasium ``VectorEnv`` and the SB3 ``VecEnv``: spaces, autoreset,
  masks the way ``MaskablePPO`` reads them, seeding, a short ``MaskablePPO`` run.
* Bad input: illegal actions (raise / lose), bad opponents, learner seats,
  games that end before the learner moves.
"""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env.encoding import action_mask, decode_observation, encode_view
from skipbo_env.rules import ConfigError, GameConfig, IllegalMoveError

vector = pytest.importorskip("skipbo_env.vector")
LearnerBatch = vector.LearnerBatch


class ObsHashAgent:
    """A deterministic opponent: the legal action picked by a hash of the observation vector."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.calls = 0

    def act(self, observation) -> int:
        mask = np.asarray(observation["action_mask"])
        fields = decode_observation(observation["observation"], self.config)
        assert fields.to_move and mask.any(), "called for a seat that is not to move"
        self.calls += 1
        legal = np.flatnonzero(mask)
        return int(legal[int(np.asarray(observation["observation"]).view(np.uint32).sum()) % len(legal)])


def learner_pick(obs: np.ndarray, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[(int(obs.view(np.uint32).sum()) * 7 + 3) % len(legal)])


def check_learner_view(batch: LearnerBatch) -> None:
    """Every game waits for its learner; observations and masks are the rules core's."""
    eng = batch.engine
    obs = eng.observations(seats=batch.learner)
    masks = batch.action_masks()
    for slot in range(batch.num_envs):
        state = eng.to_state(slot)
        assert not state.is_over and state.current == batch.learner[slot]
        assert obs[slot].tobytes() == encode_view(state.view(int(batch.learner[slot]))).tobytes()
        assert (masks[slot] == action_mask(state.legal_moves(), state.config).astype(bool)).all()


@pytest.mark.parametrize(
    "fields",
    [
        {"num_players": 2, "short_game": True, "turn_limit": 120},
        {"num_players": 4, "partner_game": True, "stock_size": 5, "turn_limit": 120},
        {"num_players": 3, "stock_size": 4, "must_play_stock": True, "turn_limit": 60},
    ],
)
def test_episodes_match_the_single_agent_env(fields):
    """Same start states, deterministic players: the batch and SkipBoSingleEnv agree step by step."""
    from skipbo_env.single import SkipBoSingleEnv

    n = fields["num_players"]
    learner = 1
    config = GameConfig(**fields, first_player=learner)  # every game starts with the learner's move
    opponents = [ObsHashAgent(config) for _ in range(n - 1)]
    batch = LearnerBatch(config, 6, opponents=opponents, learner_seat=learner, seed=5)
    batch.reset()
    single_envs = [
        SkipBoSingleEnv(**config.to_dict(), opponents=opponents, learner_seat=learner) for _ in range(6)
    ]
    obs = batch.reset()
    singles = []
    for slot, env in enumerate(single_envs):
        single_obs, _ = env.reset(seed=slot, options={"state": batch.engine.export(slot)})
        assert single_obs.tobytes() == obs[slot].tobytes()
        singles.append(single_obs)
    episodes = 0
    for _ in range(400):
        check_learner_view(batch)
        masks = batch.action_masks().copy()
        actions = np.array([learner_pick(obs[s], masks[s]) for s in range(6)])
        starts = {}
        result = batch.step(actions)
        for slot, env in enumerate(single_envs):
            assert (env.action_masks() == masks[slot]).all()
            s_obs, s_rew, s_term, s_trunc, _ = env.step(int(actions[slot]))
            assert (s_rew, s_term, s_trunc) == (result.rewards[slot], result.terminated[slot], result.truncated[slot])
            if s_term or s_trunc:
                episodes += 1
                assert s_obs.tobytes() == result.final_obs[slot].tobytes()
                starts[slot] = batch.engine.export(slot)
                s_obs, _ = env.reset(seed=slot, options={"state": starts[slot]})
            assert s_obs.tobytes() == result.obs[slot].tobytes()
        obs = result.obs
    assert episodes >= 6
    assert sum(agent.calls for agent in opponents) > 500


@pytest.mark.parametrize("opponents", ["random", "greedy", ["greedy", "random", "greedy"]])
def test_in_engine_opponents_hand_back_learner_turns(opponents):
    config = GameConfig(num_players=4, short_game=True, turn_limit=80)
    batch = LearnerBatch(config, 16, opponents=opponents, seed=1)
    batch.reset()
    seats = set()
    ends = 0
    for _ in range(150):
        check_learner_view(batch)
        seats.update(batch.learner.tolist())
        result = batch.step(batch.engine.random_legal())
        ended = result.terminated | result.truncated
        ends += int(ended.sum())
        for slot in np.flatnonzero(ended):
            winners = result.winners[slot]
            expected = 0.0 if not winners else (1.0 if result.learner_seats[slot] in winners else -1.0)
            assert result.rewards[slot] == expected
            assert result.final_obs[slot][-1] == 0.0  # to_move is off in the final observation
        assert (result.rewards[~ended] == 0).all()
    assert ends > 10
    assert seats == {0, 1, 2, 3}  # learner_seat=None: a seat drawn per game


def test_reward_shaping_pays_the_learners_stock_plays():
    from skipbo_env.episode import STOCK_CARD_REWARD

    config = GameConfig(num_players=2, turn_limit=100)
    batch = LearnerBatch(config, 8, opponents="greedy", seed=2, reward_shaping=True)
    batch.reset()
    paid = 0
    for _ in range(100):
        actions = batch.engine.random_legal()
        result = batch.step(actions)
        stock = (actions >= 52) & (actions < 56)
        running = ~(result.terminated | result.truncated)
        assert np.allclose(result.rewards[running], np.where(stock, STOCK_CARD_REWARD, 0.0)[running])
        paid += int((stock & running).sum())
    assert paid > 0


def test_illegal_actions_raise_or_lose():
    config = GameConfig(num_players=2)
    batch = LearnerBatch(config, 3, seed=0)
    batch.reset()
    before = [batch.engine.export(s) for s in range(3)]
    actions = batch.engine.random_legal()
    bad = actions.copy()
    bad[2] = int(np.flatnonzero(~batch.action_masks()[2])[0])
    with pytest.raises(IllegalMoveError, match="slot 2"):
        batch.step(bad)
    assert [batch.engine.export(s) for s in range(3)] == before
    losing = LearnerBatch(config, 3, seed=0, illegal_action="lose")
    losing.reset()
    bad = losing.engine.random_legal()
    bad[1] = 999
    result = losing.step(bad)
    assert result.terminated.tolist() == [False, True, False]
    assert result.rewards[1] == -1.0 and result.illegal[1]
    check_learner_view(losing)


def test_bad_settings_fail_with_the_key():
    config = GameConfig(num_players=3)
    with pytest.raises(ConfigError, match="opponents"):
        LearnerBatch(config, 2, opponents=["random"])
    with pytest.raises(ConfigError, match=r"opponents\[1\]"):
        LearnerBatch(config, 2, opponents=["random", "nobody"])
    with pytest.raises(ConfigError, match=r"opponents\[0\]"):
        LearnerBatch(config, 2, opponents=[42, "random"])
    with pytest.raises(ConfigError, match="learner_seat"):
        LearnerBatch(config, 2, learner_seat=3)
    with pytest.raises(ConfigError, match="illegal_action"):
        LearnerBatch(config, 2, illegal_action="ignore")
    batch = LearnerBatch(config, 2)
    with pytest.raises(RuntimeError, match="reset"):
        batch.step(np.zeros(2, np.int64))


def test_games_ending_before_the_learner_moves_are_dealt_again():
    never = GameConfig(num_players=2, first_player=0, turn_limit=1)
    with pytest.raises(RuntimeError, match="deals in a row"):
        LearnerBatch(never, 2, learner_seat=1).reset()
    quick = GameConfig(num_players=2, stock_size=1)
    batch = LearnerBatch(quick, 64, opponents="greedy", learner_seat=1, seed=3)
    batch.reset()
    assert batch.redeals.max() > 0
    check_learner_view(batch)


def test_python_scripted_opponents_by_name():
    config = GameConfig(num_players=2, short_game=True, turn_limit=50)
    batch = LearnerBatch(config, 4, opponents="heuristic", seed=0)
    batch.reset()
    for _ in range(30):
        batch.step(batch.engine.random_legal())
        check_learner_view(batch)


def test_a_view_reading_opponent_plays_each_game_with_its_own_copy():
    """turn-2p keeps a plan across the moves of a turn: each game gets its own copy (sharing the
    network), so the plan of one game is not thrown away by the next game's move; the copies are
    seeded from the batch's seed (same seed, same games)."""
    from skipbo_env.episode import load_opponent

    config = GameConfig(num_players=2)  # the game turn-2p was made for
    runs = []
    for _ in range(2):
        agent = load_opponent("turn-2p", config, 0, seed=0)
        batch = LearnerBatch(config, 4, opponents=agent, seed=5)
        batch.reset()
        taken = []
        for _ in range(40):
            taken.append(batch.engine.random_legal())
            batch.step(taken[-1])
            check_learner_view(batch)
        copies = batch._game_agents
        assert agent.decisions == 0 and {game for game, _ in copies} == set(range(4))
        assert len({id(c) for c in copies.values()}) == 4 and all(c.net is agent.net for c in copies.values())
        searches = sum(c.searches for c in copies.values())
        decisions = sum(c.decisions for c in copies.values())
        assert 0 < searches < decisions  # later moves of a planned turn follow the plan
        runs.append((batch.engine.observations(seats=batch.learner).tobytes(), decisions))
    assert runs[0] == runs[1]


# ------------------------------------------------------------------ Gymnasium
def test_gymnasium_vector_env():
    from gymnasium.vector import AutoresetMode

    config = GameConfig(num_players=2, short_game=True, turn_limit=60)
    envs = vector.SkipBoVectorEnv(config, 8, opponents="greedy")
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert envs.observation_space.shape == (8, 435) and envs.single_action_space.n == 125
    obs, infos = envs.reset(seed=4)
    assert obs.dtype == np.float32 and obs.shape == (8, 435)
    assert obs in envs.observation_space
    first = obs.copy()
    ended = 0
    rng = np.random.default_rng(0)
    for _ in range(300):
        mask = infos["action_mask"]
        assert (mask.astype(bool) == envs.action_masks()).all()
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        done = terminations | truncations
        if done.any():
            assert (infos["_final_obs"] == done).all()
            for i in np.flatnonzero(done):
                assert infos["final_obs"][i].shape == (435,)
                assert "winners" in infos["final_info"][i]
            ended += int(done.sum())
    assert ended > 0
    obs, _ = envs.reset(seed=4)
    assert (obs == first).all()  # same seed, same games
    with pytest.raises(ValueError, match="options"):
        envs.reset(options={"deck": []})
    envs.close()



@pytest.mark.parametrize("illegal_action", ["raise", "lose"])
def test_next_step_autoreset_is_the_same_games_with_a_reset_step_after_each_end(illegal_action):
    """``autoreset_mode="next_step"``: the same games as same-step mode, each end followed by a
    step that returns the next deal's first observation, reward 0, the action sent ignored."""
    from gymnasium.vector import AutoresetMode

    config = GameConfig(num_players=2, short_game=True, turn_limit=60)
    kwargs = dict(opponents="greedy", seed=5, illegal_action=illegal_action)
    same = vector.SkipBoVectorEnv(config, 1, **kwargs)
    nxt = vector.SkipBoVectorEnv(config, 1, autoreset_mode="next_step", **kwargs)
    assert nxt.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert same.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP  # the class's default untouched
    obs_s, info_s = same.reset(seed=5)
    obs_n, info_n = nxt.reset(seed=5)
    assert (obs_s == obs_n).all()
    ends = 0
    for _ in range(600):
        actions = info_s["action_mask"].argmax(axis=1)  # the first legal action: both runs play alike
        obs_s, rew_s, term_s, trunc_s, info_s = same.step(actions)
        obs_n, rew_n, term_n, trunc_n, info_n = nxt.step(actions)
        assert (term_n == term_s).all() and (trunc_n == trunc_s).all() and (rew_n == rew_s).all()
        if not (term_s | trunc_s)[0]:
            assert (obs_n == obs_s).all() and (info_n["action_mask"] == info_s["action_mask"]).all()
            continue
        ends += 1
        assert (obs_n[0] == info_s["final_obs"][0]).all() and not info_n["action_mask"].any()
        assert info_n["final_info"][0] == info_s["final_info"][0]
        obs_n, rew_n, term_n, trunc_n, info_n = nxt.step(np.array([-1]))  # ignored, though illegal
        assert (obs_n == obs_s).all() and rew_n[0] == 0 and not (term_n | trunc_n)[0]
        assert (info_n["action_mask"] == info_s["action_mask"]).all()
    assert ends >= 3


def test_next_step_autoreset_holds_only_the_games_that_ended():
    config = GameConfig(num_players=2, short_game=True, turn_limit=60)
    envs = vector.SkipBoVectorEnv(config, 6, opponents="random", seed=1, autoreset_mode="next_step")
    obs, infos = envs.reset(seed=1)
    held = np.zeros(6, bool)
    for _ in range(500):
        actions = np.where(held, 0, infos["action_mask"].argmax(axis=1))
        before = obs.copy()
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        assert (rewards[held] == 0).all() and not (terminations | truncations)[held].any()
        assert infos["action_mask"][held].any(axis=1).all()  # a fresh deal, waiting for the learner
        assert (obs[held] != before[held]).any(axis=1).all()
        held = terminations | truncations
    with pytest.raises(ConfigError, match="autoreset_mode"):
        vector.SkipBoVectorEnv(config, 2, autoreset_mode="later")

# ------------------------------------------------------------------ SB3
def test_sb3_vec_env_masks_autoreset_and_seeding():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    env = vector.make_vec_env({"num_players": 2, "short_game": True, "turn_limit": 60}, 6, "greedy", seed=1)
    assert is_masking_supported(env)
    obs = env.reset()
    assert obs.shape == (6, 435)
    assert env.get_attr("learner_seat") == env.batch.learner.tolist()
    rng = np.random.default_rng(0)
    trajectory = []
    finished = 0
    for _ in range(200):
        masks = get_action_masks(env)
        assert masks.shape == (6, 125) and masks.dtype == bool
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in masks])
        obs, rewards, dones, infos = env.step(actions)
        trajectory.append((obs.copy(), rewards.copy()))
        for i in np.flatnonzero(dones):
            finished += 1
            assert infos[i]["terminal_observation"].shape == (435,)
            assert isinstance(infos[i]["TimeLimit.truncated"], bool)
    assert finished > 0
    env.seed(1)
    again = env.reset()
    env2 = vector.make_vec_env({"num_players": 2, "short_game": True, "turn_limit": 60}, 6, "greedy", seed=1)
    assert (env2.reset() == again).all()
    with pytest.raises(ConfigError, match="unknown option"):
        vector.make_vec_env(None, 2, learner=1)


# ------------------------------------------------------------------ move limit
MOVE_LIMIT = 120


def lowest_actions(masks: np.ndarray) -> np.ndarray:
    """The lowest legal action id per game: plays hand cards (wilds too) and never discards while it can
    play, which can keep one turn going forever (cards cycle through reshuffles, R13, R15, R19)."""
    return masks.astype(bool).argmax(axis=1)


def test_move_limit_truncates_in_both_vector_envs():
    """Games reaching ``move_limit`` end truncated with reward 0: ``truncations`` in Gymnasium,
    ``TimeLimit.truncated`` in SB3. Turns never reach the turn limit here (turn <= moves < 120 < 1000)."""
    config = GameConfig(num_players=2, move_limit=MOVE_LIMIT)
    envs = vector.SkipBoVectorEnv(config, 4, opponents="random", learner_seat=0)
    obs, infos = envs.reset(seed=3)
    engine = envs.batch.engine
    truncated = 0
    for _ in range(400):
        before = engine.moves.copy()
        assert (before < MOVE_LIMIT).all()
        obs, rewards, terminations, truncations, infos = envs.step(lowest_actions(infos["action_mask"]))
        assert not (terminations & truncations).any()
        assert (terminations | truncations)[before == MOVE_LIMIT - 1].all()  # the learner's move hit the limit
        assert (rewards[truncations] == 0).all()
        truncated += int(truncations.sum())
    assert truncated >= 8
    envs.close()

    env = vector.make_vec_env(config, 4, "random", learner_seat=0, seed=3)
    env.reset()
    flags = []
    for _ in range(400):
        obs, rewards, dones, infos = env.step(lowest_actions(env.action_masks()))
        for i in np.flatnonzero(dones):
            flags.append(infos[i]["TimeLimit.truncated"])
            if flags[-1]:
                assert rewards[i] == 0
    assert sum(flags) >= 8


def test_maskable_ppo_learns_a_few_steps():
    from sb3_contrib import MaskablePPO

    env = vector.make_vec_env(GameConfig(num_players=2, short_game=True, turn_limit=50), 8, "random", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(512)
    assert model.num_timesteps >= 512
