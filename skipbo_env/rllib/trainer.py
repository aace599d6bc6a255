"""``skipbo train-rllib``: PPO with Ray RLlib, the action-scoring module by default (docs/scaling.md).

With ``--opponents`` the learner plays them on the compiled vector env (``--no-vector``: on
``skipbo_v0``, the opponents as fixed modules); without, every seat is the learner (self-play).
``--init-from`` starts from a scorer agent file or shipped agent. Each iteration prints a JSON line;
``--eval-every K`` plays tournaments into ``<out>/metrics.csv`` in ``skipbo train``'s columns, counted
in the learner's own decisions. ``--address`` joins a running Ray cluster. The scorer module's result is
``<out>/agent.safetensors``, an agent file for ``skipbo evaluate``; the RLlib checkpoint beside it is a
pickle (``--allow-pickle`` to play it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from .ppo_config import MODULES, SCRIPTED, learner_id


def parse_env_items(items: list[str]) -> dict[str, Any]:
    """``["num_players=4", "partner_game=true"]`` -> ``{"num_players": 4, "partner_game": True}``."""
    config: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--env expects KEY=VALUE, got {item!r}")
        config[key] = yaml.safe_load(value)
    return config


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").split("\n\n")[0])
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
    p.add_argument("--module", choices=MODULES, default="scorer",
                   help="what learns: the action-scoring network (default) or RLlib's masking MLP (--hidden)")
    p.add_argument("--vector", action=argparse.BooleanOptionalAction, default=None,
                   help="against --opponents, play them on the compiled vector env (default when opponents are named)")
    p.add_argument("--init-from", default=None, metavar="FILE_OR_NAME",
                   help="start the scorer from this agent file or shipped agent (ppo-2p-plus, ...)")
    p.add_argument("--iterations", type=int, default=10, help="training iterations")
    p.add_argument("--max-minutes", type=float, default=0,
                   help="stop after the iteration that passes this many minutes, evaluated and saved (0: no limit)")
    p.add_argument(
        "--num-env-runners", type=int, default=2, help="env runner actors (0: sample in the driver)"
    )
    p.add_argument("--envs-per-runner", type=int, default=None,
                   help="games each env runner steps at once (default: 64 on the vector env, else 1)")
    p.add_argument(
        "--cpus-per-runner",
        type=float,
        default=1,
        help="Ray CPUs each env runner reserves (Ray places a runner on a node with that many free)",
    )
    p.add_argument("--train-batch-size", type=int, default=8192, help="env steps per training iteration")
    p.add_argument("--minibatch-size", type=int, default=1024)
    p.add_argument("--num-epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256], help="the MLP's hidden layer sizes")
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
        "--eval-against", nargs="+", default=["greedy", "heuristic"], choices=SCRIPTED,
        help="the evaluation's opponents (default: greedy heuristic)",
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


def evaluate(algo: Any, out: Path, run: dict[str, Any], args: argparse.Namespace, steps: int,
             wall: float) -> list[dict[str, Any]]:
    """Measure the learner against each of ``args.eval_against`` and append the rows to
    ``<out>/metrics.csv`` (``skipbo train``'s columns); returns the rows. The scorer is played from
    ``<out>/snapshots/agent_<steps>.safetensors`` (kept), the MLP from a checkpoint this run writes
    (removed after)."""
    import shutil

    from skipbo_env.agents.tournament import run_tournament
    from skipbo_env.rllib.ppo_config import game_config, save, scorer_net_of
    from skipbo_env.training.metrics import append_rows, evaluation_lineup, evaluation_row

    config = game_config(run["env_config"])
    if args.module == "scorer":
        from skipbo_env.agents.agentfile import write_scorer_net

        snapshot = write_scorer_net(out / "snapshots" / f"agent_{steps:012d}.safetensors",
                                    scorer_net_of(algo, run["module_id"]), config, source="rllib", timesteps=steps)
    else:  # a path of its own: agents are cached by path
        snapshot = save(algo, out / "evaluations" / f"steps_{steps:012d}", run["env_config"], args.opponents,
                        run["module_id"])
    rows = []
    try:
        for opponent in args.eval_against:
            result = run_tournament(evaluation_lineup(str(snapshot), opponent, config), config,
                                    games=args.eval_games, seed=args.eval_seed, workers=1, allow_pickle=True)
            rows.append(evaluation_row(result, steps, wall, 0, opponent))
    finally:
        if args.module != "scorer":
            shutil.rmtree(snapshot, ignore_errors=True)
    append_rows(out / "metrics.csv", rows)
    return rows


def check_args(args: argparse.Namespace) -> dict[str, Any]:
    """The run's settings from the command line (``ValueError`` naming a bad one): the env config, the
    module id, and the PPO config's keywords."""
    env_config = parse_env_items(args.env)
    if args.iterations < 1:
        raise ValueError("--iterations must be at least 1")
    for name in ("eval_every", "checkpoint_every", "max_minutes"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be 0 or more")
    if args.address and args.num_cpus is not None:
        raise ValueError("--num-cpus sizes a local Ray instance; a cluster's nodes (--address) set their own")
    # the vector env seats the learner alone (in the partner game its partner is scripted): skipbo_v0 there
    vector = bool(args.opponents) and not env_config.get("partner_game") if args.vector is None else args.vector
    if args.init_from is not None and args.module != "scorer":
        raise ValueError("--init-from starts the scorer module (--module scorer)")
    return {"env_config": env_config, "vector": vector, "module_id": learner_id(vector),
            "envs_per_runner": args.envs_per_runner or (64 if vector else 1)}


def build(args: argparse.Namespace, run: dict[str, Any]) -> tuple[Any, Any]:
    """The PPO config of the run, and the network to start from (``--init-from``) or None."""
    import skipbo_env
    from skipbo_env.rllib.ppo_config import build_ppo_config, game_config

    env_config = run["env_config"]
    skipbo_env.env(**env_config).close()  # a bad config fails here, before Ray starts
    config = game_config(env_config)
    if args.eval_every:
        check_eval_games(args.eval_games, config)
        if (Path(args.out) / "metrics.csv").exists():
            raise ValueError(f"{Path(args.out) / 'metrics.csv'} exists (an earlier run's evaluations); "
                             "pick another --out or move it away")
    start, sizes = None, None
    if args.init_from is not None:
        from skipbo_env.agents.agentfile import load_scorer_net
        from skipbo_env.agents.modelfile import CheckpointError

        try:
            start, desc = load_scorer_net(args.init_from, config)
        except CheckpointError as exc:
            raise ValueError(f"--init-from: {exc}") from exc
        sizes = {k: desc["policy"][k] for k in ("context_arch", "scorer_arch", "value_arch")}
    ppo = build_ppo_config(
        env_config, opponents=tuple(args.opponents), module=args.module, vector=run["vector"], scorer_sizes=sizes,
        num_env_runners=args.num_env_runners, envs_per_runner=run["envs_per_runner"],
        cpus_per_runner=args.cpus_per_runner, train_batch_size=args.train_batch_size,
        minibatch_size=args.minibatch_size, num_epochs=args.num_epochs, lr=args.lr, hidden=tuple(args.hidden),
        seed=args.seed)
    return ppo, start


def progress_line(result: dict[str, Any], it: int, args: argparse.Namespace, seconds: float,
                  runners_per_node: dict[str, int], module_id: str) -> dict[str, Any]:
    """An iteration's JSON line: steps (every seat's and the learner's), rates, ETA, returns, placement."""
    runners = result.get("env_runners", {})
    steps = int(runners.get("num_env_steps_sampled_lifetime", 0))
    learner_steps = int(runners.get("num_module_steps_sampled_lifetime", {}).get(module_id, 0))
    returns = runners.get("module_episode_returns_mean") or {module_id: runners.get("episode_return_mean", 0.0)}
    eta = seconds / it * (args.iterations - it)
    if args.max_minutes:
        eta = max(0.0, min(eta, args.max_minutes * 60 - seconds))
    return {
        "iteration": it,
        "env_steps": steps,
        "learner_steps": learner_steps,
        "seconds": round(seconds, 1),
        "env_steps_per_s": round(steps / max(seconds, 1e-9), 1),
        "eta_s": round(eta, 1),
        "episodes": int(runners.get("num_episodes_lifetime", 0)),
        "episode_len_mean": runners.get("episode_len_mean"),
        "return_mean": {k: round(float(v), 3) for k, v in returns.items()},
        "runners_per_node": {k[:8]: n for k, n in runners_per_node.items()},
    }


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        run = check_args(args)
        ppo, start = build(args, run)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    import ray

    from skipbo_env.rllib.ppo_config import env_runner_nodes, load_scorer_weights, save

    if args.address:
        ray.init(address=args.address)
    else:
        # "local": a new instance even where `ray start` runs a cluster on this machine
        ray.init(address="local", num_cpus=args.num_cpus or args.num_env_runners + 1, include_dashboard=False)
    out, module_id = Path(args.out), run["module_id"]
    algo = ppo.build_algo()
    try:
        if start is not None:
            load_scorer_weights(algo, module_id, start)
        warn_one_node(env_runner_nodes(algo), len([n for n in ray.nodes() if n["Alive"]]))
        if args.eval_every:  # the curve starts where the weights start (fresh or --init-from's)
            for row in evaluate(algo, out, run, args, 0, 0.0):
                print(json.dumps({"evaluation": row}), flush=True)
        began = time.perf_counter()
        for it in range(1, args.iterations + 1):
            result = algo.train()
            line = progress_line(result, it, args, time.perf_counter() - began, env_runner_nodes(algo), module_id)
            print(json.dumps(line), flush=True)
            last = it == args.iterations or 0 < args.max_minutes * 60 <= time.perf_counter() - began
            if args.checkpoint_every and it % args.checkpoint_every == 0:
                save(algo, out, run["env_config"], args.opponents, module_id)
            if args.eval_every and (it % args.eval_every == 0 or last):
                wall = time.perf_counter() - began
                for row in evaluate(algo, out, run, args, line["learner_steps"], wall):
                    print(json.dumps({"evaluation": row}), flush=True)
            if last:
                break
        path = save(algo, out, run["env_config"], args.opponents, module_id)
        print(f"checkpoint: {path}")
        if args.module == "scorer":
            print(f"agent file: {path / 'agent.safetensors'} (skipbo evaluate --agents it greedy)")
    finally:
        algo.stop()
        ray.shutdown()
    return 0
