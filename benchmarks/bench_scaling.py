"""Scaling of a tournament: one process, the local pool, and a two-node Ray cluster, in one run.

Plays the same tournament (``--agents``, default ``search:2:4`` against ``heuristic``: a cheap
search spec, so that games cost something) three ways and prints one table of wall seconds,
games/s and the ratio to one process:

* **1 worker**: every chunk in this process (``workers=1``);
* **local pool**: ``--workers`` spawned processes on this machine (default: every core);
* **Ray, N nodes**: Ray tasks on a local cluster started here with ``ray.cluster_utils.Cluster``
  (``--nodes`` nodes of ``--cpus-per-node`` CPUs each, default 2 nodes sharing the cores), or on
  the running cluster at ``--ray ADDRESS``.

The pool and the cluster run the tournament twice on the same workers: the **cold** run pays for
starting the worker processes and loading the agents in each (imports, compiled code, networks),
the **warm** run only for the games and the per-chunk overhead. Every run must give the same
games as the first (the script stops otherwise).

    OMP_NUM_THREADS=1 python benchmarks/bench_scaling.py                        # 400 games
    OMP_NUM_THREADS=1 python benchmarks/bench_scaling.py --games 200 --agents search:4 heuristic
    OMP_NUM_THREADS=1 python benchmarks/bench_scaling.py --ray 10.0.0.1:6379    # an existing cluster
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

from skipbo_env.agents.executors import RayTasks, open_runner  # noqa: E402
from skipbo_env.agents.tournament import DEFAULT_BATCH, run_tournament  # noqa: E402

STORE = 100 * 2**20
"""Object store bytes per node of the local cluster."""


def timed(label: str, agents: list[str], args: argparse.Namespace, **kwargs) -> tuple[str, float, tuple, str]:
    """One tournament: its label, wall seconds, games, and the machine's load averages (1 and 5
    minutes) when it ended: other jobs on the machine share its cores."""
    start = time.perf_counter()
    result = run_tournament(agents, games=args.games, seed=args.seed, batch_size=args.batch_size, **kwargs)
    seconds = time.perf_counter() - start
    load = "{:.1f} / {:.1f}".format(*os.getloadavg()[:2])
    print(f"{label}: {seconds:.1f} s (load {load})", flush=True)
    return label, seconds, result.games, load


def local_cluster(nodes: int, cpus: int):
    """A Ray cluster of ``nodes`` nodes with ``cpus`` CPUs each on this machine, this process its driver."""
    import ray  # the ray extra
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": cpus, "object_store_memory": STORE})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=cpus, object_store_memory=STORE)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", default=["search:2:4", "heuristic"])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH // 4,
                        help="games per chunk at most (default %(default)s: several chunks per worker)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="local pool size")
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--cpus-per-node", type=int, default=max(1, (os.cpu_count() or 1) // 2))
    parser.add_argument("--ray", metavar="ADDRESS", default=None, help="use this running cluster instead")
    args = parser.parse_args()

    runs = [timed("1 worker", args.agents, args, workers=1)]
    with open_runner(args.workers) as pool:
        for when in ("cold", "warm"):
            runs.append(timed(f"local pool, {args.workers} processes, {when}", args.agents, args, pool=pool))
    cluster = None if args.ray else local_cluster(args.nodes, args.cpus_per_node)
    try:
        with RayTasks(args.ray or cluster.address) as runner:
            where = (f"Ray at {args.ray}" if args.ray
                     else f"Ray, {args.nodes} nodes x {args.cpus_per_node} CPUs")
            for when in ("cold", "warm"):
                runs.append(timed(f"{where}, {when}", args.agents, args, pool=runner))
            nodes = len(set(runner.nodes.values()))
    finally:
        if cluster is not None:
            import ray  # the ray extra

            ray.shutdown()
            cluster.shutdown()
    if any(run[2] != runs[0][2] for run in runs):
        raise SystemExit("the runs gave different games: a bug")
    base = runs[0][1]
    print(f"\n{args.games} games of {' vs '.join(args.agents)}, chunks of at most {args.batch_size} games, "
          f"seed {args.seed}; every run gave the same games; the warm Ray run used {nodes} node(s)\n")
    print(f"| run | seconds | games/s | vs 1 worker | load average (1 / 5 min) at its end, {os.cpu_count()} cores |")
    print("|---|---:|---:|---:|---:|")
    for label, seconds, _, load in runs:
        print(f"| {label} | {seconds:.1f} | {args.games / seconds:.2f} | {base / seconds:.2f}x | {load} |")


if __name__ == "__main__":
    main()
