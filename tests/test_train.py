"""train.py: configuration, an in-process smoke run, resume, corrupt checkpoints."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from support import record_opponent_draws, tiny_config

import train
from skipbo_env.rules import ConfigError
from skipbo_env.training.checkpoints import CheckpointError, load_latest
from skipbo_env.training.run import load_run_config
from skipbo_env.training.run import train as run_training
from skipbo_env.training.settings import TrainConfig

ROOT = Path(__file__).resolve().parents[1]


tiny = tiny_config


def rows(run_dir: Path) -> list[dict]:
    with open(run_dir / "metrics.csv", newline="") as fh:
        return list(csv.DictReader(fh))


# ------------------------------------------------------------------ configuration
def test_every_shipped_config_loads_as_its_recipes_settings():
    """Every shipped config loads: PPO configurations as TrainConfig, recipe files (``recipe:
    turnnet``, ``recipe: value``) as their recipe's configuration."""
    from skipbo_env.training.recipe_settings import TurnNetConfig, ValueNetConfig
    from skipbo_env.training.settings_io import recipe_of
    from skipbo_env.training.turn_recipe import is_recipe_file

    paths = sorted((ROOT / "configs").glob("*.yaml"))
    recipes = {p.name: recipe_of(p) for p in paths if recipe_of(p) is not None}
    assert recipes == {"turn_finetune_2p.yaml": "turnnet", "turnnet_2p.yaml": "turnnet", "value_3p.yaml": "value",
                       "value_6p.yaml": "value"}
    assert [p.name for p in paths if is_recipe_file(p)] == ["turn_finetune_2p.yaml", "turnnet_2p.yaml"]
    assert TurnNetConfig.from_yaml(ROOT / "configs" / "turn_finetune_2p.yaml").fit.init == "turn-2p"
    mixed = ValueNetConfig.from_yaml(ROOT / "configs" / "value_3p.yaml").positions
    assert not mixed.self_play and "stock-chaser" in mixed.field
    assert ValueNetConfig.from_yaml(ROOT / "configs" / "value_6p.yaml").positions.self_play
    for path in paths:
        if recipes.get(path.name) == "turnnet":
            assert TurnNetConfig.from_yaml(path).labels.games > 0, path
        elif recipes.get(path.name) == "value":
            value = ValueNetConfig.from_yaml(path)  # value_<N>p.yaml is a value network for N players
            assert f"value_{value.game.num_players}p.yaml" == path.name and value.name == path.stem, path
        else:
            assert TrainConfig.from_yaml(path).total_timesteps > 0, path


@pytest.mark.parametrize(
    "change, field",
    [
        ({"ppo": {"learnin_rate": 0.1}}, "ppo.learnin_rate"),
        ({"ppo": {"learning_rate": -1}}, "ppo.learning_rate"),
        ({"game": {"num_players": 7}}, "game.num_players"),
        ({"n_envs": "four"}, "n_envs"),
        ({"vec_env": "threads"}, "vec_env"),
        ({"threads": 0}, "threads"),
        ({"ppo": {"policy": "transformer"}}, "ppo.policy"),
        ({"ppo": {"scorer_arch": []}}, "ppo.scorer_arch"),
        ({"pretrain": {"dagger_rounds": -1}}, "pretrain.dagger_rounds"),
        ({"pretrain": {"dagger_games": 0}}, "pretrain.dagger_games"),
        ({"pretrain": {"workers": 0}}, "pretrain.workers"),
        ({"pretrain": {"teacher": "search:0"}}, "pretrain.teacher"),
        ({"pretrain": {"teacher": "search:4:2:1"}}, "pretrain.teacher"),
        ({"pretrain": {"teacher": "searcher"}}, "pretrain.teacher"),
        ({"pretrain": {"teacher": "heuristic", "opponents": {"ppo-2p": 1}}}, "pretrain.opponents"),
        ({"bogus": 1}, "bogus"),
        ({"eval": {"best_against": "heuristic", "agents": ["random"]}}, "eval.best_against"),
        ({"opponents": {"mix": {"nobody": 1}}}, "opponents"),
        ({"opponents": {"curriculum": [{"opponents": {"random": 1}}, {"opponents": {"greedy": 1}}]}},
         "opponents.curriculum[0].promote_at"),
    ],
)
def test_bad_config_names_the_field(change, field):
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_dict(change)
    assert str(err.value).startswith(field)


def test_dotted_options_override_the_file_and_show_in_help(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"name": "x"}))
    parser = train.build_parser()
    args = parser.parse_args(["--config", str(path), "--ppo.learning_rate", "1e-4", "--opponents.mix", "{greedy: 2}"])
    cfg = TrainConfig.from_yaml(args.config, train.parse_overrides(args))
    assert cfg.ppo.learning_rate == 1e-4 and cfg.opponents.mix == {"greedy": 2.0}
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    out = capsys.readouterr().out
    assert "--ppo.learning_rate" in out and "--game.partner_game" in out and "Adam step size" in out
    assert train.main(["--config", str(path), "--ppo.n_steps", "0"]) == 2
    assert "ppo.n_steps: must be > 0" in capsys.readouterr().err


# ------------------------------------------------------------------ runs
def test_smoke_run_writes_everything_and_is_deterministic(tmp_path):
    cfg = TrainConfig.from_dict(tiny(tmp_path))
    summary = run_training(cfg, progress=False)
    run_dir = Path(summary["run_dir"])
    assert summary["timesteps"] >= 256
    for name in ("config.yaml", "metrics.csv", "best.zip", "latest.zip", "learning_curve.png"):
        assert (run_dir / name).is_file(), name
    assert any((run_dir / "tb").iterdir())
    model, state = load_latest(run_dir)
    assert state.timesteps == summary["timesteps"] and model.is_file()
    first = rows(run_dir)
    assert {r["opponent"] for r in first} == {"random", "greedy"}
    assert [int(r["timesteps"]) for r in first][::2] == [128, 256]
    # same seed, same run (CPU): metrics identical
    cfg2 = TrainConfig.from_dict(tiny(tmp_path, name="tiny2"))
    run_training(cfg2, progress=False)
    second = rows(tmp_path / "tiny2")
    strip = [{k: v for k, v in r.items() if k != "wall_seconds"} for r in first]
    assert strip == [{k: v for k, v in r.items() if k != "wall_seconds"} for r in second]
    # the trained model is an agent for evaluate.py
    from agents import load_agent
    from skipbo_env.encoding import decode_action, observe
    from skipbo_env.rules import new_game

    agent = load_agent(str(run_dir / "best.zip"), cfg.game, allow_pickle=True)
    state_ = new_game(cfg.game, seed=0)
    while not state_.is_over:
        state_.apply(decode_action(agent.act(observe(state_, state_.current)), cfg.game))


def test_existing_run_is_not_overwritten(tmp_path):
    cfg = TrainConfig.from_dict(tiny(tmp_path, total_timesteps=128))
    run_training(cfg, progress=False)
    before = (tmp_path / "tiny" / "metrics.csv").read_bytes()
    with pytest.raises(ConfigError, match="already holds a run"):
        run_training(cfg, progress=False)
    assert (tmp_path / "tiny" / "metrics.csv").read_bytes() == before


def test_resume_continues_steps_and_metrics(tmp_path):
    cfg = TrainConfig.from_dict(tiny(tmp_path, total_timesteps=128))
    run_training(cfg, progress=False)
    run_dir = tmp_path / "tiny"
    assert load_latest(run_dir)[1].timesteps == 128
    cfg2 = load_run_config(run_dir, {"total_timesteps": 256})
    summary = run_training(cfg2, resume_dir=run_dir, progress=False)
    assert summary["timesteps"] == 256
    assert [int(r["timesteps"]) for r in rows(run_dir)][::2] == [128, 256]
    assert load_latest(run_dir)[1].timesteps == 256


def test_resume_applies_training_overrides_and_keeps_the_network(tmp_path):
    """On resume, PPO training settings and n_envs follow the configuration; the network may not change."""
    from sb3_contrib import MaskablePPO

    cfg = TrainConfig.from_dict(tiny(tmp_path, total_timesteps=128))
    run_training(cfg, progress=False)
    run_dir = tmp_path / "tiny"
    for key, value in (("net_arch", [64]), ("activation", "tanh"), ("policy", "scorer")):
        with pytest.raises(ConfigError, match=f"ppo.{key}.*network"):
            load_run_config(run_dir, {f"ppo.{key}": value})
    cfg2 = load_run_config(run_dir, {"total_timesteps": 384, "n_envs": 4, "ppo.learning_rate": 1e-5,
                                     "ppo.ent_coef": 0.05, "ppo.n_steps": 32, "ppo.clip_range": 0.3})
    summary = run_training(cfg2, resume_dir=run_dir, progress=False)
    assert summary["timesteps"] == 384  # 128 + 2 rollouts of 4 envs x 32 steps
    model = MaskablePPO.load(load_latest(run_dir)[0], device="cpu")
    assert (model.learning_rate, model.ent_coef, model.n_steps, model.n_envs) == (1e-5, 0.05, 32, 4)
    assert model.clip_range(1.0) == 0.3
    assert model.policy.optimizer.param_groups[0]["lr"] == 1e-5


def test_resume_after_sigkill(tmp_path):
    """Kill -9 a running train.py after its first checkpoint; resume loses at most one interval."""
    data = tiny(tmp_path, total_timesteps=100_000, checkpoint_every=128)
    data["eval"]["every"] = 1_000_000
    data["eval"]["agents"] = ["random"]
    data["eval"]["best_against"] = "random"
    path = tmp_path / "kill.yaml"
    path.write_text(yaml.safe_dump(data))
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), "--config", str(path), "--no-progress"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    run_dir = tmp_path / "tiny"
    pointer = run_dir / "checkpoints" / "latest.json"
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            if pointer.exists() and json.loads(pointer.read_text())["timesteps"] >= 256:
                break
            time.sleep(0.05)
        else:
            pytest.fail("no second checkpoint within 120 s")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    model, state = load_latest(run_dir)
    assert state.timesteps >= 256 and model.is_file()
    cfg = load_run_config(run_dir, {"total_timesteps": state.timesteps + 128, "eval": {"every": 1_000_000,
                          "agents": ["random"], "best_against": "random", "games": 4, "workers": 1}})
    summary = run_training(cfg, resume_dir=run_dir, progress=False)
    assert summary["timesteps"] == state.timesteps + 128


def test_corrupt_and_mismatched_checkpoints_fail_clearly(tmp_path):
    cfg = TrainConfig.from_dict(tiny(tmp_path, total_timesteps=128))
    run_training(cfg, progress=False)
    run_dir = tmp_path / "tiny"
    model, _ = load_latest(run_dir)
    original = model.read_bytes()
    model.write_bytes(b"not a zip file")
    with pytest.raises(CheckpointError, match="not a MaskablePPO checkpoint"):
        run_training(load_run_config(run_dir, {"total_timesteps": 256}), resume_dir=run_dir, progress=False)
    model.write_bytes(original)
    pointer = run_dir / "checkpoints" / "latest.json"
    good = pointer.read_text()
    pointer.write_text("{ truncated")
    with pytest.raises(CheckpointError, match="corrupt checkpoint pointer"):
        run_training(load_run_config(run_dir), resume_dir=run_dir, progress=False)
    pointer.write_text(good)
    # a 4-player checkpoint for a 2-player run: observation sizes differ
    other = TrainConfig.from_dict(tiny(tmp_path, name="four", total_timesteps=128,
                                       game={"num_players": 4, "stock_size": 5, "turn_limit": 120}))
    run_training(other, progress=False)
    four_model, _ = load_latest(tmp_path / "four")
    model.write_bytes(four_model.read_bytes())
    with pytest.raises(CheckpointError, match="observation shape"):
        run_training(load_run_config(run_dir, {"total_timesteps": 256}), resume_dir=run_dir, progress=False)
    assert train.main(["--resume", str(tmp_path / "nowhere")]) == 2


def test_export_writes_a_safe_agent_file_that_plays_like_the_checkpoint(tmp_path):
    from agents.ppo import PPOAgent

    from skipbo_env.encoding import decode_action, observe
    from skipbo_env.rules import GameConfig, new_game

    cfg = TrainConfig.from_dict(tiny(tmp_path, total_timesteps=128))
    run_training(cfg, progress=False)
    src, out = tmp_path / "tiny" / "latest.zip", tmp_path / "ship" / "agent.safetensors"
    assert train.main(["--export", str(src), str(out)]) == 2  # a checkpoint is a pickle: the opt-in is needed
    assert train.main(["--export", str(src), str(out), "--allow-pickle"]) == 0
    assert out.stat().st_size < src.stat().st_size / 2
    full, shipped = PPOAgent(src, cfg.game, allow_pickle=True), PPOAgent(out, cfg.game)
    assert shipped.model is None and GameConfig.from_dict(shipped.description["game"]) == cfg.game  # the run's game
    state_ = new_game(cfg.game, seed=1)
    while not state_.is_over:
        obs = observe(state_, state_.current)
        action = full.act(obs)
        assert shipped.act(obs) == action
        state_.apply(decode_action(action, cfg.game))
    # bad input: a missing model, a file that is no model, an output name of another format
    (tmp_path / "junk.zip").write_bytes(b"junk")
    for args in ([str(tmp_path / "none.zip"), str(out)], [str(tmp_path / "junk.zip"), str(out)],
                 [str(src), str(tmp_path / "x.pt")], [str(src), str(tmp_path / "x.zip")]):
        assert train.main(["--export", *args, "--allow-pickle"]) == 2
    state_ = new_game(cfg.game, seed=2)
    assert PPOAgent(out, cfg.game).act(observe(state_, state_.current)) >= 0  # the earlier export is intact


def test_batched_vec_env_trains_with_self_play_snapshots(tmp_path):
    """vec_env: batched trains on the compiled engine, opponents redrawn per rollout."""
    data = tiny(tmp_path, vec_env="batched", n_envs=8)
    data["opponents"] = {"mix": {"random": 1, "greedy": 1}, "selfplay_weight": 0.5, "selfplay_every": 128}
    cfg = TrainConfig.from_dict(data)
    summary = run_training(cfg, progress=False)
    run_dir = Path(summary["run_dir"])
    assert summary["timesteps"] >= 256
    assert (run_dir / "best.zip").is_file()
    assert list((run_dir / "pool").glob("snapshot_*.zip"))


@pytest.mark.parametrize("vec_env", ["dummy", "batched"])
def test_trained_agents_sit_as_opponents_and_yardsticks(tmp_path, vec_env, monkeypatch):
    """opponents.mix and eval.agents may name a shipped agent (ppo-2p) or an exported agent file: the
    learner plays them (loaded once, played as the network decides) and is evaluated against them."""
    first = Path(run_training(TrainConfig.from_dict(tiny(tmp_path, total_timesteps=128)), progress=False)["run_dir"])
    exported = str(tmp_path / "first.safetensors")
    assert train.main(["--export", str(first / "latest.zip"), exported, "--allow-pickle"]) == 0
    from skipbo_env.agents import PPOAgent

    drawn = record_opponent_draws(monkeypatch)
    data = tiny(tmp_path, name="second", vec_env=vec_env, n_envs=4, total_timesteps=512)
    data["ppo"] = dict(data["ppo"], n_steps=16)  # eight rollouts: the batched engine draws once a rollout
    data["opponents"] = {"mix": {"ppo-2p": 1, exported: 1}}
    data["eval"] = dict(data["eval"], agents=["ppo-2p", exported], best_against=exported)
    summary = run_training(TrainConfig.from_dict(data), progress=False)
    assert all(isinstance(agent, PPOAgent) for agent in drawn)
    assert {agent.path.name for agent in drawn} == {"ppo_2p_default.safetensors", "first.safetensors"}
    assert {row["opponent"] for row in rows(Path(summary["run_dir"]))} == {"ppo-2p", exported}


def test_a_trained_opponent_for_another_game_is_refused_by_name(tmp_path):
    data = tiny(tmp_path, game={"num_players": 3, "stock_size": 5, "turn_limit": 120})
    data["opponents"] = {"mix": {"ppo-2p": 1}}
    data["eval"] = dict(data["eval"], games=3)
    with pytest.raises(ConfigError, match=r"^opponents.*ppo-2p"):
        run_training(TrainConfig.from_dict(data), progress=False)
    with pytest.raises(ConfigError, match=r"^opponents: unknown agent 'nobody'.*\.safetensors agent files"):
        TrainConfig.from_dict(dict(data, opponents={"mix": {"nobody": 1}}))


def test_behaviour_cloning_comes_before_ppo_and_is_evaluated_at_step_0(tmp_path):
    """pretrain.teacher: the policy imitates the teacher before PPO; evaluated at step 0."""
    data = tiny(tmp_path, total_timesteps=128)
    data["pretrain"] = {"teacher": "greedy", "opponents": {"random": 1}, "games": 6, "epochs": 2, "batch_size": 64}
    summary = run_training(TrainConfig.from_dict(data), progress=False)
    run_dir = Path(summary["run_dir"])
    stats = json.loads((run_dir / "pretrain.json").read_text())
    assert stats["samples"] > 100 and 0 <= stats["heldout_accuracy"] <= 1
    assert [int(r["timesteps"]) for r in rows(run_dir)][::2] == [0, 128]


def test_scorer_policy_trains_after_a_dagger_round(tmp_path):
    """ppo.policy: scorer trains, and a DAgger round after cloning records the student's agreement."""
    data = tiny(tmp_path, total_timesteps=128)
    data["ppo"] = dict(data["ppo"], policy="scorer", net_arch=[16], scorer_arch=[8])
    data["pretrain"] = {"teacher": "greedy", "opponents": {"random": 1}, "games": 4, "epochs": 1, "batch_size": 64,
                        "dagger_rounds": 1, "dagger_games": 3}
    summary = run_training(TrainConfig.from_dict(data), progress=False)
    run_dir = Path(summary["run_dir"])
    stats = json.loads((run_dir / "pretrain.json").read_text())
    assert [r["round"] for r in stats["rounds"]] == [0, 1]
    assert 0 <= stats["rounds"][1]["student_agreement"] <= 1
    assert stats["rounds"][1]["samples"] > stats["rounds"][0]["samples"]
    from agents.ppo import PPOAgent

    from skipbo_env.training.policy import ScorerPolicy

    assert isinstance(PPOAgent(run_dir / "best.zip", TrainConfig.from_dict(data).game, allow_pickle=True).model.policy,
                      ScorerPolicy)
    assert not list(run_dir.glob(".dagger_student_*"))


def test_demonstrations_do_not_depend_on_workers():
    from skipbo_env.rules import GameConfig
    from skipbo_env.training.pretrain import collect

    game = GameConfig(num_players=2, stock_size=5)
    one = collect(game, "greedy", {"random": 1, "greedy": 1}, 12, seed=5, gamma=0.99, shaping=True, progress=False)
    two = collect(game, "greedy", {"random": 1, "greedy": 1}, 12, seed=5, gamma=0.99, shaping=True, progress=False,
                  workers=2)
    assert one.games == two.games == 12 and one.wins == two.wins
    for name in ("obs", "masks", "actions", "returns"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name


def test_init_from_starts_from_an_agent_files_weights(tmp_path):
    """init_from: a new run starts from the weights of an exported agent file (expert iteration from a
    trained agent); a file of another network or a missing one is refused naming init_from."""
    data = tiny(tmp_path, total_timesteps=128)
    data["ppo"] = dict(data["ppo"], policy="scorer", net_arch=[16], scorer_arch=[8])
    first = Path(run_training(TrainConfig.from_dict(data), progress=False)["run_dir"])
    exported = tmp_path / "first.safetensors"
    assert train.main(["--export", str(first / "latest.zip"), str(exported), "--allow-pickle"]) == 0
    import torch

    from skipbo_env.agents.agentfile import load_policy
    from skipbo_env.training.envs import make_vec_env
    from skipbo_env.training.run import build_model

    cfg = TrainConfig.from_dict(dict(data, name="second", init_from=str(exported)))
    venv = make_vec_env(cfg, dict(cfg.opponents.mix), cfg.seed)
    try:
        model = build_model(cfg, venv, None)
    finally:
        venv.close()
    source, _ = load_policy(exported, cfg.game)
    for key, value in source.state_dict().items():
        assert torch.equal(model.policy.state_dict()[key], value), key
    with pytest.raises(ConfigError, match="^init_from"):
        TrainConfig.from_dict(dict(data, init_from=str(tmp_path / "first.zip")))
    with pytest.raises(ConfigError, match="^init_from.*missing.safetensors"):
        run_training(TrainConfig.from_dict(dict(data, name="fourth", init_from=str(tmp_path / "missing.safetensors"))),
                     progress=False)
    other = TrainConfig.from_dict(dict(data, name="third", init_from=str(exported),
                                       ppo=dict(data["ppo"], scorer_arch=[4])))
    with pytest.raises(ConfigError, match="^init_from.*not this run's"):
        run_training(other, progress=False)


@pytest.mark.slow
def test_the_readme_job_repeats_bit_for_bit_on_two_threads_beside_a_busy_process(tmp_path):
    """The README's main job (configs/quick.yaml, ``threads: 2``: behaviour cloning, DAgger, then PPO
    on the batched engine), shrunk, twice while another process keeps both cores busy: the same
    metrics and the same weights."""
    import zipfile

    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for name in ("a", "b"):
            subprocess.run([sys.executable, str(ROOT / "train.py"), "--config", str(ROOT / "configs" / "quick.yaml"),
                            "--name", name, "--runs_dir", str(tmp_path), "--threads", "2",
                            "--total_timesteps", "4096", "--checkpoint_every", "4096", "--eval.every", "4096",
                            "--eval.games", "10", "--pretrain.games", "24", "--pretrain.dagger_games", "10",
                            "--no-progress"], check=True, cwd=tmp_path, capture_output=True, timeout=900)
    finally:
        for process in busy:
            process.kill()
    a, b = tmp_path / "a", tmp_path / "b"
    strip = [[{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows(d)] for d in (a, b)]
    assert strip[0] == strip[1] and len(strip[0]) >= 1
    for name in ("latest.zip", "best.zip"):
        weights = [zipfile.ZipFile(d / name).read("policy.pth") for d in (a, b)]
        assert weights[0] == weights[1], name
