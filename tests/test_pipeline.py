"""pipeline: true: rollouts collected in a worker process while PPO updates on the previous one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from support import kill_when_workers_run, metric_rows, policy_weights, tiny_config

from skipbo_env.rules import ConfigError
from skipbo_env.training.checkpoints import load_latest
from skipbo_env.training.envs import make_vec_env
from skipbo_env.training.pipeline import RolloutWorker, WorkerError, _collect, _fill_buffer
from skipbo_env.training.run import build_model
from skipbo_env.training.run import train as run_training
from skipbo_env.training.settings import TrainConfig

pytest.importorskip("numba")
ROOT = Path(__file__).resolve().parents[1]


def pipelined(tmp_path: Path, **changes) -> dict:
    data = tiny_config(tmp_path, **{"vec_env": "batched", "pipeline": True, **changes})
    data["ppo"] = dict(data["ppo"], policy="scorer", net_arch=[16], scorer_arch=[8])
    return data


def test_pipeline_needs_the_batched_engine():
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_dict({"pipeline": True, "vec_env": "subproc"})
    assert str(err.value).startswith("pipeline")
    assert TrainConfig.from_dict({"pipeline": True, "vec_env": "batched"}).pipeline


def test_the_worker_collects_what_sb3s_own_rollout_collects(tmp_path):
    """The same games, actions, values and advantages as MaskablePPO.collect_rollouts, from the same
    environment seed and torch generator state."""
    cfg = TrainConfig.from_dict(pipelined(tmp_path, n_envs=4))
    venv = make_vec_env(cfg, {}, 11)
    model = build_model(cfg, venv, None)
    _, callback = model._setup_learn(10_000, None)  # resets venv, which the model seeded with cfg.seed
    torch.manual_seed(5)
    model.collect_rollouts(venv, callback, model.rollout_buffer, cfg.ppo.n_steps)
    expected = {name: getattr(model.rollout_buffer, name).copy()
                for name in ("observations", "actions", "rewards", "values", "log_probs", "advantages", "returns",
                             "episode_starts", "action_masks")}

    other = make_vec_env(cfg, {}, 11)
    other.seed(cfg.seed)
    torch.manual_seed(5)
    rollout, _, _ = _collect(other, model.policy, other.reset(), np.ones(other.num_envs, bool), cfg.ppo.n_steps,
                             cfg.ppo.gamma)
    _fill_buffer(model, rollout)
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(model.rollout_buffer, name), value, rtol=0, atol=1e-6, err_msg=name)
    venv.close()
    other.close()


def test_a_pipelined_run_trains_with_self_play_and_repeats_exactly(tmp_path):
    data = pipelined(tmp_path)
    data["opponents"] = {"mix": {"random": 1, "greedy": 1}, "selfplay_weight": 0.5, "selfplay_every": 128}
    summary = run_training(TrainConfig.from_dict(data), progress=False)
    run_dir = Path(summary["run_dir"])
    assert summary["timesteps"] == 256
    assert (run_dir / "best.zip").is_file() and list((run_dir / "pool").glob("snapshot_*.zip"))
    first = metric_rows(run_dir)
    assert [int(r["timesteps"]) for r in first][::2] == [128, 256]

    data["name"] = "again"
    run_training(TrainConfig.from_dict(data), progress=False)
    assert metric_rows(tmp_path / "again") == first
    (one, _), (two, _) = load_latest(run_dir), load_latest(tmp_path / "again")
    assert one.read_bytes() != b"" and policy_weights(one) == policy_weights(two)


def test_a_pipelined_run_resumes(tmp_path):
    data = pipelined(tmp_path)
    run_training(TrainConfig.from_dict(data), progress=False)
    from skipbo_env.training.run import load_run_config

    cfg = load_run_config(tmp_path / "tiny", {"total_timesteps": 512})
    assert cfg.pipeline
    assert run_training(cfg, resume_dir=tmp_path / "tiny", progress=False)["timesteps"] == 512


def test_a_failing_worker_is_an_error_with_its_traceback(tmp_path):
    cfg = TrainConfig.from_dict(pipelined(tmp_path))
    venv = make_vec_env(cfg, {}, 0)
    model = build_model(cfg, venv, None)
    worker = RolloutWorker(cfg, seed=0)
    try:
        worker.start(model)
        worker.request(model.policy, {str(tmp_path / "missing_snapshot.zip"): 1.0})
        with pytest.raises(WorkerError, match="the rollout worker failed") as err:
            worker.receive()
        assert "missing_snapshot.zip" in str(err.value)
    finally:
        worker.close()
        venv.close()


def test_a_worker_started_before_the_model_ends_cleanly_if_the_run_stops_first(tmp_path):
    """A run starts its rollout worker before it builds its model; a run that stops before the
    worker got its policy (a bad checkpoint, Ctrl-C) closes it, and the worker ends with code 0."""
    cfg = TrainConfig.from_dict(pipelined(tmp_path))
    worker = RolloutWorker(cfg, seed=0)
    worker.close()
    worker.close()  # twice: nothing more
    assert worker._process.exitcode == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_rollout_worker_dies_with_a_killed_run(tmp_path):
    data = pipelined(tmp_path, total_timesteps=10_000_000, checkpoint_every=1_000_000)
    data["eval"] = dict(data["eval"], every=10_000_000, agents=["random"], best_against="random")
    config = tmp_path / "long.yaml"
    config.write_text(yaml.safe_dump(data))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "train.py", "--config", str(config), "--no-progress"], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_when_workers_run(proc, workers=1, busy=2.0, what="run")  # rollouts and updates under way
