"""A run's evaluation record: ``metrics.csv`` rows, the learning curve and the closing summary."""

from __future__ import annotations

import csv
import io
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..files import MIB, read_bounded
from ..records import write_bytes_atomic

if TYPE_CHECKING:
    from ..agents.tournament import TournamentResult
    from ..rules import GameConfig

METRIC_FIELDS = (
    "timesteps", "wall_seconds", "stage", "opponent", "games", "win_rate", "ci_low", "ci_high",
    "truncation_rate", "mean_turns",
)
"""Columns of ``metrics.csv``: one row per evaluation and opponent."""


def evaluation_lineup(model_file: str, opponent: str, game: GameConfig) -> list[str]:
    """An evaluation's tournament: the learner in one seat (one team in the partner game),
    ``opponent`` everywhere else."""
    return [model_file] + [opponent] * (game.num_teams - 1)


def evaluation_row(result: TournamentResult, timesteps: int, wall_seconds: float, stage: int,
                   opponent: str) -> dict[str, Any]:
    """The ``metrics.csv`` row of an :func:`evaluation_lineup` tournament (the learner is its first agent)."""
    me = result.agents[0]
    return {"timesteps": timesteps, "wall_seconds": round(wall_seconds, 1), "stage": stage, "opponent": opponent,
            "games": me.games, "win_rate": me.win_rate, "ci_low": me.ci_low, "ci_high": me.ci_high,
            "truncation_rate": result.truncation_rate, "mean_turns": result.mean_turns}


def read_rows(path: Path) -> list[dict[str, str]]:
    """The complete rows of ``metrics.csv`` (none when the file does not exist yet).

    A torn last row (a partial line left by a kill) and rows whose values do not parse
    are left out: :func:`trim_rows` drops them from the file when a run resumes."""
    return _parse(path)[0]


MAX_METRICS = 512 * MIB
"""The largest metrics.csv a resume reads (a row is about 200 bytes: millions of evaluations)."""


def _parse(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """The good rows of ``path`` and a description of each line left out."""
    if not path.exists():
        return [], []
    text = read_bounded(path, MAX_METRICS, "metrics file").decode("utf-8", errors="replace")
    problems = []
    if text and not text.endswith("\n"):  # every row append_rows writes ends in a line break
        cut = text.rfind("\n") + 1
        problems.append(f"a torn last row {text[cut:][:60]!r} (a partial line, left by a stop while writing)")
        text = text[:cut]
    rows = []
    for i, row in enumerate(csv.DictReader(io.StringIO(text, newline="")), start=2):
        if _complete(row):
            rows.append(row)
        else:
            problems.append(f"an unreadable row at line {i}")
    return rows, problems


_INT_FIELDS = ("timesteps", "stage", "games")
_FLOAT_FIELDS = ("wall_seconds", "win_rate", "ci_low", "ci_high", "truncation_rate", "mean_turns")


def _complete(row: dict[str | None, str | None]) -> bool:
    """Every column present (and no extra values) and every number readable."""
    values = [row.get(name) for name in METRIC_FIELDS]
    if None in row or any(value is None for value in values):
        return False
    try:
        for name, value in zip(METRIC_FIELDS, values, strict=True):
            if value is not None and name in _INT_FIELDS:
                int(value)
            elif value is not None and name in _FLOAT_FIELDS:
                float(value)
    except ValueError:
        return False
    return True


def _csv_text(rows: list[dict[str, Any]], header: bool) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=METRIC_FIELDS)
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _append_bytes(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` in one write, flushed to disk."""
    with open(path, "ab") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def append_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Append evaluation rows (with a header when the file is new), flushed to disk."""
    _append_bytes(path, _csv_text(rows, header=not path.exists()))


def trim_rows(path: Path, timesteps: int) -> None:
    """Drop rows newer than ``timesteps`` (a resumed run redoes those evaluations), and a torn or
    unreadable row (with a warning line on stderr); atomic."""
    if not path.exists():
        return
    rows, problems = _parse(path)
    for problem in problems:
        print(f"warning: {path}: dropped {problem}", file=sys.stderr, flush=True)
    write_bytes_atomic(path, _csv_text([r for r in rows if int(r["timesteps"]) <= timesteps], header=True))


def evaluated_at(path: Path, timesteps: int) -> bool:
    """True when ``metrics.csv`` already holds an evaluation at ``timesteps``."""
    return any(int(row["timesteps"]) == timesteps for row in read_rows(path))


def plot_learning_curve(metrics: Path, out: Path) -> None:
    """Win rate (with 95% CI band) against training steps, one line per opponent."""
    rows = read_rows(metrics)
    if not rows:
        return
    import matplotlib  # heavy (half a second): loaded only when a curve is drawn

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

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


def print_summary(summary: dict[str, Any]) -> None:
    """The last evaluation as a markdown table, and where the outputs are."""
    run_dir = Path(summary["run_dir"])
    print(f"\ntrained {summary['timesteps']:,} steps in {summary['wall_seconds'] / 60:.1f} min -> {run_dir}/")
    rows = read_rows(run_dir / "metrics.csv")
    if rows:
        last = [r for r in rows if r["timesteps"] == rows[-1]["timesteps"]]
        print(f"\nevaluation at {int(last[0]['timesteps']):,} steps (learner = latest model):\n")
        print("| opponent | games | win rate | 95% CI | truncated | mean turns |")
        print("|---|---:|---:|---|---:|---:|")
        for r in last:
            print(f"| {r['opponent']} | {r['games']} | {float(r['win_rate']):.1%} | "
                  f"{float(r['ci_low']):.1%}–{float(r['ci_high']):.1%} | {float(r['truncation_rate']):.1%} | "
                  f"{float(r['mean_turns']):.0f} |")
    print(f"\nlearning curve: {run_dir / 'learning_curve.png'}; best model: {run_dir / 'best.zip'} "
          f"(evaluate it with --allow-pickle, or skipbo train --export it to a .safetensors agent file); "
          f"TensorBoard: tensorboard --logdir {run_dir / 'tb'}")
