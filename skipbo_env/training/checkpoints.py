"""Atomic checkpoints of a training run, and the run folder's lock and temporary files.

``<run>/checkpoints/`` holds ``model_<steps>.zip`` files and a ``latest.json`` pointer written
last (temporary file and rename), so a kill leaves it naming a complete model;
:func:`load_latest` follows it only inside the run folder. :func:`lock_run_dir` holds an
exclusive ``flock`` on ``<run>/.lock`` for the whole run, and :func:`remove_stale_files` clears
what an interrupted write left. See docs/training.md ("Checkpoints and resume").
"""

from __future__ import annotations

import fcntl
import io
import json
import math
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..agents.agentfile import (
    SUFFIX,
    checkpoint_format,
    file_sha256,
    load_policy,
    pickle_refusal,
    write_agent_file,
)
from ..agents.ppo import CheckpointError, load_maskable_ppo
from ..files import FileReadError, read_bounded
from ..records import write_bytes_atomic, write_json_atomic
from .settings import TrainConfig

__all__ = ["CheckpointError", "RunLock", "RunLockedError", "RunWriteError", "TrainState", "export_agent",
           "load_best_score", "load_latest", "lock_run_dir", "model_bytes", "remove_stale_files",
           "save_best_score", "save_checkpoint", "writing"]

MODEL_NAME = re.compile(r"model_[0-9]{1,20}\.zip")
"""File names of checkpoint models in ``<run>/checkpoints/`` (what :func:`save_checkpoint` writes)."""
STATE_FILE_BYTES = 1 << 20
"""Largest ``latest.json`` or ``best.json`` read (they hold a few hundred bytes)."""
SNAPSHOT_NAME = re.compile(r"snapshot_[0-9]{1,20}\.zip")
"""File names of self-play snapshots in ``<run>/pool/``."""
STALE_FILES = {
    ".": (".eval_model_*.zip", ".best.tmp.zip", ".dagger_student_*.zip", ".metrics.tmp.csv",
          ".learning_curve.tmp.png", ".config.yaml.*", ".best.zip.*", ".best.json.*", ".latest.zip.*",
          ".metrics.csv.*", ".pretrain.json.*", ".tmp-*"),
    "checkpoints": (".model_*.zip.*", ".latest.json.*", ".tmp-*"),
    "pool": (".snapshot_*.zip.*", ".tmp-*"),
}
"""Temporary files of a run folder, by sub-folder: the trainer's own (evaluation and DAgger models,
the best model, metrics and curve) and those of the atomic writer (``.<name>.<random>``, or
``.tmp-<name>.<random>``)."""


class RunLockedError(CheckpointError):
    """Another process holds the run folder's lock: it is training that run."""


class RunWriteError(CheckpointError):
    """A file of a run could not be written (a full disk, no permission, ...)."""


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 15] + f"... ({len(text):,} chars)"


@dataclass
class TrainState:
    """What a resumed run needs beyond the model itself."""

    timesteps: int = 0
    stage: int = 0
    """Current curriculum stage."""
    pool: list[str] = field(default_factory=list)
    """Self-play snapshot files, oldest first."""
    best_score: float | None = None
    """Best evaluation win rate against ``eval.best_against`` so far."""
    next_eval: int = 0
    next_checkpoint: int = 0
    next_snapshot: int = 0
    model: str = ""
    """File name of the model zip this state belongs to."""
    wall_seconds: float = 0.0
    """Training wall time accumulated over all sessions of the run."""

    @classmethod
    def from_dict(cls, data: Any, path: Path) -> TrainState:
        """The state of ``data`` (a ``latest.json``), every field checked: a named error otherwise."""
        if not isinstance(data, dict):
            raise CheckpointError(path, "not a training state object")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        missing = known - set(data)
        if unknown or missing:
            raise CheckpointError(path, f"bad training state (unknown {_show(sorted(unknown), 200)}, "
                                        f"missing {sorted(missing)})")

        def bad(name: str, want: str) -> CheckpointError:
            return CheckpointError(path, f"bad training state: {name} must be {want}, got {_show(data[name])}")

        for name in ("timesteps", "stage", "next_eval", "next_checkpoint", "next_snapshot"):
            if type(data[name]) is not int or data[name] < 0:
                raise bad(name, "an int >= 0")
        if not isinstance(data["pool"], list) or not all(isinstance(p, str) for p in data["pool"]):
            raise bad("pool", "a list of file names")
        score = data["best_score"]
        if score is not None and (type(score) not in (int, float) or not math.isfinite(score) or not 0 <= score <= 1):
            raise bad("best_score", "null or a win rate in [0, 1]")
        if not isinstance(data["model"], str):
            raise bad("model", "a file name")
        seconds = data["wall_seconds"]
        if type(seconds) not in (int, float) or not math.isfinite(seconds) or seconds < 0:
            raise bad("wall_seconds", "a number >= 0")
        return cls(**data)


def model_path(run_dir: Path, steps: int) -> Path:
    return run_dir / "checkpoints" / f"model_{steps:010d}.zip"


@contextmanager
def writing(path: str | os.PathLike) -> Iterator[None]:
    """Turn an ``OSError`` of the block (a full disk, ...) into :class:`RunWriteError` naming ``path``."""
    try:
        yield
    except OSError as exc:
        raise RunWriteError(path, f"cannot write ({exc.strerror or exc})") from exc


def save_checkpoint(run_dir: Path, model: Any, state: TrainState) -> Path:
    """Save ``model`` and ``state`` atomically; returns the model file.

    Raises:
        RunWriteError: a file could not be written; ``latest.json`` still names the previous checkpoint.
    """
    folder = run_dir / "checkpoints"
    target = model_path(run_dir, state.timesteps)
    data = model_bytes(model)
    with writing(target):
        write_bytes_atomic(target, data)
    state.model = target.name
    with writing(folder / "latest.json"):
        write_json_atomic(folder / "latest.json", asdict(state))
    for old in folder.glob("model_*.zip"):
        if old.name != target.name:
            old.unlink(missing_ok=True)
    return target


def model_bytes(model: Any) -> bytes:
    """The zip file sb3's ``save`` writes for ``model``."""
    buffer = io.BytesIO()
    model.save(buffer)
    return buffer.getvalue()


def load_latest(run_dir: Path) -> tuple[Path, TrainState]:
    """The latest model file and its training state; raises :class:`CheckpointError`.

    The pointer may only name a ``model_<steps>.zip`` file inside ``<run>/checkpoints/`` (not a
    path elsewhere, nor a link leading out), and its self-play pool only ``snapshot_<steps>.zip``
    files of ``<run>/pool/``; the pool comes back as paths under ``run_dir`` (a snapshot that a
    later snapshot of the stopped session deleted is dropped, with a warning line).
    """
    pointer = run_dir / "checkpoints" / "latest.json"
    if not pointer.is_file():
        raise CheckpointError(run_dir, f"no checkpoint to resume from ({pointer} is missing)")
    try:
        data = json.loads(read_bounded(pointer, STATE_FILE_BYTES, "checkpoint pointer"))
    except FileReadError as exc:
        raise CheckpointError(pointer, f"cannot read the checkpoint pointer ({exc.problem})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(pointer, f"corrupt checkpoint pointer ({exc})") from exc
    except RecursionError:
        raise CheckpointError(pointer, "corrupt checkpoint pointer (nested too deeply)") from None
    state = TrainState.from_dict(data, pointer)
    folder = pointer.parent
    if not MODEL_NAME.fullmatch(state.model):
        raise CheckpointError(pointer, f"names {_show(state.model)}, which is not a checkpoint file of this run "
                                       f"(model_<steps>.zip in {folder})")
    model = folder / state.model
    if not model.is_file():
        raise CheckpointError(pointer, f"names {state.model}, which is missing")
    if model.resolve().parent != folder.resolve():
        raise CheckpointError(pointer, f"names {state.model}, which is not a checkpoint file of this run "
                                       f"(a link leading out of {folder})")
    state.pool = _run_pool(run_dir, state.pool, pointer)
    return model, state


def _run_pool(run_dir: Path, pool: list[str], pointer: Path) -> list[str]:
    pool_dir = run_dir / "pool"
    kept = []
    for entry in pool:
        name = Path(entry).name
        if Path(entry).parent.name != "pool" or not SNAPSHOT_NAME.fullmatch(name):
            raise CheckpointError(pointer, f"pool entry {_show(entry)} is not a self-play snapshot of this run "
                                           f"(pool/snapshot_<steps>.zip)")
        path = pool_dir / name
        if not path.is_file():
            print(f"warning: {pointer}: pool snapshot {path} is missing; dropped from the pool", file=sys.stderr)
            continue
        if path.resolve().parent != pool_dir.resolve():
            raise CheckpointError(pointer, f"pool entry {_show(entry)} is a link leading out of {pool_dir}")
        kept.append(str(path))
    return kept


# ---------------------------------------------------------------------- the best model's score
def save_best_score(run_dir: Path, score: float, timesteps: int) -> None:
    """Record the score of the model about to become ``best.zip`` (written before it, so a stop in
    between leaves a score at least that of ``best.zip``: never a lower one)."""
    path = run_dir / "best.json"
    with writing(path):
        write_json_atomic(path, {"score": score, "timesteps": timesteps})


def load_best_score(run_dir: Path) -> float | None:
    """The score of ``best.zip`` recorded by :func:`save_best_score` (``None`` without one)."""
    path = run_dir / "best.json"
    if not path.exists():
        return None
    try:
        data = json.loads(read_bounded(path, STATE_FILE_BYTES, "best-model score"))
    except FileReadError as exc:
        raise CheckpointError(path, f"unreadable best-model score ({exc.problem})") from None
    except (ValueError, RecursionError) as exc:
        raise CheckpointError(path, f"unreadable best-model score ({type(exc).__name__})") from exc
    score: Any = data.get("score") if isinstance(data, dict) else None
    if type(score) not in (int, float) or not math.isfinite(score) or not 0 <= score <= 1:
        raise CheckpointError(path, f"bad best-model score {_show(score)} (a win rate in [0, 1])")
    return float(score)


# ---------------------------------------------------------------------- the run folder
class RunLock:
    """An exclusive ``flock`` on ``<run>/.lock``, held until :meth:`release` or the process ends."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor releases the lock
            self._fd = None


def lock_run_dir(run_dir: Path, create: bool = True) -> RunLock:
    """Lock ``run_dir`` for this process (creating it first with ``create``); refuse at once when
    another process holds it.

    Raises:
        RunLockedError: another process is training the run (nothing of the folder is touched).
        CheckpointError: ``run_dir`` does not exist (and not ``create``), or cannot be locked.
    """
    if create:
        run_dir.mkdir(parents=True, exist_ok=True)
    elif not run_dir.is_dir():
        raise CheckpointError(run_dir, "no such run folder")
    path = run_dir / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip()
        os.close(fd)
        who = f" (process {holder})" if holder.isdigit() else ""
        raise RunLockedError(run_dir, f"another process is training this run folder{who}: it holds {path}; "
                                      "wait for it to end or stop it") from None
    except OSError as exc:
        os.close(fd)
        raise CheckpointError(path, f"cannot lock the run folder ({exc.strerror or exc})") from exc
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # informative only: the lock is the flock
    except OSError:
        pass
    return RunLock(path, fd)


def remove_stale_files(run_dir: Path, stale: dict[str, tuple[str, ...]] | None = None) -> list[Path]:
    """Delete the temporary files ``stale`` (file patterns by sub-folder; default :data:`STALE_FILES`,
    a training run's) from the run folder (call it holding the lock)."""
    removed = []
    for sub, patterns in (STALE_FILES if stale is None else stale).items():
        folder = run_dir / sub
        if not folder.is_dir():
            continue
        for pattern in patterns:
            for path in folder.glob(pattern):
                if path.is_file() and not path.is_symlink():
                    path.unlink(missing_ok=True)
                    removed.append(path)
    return removed


def export_agent(
    src: str | os.PathLike,
    dst: str | os.PathLike,
    *,
    allow_pickle: bool = False,
    game: Any = None,
    created: str | None = None,
) -> Path:
    """Write the MaskablePPO checkpoint ``src`` as the agent file ``dst`` (``.safetensors``,
    :mod:`skipbo_env.agents.agentfile`): the policy's weights and the JSON that rebuilds it, no
    optimizer state and nothing pickled, so anyone can load it safely. It plays exactly as ``src``
    (``PPOAgent``, ``evaluate.py``); ``dst`` is written atomically and read back before returning.

    ``src`` is a pickle, and loading it can run code: ``allow_pickle=True`` (``--allow-pickle``)
    says the caller made it or trusts it. ``game`` (a :class:`~skipbo_env.rules.GameConfig`) is the
    game it was trained for; by default the game of the run's ``config.yaml`` when ``src`` lies in a
    run folder (``<run>/best.zip``, ``<run>/checkpoints/model_*.zip``), else the standard game of its
    sizes. ``created`` (a date text) is stored in the provenance only when given.

    Raises:
        CheckpointError: ``src`` is missing or not a MaskablePPO checkpoint, ``allow_pickle`` is not
            given, ``dst`` does not end in ``.safetensors``, or the run's configuration is unreadable.
    """
    src, dst = Path(src), Path(dst)
    if dst.suffix != SUFFIX:
        raise CheckpointError(dst, f"the exported agent file's name must end in {SUFFIX} (the safe format; "
                                   ".zip checkpoints are pickles)")
    if not src.exists():
        raise CheckpointError(src, "no such model file")
    kind = checkpoint_format(src)
    if kind != "sb3":
        already = f"; it already is an agent file ({SUFFIX})" if src.suffix == SUFFIX else ""
        raise CheckpointError(src, f"not a MaskablePPO checkpoint (a .zip file){already}")
    if not allow_pickle:
        raise CheckpointError(src, pickle_refusal("a MaskablePPO checkpoint (.zip)"))
    model = load_maskable_ppo(src)
    folders = [src.parent] + ([src.parent.parent] if src.parent.name in ("checkpoints", "pool") else [])
    run_config = next((f / "config.yaml" for f in folders if (f / "config.yaml").is_file()), None)
    if game is None and run_config is not None:  # the game of the run src belongs to
        try:
            game = TrainConfig.from_yaml(run_config).game
        except Exception as exc:  # the configuration's own errors (YAML, fields, values)
            raise CheckpointError(run_config, f"cannot read the run's game configuration ({exc})") from exc
    if game is None:  # the standard game of the policy's sizes
        # the train extra (torch), which loading the model already needed
        from ..nets import game_of_spaces

        try:
            game = game_of_spaces(int(model.observation_space.shape[0]), int(model.action_space.n))
        except (ValueError, TypeError, IndexError) as exc:
            raise CheckpointError(src, f"not a Skip-Bo policy ({exc})") from exc
    provenance: dict[str, Any] = {"source": src.name, "source_sha256": file_sha256(src),
                                  "timesteps": int(model.num_timesteps)}
    if created is not None:
        provenance["created"] = created
    out = write_agent_file(dst, model.policy, game, provenance)
    written, _ = load_policy(out)
    want = model.policy.state_dict()
    got = written.state_dict()
    if set(got) != set(want) or any(not bool((got[k] == want[k]).all()) for k in want):  # pragma: no cover
        raise CheckpointError(out, "the written agent file does not hold the checkpoint's weights")
    return out

