"""Bounded reading of user files (skipbo_env/files.py): regular files only, never past a size."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import pytest

from skipbo_env.files import FileReadError, check_readable, is_regular_file, read_bounded, read_text_bounded


def test_reads_a_regular_file_within_its_limit(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b"{}")
    assert read_bounded(path, 2, "record") == b"{}"
    assert read_text_bounded(path, 10, "record") == "{}"
    assert check_readable(path, 2, "record") == 2
    assert is_regular_file(path)


def test_a_larger_file_is_refused_with_its_size(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 101)
    with pytest.raises(FileReadError, match=r"big.json: is 101 bytes, more than a record can be \(100 bytes"):
        read_bounded(path, 100, "record")
    with pytest.raises(FileReadError, match="more than a record can be"):
        check_readable(path, 100, "record")


def test_missing_files_and_directories_are_named(tmp_path):
    with pytest.raises(FileReadError, match="no such record"):
        read_bounded(tmp_path / "nope.json", 10, "record")
    with pytest.raises(FileReadError, match="is a directory"):
        read_bounded(tmp_path, 10, "record")


def test_a_device_is_refused_without_reading_it():
    """/dev/zero would fill memory if read to its end."""
    start = time.monotonic()
    with pytest.raises(FileReadError, match="not a regular file"):
        read_bounded("/dev/zero", 10, "record")
    assert time.monotonic() - start < 5
    assert not is_regular_file("/dev/zero")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "x.safetensors"
    os.mkfifo(fifo)
    code = (
        "import sys; from skipbo_env.files import read_bounded, FileReadError\n"
        f"try: read_bounded({str(fifo)!r}, 10, 'agent file')\n"
        "except FileReadError as e: print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert "not a regular file" in out.stdout, out.stderr
    assert not is_regular_file(fifo)


def test_text_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(FileReadError, match="not UTF-8"):
        read_text_bounded(path, 10, "config")


def test_reading_stays_bounded_in_memory(tmp_path):
    """A sparse 1 GiB file is refused from its size without reading it."""
    path = tmp_path / "sparse.bin"
    with open(path, "wb") as fh:
        fh.truncate(1 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(FileReadError, match="more than"):
        read_bounded(path, 1 << 20, "shard")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


# ======================================================================= game records
def test_a_record_that_is_a_device_a_fifo_or_too_large_is_refused_at_once(tmp_path):
    from skipbo_env.records import MAX_FILE, GameRecord
    from skipbo_env.rules.errors import StateError

    fifo = tmp_path / "game.json"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(MAX_FILE + 1)
    start = time.monotonic()
    for path, problem in [("/dev/zero", "not a regular file"), (fifo, "not a regular file"),
                          (big, "more than a game record can be"), (tmp_path / "none.json", "no such game record")]:
        with pytest.raises(StateError, match=problem) as info:
            GameRecord.load(path)
        assert str(path) in str(info.value)
    assert time.monotonic() - start < 5


def test_a_record_that_is_not_json_names_the_file(tmp_path):
    from skipbo_env.records import GameRecord
    from skipbo_env.rules.errors import StateError

    for name, text in [("digits.json", '{"format": ' + "9" * 5000 + "}"), ("latin1.json", b"\xff\xfe{}"),
                       ("deep.json", "[" * 100_000 + "]" * 100_000)]:
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        with pytest.raises(
            StateError, match=rf"{name}: (not valid JSON|is not UTF-8|not a record: its JSON is nested)"
        ):
            GameRecord.load(path)


def test_replay_of_dev_zero_is_refused_in_one_line():
    """/dev/zero never ends: the replay command refuses it before reading a byte."""
    out = subprocess.run([sys.executable, "-m", "skipbo_env.cli", "replay", "/dev/zero", "--auto"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "/dev/zero: is not a regular file" in out.stderr
    assert "Traceback" not in out.stderr


def _in_subprocess(code: str) -> str:
    """Run ``code`` in a fresh interpreter with a time limit (a FIFO would block a reader forever)."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return result.stdout + result.stderr


def test_a_ladder_folder_of_fifos_is_refused_by_name(tmp_path):
    os.mkfifo(tmp_path / "ladder.json")
    out = _in_subprocess(
        "from skipbo_env.agents.ladder import read_ladder\n"
        f"try: read_ladder({str(tmp_path)!r})\n"
        "except ValueError as e: print('refused:', e)\n"
    )
    assert "refused:" in out and "not a regular file" in out


def test_a_metrics_file_that_is_a_fifo_is_refused_by_name(tmp_path):
    os.mkfifo(tmp_path / "metrics.csv")
    out = _in_subprocess(
        "from pathlib import Path\n"
        "from skipbo_env.training.metrics import read_rows\n"
        f"try: read_rows(Path({str(tmp_path / 'metrics.csv')!r}))\n"
        "except ValueError as e: print('refused:', e)\n"
    )
    assert "refused:" in out and "not a regular file" in out
