"""Atomic checkpoints of a training run.

Layout under ``<run>/checkpoints/``: ``model_<steps>.zip`` files and a
``latest.json`` pointer written last, through a temporary file and a rename.
A kill at any moment leaves ``latest.json`` naming a complete model file:
either the new one or the previous one. Older model files are deleted only
after the pointer moved on.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..agents.ppo import CheckpointError, load_maskable_ppo
from ..records import write_bytes_atomic, write_json_atomic

__all__ = ["CheckpointError", "TrainState", "export_agent", "load_latest", "model_bytes", "save_checkpoint"]


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
        if not isinstance(data, dict):
            raise CheckpointError(path, "not a training state object")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        missing = known - set(data)
        if unknown or missing:
            raise CheckpointError(path, f"bad training state (unknown {sorted(unknown)}, missing {sorted(missing)})")
        return cls(**data)


def model_path(run_dir: Path, steps: int) -> Path:
    return run_dir / "checkpoints" / f"model_{steps:010d}.zip"


def save_checkpoint(run_dir: Path, model: Any, state: TrainState) -> Path:
    """Save ``model`` and ``state`` atomically; returns the model file."""
    folder = run_dir / "checkpoints"
    target = write_bytes_atomic(model_path(run_dir, state.timesteps), model_bytes(model))
    state.model = target.name
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
    """The latest model file and its training state; raises :class:`CheckpointError`."""
    pointer = run_dir / "checkpoints" / "latest.json"
    if not pointer.is_file():
        raise CheckpointError(run_dir, f"no checkpoint to resume from ({pointer} is missing)")
    try:
        data = json.loads(pointer.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(pointer, f"corrupt checkpoint pointer ({exc})") from exc
    state = TrainState.from_dict(data, pointer)
    model = pointer.parent / state.model
    if not model.is_file():
        raise CheckpointError(pointer, f"names {state.model}, which is missing")
    return model, state


def export_agent(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Write a copy of the MaskablePPO model ``src`` for playing, to ship: the same weights
    and settings with a fresh optimizer state (Adam's moments are two thirds of a checkpoint
    and only matter for training further), deflated. It loads like any checkpoint
    (``PPOAgent``, ``evaluate.py``) and plays exactly as ``src``; ``dst`` is written
    atomically."""
    src, dst = Path(src), Path(dst)
    if not src.is_file():
        raise CheckpointError(src, "no such model file")
    if dst.suffix != ".zip":
        raise CheckpointError(dst, "the exported model's name must end in .zip")
    model = load_maskable_ppo(src)
    policy = model.policy
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=model.lr_schedule(1.0), **policy.optimizer_kwargs)
    packed = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(model_bytes(model))) as fin, \
            zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as fout:
        for info in fin.infolist():
            fout.writestr(info.filename, fin.read(info), compress_type=zipfile.ZIP_DEFLATED)
    return write_bytes_atomic(dst, packed.getvalue())
