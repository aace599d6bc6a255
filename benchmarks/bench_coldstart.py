"""Seconds until the first vector env has stepped, cold (fresh numba cache) and warm.

Each run is a new process that builds
``gym.make_vec("SkipBo-v0", num_envs=64, vectorization_mode="vector_entry_point", opponents=...)``,
resets it and steps it 20 times with random legal actions. Cold: ``NUMBA_CACHE_DIR``
points at a new empty folder, as after a fresh install, so numba compiles the kernels
the env needs; warm: the same folder again, so they load from disk. Prints one
markdown row per run with the process's wall and CPU seconds and the load average
beside it (the machine may be shared).

    python benchmarks/bench_coldstart.py [--opponents greedy heuristic] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def child(opponents: str, num_envs: int, steps: int) -> None:
    """Build, reset and step the env in this process; print the seconds of each phase as JSON."""
    start = time.perf_counter()
    import gymnasium as gym
    import numpy as np

    import skipbo_env  # noqa: F401 - registers SkipBo-v0

    imported = time.perf_counter()
    env = gym.make_vec("SkipBo-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", opponents=opponents)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in info["action_mask"]])
        _, _, _, _, info = env.step(actions)
    end = time.perf_counter()
    times = os.times()
    print(json.dumps({"import": imported - start, "env": end - imported, "cpu": times.user + times.system}))


def run_child(opponents: str, cache_dir: str, args: argparse.Namespace) -> dict:
    """One new process with ``NUMBA_CACHE_DIR=cache_dir``; its phases plus the wall time of the whole process."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    cmd = [sys.executable, __file__, "--child", opponents, "--num-envs", str(args.num_envs), "--steps", str(args.steps)]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result.update(wall=time.perf_counter() - start, load=load)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opponents", nargs="+", default=["greedy", "heuristic"])
    parser.add_argument("--repeats", type=int, default=3, help="cold runs (each with a new cache) per opponent")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.num_envs, args.steps)
        return
    print(f"{args.num_envs} envs, reset + {args.steps} steps, {os.cpu_count()} CPUs, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}\n")
    print("| opponents | cache | process wall s | of which env s | CPU s | load average before |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for opponents in args.opponents:
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache_dir:
                for label in ("cold", "warm"):
                    r = run_child(opponents, cache_dir, args)
                    print(f"| {opponents} | {label} | {r['wall']:.1f} | {r['env']:.1f} | {r['cpu']:.1f} | "
                          f"{r['load']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
