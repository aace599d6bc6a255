"""The AEC env's observations and its cached masks equal ``encoding.observe`` after every move, and
``env()`` plays as PettingZoo's wrapper stack does."""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env.aec import raw_env
from skipbo_env.encoding import observe
from skipbo_env.rules import GameConfig, new_game

CONFIGS = [
    dict(num_players=2),
    dict(num_players=3, short_game=True),
    dict(num_players=4, partner_game=True, stock_size=8),
    dict(num_players=5, stock_size=5),
    dict(num_players=6, partner_game=True, stock_size=5),
    dict(num_players=2, stock_size=3, turn_limit=40),  # truncations
]


def check_all_seats(env, game) -> None:
    for seat, agent in enumerate(env.possible_agents):
        got = env.observe(agent)
        want = observe(game, seat)
        assert got["observation"].dtype == np.float32 and got["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(got["observation"], want["observation"])
        np.testing.assert_array_equal(got["action_mask"], want["action_mask"])


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_every_seat_after_every_move(config):
    """All seats observed after each move, and (second half of each game) only now and then, so
    that changes pile up between two observations of a seat."""
    env = raw_env(**config)
    rng = np.random.default_rng(7)
    for game_index in range(4):
        env.reset(seed=game_index)
        game = env.unwrapped.game
        moves = 0
        while env.agents and not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            if moves < 150 or rng.random() < 0.05:
                check_all_seats(env, game)
            mask = env.observe(env.agent_selection)["action_mask"]
            legal = np.flatnonzero(mask)
            env.step(int(legal[rng.integers(len(legal))]))
            moves += 1
        check_all_seats(env, game)  # the final position, game over: every mask is zero


def test_observations_are_fresh_arrays():
    env = raw_env()
    env.reset(seed=0)
    a = env.observe(env.agent_selection)
    a["observation"][:] = 7
    a["action_mask"][:] = 0
    b = env.observe(env.agent_selection)
    np.testing.assert_array_equal(b["observation"], observe(env.game, env.game.current)["observation"])
    assert b["action_mask"].any()


def test_reset_with_a_loaded_state_observes_the_loaded_game():
    config = GameConfig(num_players=3)
    state = new_game(config, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(120):
        legal = state.legal_moves()
        state.apply(legal[rng.integers(len(legal))])
    env = raw_env(num_players=3)
    env.reset(seed=1)
    env.observe("player_0")
    env.reset(options={"state": state.to_dict()})
    check_all_seats(env, env.game)


# ------------------------------------------------------------ env() against PettingZoo's wrapper stack
def pettingzoo_stack(**config):
    """``env()`` as it was: raw_env in TerminateIllegal, AssertOutOfBounds and OrderEnforcing."""
    from pettingzoo.utils import wrappers

    wrapped = wrappers.TerminateIllegalWrapper(raw_env(**config), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(wrapped))


def transcript(env, seed: int, illegal_every: int) -> list:
    """Every ``last()`` of an agent_iter loop, with a random legal action, an illegal one every
    ``illegal_every`` decisions (0: never), ``None`` for dead agents."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    out = []
    for i, agent in enumerate(env.agent_iter(max_iter=3000)):
        obs, reward, terminated, truncated, info = env.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward,
                    terminated, truncated, dict(info), dict(env.rewards)))
        if terminated or truncated:
            action = None
        else:
            mask = obs["action_mask"]
            pool = (
                np.flatnonzero(mask == 0)
                if illegal_every and i % illegal_every == illegal_every - 1
                else np.flatnonzero(mask)
            )
            action = int(pool[rng.integers(len(pool))])
        env.step(action)
    return out


@pytest.mark.parametrize("illegal_every", [0, 7, 40])
@pytest.mark.parametrize("config", [dict(num_players=2, stock_size=5), dict(num_players=4, partner_game=True,
                                                                                stock_size=3)])
def test_env_matches_the_pettingzoo_wrapper_stack(config, illegal_every, caplog):
    import skipbo_env

    for seed in range(3):
        ours = transcript(skipbo_env.env(**config), seed, illegal_every)
        assert ours == transcript(pettingzoo_stack(**config), seed, illegal_every)
        assert any(rec[3] == -1.0 for rec in ours) or not illegal_every
    assert ("Illegal move made" in caplog.text) == bool(illegal_every)


def test_env_order_enforcing_and_bounds():
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    import skipbo_env

    env = skipbo_env.env()
    assert isinstance(env, OrderEnforcingWrapper)
    for name in ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(env, name)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be an int"):
        env.step(125)
