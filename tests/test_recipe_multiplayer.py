"""The multi-player PPO recipes (configs/ppo_3p.yaml, ppo_4p.yaml, ppo_6p.yaml) end to end at a tiny
size: heuristic cloning, pipelined PPO against copies of the heuristic, repeat, resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import metric_rows

from skipbo_env.training.checkpoints import load_latest
from skipbo_env.training.run import load_run_config
from skipbo_env.training.run import train as run_training
from skipbo_env.training.settings import TrainConfig

pytest.importorskip("numba")
ROOT = Path(__file__).resolve().parents[1]
RECIPES = {
    3: ROOT / "configs" / "ppo_3p.yaml",
    4: ROOT / "configs" / "ppo_4p.yaml",
    6: ROOT / "configs" / "ppo_6p.yaml",
}


def tiny(recipe: Path, tmp_path: Path, **changes) -> TrainConfig:
    """A recipe at a size that trains in seconds (a phase inside the run)."""
    overrides = {
        "runs_dir": str(tmp_path), "total_timesteps": 1024, "n_envs": 8, "checkpoint_every": 256,
        "game.stock_size": 5, "game.turn_limit": 120,
        "ppo.n_steps": 32, "ppo.batch_size": 64, "ppo.net_arch": [16], "ppo.scorer_arch": [8],
        "pretrain.games": 8, "pretrain.dagger_games": 4, "pretrain.epochs": 1, "pretrain.workers": 1,
        "eval.every": 256, "eval.games": 12, "eval.workers": 1, "eval.overlap": False,
        "phases": [{"start": 512, "set": {}}],
    }
    overrides.update(changes)
    return TrainConfig.from_yaml(recipe, overrides)


@pytest.mark.parametrize("players", sorted(RECIPES))
def test_a_multi_player_recipe_clones_trains_repeats_and_resumes(players, tmp_path):
    recipe = RECIPES[players]
    shipped = TrainConfig.from_yaml(recipe)
    assert shipped.game.num_players == players and shipped.pipeline and shipped.ppo.policy == "scorer"
    assert shipped.pretrain.teacher == "heuristic" and dict(shipped.opponents.mix) == {"heuristic": 1.0}
    assert shipped.eval.games % players == 0

    summary = run_training(tiny(recipe, tmp_path), progress=False)
    run_dir = Path(summary["run_dir"])
    assert summary["timesteps"] == 1024
    assert (run_dir / "pretrain.json").is_file() and (run_dir / "best.zip").is_file()
    rows = metric_rows(run_dir)
    assert rows[0]["timesteps"] == "0" and {r["opponent"] for r in rows} == {"heuristic"}

    again = run_training(tiny(recipe, tmp_path, name="again"), progress=False)
    assert metric_rows(Path(again["run_dir"])) == rows  # same seed, same run (CPU)

    resumed = run_training(load_run_config(run_dir, {"total_timesteps": 1280}), resume_dir=run_dir, progress=False)
    assert resumed["timesteps"] == 1280
    assert load_latest(run_dir)[1].timesteps == 1280
