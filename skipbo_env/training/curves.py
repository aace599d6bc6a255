"""``skipbo curves``: the learning curves of training runs side by side, as a markdown table and a plot.

Each run is a ``metrics.csv`` as ``skipbo train``, ``skipbo train-rllib`` and the recipes write it (one
row per evaluation and opponent: ``timesteps``, ``wall_seconds``, ``games``, ``win_rate`` and its
Wilson interval). ``skipbo curves --run mine=runs/mine/metrics.csv --against greedy --out curves.png``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .metrics import read_rows


def parse_run(text: str) -> tuple[str, Path]:
    """``NAME=PATH`` of one run's metrics.csv."""
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"a run is NAME=PATH/metrics.csv, got {text!r}")
    return name, Path(path)


def curve(path: Path, against: str) -> list[tuple[int, float, int, float, float, float]]:
    """(steps, wall seconds, games, win rate, low, high) of every evaluation against ``against``."""
    if not path.is_file():
        raise ValueError(f"no metrics file at {path}")
    rows = [r for r in read_rows(path) if r["opponent"] == against]
    if not rows:
        raise ValueError(f"{path} has no evaluation against {against!r}")
    return [(int(r["timesteps"]), float(r["wall_seconds"]), int(r["games"]), float(r["win_rate"]),
             float(r["ci_low"]), float(r["ci_high"])) for r in rows]


def markdown(curves: Sequence[tuple[str, list]], against: str) -> str:
    """One row per run: its first and best evaluations and where it ended."""
    lines = [f"| run | evaluations | first (steps: win rate vs {against}) | best (steps, wall: win rate, 95% CI) "
             "| last (steps, wall) |",
             "| --- | ---: | --- | --- | --- |"]
    for name, points in curves:
        first = points[0]
        best = max(points, key=lambda p: p[3])
        last = points[-1]
        lines.append(
            f"| {name} | {len(points)} | {first[0]:,}: {first[3]:.1%} | {best[0]:,}, {best[1] / 60:.1f} min: "
            f"{best[3]:.1%} ({best[4]:.1%}–{best[5]:.1%}) of {best[2]} | {last[0]:,}, {last[1] / 60:.1f} min |")
    return "\n".join(lines)


def plot(curves: Sequence[tuple[str, list]], against: str, out: Path) -> None:
    """Two panels: win rate by steps and by wall minutes, each point with its 95% interval."""
    import matplotlib  # heavy: loaded only when a plot is drawn

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    tab10 = plt.get_cmap("tab10")
    colors = [*(tab10(k) for k in range(10)), "black", "olive", "teal", "gold"]  # one per run, past tab10's ten
    for i, (name, points) in enumerate(curves):
        steps = [p[0] / 1e6 for p in points]
        minutes = [p[1] / 60 for p in points]
        rate = [p[3] for p in points]
        low = [p[3] - p[4] for p in points]
        high = [p[5] - p[3] for p in points]
        for ax, x in zip(axes, (steps, minutes), strict=True):
            ax.errorbar(x, rate, yerr=[low, high], marker="o", markersize=3, capsize=2, label=name,
                        color=colors[i % len(colors)])
    axes[0].set_xlabel("environment steps (millions)")
    axes[1].set_xlabel("wall time (minutes, 2 cores, pretraining included)")
    axes[0].set_ylabel(f"win rate against {against}")
    for ax in axes:
        ax.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
        ax.grid(alpha=0.3)
    axes[1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None, prog: str | None = None,
         default_runs: Sequence[tuple[str, Path]] = ()) -> int:
    """Print the table of ``--run`` (or ``default_runs``) and draw the plot with ``--out``; exit code."""
    parser = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--run", action="append", type=parse_run, metavar="NAME=PATH",
                        help="a run's metrics.csv (repeatable)" + ("; default: the docs' runs" if default_runs else ""))
    parser.add_argument("--against", default="heuristic", help="the evaluation opponent (default: heuristic)")
    parser.add_argument("--out", type=Path, help="write the plot here (PNG)")
    args = parser.parse_args(argv)
    runs = args.run or list(default_runs)
    if not runs:
        parser.error("name at least one run: --run NAME=PATH/metrics.csv")
    curves = []
    for name, path in runs:
        try:
            curves.append((name, curve(path, args.against)))
        except ValueError as exc:
            if args.run:  # a run the user named
                print(f"{parser.prog}: error: {exc}", file=sys.stderr)
                return 2
            print(f"({name}: {exc}; left out)", file=sys.stderr)
    print(markdown(curves, args.against))
    if args.out:
        plot(curves, args.against, args.out)
        print(f"wrote {args.out}")
    return 0
