"""Train a masked PPO policy on ``skipbo_v0`` with Ray RLlib (see docs/scaling.md).

Needs the optional extra: ``pip install ".[rllib]"``.

Examples::

    python train_rllib.py --iterations 20 --num-env-runners 2                # self-play, 2 players
    python train_rllib.py --env num_players=4 --env partner_game=true --opponents greedy
    python train_rllib.py --address auto --num-env-runners 16 --iterations 500   # on a running cluster

Every seat plays the trained module ``learner`` (self-play), unless
``--opponents`` names scripted agents: then one side per episode is the
learner and the other seats are fixed scripted policies. With ``--address``
the script joins a running Ray cluster instead of starting Ray: each env
runner reserves ``--cpus-per-runner`` CPUs, and Ray starts it on a node with
that many free, so runners spread over the nodes once the driver's node is
busy; every iteration's line says how many runners run on each node. ``--env KEY=VALUE``
entries go to ``skipbo_env.env(**config)`` (values are read as YAML:
``true``, ``4``, ...). The checkpoint lands in ``--out`` and can be played with
``evaluate.py --allow-pickle`` (``agents.load_agent`` accepts its directory with
``allow_pickle=True``: an RLlib checkpoint is a pickle, see the README's Security section).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

SCRIPTED = ("random", "greedy", "heuristic")


def parse_env_items(items: list[str]) -> dict[str, Any]:
    """``["num_players=4", "partner_game=true"]`` -> ``{"num_players": 4, "partner_game": True}``."""
    config: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--env expects KEY=VALUE, got {item!r}")
        config[key] = yaml.safe_load(value)
    return config


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="env config entry for skipbo_env.env (repeatable)",
    )
    p.add_argument(
        "--opponents",
        nargs="*",
        default=[],
        choices=SCRIPTED,
        help="scripted opponents (default: self-play, one shared policy)",
    )
    p.add_argument("--iterations", type=int, default=10, help="training iterations")
    p.add_argument(
        "--num-env-runners", type=int, default=2, help="env runner actors (0: sample in the driver)"
    )
    p.add_argument("--envs-per-runner", type=int, default=1, help="envs stepped by each env runner")
    p.add_argument(
        "--cpus-per-runner",
        type=float,
        default=1,
        help="Ray CPUs each env runner reserves (Ray places a runner on a node with that many free)",
    )
    p.add_argument("--train-batch-size", type=int, default=4000, help="env steps per training iteration")
    p.add_argument("--minibatch-size", type=int, default=256)
    p.add_argument("--num-epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256], help="hidden layer sizes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--address",
        default=None,
        help="join this running Ray cluster ('auto' or HOST:PORT); default: start a local Ray instance",
    )
    p.add_argument(
        "--num-cpus",
        type=int,
        default=None,
        help="CPUs of the local Ray instance (default: num-env-runners + 1); not with --address",
    )
    p.add_argument("--out", default="runs/rllib", help="checkpoint directory (overwritten at each save)")
    p.add_argument(
        "--checkpoint-every", type=int, default=0, help="also save every N iterations (0: only at the end)"
    )
    return p


def warn_one_node(runner_nodes: dict[str, int], alive_nodes: int) -> None:
    """Say on stderr when several env runners share one node of a cluster with more nodes."""
    runners = sum(runner_nodes.values())
    if alive_nodes > 1 and runners > 1 and len(runner_nodes) == 1:
        print(
            f"note: all {runners} env runners run on one of the cluster's {alive_nodes} nodes "
            "(Ray fills the driver's node first; more --num-env-runners or --cpus-per-runner "
            "spread them)",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        env_config = parse_env_items(args.env)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.iterations < 1:
        print("error: --iterations must be at least 1", file=sys.stderr)
        return 2
    if args.address and args.num_cpus is not None:
        print(
            "error: --num-cpus sizes a local Ray instance; a cluster's nodes (--address) set their own",
            file=sys.stderr,
        )
        return 2

    import ray

    import skipbo_env
    from skipbo_env.rllib import build_ppo_config, env_runner_nodes, save

    try:
        skipbo_env.env(**env_config).close()  # a bad config fails here, before Ray starts
        ppo = build_ppo_config(
            env_config,
            opponents=tuple(args.opponents),
            num_env_runners=args.num_env_runners,
            envs_per_runner=args.envs_per_runner,
            cpus_per_runner=args.cpus_per_runner,
            train_batch_size=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.num_epochs,
            lr=args.lr,
            hidden=tuple(args.hidden),
            seed=args.seed,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    if args.address:
        ray.init(address=args.address)
    else:
        # "local": a new instance even where `ray start` runs a cluster on this machine
        ray.init(address="local", num_cpus=args.num_cpus or args.num_env_runners + 1, include_dashboard=False)
    out = Path(args.out)
    algo = ppo.build_algo()
    try:
        warn_one_node(env_runner_nodes(algo), len([n for n in ray.nodes() if n["Alive"]]))
        start = time.perf_counter()
        for it in range(1, args.iterations + 1):
            result = algo.train()
            runners = result.get("env_runners", {})
            steps = runners.get("num_env_steps_sampled_lifetime", 0)
            returns = runners.get("module_episode_returns_mean", {})
            print(
                json.dumps(
                    {
                        "iteration": it,
                        "env_steps": int(steps),
                        "seconds": round(time.perf_counter() - start, 1),
                        "env_steps_per_s": round(steps / (time.perf_counter() - start), 1),
                        "episodes": int(runners.get("num_episodes_lifetime", 0)),
                        "episode_len_mean": runners.get("episode_len_mean"),
                        "return_mean": {k: round(float(v), 3) for k, v in returns.items()},
                        "runners_per_node": {k[:8]: n for k, n in env_runner_nodes(algo).items()},
                    }
                ),
                flush=True,
            )
            if args.checkpoint_every and it % args.checkpoint_every == 0:
                save(algo, out, env_config, args.opponents)
        path = save(algo, out, env_config, args.opponents)
        print(f"checkpoint: {path}")
    finally:
        algo.stop()
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
