"""Env steps per second of RLlib sampling and training, by env runners, module and env.

Needs the ``rllib`` extra. For each runner count it builds the PPO of ``skipbo train-rllib``
(``--module``; self-play on ``skipbo_v0``, or with ``--opponents`` the compiled vector env unless
``--no-vector``) on a local Ray instance and measures:

* **sample**: every env runner samples ``--steps`` env steps at once
  (``EnvRunnerGroup.foreach_env_runner``), timed after one warm-up call;
  env steps of all runners / wall time;
* **train**: ``--iterations`` full ``algo.train()`` calls (sampling plus the
  PPO update of a ``--batch``-step batch), env steps sampled / wall time.

Run::

    python benchmarks/bench_rllib.py                  # 1 and 2 runners, 2 players, self-play, the scorer
    python benchmarks/bench_rllib.py --opponents greedy --envs-per-runner 64 --batch 8192
    python benchmarks/bench_rllib.py --opponents greedy --no-vector --module mlp --runners 1 2 4

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
from skipbo_env.rllib.trainer import parse_env_items  # noqa: E402


def measure(env_config: dict, runners: int, args: argparse.Namespace) -> tuple[float, float]:
    """(sampling env steps/s, training env steps/s) with ``runners`` env runners."""
    steps, iterations = args.steps, args.iterations
    # "local": a new instance even where `ray start` runs a cluster on this machine
    ray.init(address="local", num_cpus=runners + 1, include_dashboard=False, log_to_driver=False)
    algo = build_ppo_config(
        env_config,
        opponents=tuple(args.opponents),
        module=args.module,
        vector=bool(args.opponents) and args.vector,
        num_env_runners=runners,
        envs_per_runner=args.envs_per_runner,
        train_batch_size=args.batch,
        minibatch_size=min(256, args.batch),
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
    p.add_argument("--module", choices=("scorer", "mlp"), default="scorer", help="the trained module")
    p.add_argument("--opponents", nargs="*", default=[], help="scripted opponents (default: self-play)")
    p.add_argument("--vector", action=argparse.BooleanOptionalAction, default=True,
                   help="with --opponents, the compiled vector env (default) or skipbo_v0")
    args = p.parse_args(argv)
    env_config = parse_env_items(args.env)
    rows = []
    for n in args.runners:
        sample_rate, train_rate = measure(env_config, n, args)
        rows.append((n, sample_rate, train_rate))
        print(f"runners={n}: sample {sample_rate:,.0f} steps/s, train {train_rate:,.0f} steps/s", flush=True)
    base = rows[0][1]
    print(
        f"\n{'vector env' if args.opponents and args.vector else 'skipbo_v0'} {env_config or '(defaults)'}; "
        f"module {args.module}; opponents {args.opponents or 'self-play'}; {args.envs_per_runner} env(s) per runner; "
        f"{os.cpu_count()} CPUs; load avg {os.getloadavg()[0]:.1f}\n"
    )
    print("| env runners | sample env steps/s | speed-up | train env steps/s |")
    print("|---:|---:|---:|---:|")
    for n, s, t in rows:
        print(f"| {n} | {s:,.0f} | {s / base:.2f}x | {t:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
