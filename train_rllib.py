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

With ``--eval-every K`` the learner is measured every ``K`` iterations (and after the last)
the way ``train.py`` measures its runs: a seat-balanced, deal-paired tournament of
``--eval-games`` games against each of ``--eval-against`` (seed ``--eval-seed``, the same deals
at every evaluation), one row per opponent appended to ``<out>/metrics.csv`` in ``train.py``'s
columns (``timesteps`` are the decisions of the learner sampled so far, as a Gymnasium env
against scripted seats counts its steps, not every seat's moves; ``wall_seconds`` includes the
evaluations), so ``benchmarks/learning_curves.py`` plots it beside the other runs.
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
    p.add_argument(
        "--eval-every", type=int, default=0,
        help="measure the learner every N iterations and after the last into <out>/metrics.csv (0: never)",
    )
    p.add_argument("--eval-games", type=int, default=400, help="games per evaluation and opponent")
    p.add_argument(
        "--eval-against", nargs="+", default=["heuristic"], choices=SCRIPTED,
        help="the evaluation's opponents (default: heuristic)",
    )
    p.add_argument("--eval-seed", type=int, default=0, help="the evaluation tournaments' seed")
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


def check_eval_games(games: int, config: Any) -> None:
    """``ValueError`` unless ``games`` plays every seating of the evaluation's tournament equally."""
    from skipbo_env.agents.tournament import lineups

    seatings = len(lineups(config.num_teams, config))
    if games < 1 or games % seatings:
        raise ValueError(f"--eval-games must be a positive multiple of {seatings} (the seatings per deal), got {games}")


def evaluate(algo: Any, out: Path, env_config: dict[str, Any], args: argparse.Namespace, steps: int,
             wall: float) -> list[dict[str, Any]]:
    """Measure the learner against each of ``args.eval_against`` and append the rows to
    ``<out>/metrics.csv`` (``train.py``'s columns); returns the rows."""
    import shutil

    from skipbo_env.agents.tournament import run_tournament
    from skipbo_env.rllib import save
    from skipbo_env.rllib.ppo_config import game_config
    from skipbo_env.training.metrics import append_rows, evaluation_lineup, evaluation_row

    config = game_config(env_config)
    snapshot = out / "evaluations" / f"steps_{steps:012d}"  # a path of its own: agents are cached by path
    save(algo, snapshot, env_config, args.opponents)
    rows = []
    try:
        for opponent in args.eval_against:
            result = run_tournament(evaluation_lineup(str(snapshot), opponent, config), config,
                                    games=args.eval_games, seed=args.eval_seed, workers=1, allow_pickle=True)
            rows.append(evaluation_row(result, steps, wall, 0, opponent))
    finally:
        shutil.rmtree(snapshot, ignore_errors=True)
    append_rows(out / "metrics.csv", rows)
    return rows


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
    for name in ("eval_every", "checkpoint_every"):
        if getattr(args, name) < 0:
            print(f"error: --{name.replace('_', '-')} must be 0 or more", file=sys.stderr)
            return 2
    if args.address and args.num_cpus is not None:
        print(
            "error: --num-cpus sizes a local Ray instance; a cluster's nodes (--address) set their own",
            file=sys.stderr,
        )
        return 2

    import ray

    import skipbo_env
    from skipbo_env.agents.rllib_agent import LEARNER
    from skipbo_env.rllib import build_ppo_config, env_runner_nodes, save
    from skipbo_env.rllib.ppo_config import game_config

    try:
        skipbo_env.env(**env_config).close()  # a bad config fails here, before Ray starts
        if args.eval_every:
            check_eval_games(args.eval_games, game_config(env_config))
            if (Path(args.out) / "metrics.csv").exists():
                raise ValueError(f"{Path(args.out) / 'metrics.csv'} exists (an earlier run's evaluations); "
                                 "pick another --out or move it away")
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
            learner_steps = int(runners.get("num_module_steps_sampled_lifetime", {}).get(LEARNER, 0))
            print(
                json.dumps(
                    {
                        "iteration": it,
                        "env_steps": int(steps),
                        "learner_steps": learner_steps,
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
            if args.eval_every and (it % args.eval_every == 0 or it == args.iterations):
                for row in evaluate(algo, out, env_config, args, learner_steps, time.perf_counter() - start):
                    print(json.dumps({"evaluation": row}), flush=True)
        path = save(algo, out, env_config, args.opponents)
        print(f"checkpoint: {path}")
    finally:
        algo.stop()
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
