"""The installable package: the skipbo command line, shipped agents by name, extras,
Gymnasium conventions. The wheel itself is checked outside the repository by .ci/check-wheel."""

from __future__ import annotations

import json
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import skipbo_env
from skipbo_env import cli
from skipbo_env.agents import AGENTS, SHIPPED, agent_label, known_agents, load_agent, shipped_agent_path
from skipbo_env.extras import MissingExtraError, missing_extra, require
from skipbo_env.rules import GameConfig


# ========================================================================== CLI
def test_version_and_help(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"skipbo-env {skipbo_env.__version__}"
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("train", "evaluate", "play", "replay", "demo", "bench"):
        assert f"  {command}" in out
    assert cli.main([]) == 2
    assert cli.main(["fly"]) == 2
    assert "unknown command 'fly'" in capsys.readouterr().err


def test_evaluate_and_replay_through_the_command_line(tmp_path, capsys):
    out, records = tmp_path / "out", tmp_path / "recs"
    code = cli.main(["evaluate", "--agents", "ppo-2p", "greedy", "--games", "2", "--workers", "1", "--no-progress",
                     "--out", str(out), "--save-records", str(records)])
    assert code == 0
    summary = json.loads((out / "results.json").read_text())
    assert [a["label"] for a in summary["agents"]] == ["ppo-2p", "greedy"]
    capsys.readouterr()
    assert cli.main(["replay", str(records / "game_000000.json"), "--auto", "--no-color", "--delay", "0"]) == 0
    assert "end of the record" in capsys.readouterr().out


def test_demo_and_bench_run(capsys):
    assert cli.main(["demo", "--quiet", "--seed", "1"]) == 0
    assert "points per side" in capsys.readouterr().out


def test_a_missing_extra_is_named():
    with pytest.raises(MissingExtraError, match=r"the thing needs the 'fast' extra \(no_such_module_xyz is not "
                                                r"installed\): pip install 'skipbo-env\[fast\]'"):
        require("fast", "the thing", "numpy", "no_such_module_xyz")
    error = missing_extra(ModuleNotFoundError("No module named 'torch'", name="torch"), "train", "training")
    assert isinstance(error, ImportError) and error.name == "torch" and "skipbo-env[train]" in str(error)


def test_the_rllib_glue_without_rllib_names_the_extra(monkeypatch):
    """Ray core (the ray extra) without RLlib's own dependencies: importing the glue names the rllib extra."""
    import importlib
    import importlib.util
    import sys

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tree" else real(name, *a))
    for name in [m for m in sys.modules if m.startswith("skipbo_env.rllib")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(MissingExtraError, match=r"needs the 'rllib' extra \(tree is not installed\)"):
        importlib.import_module("skipbo_env.rllib")


def test_the_command_line_reports_a_missing_extra_in_one_line(monkeypatch, capsys):
    import dataclasses

    def refuse(argv):
        raise missing_extra(ModuleNotFoundError("No module named 'torch'", name="torch"), "train", "training")

    monkeypatch.setitem(cli.COMMANDS, "train", dataclasses.replace(cli.COMMANDS["train"], run=refuse))
    assert cli.main(["train", "--help"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("skipbo train: training needs the 'train' extra") and "Traceback" not in err


# ============================================================= shipped agents
def test_shipped_agents_load_by_name():
    assert known_agents() == [*AGENTS, *SHIPPED, "search"]
    assert list(AGENTS)[:3] == ["random", "greedy", "heuristic"]
    path = shipped_agent_path("ppo-2p")
    assert path.is_file() and path.suffix == ".safetensors" and (path.parent / "ppo-2p.md").is_file()
    agent = load_agent("ppo-2p", GameConfig())
    assert agent_label("ppo-2p") == "ppo-2p"
    with pytest.raises(ValueError, match="observation shape"):
        load_agent("ppo-2p", GameConfig(num_players=3))
    assert agent.path == path


# ===================================================== Gymnasium conventions
def test_gymnasium_make_passes_the_env_checkers_with_default_settings():
    env = gymnasium.make("SkipBo-v0")
    assert env.unwrapped.illegal_action == "lose"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checkers' own advice and our illegal-action warning
        gymnasium_check_env(env.unwrapped)
        sb3_check_env(env.unwrapped)


def test_an_illegal_action_under_make_ends_the_episode_with_a_warning():
    env = gymnasium.make("SkipBo-v0")
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match="illegal action"):
        obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    strict = gymnasium.make("SkipBo-v0", illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal move"):
        strict.step(illegal)


def test_make_vec_returns_the_batched_vector_env():
    envs = gymnasium.make_vec("SkipBo-v0", num_envs=4, vectorization_mode="vector_entry_point",
                              num_players=3, opponents="greedy", seed=1)
    inner = envs.unwrapped
    assert type(inner).__name__ == "SkipBoVectorEnv" and inner.num_envs == 4 and inner.config.num_players == 3
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (4, inner.single_observation_space.shape[0])
    actions = np.array([np.flatnonzero(m)[0] for m in infos["action_mask"]])
    envs.step(actions)
    with pytest.raises(ValueError, match="unknown key"):
        gymnasium.make_vec("SkipBo-v0", num_envs=2, vectorization_mode="vector_entry_point", players=3)
