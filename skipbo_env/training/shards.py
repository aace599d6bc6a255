"""A recipe's run folder and its resumable data shards (``turnnet``'s labels, ``value``'s positions).

:func:`open_recipe_run` makes the run folder and saves the configuration in it. A recipe splits
its data into seeded shards, each one file written atomically when finished. Running the recipe
again reuses every finished shard (read once and checked by the recipe: a foreign or corrupt file
is refused before any work) and makes only the missing ones, in worker processes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..agents.tournament import worker_pool
from ..records import write_bytes_atomic
from ..rules import ConfigError


class RecipeRun(Protocol):
    """A recipe's top-level configuration, as :func:`open_recipe_run` reads it."""

    @property
    def runs_dir(self) -> str: ...

    @property
    def name(self) -> str: ...

    @classmethod
    def from_yaml(cls, path: str | Path) -> Any: ...

    def save_yaml(self, path: str | Path) -> Path: ...


def open_recipe_run(cfg: RecipeRun) -> Path:
    """``<cfg.runs_dir>/<cfg.name>/``, created, with ``cfg`` saved as its ``config.yaml``; a folder
    holding a run of another configuration is refused (the finished shards it keeps were made for
    that one)."""
    run_dir = Path(cfg.runs_dir) / cfg.name
    run_dir.mkdir(parents=True, exist_ok=True)
    saved = run_dir / "config.yaml"
    if saved.exists() and type(cfg).from_yaml(saved) != cfg:
        raise ConfigError("name", f"{run_dir} holds a run of another configuration; use another name")
    cfg.save_yaml(saved)
    return run_dir


def load_shard(path: Path, keys: tuple[str, ...], settings: str, section: str, kind: str,
               redo: str) -> dict[str, np.ndarray]:
    """The arrays ``keys`` of the finished shard file ``path``, checked against the ``settings``
    that should have made it (a :class:`ConfigError` naming ``section``: ``labels``, ``positions``;
    ``kind`` and ``redo`` word the message, e.g. "a label shard", "label again")."""
    try:
        with np.load(path, allow_pickle=False) as data:
            out = {k: data[k] for k in (*keys, "settings")}
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(section, f"{path} is not {kind} ({exc}); move it away to {redo}") from None
    if str(out.pop("settings")) != settings:
        raise ConfigError(section, f"{path} was made with other settings than this configuration's; "
                                   "use another run name or move the file away")
    return out


def shards_sha256(paths: list[Path]) -> str:
    """SHA-256 of the shard files' bytes, in order: names the data a recipe's network was fitted on."""
    return hashlib.sha256(b"".join(path.read_bytes() for path in paths)).hexdigest()


def write_run_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    """Write a recipe run's ``summary`` to ``<run_dir>/metrics.json`` (atomically)."""
    write_bytes_atomic(run_dir / "metrics.json", (json.dumps(summary, indent=2) + "\n").encode())


def collect_shards(paths: list[Path], read: Callable[[int], dict[str, np.ndarray]], job: Callable[[Any], int],
                   job_args: Callable[[int], Any], workers: int, progress: bool = True,
                   what: str = "shards") -> list[dict[str, np.ndarray]]:
    """Every shard's arrays, in order: shard ``s`` (file ``paths[s]``) is read with ``read(s)`` if it
    exists, else made by ``job(job_args(s))`` (a picklable top-level function that writes the file;
    in ``workers`` spawned processes when more than one) and then read. With ``progress``, a line per
    finished shard with the ETA."""
    done = {s: read(s) for s, path in enumerate(paths) if path.exists()}  # refuse a bad file before any work
    todo = [s for s in range(len(paths)) if s not in done]
    if todo:
        start = time.monotonic()

        def report(count: int) -> None:
            if progress:
                spent = time.monotonic() - start
                print(f"{what}: {count}/{len(todo)} made, ETA {spent / count * (len(todo) - count):.0f} s", flush=True)

        if min(workers, len(todo)) == 1:
            for k, s in enumerate(todo):
                job(job_args(s))
                report(k + 1)
        else:
            with worker_pool(min(workers, len(todo))) as pool:
                for k, future in enumerate(as_completed([pool.submit(job, job_args(s)) for s in todo])):
                    future.result()
                    report(k + 1)
    return [done[s] if s in done else read(s) for s in range(len(paths))]


__all__ = ["RecipeRun", "collect_shards", "load_shard", "open_recipe_run", "shards_sha256", "write_run_summary"]
