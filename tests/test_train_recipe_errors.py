"""The network recipes (``train.py --config`` with ``recipe: value`` or ``recipe: turnnet``) under
hostile or careless use.

Crafted, damaged or foreign shard files are refused by name (one error line, exit 2) from their
zip and npy headers before any data is read, so a small file cannot fill memory; settings that
cannot run are refused when read; a diverged fit is an error naming its setting; one process at a
time runs a run folder, temporary files of a killed run are removed, and the shard workers die
with the recipe's process.
"""

from __future__ import annotations

import fcntl
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from skipbo_env.rules import ConfigError

pytest.importorskip("torch")

from support import TINY_TURN_RECIPE, TINY_VALUE_RECIPE, kill_when_workers_run  # noqa: E402

from skipbo_env.training import commands  # noqa: E402 - after the torch check
from skipbo_env.training.fitting import FitPlan, fit_mlp  # noqa: E402
from skipbo_env.training.recipe_settings import TurnNetConfig, ValueNetConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")




def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert err.startswith("skipbo train: error: "), err
    return err


class Run:
    """A finished tiny recipe run: its config file, run folder and shard folder."""

    def __init__(self, config: Path, run: Path, shards: str) -> None:
        self.config, self.run, self.shard_dir = config, run, run / shards
        self.files = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
        self.folders = {p for p in run.rglob("*") if p.is_dir()}

    @property
    def shard(self) -> Path:
        return self.shard_dir / "shard_000.npz"

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the good first shard."""
        with np.load(io.BytesIO(self.files[self.shard])) as data:
            return {k: data[k] for k in data.files}

    def main(self, *args: str) -> int:
        return commands.main(["--config", str(self.config), "--no-progress", *args])

    def restore(self) -> None:
        """Back to the finished run: what a test added removed, what it changed rewritten."""
        for path in self.run.rglob("*"):
            if path.is_dir() and not path.is_symlink() and path not in self.folders:
                shutil.rmtree(path)
            elif not path.is_dir() and (path not in self.files or not path.is_file()):
                path.unlink()
        for path, data in self.files.items():
            if not path.exists() or path.read_bytes() != data:
                path.write_bytes(data)


def finished_run(tmp: Path, text: str, shards: str, **values) -> Run:
    config = tmp / "tiny.yaml"
    config.write_text(text.format(runs=tmp / "runs", **values))
    assert commands.main(["--config", str(config), "--no-progress"]) == 0
    return Run(config, tmp / "runs" / "tiny", shards)


@pytest.fixture(scope="module")
def value_run_once(tmp_path_factory):
    return finished_run(tmp_path_factory.mktemp("value"), TINY_VALUE_RECIPE, "positions", games=30, workers=1)


@pytest.fixture(scope="module")
def turn_run_once(tmp_path_factory):
    return finished_run(tmp_path_factory.mktemp("turn"), TINY_TURN_RECIPE, "labels")


@pytest.fixture
def value_run(value_run_once):
    yield value_run_once
    value_run_once.restore()


@pytest.fixture
def turn_run(turn_run_once):
    yield turn_run_once
    turn_run_once.restore()


# ====================================================================== crafted shard files
def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def npy_header(dtype: str, shape: tuple[int, ...]) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def write_bomb(path: Path, arrays: dict[str, np.ndarray], name: str, dtype: str, shape: tuple[int, ...],
               data_bytes: int | None = None) -> None:
    """The shard ``arrays`` with member ``name`` replaced by a deflated run of zeros declared as an
    array of ``shape`` (``data_bytes`` of zeros written; default: all the shape holds)."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize if data_bytes is None else data_bytes
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for key, value in arrays.items():
            if key != name:
                buffer = io.BytesIO()
                np.save(buffer, value)
                archive.writestr(f"{key}.npy", buffer.getvalue())
        with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
            member.write(npy_header(dtype, shape))
            chunk = bytes(1 << 20)
            while size > 0:
                member.write(chunk[:size])
                size -= len(chunk)


def damage(kind: str, path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write the damaged shard ``kind`` to ``path`` (``arrays``: a good shard's)."""
    good = npz_bytes(arrays)
    changed = dict(arrays)
    if kind == "empty":
        path.write_bytes(b"")
        return
    if kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
        return
    if kind == "text":
        path.write_text("hello\n" * 10)
        return
    if kind == "directory":
        path.mkdir()
        return
    if kind == "fifo":
        os.mkfifo(path)
        return
    first = next(k for k in ("obs", "X") if k in arrays)
    if kind == "2-D y":
        key = "y" if "y" in arrays else "S"
        changed[key] = changed[key][:, None]
    elif kind == "NaN game":
        changed["game"] = changed["game"].astype(np.float64)
        changed["game"][0] = np.nan
    elif kind == "complex rows":
        changed[first] = changed[first].astype(np.complex64)
    elif kind == "game out of range":
        changed["game"] = changed["game"] + 10**6
    elif kind == "extra member":
        changed["other"] = np.zeros(3)
    elif kind == "fortran order":
        changed[first] = np.asfortranarray(changed[first])
    elif kind == "huge shape":
        write_bomb(path, arrays, first, "<f4", (10**7, 10**6), data_bytes=1000)
        return
    elif kind == "rows beyond the settings":
        write_bomb(path, arrays, first, "<f4", (10**6, arrays[first].shape[1]), data_bytes=1 << 20)
        return
    else:
        raise AssertionError(kind)
    path.write_bytes(npz_bytes(changed))


KINDS = ["empty", "truncated", "text", "directory", "fifo", "2-D y", "NaN game", "complex rows", "game out of range",
         "extra member", "fortran order", "huge shape", "rows beyond the settings"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("recipe", "what"), [("value_run", "positions"), ("turn_run", "labels")])
def test_a_damaged_shard_is_refused_in_one_named_line(request, capsys, recipe, what, kind):
    run = request.getfixturevalue(recipe)
    arrays = run.arrays()
    run.shard.unlink()
    damage(kind, run.shard, arrays)
    assert run.main() == 2
    line = one_error_line(capsys)
    assert f"{what}: {run.shard}" in line and "move it away" in line, line


MEASURE = """\
import sys
from skipbo_env.training import commands
code = commands.main(sys.argv[1:])
with open("/proc/self/status") as status:  # VmHWM: this process's peak resident memory (kB)
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print("peak", peak // 1024, file=sys.stderr)
raise SystemExit(code)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_zip_bomb_shard_is_refused_from_its_headers_in_little_memory(value_run):
    """A ~150 KB shard whose observations inflate to 141 MB of zeros (as many rows as the settings
    allow): refused from the zip member's declared size before it is inflated."""
    arrays = value_run.arrays()
    rows = 30 * 1001  # positions.games x (turn starts a game can have)
    write_bomb(value_run.shard, arrays, "obs", "<f4", (rows, arrays["obs"].shape[1]))
    assert value_run.shard.stat().st_size < 1 << 20
    done = subprocess.run([sys.executable, "-c", MEASURE, "--config", str(value_run.config), "--no-progress"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "expand" in done.stderr, done.stderr
    peak = int(done.stderr.split("peak ")[1])
    assert peak < 300, f"{peak} MB"


# ====================================================================== settings that cannot run
@pytest.mark.parametrize(("config", "override", "key"), [
    (ValueNetConfig, {"positions": {"shards": 10**12}}, "positions.shards"),
    (ValueNetConfig, {"positions": {"games": 10**11}}, "positions.games"),
    (ValueNetConfig, {"seed": 10**23}, "seed"),
    (TurnNetConfig, {"labels": {"shards": 10**12}}, "labels.shards"),
    (TurnNetConfig, {"labels": {"games": 10**11}}, "labels.games"),
    (TurnNetConfig, {"seed": 10**23}, "seed"),
    (TurnNetConfig, {"labels": {"lineups": [["search:0", "greedy"]]}}, "labels.lineups"),
    (TurnNetConfig, {"labels": {"teacher": "search:0"}}, "labels.teacher"),
    (TurnNetConfig, {"labels": {"lineups": [["search:4:999999", "greedy"]]}}, "labels.lineups"),
    (ValueNetConfig, {"threads": 10**12}, "threads"),
    (TurnNetConfig, {"threads": 10**12}, "threads"),
])
def test_settings_a_recipe_cannot_run_are_refused_by_key(config, override, key):
    with pytest.raises(ConfigError) as refused:
        config.from_dict(override)
    assert refused.value.field == key


@pytest.mark.parametrize("option", [["--positions.games", "100000000000"], ["--positions.shards", "1000000000000"],
                                    ["--seed", "100000000000000000000000"]])
def test_settings_a_recipe_cannot_run_are_one_line_on_the_command_line(value_run, capsys, option):
    assert value_run.main("--name", "other", *option) == 2
    assert option[0][2:] in one_error_line(capsys)
    assert not (value_run.run.parent / "other").exists()


@pytest.mark.parametrize("runs_dir", ["/etc/passwd", "/proc/no-such-folder"])
def test_a_runs_dir_that_cannot_hold_a_run_is_one_named_line(value_run, capsys, runs_dir):
    assert value_run.main("--runs_dir", runs_dir) == 2
    line = one_error_line(capsys)
    assert "runs_dir" in line and runs_dir in line


def test_a_diverged_fit_is_an_error_naming_the_learning_rate(value_run, capsys):
    assert value_run.main("--name", "diverged", "--fit.learning_rate", "1e30") == 2
    line = one_error_line(capsys)
    assert "fit.learning_rate" in line and "diverged" in line
    assert not (value_run.run.parent / "diverged" / "value.safetensors").exists()


def test_the_fitting_loop_refuses_non_finite_weights():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 4)).astype(np.float32)
    y = rng.normal(size=64).astype(np.float32)

    def batch_loss(net, idx):
        import torch

        return ((net(torch.from_numpy(X[idx]))[:, 0] - torch.from_numpy(y[idx])) ** 2).mean(), 1

    plan = FitPlan(4, (8,), 3, 16, 1e30, 0.0, seed=0)
    with pytest.raises(ConfigError, match="diverged") as refused:
        fit_mlp(plan, np.arange(64), np.arange(0), rng, batch_loss, lambda net: {}, progress=False)
    assert refused.value.field == "fit.learning_rate"


# ====================================================================== the run folder
def test_a_second_process_is_refused_while_a_recipe_runs_its_folder(value_run, capsys):
    with open(value_run.run / ".lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as another process holding the run
        assert value_run.main() == 2
        assert "another process is training" in one_error_line(capsys)
    assert value_run.main() == 0  # released: the run goes on


def test_temporary_files_of_a_killed_run_are_removed_at_start(value_run):
    leftovers = [value_run.shard_dir / ".tmp-shard_000.npz.x1y2z3", value_run.run / ".tmp-metrics.json.abc123"]
    for path in leftovers:
        path.write_bytes(b"half a file")
    assert value_run.main() == 0
    assert not any(path.exists() for path in leftovers)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_shard_workers_die_with_a_killed_recipe(tmp_path):
    config = tmp_path / "long.yaml"
    config.write_text(TINY_VALUE_RECIPE.format(runs=tmp_path / "runs", games=5000, workers=2))
    proc = subprocess.Popen([sys.executable, "train.py", "--config", str(config), "--no-progress"], cwd=ROOT, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_when_workers_run(proc, workers=2, busy=1.0, what="recipe")  # the workers are busy playing their shards
    shutil.rmtree(tmp_path / "runs", ignore_errors=True)


def test_a_fifo_config_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "train.py", "--config", str(fifo)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and str(fifo) in done.stderr and "regular file" in done.stderr
