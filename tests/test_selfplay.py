"""Pure self-play (``opponents.selfplay_weight: 1``) and the teacher-free recipe ``configs/zero_2p.yaml``."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import metric_rows, record_opponent_draws

from skipbo_env.agents import PPOAgent, is_checkpoint_spec
from skipbo_env.rules import ConfigError
from skipbo_env.training import opponents
from skipbo_env.training.checkpoints import load_latest
from skipbo_env.training.run import load_run_config
from skipbo_env.training.run import train as run_training
from skipbo_env.training.settings import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
ZERO = ROOT / "configs" / "zero_2p.yaml"


@pytest.mark.parametrize("opponents_, field", [
    ({"selfplay_weight": 1.0}, "opponents.mix"),  # the default mix {greedy: 1} would be a scripted opponent
    ({"selfplay_weight": 1.0, "mix": {}, "curriculum": [{"opponents": {"greedy": 1}}]}, "opponents.curriculum"),
    ({"selfplay_weight": 1.5, "mix": {}}, "opponents.selfplay_weight"),
    ({"selfplay_weight": 0.5, "mix": {}}, "opponents.mix"),
])
def test_pure_self_play_settings_are_checked(opponents_, field):
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_dict({"opponents": opponents_})
    assert str(err.value).startswith(field)


def tiny_zero(tmp_path: Path, **changes) -> TrainConfig:
    """configs/zero_2p.yaml at a size that trains in seconds."""
    overrides = {  # dotted paths, as the command line's --section.field options
        "runs_dir": str(tmp_path), "total_timesteps": 256, "n_envs": 8, "checkpoint_every": 128, "threads": 1,
        "game.stock_size": 5, "game.turn_limit": 120,
        "ppo.n_steps": 32, "ppo.batch_size": 64, "ppo.n_epochs": 1, "ppo.net_arch": [16], "ppo.scorer_arch": [8],
        "opponents.selfplay_every": 128,
        "eval.every": 128, "eval.games": 4, "eval.agents": ["greedy"], "eval.best_against": "greedy", "eval.workers": 1,
    }
    overrides.update(changes)
    return TrainConfig.from_yaml(ZERO, overrides)


def test_zero_recipe_plays_only_its_own_snapshots_repeats_and_resumes(tmp_path, monkeypatch):
    cfg = tiny_zero(tmp_path)
    assert cfg.opponents.pure_selfplay and cfg.pretrain.teacher is None and cfg.ppo.policy == "scorer"
    drawn = record_opponent_draws(monkeypatch)
    summary = run_training(cfg, progress=False)
    run_dir = Path(summary["run_dir"])
    assert summary["timesteps"] >= 256
    assert drawn and all(isinstance(agent, PPOAgent) for agent in drawn)  # never a scripted agent (a name)
    assert all(is_checkpoint_spec(spec) for spec in opponents.opponent_weights(cfg, load_latest(run_dir)[1]))
    pool = sorted(p.name for p in (run_dir / "pool").glob("snapshot_*.zip"))
    assert pool[0] == "snapshot_0000000000.zip" and len(pool) >= 2  # the untrained network first
    _, state = load_latest(run_dir)
    assert [Path(p).name for p in state.pool] == pool

    again = run_training(tiny_zero(tmp_path, name="zero_again"), progress=False)
    assert metric_rows(Path(again["run_dir"])) == metric_rows(run_dir)  # same seed, same run (CPU)

    resumed = run_training(load_run_config(run_dir, {"total_timesteps": summary["timesteps"] + 128}),
                           resume_dir=run_dir, progress=False)
    assert resumed["timesteps"] >= summary["timesteps"] + 128  # whole rollouts of 8 games x 32 steps
    _, state = load_latest(run_dir)
    assert state.pool and all(Path(p).is_file() for p in state.pool)


def test_self_play_turned_on_at_resume_snapshots_on_its_own_schedule(tmp_path):
    """A run trained against a scripted mix and resumed with self-play on: the snapshot schedule, left far
    behind by the first session, fires once and then every ``selfplay_every`` steps (not once a rollout
    while it catches up)."""
    cfg = tiny_zero(tmp_path, **{"total_timesteps": 1024, "opponents.selfplay_weight": 0.0,
                                 "opponents.mix": {"greedy": 1}, "eval.every": 100_000})
    summary = run_training(cfg, progress=False)
    run_dir = Path(summary["run_dir"])
    assert summary["timesteps"] == 1024 and not (run_dir / "pool").exists()
    overrides = {"total_timesteps": 2048, "opponents.selfplay_weight": 0.5, "opponents.selfplay_every": 512}
    run_training(load_run_config(run_dir, overrides), resume_dir=run_dir, progress=False)
    # the first step of 8 games after 1024 finds the snapshot due since 128: one snapshot, then at
    # 128 + 512k: the steps of 8 that reach 1152 and 1664
    pool = sorted(p.name for p in (run_dir / "pool").glob("snapshot_*.zip"))
    assert pool == ["snapshot_0000001032.zip", "snapshot_0000001152.zip", "snapshot_0000001664.zip"]
    _, state = load_latest(run_dir)
    assert state.next_snapshot == 2176
