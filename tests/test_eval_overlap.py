"""eval.overlap: evaluation games played in the worker processes while training goes on, their
result taken in at the next checkpoint (a fixed step), so a run stays deterministic."""

from __future__ import annotations

from pathlib import Path

from support import metric_rows, policy_weights, tiny_config

from skipbo_env.training.checkpoints import load_latest
from skipbo_env.training.run import Trainer
from skipbo_env.training.run import train as run_training
from skipbo_env.training.settings import TrainConfig


def overlapped(tmp_path: Path, name: str, overlap: bool = True, **eval_changes) -> TrainConfig:
    data = tiny_config(tmp_path, name=name, total_timesteps=512, checkpoint_every=200)
    data["eval"] = dict(data["eval"], workers=2, overlap=overlap, **eval_changes)
    return TrainConfig.from_dict(data)


def test_with_one_worker_overlapped_evaluations_run_in_the_training_process(tmp_path, monkeypatch):
    taken: list[tuple[int, int]] = []
    original = Trainer._take_evaluation

    def spy(self, steps, *rest):
        taken.append((steps, int(self.model.num_timesteps)))
        original(self, steps, *rest)

    monkeypatch.setattr(Trainer, "_take_evaluation", spy)
    data = tiny_config(tmp_path)
    data["eval"] = dict(data["eval"], workers=1, overlap=True)
    run_training(TrainConfig.from_dict(data), progress=False)
    assert taken == [(128, 128), (256, 256)]  # each at its own step: no worker to play it beside the training


def test_an_overlapped_evaluation_is_taken_in_at_the_next_checkpoint(tmp_path, monkeypatch):
    taken: list[tuple[int, int]] = []  # (the evaluated model's steps, the learner's steps when taken in)
    original = Trainer._take_evaluation

    def spy(self, steps, *rest):
        taken.append((steps, int(self.model.num_timesteps)))
        original(self, steps, *rest)

    monkeypatch.setattr(Trainer, "_take_evaluation", spy)
    run_training(overlapped(tmp_path, "overlap"), progress=False)
    # evaluations at 128, 256, 384 and 512 steps; checkpoints at 200, 400 and the end
    assert taken == [(128, 200), (256, 384), (384, 400), (512, 512)]


def test_an_overlapped_run_learns_and_scores_exactly_as_the_plain_run(tmp_path):
    plain = Path(run_training(overlapped(tmp_path, "plain", overlap=False), progress=False)["run_dir"])
    over = Path(run_training(overlapped(tmp_path, "over"), progress=False)["run_dir"])
    assert metric_rows(over) == metric_rows(plain)
    assert [int(r["timesteps"]) for r in metric_rows(over)][::2] == [128, 256, 384, 512]
    (a, state_a), (b, state_b) = load_latest(plain), load_latest(over)
    assert policy_weights(a) == policy_weights(b) and state_a.best_score == state_b.best_score
    assert policy_weights(plain / "best.zip") == policy_weights(over / "best.zip")
    assert not list(over.glob(".eval_model_*"))


def test_a_curriculum_promotion_comes_at_a_fixed_step_and_the_run_repeats(tmp_path):
    stages = {"curriculum": [{"opponents": {"random": 1}, "promote_at": 0.1}, {"opponents": {"greedy": 1}}]}
    runs = []
    for name in ("first", "second"):
        data = overlapped(tmp_path, name).to_dict()
        data["opponents"] = stages
        data["game"] = dict(data["game"], stock_size=1)  # short games: some are won from the first model on
        run_dir = Path(run_training(TrainConfig.from_dict(data), progress=False)["run_dir"])
        runs.append(run_dir)
    rows = metric_rows(runs[0])
    assert rows == metric_rows(runs[1])
    # the first evaluation (128 steps) is taken in at the 200-step checkpoint, which promotes
    assert [r["stage"] for r in rows][::2] == ["0", "1", "1", "1"]
    (a, state_a), (b, state_b) = load_latest(runs[0]), load_latest(runs[1])
    assert state_a.stage == state_b.stage == 1 and policy_weights(a) == policy_weights(b)


def test_an_overlapped_run_resumes(tmp_path):
    from skipbo_env.training.run import load_run_config

    cfg = overlapped(tmp_path, "resumed")
    run_training(TrainConfig.from_dict(dict(cfg.to_dict(), total_timesteps=256)), progress=False)
    again = load_run_config(tmp_path / "resumed", {"total_timesteps": 512})
    assert again.eval.overlap
    assert run_training(again, resume_dir=tmp_path / "resumed", progress=False)["timesteps"] == 512
    assert [int(r["timesteps"]) for r in metric_rows(tmp_path / "resumed")][::2] == [128, 256, 384, 512]
