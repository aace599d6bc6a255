"""A recipe's run folder and its resumable data shards (``turnnet``'s labels, ``value``'s positions).

:func:`open_recipe_run` makes and locks the run folder (one process at a time) and saves the
configuration in it. A recipe splits its data into seeded shards, each one file written atomically
when finished. Running the recipe again reuses every finished shard (read once, bounded by what the
settings can make, and checked by the recipe: a foreign, corrupt or crafted file is refused before
any work) and makes only the missing ones, in worker processes that die with the recipe's process,
or as Ray tasks on a cluster (the recipe's ``ray`` setting; :mod:`skipbo_env.agents.executors`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np

from ..agents.executors import ChunkRunner, run_chunks
from ..files import FileReadError, check_readable
from ..records import TEMP_PREFIX, write_bytes_atomic
from ..rules import ConfigError
from .checkpoints import lock_run_dir, remove_stale_files
from .settings_io import show_text


class RecipeRun(Protocol):
    """A recipe's top-level configuration, as :func:`open_recipe_run` reads it."""

    @property
    def runs_dir(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def ray(self) -> str | None: ...

    @classmethod
    def from_yaml(cls, path: str | Path) -> Any: ...

    def save_yaml(self, path: str | Path) -> Path: ...


@contextmanager
def open_recipe_run(cfg: RecipeRun, data_dir: str) -> Iterator[Path]:
    """``<cfg.runs_dir>/<cfg.name>/``, created and locked for this process while the block runs
    (:func:`~.checkpoints.lock_run_dir`: a second process is refused at once), with the temporary
    files a killed run left there and in its ``data_dir`` (the shards' folder) removed, and ``cfg``
    saved as its ``config.yaml``. A folder holding a run of another configuration is refused (the
    finished shards it keeps were made for that one; where the shards are made, ``ray``, may
    differ), and so is a run folder that cannot be made
    (a :class:`ConfigError` naming ``runs_dir``)."""
    run_dir = Path(cfg.runs_dir) / cfg.name
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = lock_run_dir(run_dir, create=False)
    except OSError as exc:
        raise ConfigError("runs_dir", f"cannot make or lock the run folder {run_dir} ({exc.strerror or exc})") from None
    try:
        remove_stale_files(run_dir, {".": (f"{TEMP_PREFIX}*",), data_dir: (f"{TEMP_PREFIX}*",)})
        saved = run_dir / "config.yaml"
        if saved.exists() and dataclasses.replace(type(cfg).from_yaml(saved), ray=cfg.ray) != cfg:
            raise ConfigError("name", f"{run_dir} holds a run of another configuration; use another name")
        cfg.save_yaml(saved)
        yield run_dir
    finally:
        lock.release()


@dataclass(frozen=True)
class ShardLayout:
    """What a recipe's shard file may hold, as its settings allow: checked from the zip and npy
    headers (:func:`load_shard`) before any array is read.

    ``columns`` maps each array to its dtype (``"<f4"``) and shape, each dimension a number or the
    name of a size; ``sizes`` gives each named size its largest value under the recipe's settings
    (arrays that share a name have the same size). The file also holds ``settings`` (the JSON text
    of the settings that made it)."""

    columns: dict[str, tuple[str, tuple[int | str, ...]]]
    sizes: dict[str, int]

    def largest(self, dim: int | str) -> int:
        """The largest value of dimension ``dim`` (a number, or the name of a size)."""
        return self.sizes[dim] if isinstance(dim, str) else dim

    def largest_bytes(self) -> int:
        """The largest shard file these settings can make (stored uncompressed, headers included)."""
        data = sum(math.prod(self.largest(d) for d in shape) * np.dtype(dtype).itemsize
                   for dtype, shape in self.columns.values())
        return data + SETTINGS_CHARS * 4 + (len(self.columns) + 1) * (NPY_HEADER_BYTES + 1024) + 65536


SETTINGS_CHARS = 1 << 16
"""Longest settings text a shard file holds."""
NPY_HEADER_BYTES = 4096
"""Longest npy header of a shard's array."""
MAX_EXPANSION = 64
"""Most that a shard file's arrays may inflate to, as a multiple of the file's size: the recipes'
own shards inflate 10 to 30 times (observations and features), a zip bomb a thousand times."""

SHARD_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, NotImplementedError,
                RuntimeError)
"""What reading a damaged zip or npy member raises (RuntimeError: an encrypted member)."""


class _Refused(Exception):
    """A shard file that is not what its layout allows (the reason in words)."""


def load_shard(path: Path, layout: ShardLayout, settings: str, section: str, kind: str,
               redo: str) -> dict[str, np.ndarray]:
    """The arrays of the finished shard file ``path``, checked against the ``settings`` that should
    have made it (a :class:`ConfigError` naming ``section``: ``labels``, ``positions``; ``kind`` and
    ``redo`` word the message, e.g. "a label shard", "label again").

    Read bounded: a regular file no larger than the ``layout`` allows; every member's npy header
    (dtype, shape, order) and declared size checked against the ``layout`` and the file's size
    (:data:`MAX_EXPANSION`) before any array is read, so a crafted file cannot fill memory."""
    try:
        size = check_readable(path, layout.largest_bytes(), kind)
        with zipfile.ZipFile(path) as archive:
            _check_members(archive, layout, size)
            out = {name: _read_member(archive, name) for name in ("settings", *layout.columns)}
    except FileReadError as exc:
        raise ConfigError(section, f"{path} is not {kind} ({exc.problem}); move it away to {redo}") from None
    except (_Refused, *SHARD_ERRORS) as exc:
        raise ConfigError(section, f"{path} is not {kind} ({exc}); move it away to {redo}") from None
    if str(out.pop("settings")) != settings:
        raise ConfigError(section, f"{path} was made with other settings than this configuration's; "
                                   "use another run name or move the file away")
    return out


def _check_members(archive: zipfile.ZipFile, layout: ShardLayout, file_size: int) -> None:
    """Refuse (:class:`_Refused`) an archive whose members are not the layout's arrays, or declare
    other dtypes, shapes or sizes, or inflate more than :data:`MAX_EXPANSION` times."""
    want = {"settings": ("<U", ()), **layout.columns}
    infos = archive.infolist()
    names = sorted(info.filename for info in infos)
    if names != sorted(f"{name}.npy" for name in want):
        raise _Refused(f"holds {show_text(', '.join(names), 120)}, not the arrays {', '.join(want)}")
    declared = sum(info.file_size for info in infos)
    if declared > MAX_EXPANSION * file_size + (1 << 20):
        raise _Refused(f"its arrays would expand to {declared:,} bytes from a {file_size:,}-byte file")
    sizes: dict[str, int] = {}
    for info in infos:
        name = info.filename.removesuffix(".npy")
        dtype_text, dims = want[name]
        with archive.open(info) as member:
            shape, dtype, header = _npy_header(member)
        if dtype_text == "<U":
            if dtype.kind != "U" or dtype.itemsize > SETTINGS_CHARS * 4 or shape != ():
                raise _Refused(f"{name} is not a settings text")
        elif dtype != np.dtype(dtype_text):
            raise _Refused(f"{name} holds {dtype}, not {np.dtype(dtype_text)}")
        if len(shape) != len(dims):
            raise _Refused(f"{name} has {len(shape)} dimensions, not {len(dims)}")
        for dim, value in zip(dims, shape, strict=True):
            if isinstance(dim, int) and value != dim:
                raise _Refused(f"{name} has shape {shape}: {value} where {dim} belongs")
            if isinstance(dim, str) and (value > layout.sizes[dim] or sizes.setdefault(dim, value) != value):
                raise _Refused(f"{name} has shape {shape}: more rows than the settings make, or not as many "
                               "as the other arrays")
        if info.file_size != header + math.prod(shape) * dtype.itemsize:
            raise _Refused(f"{name} declares {info.file_size:,} bytes, not what its shape {shape} holds")


def _npy_header(member: IO[bytes]) -> tuple[tuple[int, ...], np.dtype, int]:
    """The shape, dtype and header length of the npy file ``member`` (an array in C order)."""
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
    else:
        raise _Refused(f"npy format {version} is not the recipes' (1.0 or 2.0)")
    if fortran and len(shape) > 1:
        raise _Refused("an array in Fortran order")
    if dtype.hasobject:
        raise _Refused("an array of Python objects")
    return shape, dtype, member.tell()


def _read_member(archive: zipfile.ZipFile, name: str) -> np.ndarray:
    with archive.open(f"{name}.npy") as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def shards_sha256(paths: list[Path]) -> str:
    """SHA-256 of the shard files' bytes, in order: names the data a recipe's network was fitted on."""
    return hashlib.sha256(b"".join(path.read_bytes() for path in paths)).hexdigest()


def write_run_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    """Write a recipe run's ``summary`` to ``<run_dir>/metrics.json`` (atomically)."""
    write_bytes_atomic(run_dir / "metrics.json", (json.dumps(summary, indent=2) + "\n").encode())


def collect_shards(paths: list[Path], read: Callable[[int], dict[str, np.ndarray]], job: Callable[[Any], int],
                   job_args: Callable[[int], Any], workers: int, progress: bool = True,
                   what: str = "shards", ray: str | None = None,
                   runner: ChunkRunner | None = None) -> list[dict[str, np.ndarray]]:
    """Every shard's arrays, in order: shard ``s`` (file ``paths[s]``) is read with ``read(s)`` if it
    exists, else made by ``job(job_args(s))`` (a picklable top-level function that writes the file;
    in ``workers`` spawned processes when more than one, as Ray tasks on the cluster at ``ray`` when
    given, or by ``runner``) and then read. With ``progress``, a line per finished shard with the
    ETA. On a cluster the run folder must be reachable at the same path on every node."""
    done = {s: read(s) for s, path in enumerate(paths) if path.exists()}  # refuse a bad file before any work
    todo = [s for s in range(len(paths)) if s not in done]
    if todo:
        start = time.monotonic()

        def report(count: int) -> None:
            if progress:
                spent = time.monotonic() - start
                print(f"{what}: {count}/{len(todo)} made, ETA {spent / count * (len(todo) - count):.0f} s", flush=True)

        for k, _ in enumerate(run_chunks(job, [job_args(s) for s in todo], runner, workers, ray)):
            report(k + 1)
    return [done[s] if s in done else read(s) for s in range(len(paths))]


__all__ = ["MAX_EXPANSION", "RecipeRun", "ShardLayout", "collect_shards", "load_shard", "open_recipe_run",
           "shards_sha256", "write_run_summary"]
