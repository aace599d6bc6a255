"""Out-of-range and malformed inputs at every boundary end in one error naming the field.

Opponent specs (too long for a path, bytes), evaluate's counts beyond what a process can start,
training settings beyond what a machine holds, a file that is not a configuration (its text is
not echoed), state dicts with oversized, deeply nested or reordered fields; and progress lines
that reach a redirected log while a run goes. Hypothesis fuzzes the opponent specs, training
configurations and state dicts.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import tiny_config

import skipbo_env  # noqa: F401  (registers SkipBo-v0)
from skipbo_env.agents import load_agent
from skipbo_env.episode.opponent_specs import opponent_specs
from skipbo_env.evaluation import main as evaluate_main
from skipbo_env.rules import ConfigError, GameConfig, GameState, StateError, new_game
from skipbo_env.training.settings import TrainConfig

LONG = "x" * 300


# ------------------------------------------------------------------ opponent specs
def test_an_opponent_name_too_long_for_a_path_is_a_config_error():
    with pytest.raises(ConfigError, match=r"opponents\[0\]: unknown agent 'xxx.*not a path this system"):
        gym.make("SkipBo-v0", opponents=LONG).reset(seed=0)
    with pytest.raises(ValueError, match="not a path this system can look up"):
        load_agent(LONG, GameConfig())


def test_an_opponent_name_too_long_for_a_path_in_the_vector_env():
    pytest.importorskip("numba")
    with pytest.raises(ConfigError, match=r"opponents\[0\]"):
        gym.make_vec("SkipBo-v0", num_envs=2, vectorization_mode="vector_entry_point", opponents=LONG)


def test_opponents_given_as_bytes_are_refused_not_split():
    with pytest.raises(ConfigError, match="got bytes"):
        opponent_specs(b"random", GameConfig())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), st.binary(max_size=20), st.integers(), st.none(),
                 st.lists(st.one_of(st.text(max_size=20), st.integers()), max_size=4)))
def test_fuzzed_opponent_specs_are_accepted_or_a_config_error(specs):
    try:
        checked = opponent_specs(specs, GameConfig(num_players=3))
    except ConfigError:
        return
    assert len(checked) == 2


# ------------------------------------------------------------------ evaluate's counts
@pytest.mark.parametrize(("flag", "value"), [("--workers", "4294967296"), ("--games", "4294967296000"),
                                             ("--batch-size", "99999999999"), ("--seed", str(2**64))])
def test_evaluate_counts_beyond_a_process_are_one_line(flag, value, capsys):
    with pytest.raises(SystemExit) as stop:
        evaluate_main(["--agents", "greedy", "random", flag, value, "--no-progress"])
    assert stop.value.code == 2
    assert flag.strip("-").replace("-", "_") in capsys.readouterr().err.splitlines()[-1]


# ------------------------------------------------------------------ training settings
@pytest.mark.parametrize(("change", "field"), [
    ({"n_envs": 100_000_000}, "n_envs"),
    ({"total_timesteps": 10**32}, "total_timesteps"),
    ({"total_timesteps": 1e32}, "total_timesteps"),
    ({"eval": {"workers": 100_000}}, "eval.workers"),
    ({"pretrain": {"workers": 100_000}}, "pretrain.workers"),
])
def test_training_settings_beyond_a_machine_name_the_field(change, field):
    with pytest.raises(ConfigError) as error:
        TrainConfig.from_dict(change)
    assert str(error.value).startswith(field)


def test_a_file_that_is_not_a_configuration_is_not_echoed(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$saltsalt$hashhashhash:19000:0:99999:7:::\n")
    done = subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "train.py"), "--config",
                           str(secret)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not a setting name" in done.stderr
    assert "hashhash" not in done.stderr + done.stdout and "root" not in done.stderr + done.stdout


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=10),
                              st.booleans(), st.none()),
                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                            st.dictionaries(st.sampled_from(
                                                ["seed", "n_envs", "total_timesteps", "threads", "eval", "ppo",
                                                 "workers", "games", "every", "learning_rate", "bogus", "game",
                                                 "num_players"]), inner, max_size=3)),
                    max_leaves=8))
def test_fuzzed_training_configurations_load_or_name_a_field(data):
    if not isinstance(data, dict):
        data = {"seed": data}
    try:
        TrainConfig.from_dict(data)
    except ConfigError as error:
        assert error.field


# ------------------------------------------------------------------ state dicts
def test_an_oversized_generator_word_names_the_field():
    data = new_game(seed=0).to_dict()
    data["rng"]["state"] = "9" * 5000
    with pytest.raises(StateError) as error:
        GameState.from_dict(data)
    assert error.value.path == "rng.state"


def test_a_deeply_nested_pile_names_the_field():
    data = new_game(seed=0).to_dict()
    nested: list = [1]
    for _ in range(3000):
        nested = [nested]
    data["draw_pile"] = [nested]
    with pytest.raises(StateError) as error:
        GameState.from_dict(data)
    assert error.value.path == "draw_pile[0]"


def test_an_unsorted_hand_is_refused_not_sorted():
    data = new_game(seed=0).to_dict()
    seat = data["current_player"]
    data["hands"][seat] = sorted(data["hands"][seat], reverse=True)
    assert data["hands"][seat] != sorted(data["hands"][seat])
    with pytest.raises(StateError) as error:
        GameState.from_dict(data)
    assert error.value.path == f"hands[{seat}]"


_BASE = new_game(seed=5).to_dict()
_PATHS = [("draw_pile",), ("hands", 0), ("stocks", 1), ("discard_piles", 0, 2), ("building_piles", 1),
          ("completed",), ("current_player",), ("turn",), ("moves",), ("winner",), ("rng", "state"),
          ("rng", "inc"), ("config", "num_players"), ("version",)]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_PATHS), st.one_of(st.integers(-(2**80), 2**80), st.text(max_size=50), st.none(),
                                           st.lists(st.integers(-3, 20), max_size=40), st.booleans(),
                                           st.floats(allow_nan=True)))
def test_fuzzed_state_dicts_load_or_raise_a_state_error(path, value):
    data = copy.deepcopy(_BASE)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        state = GameState.from_dict(data)
    except StateError:
        return
    assert state.to_dict() == data  # whatever loads comes back exactly as it was read


# ------------------------------------------------------------------ logs
def test_progress_lines_reach_a_redirected_log_while_the_run_goes(tmp_path):
    config = tiny_config(tmp_path, total_timesteps=200_000, checkpoint_every=100_000,
                         eval={"every": 1024, "games": 2, "agents": ["random"], "best_against": "random", "workers": 1})
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    log = tmp_path / "log.txt"
    with open(log, "w") as out:
        run = subprocess.Popen([sys.executable, "-m", "skipbo_env.cli", "train", "--config", str(path),
                                "--no-progress"], stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and "steps/s" not in log.read_text():
                assert run.poll() is None, log.read_text()
                time.sleep(0.5)
            assert run.poll() is None  # the line came while the run goes on
            assert "steps/s, ETA" in log.read_text()
        finally:
            run.kill()
            run.wait()
