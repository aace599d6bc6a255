"""The CleanRL-style PPO recipe (skipbo_env.recipes.cleanrl_ppo): a tiny run writes an agent file that
load_agent plays with legal moves, never sends an illegal action, and repeats exactly for its seed."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest
from support import assert_plays_legal_moves, check_sent_actions

from skipbo_env.recipes.cleanrl_ppo import Args, main, parse_args, train
from skipbo_env.rules import ConfigError
from skipbo_env.vector.gym_env import SkipBoVectorEnv

TINY = ["--total-timesteps", "2048", "--num-envs", "16", "--num-steps", "32", "--num-minibatches", "4",
        "--context-arch", "32", "--scorer-arch", "16", "--value-arch", "32", "--log-every", "2"]


@pytest.fixture
def checked_steps(monkeypatch):
    """Every action the recipe sends to a vector env, checked against the env's masks before it steps."""
    return check_sent_actions(monkeypatch, SkipBoVectorEnv)


def test_a_tiny_run_writes_an_agent_file_that_plays_legal_moves(tmp_path, checked_steps):
    args = parse_args([*TINY, "--runs-dir", str(tmp_path), "--name", "tiny", "--opponents", "greedy", "self",
                       "--selfplay-every", "512", "--eval-every", "1024", "--eval-games", "4",
                       "--eval-agents", "greedy"])
    path = train(args)
    assert sum(checked_steps) >= 2048
    assert_plays_legal_moves(path)
    with open(tmp_path / "tiny" / "metrics.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["timesteps"], r["opponent"], r["games"]) for r in rows] == [
        ("1024", "greedy", "4"),
        ("2048", "greedy", "4"),
    ]
    with open(tmp_path / "tiny" / "progress.csv") as fh:
        assert [int(r["step"]) for r in csv.DictReader(fh)] == [1024, 2048]
    assert sorted(p.name for p in (tmp_path / "tiny" / "snapshots").iterdir()) == [
        "agent_0000001024.safetensors", "agent_0000002048.safetensors"]


def test_the_same_seed_gives_the_same_run(tmp_path):
    paths = [train(parse_args([*TINY, "--runs-dir", str(tmp_path / str(i)), "--opponents", "heuristic"]))
             for i in range(2)]
    assert paths[0].read_bytes() == paths[1].read_bytes()
    other = train(parse_args([*TINY, "--runs-dir", str(tmp_path / "2"), "--opponents", "heuristic", "--seed", "1"]))
    assert other.read_bytes() != paths[0].read_bytes()


@pytest.mark.parametrize("changes, field", [
    ({"num_envs": 0}, "num_envs"), ({"learning_rate": float("nan")}, "learning_rate"), ({"gamma": 1.5}, "gamma"),
    ({"num_minibatches": 3}, "num_minibatches"), ({"eval_games": 3}, "eval_games"), ({"opponents": ()}, "opponents"),
    ({"num_players": 7}, "num_players"), ({"scorer_arch": (0,)}, "scorer_arch"), ({"name": "../x"}, "name"),
    ({"target_kl": -1.0}, "target_kl"),
])
def test_bad_settings_are_refused_naming_the_field(changes, field):
    with pytest.raises(ConfigError) as info:
        Args(**changes)
    assert info.value.field == field


def test_an_existing_run_folder_or_an_unknown_opponent_is_refused(tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    assert main([*TINY, "--runs-dir", str(tmp_path), "--name", "taken"]) == 2
    assert "name: " in capsys.readouterr().err
    with pytest.raises(ValueError, match="nobody"):
        train(parse_args([*TINY, "--runs-dir", str(tmp_path), "--name", "x", "--opponents", "nobody"]))


def test_the_command_line_help_lists_every_field():
    out = subprocess.run([sys.executable, "-m", "skipbo_env.recipes.cleanrl_ppo", "--help"], capture_output=True,
                         text=True, check=True).stdout
    for name in Args.__dataclass_fields__:
        assert "--" + name.replace("_", "-") in out
    with pytest.raises(SystemExit):
        parse_args(["--num-envs", "0"])
