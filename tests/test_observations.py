"""Named observations: every env takes the observation's name, ``v1`` is today's vector, and an
unknown name is a ConfigError naming the known ones (docs/observations.md, "Named observations")."""

from __future__ import annotations

import numpy as np
import pytest

import skipbo_env
from skipbo_env.encoding import observe
from skipbo_env.observations import DEFAULT_OBSERVATION, OBSERVATIONS, Observation, observation_spec, v1
from skipbo_env.rules import ConfigError, GameConfig, new_game
from skipbo_env.single import SkipBoSingleEnv


def test_v1_is_the_default_and_the_only_observation():
    assert DEFAULT_OBSERVATION == "v1" and list(OBSERVATIONS) == ["v1"]
    spec = observation_spec("v1")
    assert spec.name == v1.NAME == "v1"
    assert spec.layout(GameConfig()).size == 435 and spec.encode is v1.encode_view


@pytest.mark.parametrize("name", ["v2", "V1", None, 1, ["v1"]])
def test_an_unknown_observation_is_a_config_error_naming_the_known_ones(name):
    with pytest.raises(ConfigError, match=r"observation: unknown observation .*; known: v1") as info:
        observation_spec(name)
    assert info.value.field == "observation"


@pytest.mark.parametrize("make", [
    lambda **kw: skipbo_env.env(**kw),
    lambda **kw: skipbo_env.raw_env(**kw),
    lambda **kw: SkipBoSingleEnv(**kw),
])
def test_every_env_takes_the_observation_by_name(make):
    with pytest.raises(ConfigError, match=r"observation: unknown observation 'v2'; known: v1"):
        make(observation="v2")
    env = make(observation="v1")
    assert env.unwrapped.observation == "v1"


def test_gymnasium_make_takes_the_observation_by_name():
    import gymnasium

    with pytest.raises(ConfigError, match=r"unknown observation 'v2'; known: v1"):
        gymnasium.make("SkipBo-v0", observation="v2")
    assert gymnasium.make("SkipBo-v0", observation="v1").unwrapped.observation == "v1"


def test_the_v1_observation_is_todays_vector():
    """Named or not, the env's observation is v1's encoder of the seat's view, byte for byte."""
    config = GameConfig(num_players=3)
    named, plain = skipbo_env.env(num_players=3, observation="v1"), skipbo_env.env(num_players=3)
    named.reset(seed=4)
    plain.reset(seed=4)
    state = new_game(config, seed=0)
    for agent in named.possible_agents:
        seat = named.possible_agents.index(agent)
        a, b = named.observe(agent), plain.observe(agent)
        assert a["observation"].tobytes() == b["observation"].tobytes()
        assert a["observation"].tobytes() == v1.encode_view(named.unwrapped.game.view(seat)).tobytes()
        assert (observe(state, seat, observation="v1")["observation"] == observe(state, seat)["observation"]).all()


def test_a_new_observation_sits_beside_v1(monkeypatch):
    """A second entry of the table is an env's observation by its name (here v1's encoder renamed)."""
    monkeypatch.setitem(OBSERVATIONS, "v2", Observation("v2", v1.observation_layout, v1.encode_view,
                                                        v1.decode_observation))
    env = skipbo_env.env(observation="v2")
    env.reset(seed=0)
    assert env.unwrapped.observation == "v2" and env.observe("player_0")["observation"].shape == (435,)


def test_the_vector_envs_write_v1_only(monkeypatch):
    pytest.importorskip("numba")
    from skipbo_env.vector import SkipBoVectorEnv
    from skipbo_env.vector.engine import OBSERVATION
    from skipbo_env.vector.gym_env import make_vector_env

    assert OBSERVATION == "v1"
    with pytest.raises(ConfigError, match=r"unknown observation 'v2'; known: v1"):
        make_vector_env(2, observation="v2")
    monkeypatch.setitem(OBSERVATIONS, "v2", Observation("v2", v1.observation_layout, v1.encode_view,
                                                        v1.decode_observation))
    with pytest.raises(ConfigError, match=r"the batched engine writes observation 'v1', not 'v2'"):
        SkipBoVectorEnv(GameConfig(), 2, observation="v2")
    envs = make_vector_env(2, observation="v1")
    obs, _ = envs.reset(seed=0)
    assert envs.observation == "v1" and obs.shape == (2, 435) and np.isfinite(obs).all()


def test_the_openspiel_observer_takes_the_observation_as_a_parameter():
    pyspiel = pytest.importorskip("pyspiel")
    import skipbo_env.openspiel  # noqa: F401 - registers python_skipbo

    game = pyspiel.load_game("python_skipbo")
    assert game.make_py_observer(None, {"observation": "v1"}).observation == "v1"
    with pytest.raises(ConfigError, match=r"unknown observation 'v2'"):
        game.make_py_observer(None, {"observation": "v2"})
    with pytest.raises(ValueError, match=r"one parameter, 'observation'"):
        game.make_py_observer(None, {"seat": 0})
