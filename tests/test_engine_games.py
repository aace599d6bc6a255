"""Tournament games played in the batched engine (scripted seats replayed in compiled code) end
exactly as the rules-core loop plays them, and the in-engine heuristic opponent of the vector envs
makes the Python heuristic's moves."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from skipbo_env.agents.tournament import run_tournament  # noqa: E402
from skipbo_env.bots.protocol import AgentBase  # noqa: E402
from skipbo_env.episode import AgentError  # noqa: E402
from skipbo_env.rules import GameConfig, new_game  # noqa: E402
from skipbo_env.vector import LearnerBatch  # noqa: E402
from skipbo_env.vector.engine_games import IN_ENGINE, OUTSIDE, play_engine_games  # noqa: E402

CASES = [
    (("heuristic", "greedy"), GameConfig(num_players=2), 16),
    (("random", "heuristic"), GameConfig(num_players=3, short_game=True), 12),
    (("greedy", "heuristic"), GameConfig(num_players=4, partner_game=True, stock_size=10), 8),
    (("heuristic", "greedy", "random"), GameConfig(num_players=6, stock_size=6), 12),
    (("heuristic", "greedy"), GameConfig(num_players=2, allow_wild_discard=False, must_play_stock=True), 12),
    (("greedy", "random"), GameConfig(num_players=2, short_game=True), 40),
    (("ppo-2p", "heuristic"), GameConfig(num_players=2), 8),
]


@pytest.mark.parametrize("specs,config,games", CASES, ids=lambda x: "-".join(x) if isinstance(x, tuple) else None)
def test_engine_tournament_equals_rules_core_tournament(specs, config, games, tmp_path):
    """Saving records keeps the rules-core loop; without, the engine plays: the same games."""
    in_engine = run_tournament(specs, config, games=games, seed=11, workers=1, batch_size=5)
    rules = run_tournament(specs, config, games=games, seed=11, workers=1, batch_size=5,
                           records_dir=str(tmp_path))
    assert len(list(tmp_path.iterdir())) == games
    assert in_engine.games == rules.games
    assert in_engine.summary() == rules.summary()


class _Illegal(AgentBase):
    """A batched agent that always picks an illegal action."""

    batched = True

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    def act_batch(self, observations):
        return np.array([int(np.flatnonzero(o["action_mask"] == 0)[0]) for o in observations])


def test_outside_agent_illegal_action_is_named():
    config = GameConfig(num_players=2, short_game=True)
    states = [new_game(config, seed=s) for s in range(3)]
    with pytest.raises(AgentError, match=r"game \d: player_\d \(bad\) chose action \d+, which is not a legal"):
        play_engine_games(states, [[OUTSIDE, IN_ENGINE["greedy"]]] * 3, [[0, 1]] * 3,
                          [[_Illegal(), None]] * 3, [["bad", "greedy"]] * 3)


def test_seat_without_agent_or_with_an_unbatched_agent_is_refused():
    """An outside seat needs an agent that declares ``batched``."""
    from skipbo_env.bots import GreedyAgent

    config = GameConfig(num_players=2, short_game=True)
    with pytest.raises(ValueError, match="no in-engine kind and no batched agent"):
        play_engine_games([new_game(config, seed=0)], [[OUTSIDE, OUTSIDE]], [[0, 0]], [[None, None]])
    with pytest.raises(ValueError, match="no in-engine kind and no batched agent"):
        play_engine_games([new_game(config, seed=0)], [[OUTSIDE, OUTSIDE]], [[0, 0]],
                          [[GreedyAgent(config), GreedyAgent(config)]])


@pytest.mark.parametrize("fields", [
    {"num_players": 2, "turn_limit": 200},
    {"num_players": 4, "partner_game": True, "stock_size": 6, "turn_limit": 150},
])
def test_in_engine_heuristic_opponents_match_the_single_agent_env(fields):
    """LearnerBatch plays "heuristic" opponents in the kernels; SkipBoSingleEnv asks Python
    heuristic agents: from the same states, the same episodes (rewards, observations)."""
    from skipbo_env.single import SkipBoSingleEnv

    learner = 0
    config = GameConfig(**fields, first_player=learner)
    batch = LearnerBatch(config, 4, opponents="heuristic", learner_seat=learner, seed=3)
    obs = batch.reset()
    envs = [SkipBoSingleEnv(**config.to_dict(), opponents="heuristic", learner_seat=learner) for _ in range(4)]
    for slot, env in enumerate(envs):
        single_obs, _ = env.reset(seed=slot, options={"state": batch.engine.export(slot)})
        assert single_obs.tobytes() == obs[slot].tobytes()
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(300):
        masks = batch.action_masks().copy()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        result = batch.step(actions)
        for slot, env in enumerate(envs):
            s_obs, s_rew, s_term, s_trunc, _ = env.step(int(actions[slot]))
            assert (s_rew, s_term, s_trunc) == (result.rewards[slot], result.terminated[slot], result.truncated[slot])
            if s_term or s_trunc:
                episodes += 1
                s_obs, _ = env.reset(seed=slot, options={"state": batch.engine.export(slot)})
            assert s_obs.tobytes() == result.obs[slot].tobytes()
        obs = result.obs
    assert episodes >= 2


def test_network_tournament_is_the_same_with_two_torch_threads(tmp_path):
    """With two intra-op threads (torch's default on a 2-core machine) a game's moves still do not
    depend on its batch: the network's forward pass runs on one thread, so the engine and the
    rules-core loop play the same games, and the caller's thread setting is restored."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        config = GameConfig(num_players=2)
        in_engine = run_tournament(("ppo-2p", "heuristic"), config, games=8, seed=11, workers=1, batch_size=5)
        rules = run_tournament(("ppo-2p", "heuristic"), config, games=8, seed=11, workers=1, batch_size=5,
                               records_dir=str(tmp_path))
        assert in_engine.games == rules.games
        assert torch.get_num_threads() == 2  # the caller's setting is restored
    finally:
        torch.set_num_threads(before)
