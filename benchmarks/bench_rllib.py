"""Env steps per second of RLlib sampling on ``skipbo_v0`` with 1 and 2 env runners.

Needs the ``rllib`` extra. For each runner count it builds the self-play PPO
of ``train_rllib.py`` on a local Ray instance and measures:

* **sample**: every env runner samples ``--steps`` env steps at once
  (``EnvRunnerGroup.foreach_env_runner``), timed after one warm-up call;
  env steps of all runners / wall time;
* **train**: ``--iterations`` full ``algo.train()`` calls (sampling plus the
  PPO update of a ``--batch``-step batch), env steps sampled / wall time.

Run::

    python benchmarks/bench_rllib.py                  # 1 and 2 runners, 2 players
    python benchmarks/bench_rllib.py --runners 1 2 4 --env num_players=4

Sampling scales with the runners only as far as free cores go: on a machine
whose cores are busy the figures say so (see docs/scaling.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ray  # noqa: E402

from skipbo_env.rllib import build_ppo_config  # noqa: E402
from train_rllib import parse_env_items  # noqa: E402


def measure(
    env_config: dict, runners: int, steps: int, iterations: int, batch: int, envs_per_runner: int = 1
) -> tuple[float, float]:
    """(sampling env steps/s, training env steps/s) with ``runners`` env runners."""
    # "local": a new instance even where `ray start` runs a cluster on this machine
    ray.init(address="local", num_cpus=runners + 1, include_dashboard=False, log_to_driver=False)
    algo = build_ppo_config(
        env_config,
        num_env_runners=runners,
        envs_per_runner=envs_per_runner,
        train_batch_size=batch,
        minibatch_size=min(256, batch),
        num_epochs=1,
        hidden=(256, 256),
        seed=0,
    ).build_algo()
    try:
        group = algo.env_runner_group

        def sample(runner, n=steps):
            return sum(len(e) for e in runner.sample(num_timesteps=n, random_actions=False))

        group.foreach_env_runner(sample, local_env_runner=False)  # warm-up
        start = time.perf_counter()
        done = sum(group.foreach_env_runner(sample, local_env_runner=False))
        sample_rate = done / (time.perf_counter() - start)

        algo.train()  # warm-up
        before = algo.train()["env_runners"]["num_env_steps_sampled_lifetime"]
        start = time.perf_counter()
        for _ in range(iterations):
            after = algo.train()["env_runners"]["num_env_steps_sampled_lifetime"]
        train_rate = (after - before) / (time.perf_counter() - start)
    finally:
        algo.stop()
        ray.shutdown()
    return sample_rate, train_rate


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="env runner counts to compare")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="env config entry")
    p.add_argument("--steps", type=int, default=2000, help="env steps each runner samples (sample figure)")
    p.add_argument("--iterations", type=int, default=3, help="timed training iterations (train figure)")
    p.add_argument("--envs-per-runner", type=int, default=1, help="envs each runner steps as one batch")
    p.add_argument("--batch", type=int, default=2000, help="env steps per training iteration")
    args = p.parse_args(argv)
    env_config = parse_env_items(args.env)
    rows = []
    for n in args.runners:
        sample_rate, train_rate = measure(
            env_config, n, args.steps, args.iterations, args.batch, args.envs_per_runner
        )
        rows.append((n, sample_rate, train_rate))
        print(f"runners={n}: sample {sample_rate:,.0f} steps/s, train {train_rate:,.0f} steps/s", flush=True)
    base = rows[0][1]
    print(
        f"\nskipbo_v0 {env_config or '(defaults)'}; {args.envs_per_runner} env(s) per runner; "
        f"{os.cpu_count()} CPUs; load avg {os.getloadavg()[0]:.1f}\n"
    )
    print("| env runners | sample env steps/s | speed-up | train env steps/s |")
    print("|---:|---:|---:|---:|")
    for n, s, t in rows:
        print(f"| {n} | {s:,.0f} | {s / base:.2f}x | {t:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
