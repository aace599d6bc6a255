"""The training loop behind ``train.py``: MaskablePPO against scripted opponents.

A run writes ``<runs_dir>/<name>/``:

* ``config.yaml``: the resolved configuration;
* ``tb/``: TensorBoard logs (SB3's training statistics and the evaluations);
* ``metrics.csv``: one row per evaluation and opponent (win rate, 95% CI, ...);
* ``checkpoints/``: the latest model and training state, written atomically;
* ``best.zip``: the model with the best win rate against ``eval.best_against``;
* ``latest.zip``: a copy of the latest model, ready for ``evaluate.py``;
* ``learning_curve.png``: evaluation win rates against training steps;
* ``pool/``: self-play snapshots (when self-play is on).
"""

from __future__ import annotations

import csv
import dataclasses
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..records import write_bytes_atomic
from ..rules import ConfigError
from .checkpoints import CheckpointError, TrainState, load_latest, load_model, model_bytes, save_checkpoint
from .config import PPOSettings, TrainConfig

METRIC_FIELDS = (
    "timesteps", "wall_seconds", "stage", "opponent", "games", "win_rate", "ci_low", "ci_high",
    "truncation_rate", "mean_turns",
)


# ============================================================== opponents
def opponent_weights(cfg: TrainConfig, state: TrainState) -> dict[str, float]:
    """Current draw weights: the mix or curriculum stage, plus self-play snapshots."""
    ops = cfg.opponents
    scripted = dict(ops.curriculum[state.stage].opponents) if ops.curriculum else dict(ops.mix)
    total = sum(scripted.values())
    weights = {k: v / total for k, v in scripted.items()}
    if ops.selfplay_weight > 0 and state.pool:
        weights = {k: v * (1 - ops.selfplay_weight) for k, v in weights.items()}
        for snap in state.pool:
            weights[snap] = ops.selfplay_weight / len(state.pool)
    return weights


def evaluation_lineup(model_file: str, opponent: str, cfg: TrainConfig) -> list[str]:
    """The learner in one seat (one team in the partner game), ``opponent`` everywhere else."""
    sides = cfg.game.num_teams
    return [model_file] + [opponent] * (sides - 1)


# ============================================================== building
def make_vec_env(cfg: TrainConfig, weights: dict[str, float], seed: int):
    """The vectorised training environment, wrapped in ``VecMonitor`` for episode statistics.

    ``subproc``/``dummy``: ``n_envs`` :class:`~skipbo_env.training.envs.OpponentDrawEnv`
    processes (or one process), each drawing its opponents per episode.
    ``batched``: one :class:`skipbo_env.vector.SkipBoVecEnv` of ``n_envs`` games
    sharing one set of opponents, redrawn from the weights at every rollout
    (see :class:`BatchedOpponents`).
    """
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    if cfg.vec_env == "batched":
        from ..vector import make_vec_env as make_batched

        venv = make_batched(cfg.game, cfg.n_envs, opponents="random", seed=seed, reward_shaping=cfg.reward_shaping)
        return VecMonitor(venv)
    from .envs import make_training_env

    def build():
        return make_training_env(cfg.game, weights, cfg.reward_shaping)

    fns = [build] * cfg.n_envs
    venv = SubprocVecEnv(fns) if cfg.vec_env == "subproc" and cfg.n_envs > 1 else DummyVecEnv(fns)
    venv.seed(seed)
    return VecMonitor(venv)


class BatchedOpponents:
    """Opponent draws for the batched engine, whose games share one set of opponents.

    At the start of every rollout each opponent seat is drawn from the weights
    (the trainer's own generator, seeded from the run seed and the step count);
    snapshot paths become :class:`agents.ppo.PPOAgent` callbacks (cached).
    """

    def __init__(self, cfg: TrainConfig, seed: int) -> None:
        from .envs import OpponentDraws

        self.rng = np.random.default_rng(seed)
        self.draws = OpponentDraws(cfg.game, {"random": 1.0})  # the trainer sets the real weights

    def draw(self, venv) -> None:
        venv.env_method("set_opponents", self.draws.draw(self.rng), indices=[0])


RESUMABLE_PPO = ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range",
                 "ent_coef", "vf_coef", "max_grad_norm")
"""PPO settings a resumed run may change; the other fields of ``ppo`` shape the network and may not."""
NETWORK_PPO = tuple(f.name for f in dataclasses.fields(PPOSettings) if f.name not in RESUMABLE_PPO)


def build_model(cfg: TrainConfig, venv, resume_from: Path | None):
    import torch
    from sb3_contrib import MaskablePPO

    from agents.ppo import CheckpointError as AgentCheckpointError
    from agents.ppo import check_spaces

    p = cfg.ppo
    if resume_from is not None:
        # The training settings of the configuration (the saved one, or overridden on the command
        # line) and its n_envs replace those stored in the checkpoint. No env at load: sb3 would
        # reseed it with the run's first seed, and a resumed run continues on fresh env streams.
        model = load_model(resume_from, n_envs=venv.num_envs, **{name: getattr(p, name) for name in RESUMABLE_PPO})
        try:
            check_spaces(resume_from, model.observation_space, model.action_space, cfg.game)
        except AgentCheckpointError as exc:
            raise CheckpointError(str(exc)) from exc
        model.set_env(venv)
        return model
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[p.activation]
    policy_kwargs: dict = {"activation_fn": activation}
    if p.policy == "scorer":
        from .policy import FEATURES_VERSION, ScorerPolicy

        policy: object = ScorerPolicy
        policy_kwargs.update(context_arch=list(p.net_arch), value_arch=list(p.net_arch), scorer_arch=list(p.scorer_arch),
                             features_version=FEATURES_VERSION)  # saved with the model, checked on load
    else:
        policy = "MlpPolicy"
        policy_kwargs["net_arch"] = list(p.net_arch)
    return MaskablePPO(
        policy,
        venv,
        **{name: getattr(p, name) for name in RESUMABLE_PPO},
        policy_kwargs=policy_kwargs,
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )


# ============================================================== the run
class Trainer:
    """Owns one run folder; :meth:`run` trains until ``total_timesteps``."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: bool, progress: bool = True) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.progress = progress
        self.metrics_path = run_dir / "metrics.csv"
        if resume:
            self.resume_from, self.state = load_latest(run_dir)
        else:
            if (run_dir / "checkpoints" / "latest.json").exists() or self.metrics_path.exists():
                raise ConfigError(
                    "name", f"{run_dir} already holds a run; resume it with --resume {run_dir} or pick another --name"
                )
            self.resume_from, self.state = None, TrainState(
                next_eval=cfg.eval.every, next_checkpoint=cfg.checkpoint_every, next_snapshot=cfg.opponents.selfplay_every
            )
        self._check_eval_games()

    def _check_eval_games(self) -> None:
        from agents.tournament import lineups

        count = len(lineups(self.cfg.game.num_teams, self.cfg.game))
        if self.cfg.eval.games % count:
            raise ConfigError("eval.games", f"must be a multiple of {count} (the seatings of each deal), got {self.cfg.eval.games}")

    # -------------------------------------------------------------- main
    def run(self) -> dict[str, Any]:
        import torch

        cfg = self.cfg
        torch.set_num_threads(cfg.threads)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        cfg.save_yaml(self.run_dir / "config.yaml")
        self._trim_metrics()
        seed = cfg.seed + self.state.timesteps  # a resumed run continues on fresh env streams
        self.venv = make_vec_env(cfg, opponent_weights(cfg, self.state), seed)
        self.batched = BatchedOpponents(cfg, seed) if cfg.vec_env == "batched" else None
        self._set_weights()
        try:
            self.model = build_model(cfg, self.venv, self.resume_from)
            from stable_baselines3.common.logger import configure

            self.model.set_logger(configure(str(self.run_dir / "tb"), ["tensorboard"]))
            self._session_start = time.perf_counter()
            self._wall_base = self.state.wall_seconds
            if self.resume_from is None and cfg.pretrain.teacher is not None:
                self._pretrain()
            remaining = cfg.total_timesteps - self.model.num_timesteps
            if remaining > 0:
                callback = _RunCallback(self)
                self.model.learn(total_timesteps=remaining, reset_num_timesteps=False, callback=callback)
                callback.close()
            self._checkpoint()
            if not self._evaluated_at(self.model.num_timesteps):
                self._evaluate()
        finally:
            self.venv.close()
        shutil.copyfile(self.run_dir / "checkpoints" / self.state.model, self.run_dir / "latest.zip")
        plot_learning_curve(self.metrics_path, self.run_dir / "learning_curve.png")
        return {"timesteps": self.model.num_timesteps, "wall_seconds": self.state.wall_seconds,
                "best_score": self.state.best_score, "run_dir": str(self.run_dir)}

    def _pretrain(self) -> None:
        """Behaviour cloning of the teacher, then an evaluation at step 0 (the curve's first point)."""
        import json

        from .pretrain import collect, fit

        p = self.cfg.pretrain
        cfg = self.cfg
        demos = collect(cfg.game, p.teacher, p.opponents, p.games, cfg.seed, cfg.ppo.gamma,
                        cfg.reward_shaping, progress=self.progress, workers=p.workers)
        stats = fit(self.model, demos, p.epochs, p.batch_size, p.learning_rate, cfg.seed, progress=self.progress)
        rounds = [dict(stats, round=0, games=p.games, teacher_win_rate=demos.wins / max(1, demos.games),
                       seconds=round(self.wall_seconds(), 1))]
        for r in range(1, p.dagger_rounds + 1):
            student = self.run_dir / f".dagger_student_{r}.zip"
            self.model.save(student)
            more = collect(cfg.game, p.teacher, p.opponents, p.dagger_games, cfg.seed + r, cfg.ppo.gamma,
                           cfg.reward_shaping, progress=self.progress, student=str(student), workers=p.workers)
            student.unlink()
            demos = demos + more
            stats = fit(self.model, demos, p.epochs, p.batch_size, p.learning_rate, cfg.seed + r,
                        progress=self.progress)
            rounds.append(dict(stats, round=r, games=p.dagger_games,
                               student_agreement=more.agreed / max(1, len(more.actions)),
                               student_win_rate=more.wins / max(1, more.games),
                               seconds=round(self.wall_seconds(), 1)))
            if self.progress:
                print(f"DAgger round {r}: student agreed with the teacher on {rounds[-1]['student_agreement']:.1%} "
                      f"of its decisions, won {rounds[-1]['student_win_rate']:.1%}", flush=True)
        stats = dict(rounds[-1], rounds=rounds)
        (self.run_dir / "pretrain.json").write_text(json.dumps(stats, indent=2), encoding="utf-8")
        for key, value in rounds[-1].items():
            self.model.logger.record(f"pretrain/{key}", value)
        self._evaluate()

    def wall_seconds(self) -> float:
        return self._wall_base + time.perf_counter() - self._session_start

    # -------------------------------------------------------------- events
    def on_step(self, timesteps: int) -> None:
        st, cfg = self.state, self.cfg
        if cfg.opponents.selfplay_weight > 0 and timesteps >= st.next_snapshot:
            self._snapshot(timesteps)
            st.next_snapshot += cfg.opponents.selfplay_every
        if timesteps >= st.next_eval:
            self._evaluate()
            st.next_eval += cfg.eval.every
        if timesteps >= st.next_checkpoint:
            self._checkpoint()
            st.next_checkpoint += cfg.checkpoint_every

    def _checkpoint(self) -> None:
        self.state.timesteps = int(self.model.num_timesteps)
        self.state.wall_seconds = self.wall_seconds()
        save_checkpoint(self.run_dir, self.model, self.state)

    def _snapshot(self, timesteps: int) -> None:
        pool_dir = self.run_dir / "pool"
        path = write_bytes_atomic(pool_dir / f"snapshot_{timesteps:010d}.zip", model_bytes(self.model))
        self.state.pool = (self.state.pool + [str(path)])[-self.cfg.opponents.selfplay_pool:]
        for old in pool_dir.glob("snapshot_*.zip"):
            if str(old) not in self.state.pool:
                old.unlink(missing_ok=True)
        self._set_weights()

    def _set_weights(self) -> None:
        weights = opponent_weights(self.cfg, self.state)
        if self.batched is not None:
            self.batched.draws.set_weights(weights)  # drawn at the next rollout start
        else:
            self.venv.env_method("set_weights", weights)

    def on_rollout_start(self) -> None:
        if self.batched is not None:
            self.batched.draw(self.venv)

    def _evaluated_at(self, timesteps: int) -> bool:
        if not self.metrics_path.exists():
            return False
        with open(self.metrics_path, newline="") as fh:
            return any(int(row["timesteps"]) == timesteps for row in csv.DictReader(fh))

    def _evaluate(self) -> None:
        from agents.tournament import run_tournament

        cfg, st = self.cfg, self.state
        steps = int(self.model.num_timesteps)
        eval_file = self.run_dir / f".eval_model_{steps:010d}.zip"  # unique: tournament workers cache agents by path
        self.model.save(eval_file)
        rows = []
        for opponent in cfg.eval.agents:
            result = run_tournament(
                evaluation_lineup(str(eval_file), opponent, cfg), cfg.game,
                games=cfg.eval.games, seed=cfg.eval.seed, workers=cfg.eval.workers,
            )
            me = result.agents[0]
            rows.append({
                "timesteps": steps, "wall_seconds": round(self.wall_seconds(), 1), "stage": st.stage,
                "opponent": opponent, "games": me.games, "win_rate": me.win_rate, "ci_low": me.ci_low,
                "ci_high": me.ci_high, "truncation_rate": result.truncation_rate, "mean_turns": result.mean_turns,
            })
            self.model.logger.record(f"eval/win_rate_vs_{opponent}", me.win_rate)
        self.model.logger.dump(steps)
        _append_rows(self.metrics_path, rows)
        self.last_eval = {r["opponent"]: r["win_rate"] for r in rows}
        score = self.last_eval[cfg.eval.best_against]
        if st.best_score is None or score > st.best_score:
            st.best_score = score
            tmp = self.run_dir / ".best.tmp.zip"
            shutil.copyfile(eval_file, tmp)
            os.replace(tmp, self.run_dir / "best.zip")
        eval_file.unlink(missing_ok=True)
        self._maybe_promote()
        plot_learning_curve(self.metrics_path, self.run_dir / "learning_curve.png")

    def _maybe_promote(self) -> None:
        stages, st = self.cfg.opponents.curriculum, self.state
        if not stages or st.stage >= len(stages) - 1:
            return
        stage = stages[st.stage]
        if all(self.last_eval.get(name, 0.0) >= stage.promote_at for name in stage.opponents):
            st.stage += 1
            self._set_weights()

    def _trim_metrics(self) -> None:
        """On resume, drop evaluation rows newer than the checkpoint (they will be redone)."""
        if not self.metrics_path.exists():
            return
        with open(self.metrics_path, newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if int(r["timesteps"]) <= self.state.timesteps]
        tmp = self.metrics_path.with_name(".metrics.tmp.csv")
        with open(tmp, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=METRIC_FIELDS)
            writer.writeheader()
            writer.writerows(rows)
        os.replace(tmp, self.metrics_path)


def _append_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    new = not path.exists()
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=METRIC_FIELDS)
        if new:
            writer.writeheader()
        writer.writerows(rows)
        fh.flush()
        os.fsync(fh.fileno())


def _make_callback_class():
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    class RunCallback(BaseCallback):
        """Progress bar, and the trainer's periodic events after each vectorised step."""

        def __init__(self, trainer: Trainer) -> None:
            super().__init__()
            self.trainer = trainer
            self.bar = None

        def _on_training_start(self) -> None:
            cfg = self.trainer.cfg
            self.bar = tqdm(total=cfg.total_timesteps, initial=self.model.num_timesteps, unit="step",
                            disable=not self.trainer.progress, dynamic_ncols=True, smoothing=0.05)

        def _on_rollout_start(self) -> None:
            self.trainer.on_rollout_start()

        def _on_step(self) -> bool:
            steps = self.model.num_timesteps
            self.bar.update(steps - self.bar.n)
            self.trainer.on_step(steps)
            last = getattr(self.trainer, "last_eval", None)
            if last:
                self.bar.set_postfix({f"vs_{k}": f"{v:.2f}" for k, v in last.items()}, refresh=False)
            return True

        def close(self) -> None:
            if self.bar is not None:
                self.bar.close()

    return RunCallback


def _RunCallback(trainer: Trainer):  # noqa: N802 - builds the callback lazily (sb3 import)
    return _make_callback_class()(trainer)


# ============================================================== plots
def plot_learning_curve(metrics: Path, out: Path) -> None:
    """Win rate (with 95% CI band) against training steps, one line per opponent."""
    if not metrics.exists():
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(metrics, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for opponent in dict.fromkeys(r["opponent"] for r in rows):
        mine = [r for r in rows if r["opponent"] == opponent]
        x = np.array([int(r["timesteps"]) for r in mine])
        y = np.array([float(r["win_rate"]) for r in mine])
        lo = np.array([float(r["ci_low"]) for r in mine])
        hi = np.array([float(r["ci_high"]) for r in mine])
        ax.plot(x, y, marker="o", label=f"vs {opponent}")
        ax.fill_between(x, lo, hi, alpha=0.2)
    ax.set_xlabel("training steps (learner decisions)")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(f"Learning curve: {metrics.parent.name}")
    fig.tight_layout()
    tmp = out.with_name(f".{out.stem}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, out)


def train(cfg: TrainConfig, resume_dir: str | os.PathLike | None = None, progress: bool = True) -> dict[str, Any]:
    """Train (or resume) a run; returns a short summary."""
    run_dir = Path(resume_dir) if resume_dir is not None else Path(cfg.runs_dir) / cfg.name
    return Trainer(cfg, run_dir, resume=resume_dir is not None, progress=progress).run()


def load_run_config(run_dir: str | os.PathLike, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """The configuration saved in a run folder, with overrides (e.g. a larger total_timesteps)."""
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise CheckpointError(f"{run_dir}: not a run folder (no config.yaml)")
    cfg = TrainConfig.from_yaml(path, overrides)
    saved = TrainConfig.from_yaml(path)
    if cfg.game != saved.game:
        raise ConfigError("game", "cannot change the game settings of a run on resume")
    for name in NETWORK_PPO:
        if getattr(cfg.ppo, name) != getattr(saved.ppo, name):
            raise ConfigError(f"ppo.{name}", "cannot change the network of a run on resume")
    return dataclasses.replace(cfg, runs_dir=str(Path(run_dir).parent), name=Path(run_dir).name)




def print_summary(summary: dict[str, Any]) -> None:
    """The last evaluation as a markdown table, and where the outputs are."""
    run_dir = Path(summary["run_dir"])
    metrics = run_dir / "metrics.csv"
    print(f"\ntrained {summary['timesteps']:,} steps in {summary['wall_seconds'] / 60:.1f} min -> {run_dir}/")
    if metrics.exists():
        with open(metrics, newline="") as fh:
            rows = list(csv.DictReader(fh))
        last = [r for r in rows if r["timesteps"] == rows[-1]["timesteps"]]
        print(f"\nevaluation at {int(last[0]['timesteps']):,} steps (learner = latest model):\n")
        print("| opponent | games | win rate | 95% CI | truncated | mean turns |")
        print("|---|---:|---:|---|---:|---:|")
        for r in last:
            print(f"| {r['opponent']} | {r['games']} | {float(r['win_rate']):.1%} | "
                  f"{float(r['ci_low']):.1%}–{float(r['ci_high']):.1%} | {float(r['truncation_rate']):.1%} | "
                  f"{float(r['mean_turns']):.0f} |")
    print(f"\nlearning curve: {run_dir / 'learning_curve.png'}; best model: {run_dir / 'best.zip'}; "
          f"TensorBoard: tensorboard --logdir {run_dir / 'tb'}")
