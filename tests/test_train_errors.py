"""train.py under hostile or careless use.

One process per run folder (real processes), no silent defaults from empty or
partial configuration files, YAML duplicate keys and aliases, NaN/inf
hyper-parameters, the best score surviving every stop, one checkpoint per
interval after a resume, torn metrics rows, full disks and stale temporary
files, and ``--resume`` confined to its own run folder and policy class.
"""

from __future__ import annotations

import csv
import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from support import tiny_config

import train
from skipbo_env.rules import ConfigError
from skipbo_env.training import checkpoints as checkpoints_module
from skipbo_env.training import metrics as metrics_module
from skipbo_env.training import run as run_module
from skipbo_env.training import settings_io as settings_io_module
from skipbo_env.training.checkpoints import CheckpointError, load_latest
from skipbo_env.training.metrics import plot_learning_curve, read_rows
from skipbo_env.training.run import load_run_config
from skipbo_env.training.run import train as run_training
from skipbo_env.training.settings import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def tiny(tmp_path: Path, **changes) -> dict:
    """A configuration dict that trains in seconds (128 steps unless changed)."""
    return tiny_config(tmp_path, **{"total_timesteps": 128, **changes})


def quick_eval() -> dict:
    return {"every": 1_000_000, "games": 4, "agents": ["random"], "best_against": "random", "workers": 1}


def write_config(tmp_path: Path, data: dict, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def hidden_files(run_dir: Path) -> list[str]:
    """Hidden files of a run folder (the lock file aside): what an interrupted write leaves."""
    return sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob(".*") if p.is_file() and p.name != ".lock")


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert err.startswith("train.py: error: ") and "Traceback" not in err, err
    return err


# ====================================================================== 1. one process per run folder
def start_training(config: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--config", str(config), "--no-progress"],
                            cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_for_checkpoint(proc: subprocess.Popen, run_dir: Path, timeout: float = 120) -> None:
    pointer = run_dir / "checkpoints" / "latest.json"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pointer.exists():
            return
        if proc.poll() is not None:
            pytest.fail(f"training ended early: {proc.stderr.read()}")
        time.sleep(0.05)
    pytest.fail("no checkpoint in time")


def second_train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "train.py"), *args, "--no-progress"], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=90)


def test_a_second_process_is_refused_while_the_first_trains(tmp_path):
    config = write_config(tmp_path, tiny(tmp_path, total_timesteps=10_000_000, eval=quick_eval()))
    run_dir = tmp_path / "tiny"
    first = start_training(config)
    try:
        wait_for_checkpoint(first, run_dir)
        before = (run_dir / "config.yaml").read_bytes(), (run_dir / "config.yaml").stat().st_mtime_ns
        for args in (["--config", str(config)], ["--resume", str(run_dir)]):
            second = second_train(*args)
            assert second.returncode == 2, second.stderr
            assert "another process is training" in second.stderr and str(run_dir) in second.stderr, second.stderr
            assert "Traceback" not in second.stderr
        assert first.poll() is None  # the first run goes on, untouched
        assert ((run_dir / "config.yaml").read_bytes(), (run_dir / "config.yaml").stat().st_mtime_ns) == before
    finally:
        os.kill(first.pid, signal.SIGKILL)  # a killed process's lock is released by the OS: never stale
        first.wait()
    _, state = load_latest(run_dir)
    cfg = load_run_config(run_dir, {"total_timesteps": state.timesteps + 128})
    assert run_training(cfg, resume_dir=run_dir, progress=False)["timesteps"] == state.timesteps + 128
    # after a normal exit the lock is free again
    cfg = load_run_config(run_dir, {"total_timesteps": state.timesteps + 256})
    assert run_training(cfg, resume_dir=run_dir, progress=False)["timesteps"] == state.timesteps + 256


def test_a_held_lock_refuses_at_once_and_touches_nothing(tmp_path):
    cfg = TrainConfig.from_dict(tiny(tmp_path))
    run_training(cfg, progress=False)
    run_dir = tmp_path / "tiny"
    files = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    with open(run_dir / ".lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another holder (another open file, as another process)
        for new_cfg, resume in ((cfg, None), (load_run_config(run_dir, {"total_timesteps": 256}), run_dir)):
            with pytest.raises(CheckpointError, match="another process is training"):
                run_training(new_cfg, resume_dir=resume, progress=False)
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == files


# ====================================================================== 2. no silent defaults
def test_an_empty_config_file_is_an_error(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing here\n")
    with pytest.raises(ConfigError, match="empty.yaml.*empty"):
        TrainConfig.from_yaml(empty)
    monkeypatch.setattr(run_module, "train", lambda *a, **k: pytest.fail("must not train"))
    assert train.main(["--config", str(empty)]) == 2
    assert str(empty) in one_error_line(capsys)


@pytest.mark.parametrize("damage", ["empty", "comments", "partial", "partial-game"])
def test_an_empty_or_partial_run_config_is_an_error_on_resume(tmp_path, capsys, damage):
    run_training(TrainConfig.from_dict(tiny(tmp_path)), progress=False)
    run_dir = tmp_path / "tiny"
    path = run_dir / "config.yaml"
    saved = yaml.safe_load(path.read_text())
    if damage == "empty":
        path.write_text("")
    elif damage == "comments":
        path.write_text("# truncated\n")
    elif damage == "partial":
        del saved["ppo"]["learning_rate"], saved["total_timesteps"]
        path.write_text(yaml.safe_dump(saved))
    else:
        del saved["game"]["stock_size"]
        path.write_text(yaml.safe_dump(saved))
    before = path.read_bytes()
    with pytest.raises(ConfigError) as err:
        load_run_config(run_dir, {"total_timesteps": 256})
    assert str(path) in str(err.value)
    if damage == "partial":
        assert "ppo.learning_rate" in str(err.value) and "total_timesteps" in str(err.value)
    if damage == "partial-game":
        assert "game.stock_size" in str(err.value)
    assert train.main(["--resume", str(run_dir)]) == 2
    assert str(path) in one_error_line(capsys)
    assert path.read_bytes() == before  # not overwritten with defaults


def test_config_yaml_is_written_atomically_with_the_normal_mode(tmp_path, monkeypatch):
    cfg = TrainConfig.from_dict(tiny(tmp_path))
    calls = []
    real = settings_io_module.write_bytes_atomic
    monkeypatch.setattr(settings_io_module, "write_bytes_atomic", lambda p, data: calls.append(p) or real(p, data))
    out = tmp_path / "saved" / "config.yaml"
    cfg.save_yaml(out)
    assert calls == [out]
    assert TrainConfig.from_yaml(out, complete=True) == cfg
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("kind", ["binary", "directory", "nul-name", "nul-runs-dir"])
def test_unreadable_configs_give_one_named_line(tmp_path, capsys, kind):
    path = tmp_path / "bad.yaml"
    if kind == "binary":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe" * 20)
    elif kind == "directory":
        path.mkdir()
    elif kind == "nul-name":
        path.write_text(f'name: "a\\0b"\nruns_dir: "{tmp_path}"\n')
    else:
        path.write_text('runs_dir: "runs\\0x"\n')
    assert train.main(["--config", str(path)]) == 2
    line = one_error_line(capsys)
    assert (str(path) in line) if kind in ("binary", "directory") else ("NUL" in line)
    assert not list(tmp_path.glob("a*"))


@pytest.mark.parametrize("field, value, words", [
    ("timesteps", "abc", "timesteps"),
    ("timesteps", -5, "timesteps"),
    ("model", 5, "model"),
    ("pool", "snap.zip", "pool"),
    ("pool", [3], "pool"),
    ("best_score", "high", "best_score"),
    ("best_score", float("nan"), "best_score"),
    ("next_eval", None, "next_eval"),
    ("stage", True, "stage"),
    ("wall_seconds", "1s", "wall_seconds"),
])
def test_a_training_state_with_wrong_types_gives_one_named_line(tmp_path, capsys, field, value, words):
    run_training(TrainConfig.from_dict(tiny(tmp_path)), progress=False)
    run_dir = tmp_path / "tiny"
    pointer = run_dir / "checkpoints" / "latest.json"
    state = json.loads(pointer.read_text())
    state[field] = value
    pointer.write_text(json.dumps(state))
    assert train.main(["--resume", str(run_dir)]) == 2
    line = one_error_line(capsys)
    assert str(pointer) in line and words in line


# ====================================================================== 3. YAML
@pytest.mark.parametrize("text, key", [
    ("seed: 1\nseed: 2\n", "seed"),
    ("ppo:\n  learning_rate: 0.1\n  n_steps: 64\n  learning_rate: 0.2\n", "learning_rate"),
    ("opponents:\n  mix: {greedy: 1, greedy: 2}\n", "greedy"),
])
def test_duplicate_yaml_keys_are_refused(tmp_path, text, key):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"duplicate key.*{key}") as err:
        TrainConfig.from_yaml(path)
    assert str(path) in str(err.value)


def test_duplicate_keys_in_a_command_line_value_are_refused():
    args = train.build_parser().parse_args(["--opponents.mix", "{greedy: 1, greedy: 2}"])
    with pytest.raises(SystemExit, match="duplicate key"):
        train.parse_overrides(args)


def test_a_yaml_alias_bomb_is_refused_with_a_short_message(tmp_path):
    """Six levels of ten aliases: a million strings (megabytes of repr) from a 400-byte file."""
    lines = ['  - &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 6):
        lines.append(f"  - &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    bomb = "name:\n" + "\n".join(lines) + "\n"
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb)
    assert len(bomb) < 1000
    started = time.perf_counter()
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_yaml(path)
    assert time.perf_counter() - started < 5
    assert len(str(err.value)) < 400 and "alias" in str(err.value) and str(path) in str(err.value)


def test_a_self_referencing_alias_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("eval:\n  agents: &a [*a]\n")
    with pytest.raises(ConfigError, match="alias"):
        TrainConfig.from_yaml(path)


def test_long_values_are_cut_in_messages(tmp_path):
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump({"name": ["x" * 1_000_000], "eval": {"best_against": "y" * 1_000_000}}))
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_yaml(path)
    assert len(str(err.value)) < 200


@pytest.mark.parametrize("key, value", [
    ("ppo.clip_range", ".nan"), ("ppo.learning_rate", ".inf"), ("ppo.max_grad_norm", ".inf"),
    ("ppo.vf_coef", ".nan"), ("ppo.ent_coef", ".inf"), ("ppo.gae_lambda", ".nan"),
    ("pretrain.learning_rate", ".nan"), ("opponents.mix.greedy", ".inf"),
    ("opponents.curriculum", "[{opponents: {greedy: 1}, promote_at: .nan}, {opponents: {heuristic: 1}}]"),
    ("ppo.clip_range", "nan"), ("ppo.learning_rate", "'inf'"),
])
def test_nan_and_infinite_hyper_parameters_are_refused(tmp_path, key, value):
    path = tmp_path / "c.yaml"
    path.write_text("name: x\n")
    with pytest.raises(ConfigError, match="finite") as err:
        TrainConfig.from_yaml(path, {key: yaml.safe_load(value)})
    assert str(err.value).startswith(key.split(".mix")[0])


# ====================================================================== 4. best.zip and the checkpoint schedule
def test_the_final_evaluation_is_in_the_saved_state_and_no_extra_checkpoint_follows_a_resume(tmp_path, monkeypatch):
    data = tiny(tmp_path, total_timesteps=256)
    data["eval"]["every"] = 1_000_000  # only the final evaluation, after the last periodic checkpoint
    run_training(TrainConfig.from_dict(data), progress=False)
    run_dir = tmp_path / "tiny"
    _, state = load_latest(run_dir)
    greedy = [r for r in read_rows(run_dir / "metrics.csv") if r["opponent"] == "greedy"]
    assert [int(r["timesteps"]) for r in greedy] == [256]
    assert state.best_score == float(greedy[0]["win_rate"])
    assert state.next_checkpoint > state.timesteps == 256
    saved = []
    real = run_module.save_checkpoint
    monkeypatch.setattr(run_module, "save_checkpoint",
                        lambda run_dir_, model, st: saved.append(st.timesteps) or real(run_dir_, model, st))
    run_training(load_run_config(run_dir, {"total_timesteps": 384}), resume_dir=run_dir, progress=False)
    assert set(saved) == {384}


class Killed(Exception):
    """Stands for a kill of the training process."""


class FakeTournament:
    """Evaluation results from a script of win rates (the learner's score against every agent)."""

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores

    def __call__(self, lineup, game, games, seed, workers, **kwargs):
        rate = self.scores[0]
        if lineup[1] == "greedy":
            self.scores.pop(0)
        me = SimpleNamespace(games=games, win_rate=rate, ci_low=rate, ci_high=rate)
        return SimpleNamespace(agents=[me], truncation_rate=0.0, mean_turns=50.0)


def test_a_stop_between_evaluation_and_checkpoint_never_lets_a_worse_model_replace_best(tmp_path, monkeypatch):
    data = tiny(tmp_path, total_timesteps=256)
    run_dir = tmp_path / "tiny"
    real = run_module.save_checkpoint

    def killed_at_256(run_dir_, model, st):
        if st.timesteps >= 256:
            raise Killed  # a stop after the evaluation at 256 replaced best.zip, before its checkpoint
        return real(run_dir_, model, st)

    monkeypatch.setattr(run_module, "run_tournament", FakeTournament([0.2, 0.9]))
    monkeypatch.setattr(run_module, "save_checkpoint", killed_at_256)
    with pytest.raises(Killed):
        run_training(TrainConfig.from_dict(data), progress=False)
    best = (run_dir / "best.zip").read_bytes()
    assert load_latest(run_dir)[1].timesteps == 128
    monkeypatch.setattr(run_module, "save_checkpoint", real)
    monkeypatch.setattr(run_module, "run_tournament", FakeTournament([0.5, 0.5]))  # worse than 0.9
    summary = run_training(load_run_config(run_dir, {"total_timesteps": 256}), resume_dir=run_dir, progress=False)
    assert summary["best_score"] == 0.9
    assert (run_dir / "best.zip").read_bytes() == best


# ====================================================================== 5. metrics.csv
def test_a_torn_metrics_row_is_dropped_on_resume_with_a_warning(tmp_path, capsys):
    run_training(TrainConfig.from_dict(tiny(tmp_path)), progress=False)
    run_dir = tmp_path / "tiny"
    metrics = run_dir / "metrics.csv"
    with open(metrics, "a", newline="") as fh:
        fh.write("256,12.5,0,gre")  # a kill in the middle of a row
    assert [int(r["timesteps"]) for r in read_rows(metrics)] == [128, 128]
    plot_learning_curve(metrics, tmp_path / "curve.png")  # tolerated when plotting
    capsys.readouterr()
    summary = run_training(load_run_config(run_dir, {"total_timesteps": 256}), resume_dir=run_dir, progress=False)
    assert summary["timesteps"] == 256
    assert "torn" in capsys.readouterr().err
    with open(metrics, newline="") as fh:
        got = list(csv.DictReader(fh))
    assert [int(r["timesteps"]) for r in got] == [128, 128, 256, 256]
    assert all(None not in r.values() and "" not in r.values() for r in got)
    assert metrics.read_bytes().endswith(b"\n")


# ====================================================================== 6. full disk, stale temporary files
def test_a_full_disk_at_a_checkpoint_is_one_line_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch, capsys):
    data = tiny(tmp_path, total_timesteps=256, eval=quick_eval())
    config = write_config(tmp_path, data)
    real = checkpoints_module.write_bytes_atomic

    def full_disk(path, payload):
        path = Path(path)
        if path.name == "model_0000000256.zip":
            (path.parent / f".tmp-{path.name}.x1y2z3").write_bytes(payload[:100])  # half written
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, payload)

    monkeypatch.setattr(checkpoints_module, "write_bytes_atomic", full_disk)
    assert train.main(["--config", str(config), "--no-progress"]) == 2
    line = one_error_line(capsys)
    run_dir = tmp_path / "tiny"
    assert "model_0000000256.zip" in line and "No space left on device" in line
    model, state = load_latest(run_dir)
    assert state.timesteps == 128 and model.name == "model_0000000128.zip"
    assert hidden_files(run_dir) == []
    monkeypatch.setattr(checkpoints_module, "write_bytes_atomic", real)
    assert train.main(["--resume", str(run_dir), "--no-progress"]) == 0
    assert load_latest(run_dir)[1].timesteps == 256


@pytest.mark.parametrize("where", ["config", "metrics"])
def test_a_full_disk_writing_config_or_metrics_is_one_line(tmp_path, monkeypatch, capsys, where):
    data = tiny(tmp_path, eval=quick_eval())
    config = write_config(tmp_path, data)

    def full_disk(path, *args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if where == "config":
        monkeypatch.setattr(settings_io_module, "write_bytes_atomic", full_disk)
        name = "config.yaml"
    else:
        monkeypatch.setattr(metrics_module, "_append_bytes", full_disk)
        name = "metrics.csv"
    assert train.main(["--config", str(config), "--no-progress"]) == 2
    line = one_error_line(capsys)
    assert str(tmp_path / "tiny" / name) in line and "No space left on device" in line
    assert hidden_files(tmp_path / "tiny") == []


def test_stale_temporary_files_are_removed_at_start(tmp_path):
    run_training(TrainConfig.from_dict(tiny(tmp_path)), progress=False)
    run_dir = tmp_path / "tiny"
    stale = [".eval_model_0000000256.zip", ".best.tmp.zip", ".dagger_student_1.zip", ".metrics.tmp.csv",
             ".learning_curve.tmp.png", ".config.yaml.ab12cd34", ".tmp-config.yaml.ab12cd34",
             "checkpoints/.model_0000000256.zip.k2j3h4g5", "checkpoints/.tmp-model_0000000256.zip.k2j3h4g5",
             "checkpoints/.latest.json.a1b2c3d4", "checkpoints/.tmp-latest.json.a1b2c3d4",
             "pool/.snapshot_0000000256.zip.a1b2c3d4", "pool/.tmp-snapshot_0000000256.zip.a1b2c3d4"]
    for name in stale:
        (run_dir / name).parent.mkdir(exist_ok=True)
        (run_dir / name).write_bytes(b"x" * 1000)
    keep = [run_dir / "notes.txt", run_dir / ".hidden_notes"]
    for path in keep:
        path.write_text("mine")
    run_training(load_run_config(run_dir, {"total_timesteps": 256}), resume_dir=run_dir, progress=False)
    assert hidden_files(run_dir) == [".hidden_notes"]
    assert all(path.read_text() == "mine" for path in keep)


# ====================================================================== 7. --resume confinement and class
@pytest.mark.parametrize("where", ["parent", "absolute", "hidden"])
def test_resume_follows_only_checkpoints_inside_its_run_folder(tmp_path, capsys, where):
    run_training(TrainConfig.from_dict(tiny(tmp_path)), progress=False)
    run_dir = tmp_path / "tiny"
    model, _ = load_latest(run_dir)
    outside = tmp_path / "x.zip"
    shutil.copyfile(model, outside)  # a loadable model, but not this run's checkpoint
    pointer = run_dir / "checkpoints" / "latest.json"
    state = json.loads(pointer.read_text())
    if where == "hidden":
        shutil.copyfile(model, run_dir / "checkpoints" / ".x.zip")
    state["model"] = {"parent": "../../x.zip", "absolute": str(outside), "hidden": ".x.zip"}[where]
    pointer.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match="checkpoint file of this run"):
        run_training(load_run_config(run_dir, {"total_timesteps": 256}), resume_dir=run_dir, progress=False)
    assert train.main(["--resume", str(run_dir)]) == 2
    assert str(pointer) in one_error_line(capsys)


def test_resume_confines_self_play_snapshots_to_the_run_pool(tmp_path):
    run_training(TrainConfig.from_dict(tiny(tmp_path)), progress=False)
    run_dir = tmp_path / "tiny"
    model, _ = load_latest(run_dir)
    shutil.copyfile(model, tmp_path / "evil.zip")
    pointer = run_dir / "checkpoints" / "latest.json"
    state = json.loads(pointer.read_text())
    state["pool"] = [str(tmp_path / "evil.zip")]
    pointer.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match="pool"):
        run_training(load_run_config(run_dir, {"total_timesteps": 256}), resume_dir=run_dir, progress=False)


def test_resume_refuses_a_checkpoint_of_another_policy_class(tmp_path, capsys):
    run_training(TrainConfig.from_dict(tiny(tmp_path)), progress=False)
    data = tiny(tmp_path, name="scorer")
    data["ppo"] = dict(data["ppo"], policy="scorer", net_arch=[32], scorer_arch=[8])
    run_training(TrainConfig.from_dict(data), progress=False)
    mlp_model, _ = load_latest(tmp_path / "tiny")
    scorer_model, _ = load_latest(tmp_path / "scorer")
    mlp_bytes = mlp_model.read_bytes()
    mlp_model.write_bytes(scorer_model.read_bytes())  # same observation and action sizes, other class
    with pytest.raises(CheckpointError, match="policy"):
        run_training(load_run_config(tmp_path / "tiny", {"total_timesteps": 256}), resume_dir=tmp_path / "tiny",
                     progress=False)
    scorer_model.write_bytes(mlp_bytes)
    with pytest.raises(CheckpointError, match="policy"):
        run_training(load_run_config(tmp_path / "scorer", {"total_timesteps": 256}), resume_dir=tmp_path / "scorer",
                     progress=False)


def test_a_fifo_in_place_of_the_best_score_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "best.json")
    code = ("import sys\nfrom pathlib import Path\nfrom skipbo_env.training.checkpoints import CheckpointError, "
            "load_best_score\ntry:\n    load_best_score(Path(sys.argv[1]))\nexcept CheckpointError as exc:\n"
            "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0 and "regular file" in done.stdout, done.stderr


@pytest.mark.parametrize(("key", "value"), [("seed", 10**23), ("threads", 10**12)])
def test_a_seed_or_thread_count_torch_cannot_take_is_refused_by_key(tmp_path, key, value):
    with pytest.raises(ConfigError) as refused:
        TrainConfig.from_dict(tiny(tmp_path, **{key: value}))
    assert refused.value.field == key
