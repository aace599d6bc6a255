"""The training loop behind ``train.py``: MaskablePPO against scripted opponents.

A run writes ``<runs_dir>/<name>/`` (``config.yaml``, ``tb/``, ``metrics.csv``, ``checkpoints/``,
``best.zip`` and ``best.json``, ``latest.zip``, ``learning_curve.png``, ``pool/``, ``.lock``: see
docs/training.md, "What a run writes"). The state saved with a checkpoint points at the next
checkpoint, evaluation and snapshot, so a resumed run continues exactly; a file that cannot be
written ends the run with :class:`~skipbo_env.training.checkpoints.RunWriteError` naming it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure
from tqdm import tqdm

from ..agents.agentfile import load_policy
from ..agents.executors import ChunkRunner, open_runner
from ..agents.registry import SHIPPED, shipped_agent_path
from ..agents.scorer import ScorerPolicy
from ..agents.tournament import DEFAULT_BATCH, check_agent_specs, lineups, run_tournament, warm_up
from ..nets import FEATURES_VERSION
from ..records import write_bytes_atomic
from ..rules import ConfigError
from .checkpoints import (
    RunWriteError,
    TrainState,
    load_best_score,
    load_latest,
    lock_run_dir,
    model_bytes,
    remove_stale_files,
    save_best_score,
    save_checkpoint,
    writing,
)
from .envs import make_vec_env
from .metrics import (
    append_rows,
    evaluated_at,
    evaluation_lineup,
    evaluation_row,
    plot_learning_curve,
    print_summary,
    trim_rows,
)
from .opponents import BatchedOpponents, opponent_weights
from .pipeline import RolloutWorker, learn_pipelined
from .pretrain import collect, fit
from .resume import RESUMABLE_PPO, load_for_resume, load_run_config
from .settings import TrainConfig
from .threads import torch_threads

__all__ = ["Trainer", "build_model", "load_run_config", "print_summary", "train"]


def train(cfg: TrainConfig, resume_dir: str | os.PathLike | None = None, progress: bool = True) -> dict[str, Any]:
    """Train (or resume) a run; returns a short summary."""
    run_dir = Path(resume_dir) if resume_dir is not None else Path(cfg.runs_dir) / cfg.name
    return Trainer(cfg, run_dir, resume=resume_dir is not None, progress=progress).run()


def build_model(cfg: TrainConfig, venv, resume_from: Path | None) -> MaskablePPO:
    """A new MaskablePPO model of the configuration, or the checkpoint ``resume_from`` on ``venv``."""
    p = cfg.ppo
    if resume_from is not None:
        model = load_for_resume(resume_from, cfg, venv.num_envs)
        model.set_env(venv)
        return model
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[p.activation]
    policy_kwargs: dict = {"activation_fn": activation}
    if p.policy == "scorer":
        policy: str | type[ScorerPolicy] = ScorerPolicy
        policy_kwargs.update(
            context_arch=list(p.net_arch),
            value_arch=list(p.net_arch),
            scorer_arch=list(p.scorer_arch),
            features_version=FEATURES_VERSION,
        )  # saved with the model, checked on load
    else:
        policy = "MlpPolicy"
        policy_kwargs["net_arch"] = list(p.net_arch)
    model = MaskablePPO(
        policy,
        venv,
        **{name: getattr(p, name) for name in RESUMABLE_PPO},
        policy_kwargs=policy_kwargs,
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )
    if cfg.init_from is not None:
        load_initial_weights(model, cfg)
    return model


def load_initial_weights(model: MaskablePPO, cfg: TrainConfig) -> None:
    """Copy the weights of ``cfg.init_from`` (a shipped agent or an agent file) into ``model``'s policy.

    Raises:
        ConfigError: naming ``init_from``, when the file is not an agent file of this game or its
            network is not the run's (other policy kind or layer sizes).
    """
    assert cfg.init_from is not None
    path = shipped_agent_path(cfg.init_from) if cfg.init_from in SHIPPED else Path(cfg.init_from)
    try:
        source, _ = load_policy(path, cfg.game)
    except ValueError as exc:  # CheckpointError: missing, unreadable, other sizes
        raise ConfigError("init_from", str(exc)) from None
    refusal = f"{path} holds a {type(source).__name__} network that is not this run's {type(model.policy).__name__} " \
              "(ppo.policy, net_arch, scorer_arch)"
    if type(source) is not type(model.policy):
        raise ConfigError("init_from", refusal)
    try:
        model.policy.load_state_dict(source.state_dict())  # strict: same tensor names and shapes
    except RuntimeError as exc:  # torch names the missing, unexpected and mis-sized tensors
        raise ConfigError("init_from", f"{refusal}: {exc}") from None


# ============================================================== the run

@dataclasses.dataclass
class _PendingEvaluation:
    """An evaluation of the model at ``steps`` (saved as ``eval_file``) playing beside the training:
    ``future`` gives its tournaments' results, each with the wall time its row records."""

    steps: int
    stage: int
    eval_file: Path
    future: Future[list[tuple[Any, float]]]


def _next_due(due: int, every: int, timesteps: int) -> int:
    """The next step count at which an event repeating ``every`` steps fires, after one fired at
    ``timesteps`` (due at ``due``): ``due + every``, or the first multiple past ``timesteps`` when the
    schedule had fallen behind (a resumed run that turns self-play on or shortens an interval fires
    once, not once a rollout until it catches up)."""
    return due + every * ((timesteps - due) // every + 1)


EVAL_BATCH = 256
"""Largest number of games an evaluation worker plays at once (one forward pass of the network per step)."""


class Trainer:
    """Owns one run folder; :meth:`run` trains until ``total_timesteps``."""

    resume_from: Path | None  # set by _open: the checkpoint to resume, None for a new run

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: bool, progress: bool = True) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.progress = progress
        self.metrics_path = run_dir / "metrics.csv"
        self._check_eval_games()

    def _open(self) -> None:
        """The run's starting state (called holding the run folder's lock)."""
        cfg, run_dir = self.cfg, self.run_dir
        if self.resume:
            self.resume_from, self.state = load_latest(run_dir)
            stages = cfg.opponents.curriculum
            if stages and self.state.stage >= len(stages):
                raise ConfigError("opponents.curriculum", f"the run is at stage {self.state.stage} (counting from 0); "
                                                          f"this curriculum has {len(stages)} stages")
            best = load_best_score(run_dir)  # best.zip's score, also when a stop came before its checkpoint
            if best is not None and (self.state.best_score is None or best > self.state.best_score):
                self.state.best_score = best
        else:
            if (run_dir / "checkpoints" / "latest.json").exists() or self.metrics_path.exists():
                raise ConfigError(
                    "name", f"{run_dir} already holds a run; resume it with --resume {run_dir} or pick another --name"
                )
            self.resume_from, self.state = None, TrainState(
                next_eval=cfg.eval.every, next_checkpoint=cfg.checkpoint_every,
                next_snapshot=cfg.opponents.selfplay_every)

    def _check_eval_games(self) -> None:
        count = len(lineups(self.cfg.game.num_teams, self.cfg.game))
        if self.cfg.eval.games % count:
            raise ConfigError(
                "eval.games", f"must be a multiple of {count} (the seatings of each deal), got {self.cfg.eval.games}"
            )

    # -------------------------------------------------------------- main
    def run(self) -> dict[str, Any]:
        """Lock the run folder, train, unlock (on any exit; the OS unlocks a killed process)."""
        lock = lock_run_dir(self.run_dir, create=not self.resume)  # a second process stops here, touching nothing
        try:
            self._open()
            remove_stale_files(self.run_dir)
            try:
                with torch_threads(self.cfg.threads):
                    return self._train_phases()
            except RunWriteError as exc:
                raise RunWriteError(exc.path, f"{exc.problem}; {self._kept()}") from exc
            except OSError as exc:
                raise RunWriteError(exc.filename or self.run_dir, f"{exc.strerror or exc}; {self._kept()}") from exc
            finally:
                remove_stale_files(self.run_dir)
        finally:
            lock.release()

    def _kept(self) -> str:
        try:
            model, state = load_latest(self.run_dir)
        except Exception:  # noqa: BLE001 - only words for the message
            return "no checkpoint of the run was written"
        return (f"the last good checkpoint ({model.name}, {state.timesteps:,} steps) is kept: "
                f"resume with --resume {self.run_dir} once the problem is solved")

    def _train_phases(self) -> dict[str, Any]:
        """Train each phase of the configuration (TrainConfig.phases) as a session: the settings in
        force at its start, up to its end; the next phase resumes from the checkpoint just written,
        as ``--resume`` with the phase's overrides would."""
        base = self.cfg
        try:
            while True:
                start = self.state.timesteps
                self.cfg = dataclasses.replace(base.at(start), total_timesteps=base.phase_end(start))
                result = self._train(saved=base)
                if not base.phases or self.state.timesteps >= base.total_timesteps:
                    return result
                self.resume_from, self.state = load_latest(self.run_dir)
                if self.progress:
                    print(f"phase from {self.state.timesteps:,} steps: "
                          + ", ".join(f"{k}={v}" for p in base.phases if p.start <= self.state.timesteps
                                      for k, v in p.set.items()), flush=True)
        finally:
            self.cfg = base

    def _train(self, saved: TrainConfig) -> dict[str, Any]:
        """One session: train ``self.cfg`` up to its ``total_timesteps``; ``saved`` goes to config.yaml."""
        cfg = self.cfg
        config_path = self.run_dir / "config.yaml"
        with writing(config_path):
            saved.save_yaml(config_path)
        with writing(self.metrics_path):
            trim_rows(self.metrics_path, self.state.timesteps)  # evaluations past the checkpoint are redone
        seed = cfg.seed + self.state.timesteps  # a resumed run continues on fresh env streams
        self._eval_pool: ChunkRunner | None = None
        self._eval_thread: ThreadPoolExecutor | None = None
        self._pending_eval: _PendingEvaluation | None = None
        first_snapshot = cfg.opponents.pure_selfplay and not self.state.pool
        if first_snapshot:  # pure self-play: the untrained network is the first opponent, written below
            self.state.pool = [str(self._snapshot_path(self.state.timesteps))]
        # the processes start first, so that their imports and set-up overlap this process's
        worker = RolloutWorker(cfg, seed) if cfg.pipeline and cfg.total_timesteps > self.state.timesteps else None
        try:
            self._open_evaluations()
            self.venv = make_vec_env(cfg, opponent_weights(cfg, self.state), seed)
        except BaseException:
            self._close_evaluations()
            if worker is not None:
                worker.close()
            raise
        self.batched = BatchedOpponents(cfg, seed) if cfg.vec_env == "batched" else None
        self._set_weights()
        try:
            self.model = build_model(cfg, self.venv, self.resume_from)
            self.model.set_logger(configure(str(self.run_dir / "tb"), ["tensorboard"]))
            self._session_start = time.perf_counter()
            self._wall_base = self.state.wall_seconds
            if self.resume_from is None and cfg.pretrain.teacher is not None:
                self._pretrain()
            if first_snapshot:
                self._write_snapshot(Path(self.state.pool[0]))  # before any episode draws its opponents
            remaining = cfg.total_timesteps - self.model.num_timesteps
            if remaining > 0:
                callback = RunCallback(self)
                if cfg.pipeline:
                    learn_pipelined(self.model, cfg, seed, remaining, callback,
                                    lambda: opponent_weights(self.cfg, self.state), worker)
                else:
                    self.model.learn(total_timesteps=remaining, reset_num_timesteps=False, callback=callback)
                callback.close()
            self._join_evaluation()
            if not evaluated_at(self.metrics_path, self.model.num_timesteps):
                self._evaluate()  # before the last checkpoint: its best score and stage are saved with it
                self._join_evaluation()
            self._checkpoint()
        finally:
            if worker is not None:
                worker.close()  # learn_pipelined closed it, unless the run stopped before
            self.venv.close()
            self._close_evaluations()
        latest = self.run_dir / "latest.zip"
        with writing(latest):
            write_bytes_atomic(latest, (self.run_dir / "checkpoints" / self.state.model).read_bytes())
        self._plot()
        return {"timesteps": self.model.num_timesteps, "wall_seconds": self.state.wall_seconds,
                "best_score": self.state.best_score, "run_dir": str(self.run_dir)}

    def _plot(self) -> None:
        out = self.run_dir / "learning_curve.png"
        with writing(out):
            plot_learning_curve(self.metrics_path, out)

    def _pretrain(self) -> None:
        """Behaviour cloning of the teacher, then an evaluation at step 0 (the curve's first point)."""
        p = self.cfg.pretrain
        cfg = self.cfg
        assert p.teacher is not None  # _open calls _pretrain only with a teacher
        demos = collect(cfg.game, p.teacher, p.opponents, p.games, cfg.seed, cfg.ppo.gamma,
                        cfg.reward_shaping, progress=self.progress, workers=p.workers, ray=cfg.ray)
        stats: dict[str, Any] = fit(self.model, demos, p.epochs, p.batch_size, p.learning_rate, cfg.seed,
                                    progress=self.progress)
        rounds: list[dict[str, Any]] = [dict(stats, round=0, games=p.games,
                                             teacher_win_rate=demos.wins / max(1, demos.games),
                                             seconds=round(self.wall_seconds(), 1))]
        for r in range(1, p.dagger_rounds + 1):
            student = self.run_dir / f".dagger_student_{r}.zip"
            with writing(student):
                self.model.save(student)
            more = collect(cfg.game, p.teacher, p.opponents, p.dagger_games, cfg.seed + r, cfg.ppo.gamma,
                           cfg.reward_shaping, progress=self.progress, student=str(student), workers=p.workers,
                           ray=cfg.ray)
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
        pretrain_path = self.run_dir / "pretrain.json"
        with writing(pretrain_path):
            write_bytes_atomic(pretrain_path, json.dumps(stats, indent=2).encode("utf-8"))
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
            st.next_snapshot = _next_due(st.next_snapshot, cfg.opponents.selfplay_every, timesteps)
        if timesteps >= st.next_eval:
            self._evaluate()
            st.next_eval = _next_due(st.next_eval, cfg.eval.every, timesteps)
        if timesteps >= st.next_checkpoint:  # before saving: the saved state points at the next one
            st.next_checkpoint = _next_due(st.next_checkpoint, cfg.checkpoint_every, timesteps)
            self._join_evaluation()  # the checkpoint saves the best score and stage it may change
            self._checkpoint()

    def _checkpoint(self) -> None:
        self.state.timesteps = int(self.model.num_timesteps)
        self.state.wall_seconds = self.wall_seconds()
        save_checkpoint(self.run_dir, self.model, self.state)

    def _snapshot_path(self, timesteps: int) -> Path:
        return self.run_dir / "pool" / f"snapshot_{timesteps:010d}.zip"

    def _write_snapshot(self, path: Path) -> None:
        data = model_bytes(self.model)
        with writing(path):
            write_bytes_atomic(path, data)

    def _snapshot(self, timesteps: int) -> None:
        pool_dir = self.run_dir / "pool"
        path = self._snapshot_path(timesteps)
        self._write_snapshot(path)
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

    def _evaluate(self) -> None:
        """Play the evaluation games of the model as it is now: at once, or (``eval.overlap``) in the
        worker processes while training goes on, taken in by :meth:`_join_evaluation`."""
        self._join_evaluation()  # at most one in flight: an earlier one is taken in first
        cfg, st = self.cfg, self.state
        steps = int(self.model.num_timesteps)
        eval_file = self.run_dir / f".eval_model_{steps:010d}.zip"  # unique: tournament workers cache agents by path
        with writing(eval_file):
            self.model.save(eval_file)
        if cfg.eval.overlap and self._eval_pool is not None:  # one worker: played here, as without overlap
            if self._eval_thread is None:
                self._eval_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evaluation")
            # the agents are loaded here, at the evaluation's step, as the plain loop's tournaments
            # load them: building a network draws on torch's global generator, which the training
            # uses, so an overlapped run trains exactly as the same run without overlap
            for opponent in cfg.eval.agents:
                check_agent_specs(evaluation_lineup(str(eval_file), opponent, cfg.game), cfg.game, allow_pickle=True)
            started = self.wall_seconds()
            future = self._eval_thread.submit(self._play_evaluation, cfg, eval_file, lambda: started, False)
            self._pending_eval = _PendingEvaluation(steps, st.stage, eval_file, future)
        else:
            self._take_evaluation(steps, st.stage, eval_file,
                                  self._play_evaluation(cfg, eval_file, self.wall_seconds, True))

    def _open_evaluations(self) -> None:
        """Open the evaluation workers at the session's start (``eval.workers`` > 1 or Ray), kept for
        all its evaluations, and let them load what the first one needs while the training starts."""
        cfg = self.cfg
        if cfg.eval.workers > 1 or cfg.ray is not None:
            self._eval_pool = open_runner(cfg.eval.workers, cfg.ray)
            self._eval_pool.prepare(warm_up, cfg.game)

    def _play_evaluation(self, cfg: TrainConfig, eval_file: Path, clock: Callable[[], float],
                         check_agents: bool) -> list[tuple[Any, float]]:
        """The tournaments of ``eval_file`` against each of ``cfg.eval.agents``, each with ``clock()``
        read after it. In the evaluation thread the games run in the pool's processes, ``clock`` is
        the evaluation's start and ``check_agents`` is ``False`` (:meth:`_evaluate` loaded the agents)."""
        out = []
        # one chunk of games per worker, up to EVAL_BATCH: the network decides all of a worker's
        # games in one forward pass per step (fewer, larger passes; the results do not change)
        batch = min(EVAL_BATCH, max(DEFAULT_BATCH, -(-cfg.eval.games // cfg.eval.workers)))
        for opponent in cfg.eval.agents:
            result = run_tournament(evaluation_lineup(str(eval_file), opponent, cfg.game), cfg.game,
                                    games=cfg.eval.games, seed=cfg.eval.seed, workers=cfg.eval.workers,
                                    allow_pickle=True,  # the run's own model file, written just before
                                    pool=self._eval_pool, check_agents=check_agents, batch_size=batch)
            out.append((result, clock()))
        return out

    def _join_evaluation(self) -> None:
        """Take in the evaluation playing beside the training, if any (waits for its games)."""
        pending, self._pending_eval = self._pending_eval, None
        if pending is not None:
            self._take_evaluation(pending.steps, pending.stage, pending.eval_file, pending.future.result())

    def _take_evaluation(self, steps: int, stage: int, eval_file: Path, results: list[tuple[Any, float]]) -> None:
        """Write an evaluation's rows, keep its model as ``best.zip`` if it scored best, promote."""
        cfg, st = self.cfg, self.state
        rows: list[dict[str, Any]] = []
        for opponent, (result, wall) in zip(cfg.eval.agents, results, strict=True):
            rows.append(evaluation_row(result, steps, wall, stage, opponent))
            self.model.logger.record(f"eval/win_rate_vs_{opponent}", rows[-1]["win_rate"])
        self.model.logger.dump(steps)
        with writing(self.metrics_path):
            append_rows(self.metrics_path, rows)
        self.last_eval: dict[str, float] = {r["opponent"]: r["win_rate"] for r in rows}
        score = self.last_eval[cfg.eval.best_against]
        if st.best_score is None or score > st.best_score:
            st.best_score = score
            save_best_score(self.run_dir, score, steps)  # first: a stop before the copy leaves no lower score
            best = self.run_dir / "best.zip"
            with writing(best):
                write_bytes_atomic(best, eval_file.read_bytes())
        eval_file.unlink(missing_ok=True)
        self._maybe_promote()
        self._plot()

    def _close_evaluations(self) -> None:
        """Stop the evaluation thread and pool (an evaluation still in flight is dropped: its model
        file is a temporary file, and a resume evaluates again from the last checkpoint)."""
        pending, self._pending_eval = self._pending_eval, None
        if pending is not None:
            pending.future.cancel()  # not started yet: dropped; playing: the thread finishes it first
        if self._eval_thread is not None:
            self._eval_thread.shutdown(wait=True)
            self._eval_thread = None
        if self._eval_pool is not None:
            self._eval_pool.close()
            self._eval_pool = None

    def _maybe_promote(self) -> None:
        stages, st = self.cfg.opponents.curriculum, self.state
        if not stages or st.stage >= len(stages) - 1:
            return
        stage = stages[st.stage]
        assert stage.promote_at is not None  # every stage but the last has one (TrainConfig checks)
        if all(self.last_eval.get(name, 0.0) >= stage.promote_at for name in stage.opponents):
            st.stage += 1
            self._set_weights()


class RunCallback(BaseCallback):
    """Progress bar (or, without one, a line at every ``eval.every`` steps), and the trainer's
    periodic events after each vectorised step."""

    def __init__(self, trainer: Trainer) -> None:
        super().__init__()
        self.trainer = trainer
        self.bar: Any = None  # a tqdm bar from _on_training_start (tqdm ships no types)
        self._next_line = 0
        self._start = (0, 0.0)

    def _on_training_start(self) -> None:
        cfg = self.trainer.cfg
        self.bar = tqdm(total=cfg.total_timesteps, initial=self.model.num_timesteps, unit="step",
                        disable=not self.trainer.progress, dynamic_ncols=True, smoothing=0.05)
        self._start = (self.model.num_timesteps, time.perf_counter())
        self._next_line = self.model.num_timesteps + cfg.eval.every

    def _line(self, steps: int) -> None:
        """A progress line for logs: steps, rate, ETA and the last evaluation's win rates."""
        total = self.trainer.cfg.total_timesteps
        rate = (steps - self._start[0]) / max(time.perf_counter() - self._start[1], 1e-9)
        eta = (total - steps) / rate if rate > 0 else float("nan")
        last = getattr(self.trainer, "last_eval", None) or {}
        wins = "".join(f", vs {k} {v:.2f}" for k, v in last.items())
        print(f"{steps:,}/{total:,} steps ({steps / total:.0%}), {rate:,.0f} steps/s, ETA {eta / 60:.1f} min{wins}",
              flush=True)

    def _on_rollout_start(self) -> None:
        self.trainer.on_rollout_start()

    def _on_step(self) -> bool:
        steps = self.model.num_timesteps
        self.bar.update(steps - self.bar.n)
        self.trainer.on_step(steps)
        last = getattr(self.trainer, "last_eval", None)
        if last:
            self.bar.set_postfix({f"vs_{k}": f"{v:.2f}" for k, v in last.items()}, refresh=False)
        if not self.trainer.progress and steps >= self._next_line:
            self._line(steps)
            self._next_line = steps + self.trainer.cfg.eval.every
        return True

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
