"""Steps/s of the whole ``train.py`` loop, this code against an earlier commit, in one run.

Both trees train the same configuration for the same number of PPO steps (no behaviour
cloning, evaluations every half of the steps as ``bench_speed.py --train`` unless ``--eval-every``
says otherwise), in fresh
processes that import their own tree's package, alternately (reference, this code,
reference, ...) so that a change of load on the machine touches both. Each tree first plays
one untimed warm-up run (numba compiles and caches its kernels per tree). Prints the wall
time and steps/s of every run, the best of each tree and their ratio, as a markdown table.

    python benchmarks/bench_train_loop.py [--reference REV] [--steps 32768] [--eval-every N] [--repeats 2]
        [--config configs/default.yaml] [--set threads=1 --set eval.workers=1 ...]
        [--variant 'pipeline=true' --variant 'pipeline=true threads=2' ...]

``--reference`` is any git revision (a worktree of it is made in a temporary folder and
removed after); ``--set KEY=VALUE`` adds a ``--KEY VALUE`` override of ``train.py`` to the
runs of this code only, for recipe settings the reference did not have or did not use; each
``--variant`` adds one more row of this code with further overrides, in the same run.
Needs a git checkout of the repository and the ``train`` extra.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = "509f8bd"
"""The code of 2026-12-05 before the training speed-ups (docs/performance.md quotes its 495 steps/s)."""

RUN = """
import sys, time, tempfile
sys.path.insert(0, {tree!r})
import skipbo_env
assert skipbo_env.__file__.startswith({tree!r}), skipbo_env.__file__
from skipbo_env.training.commands import main
with tempfile.TemporaryDirectory() as tmp:
    start = time.perf_counter()
    main(["--config", {config!r}, "--runs_dir", tmp, "--name", "bench", "--no-progress",
          "--total_timesteps", "{steps}", "--pretrain.teacher", "null", "--eval.every", "{every}",
          "--checkpoint_every", "{steps}", *{extra!r}])
    print("WALL", time.perf_counter() - start)
"""


def timed_run(tree: Path, config: str, steps: int, every: int, extra: list[str]) -> float:
    """Wall seconds of one ``train.py`` run of ``steps`` PPO steps in ``tree``'s package."""
    code = RUN.format(tree=str(tree), config=str(tree / config), steps=steps, every=every, extra=extra)
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the run in {tree} failed:\n{done.stderr[-3000:]}")
    return float(next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("WALL")))


def overrides(items: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``train.py`` options of ``KEY=VALUE`` items (``--KEY VALUE`` each)."""
    extra: list[str] = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"an override takes KEY=VALUE, got {item!r}")
        extra += [f"--{key}", value]
    return extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=DEFAULT_REFERENCE, help="git revision to compare with")
    parser.add_argument("--config", default="configs/default.yaml", help="config path inside each tree")
    parser.add_argument("--steps", type=int, default=32768)
    parser.add_argument(
        "--eval-every", type=int, default=None, help="steps between evaluations (default: half the steps)"
    )
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a train.py override for this code's runs only (repeatable)")
    parser.add_argument("--variant", action="append", default=[], metavar="'KEY=VALUE ...'",
                        help="one more row of this code: the --set overrides plus these (repeatable)")
    args = parser.parse_args()
    every = args.eval_every or args.steps // 2
    extra = overrides(args.set, parser)
    rows = [extra] + [extra + overrides(v.split(), parser) for v in args.variant]
    with tempfile.TemporaryDirectory() as tmp:
        ref_tree = Path(tmp) / "reference"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(ref_tree), args.reference],
                       check=True, capture_output=True)
        try:
            trees = {"reference": (ref_tree, [])}
            for i, more in enumerate(rows):
                trees["this code" if i == 0 else f"this code, variant {i}"] = (ROOT, more)
            for name, (tree, more) in trees.items():
                print(f"warm-up run ({name}) ...", flush=True)
                timed_run(tree, args.config, 8192, 4096, more)
            walls: dict[str, list[float]] = {name: [] for name in trees}
            for r in range(args.repeats):
                for name, (tree, more) in trees.items():
                    start = time.time()
                    walls[name].append(timed_run(tree, args.config, args.steps, every, more))
                    print(
                        f"run {r + 1}/{args.repeats} ({name}): {walls[name][-1]:.1f} s, "
                        f"{args.steps / walls[name][-1]:,.0f} steps/s "
                        f"(finished {time.time() - start:.0f} s after start)",
                        flush=True,
                    )
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(ref_tree)], check=False)
    best = {name: args.steps / min(w) for name, w in walls.items()}
    print(f"\n## Whole train.py loop: {args.config}, {args.steps:,} PPO steps, evaluations every "
          f"{every:,}, no behaviour cloning; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load average at the end {os.getloadavg()[0]:.2f}\n")
    print("| code | overrides | runs (s) | best steps/s | ratio |")
    print("|---|---|---|---:|---:|")
    for name, (_, more) in trees.items():
        label = f"{name} ({args.reference})" if name == "reference" else name
        print(f"| {label} | {' '.join(more) or '-'} | {', '.join(f'{w:.1f}' for w in walls[name])} | "
              f"{best[name]:,.0f} | {best[name] / best['reference']:.2f}x |")


if __name__ == "__main__":
    main()
