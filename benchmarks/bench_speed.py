"""Issue 15's figures in one run: tournaments, the AEC env against ``connect_four_v3``, PPO training.

Prints, each as a ratio against its reference measured in the same run on this machine:

* **Tournaments** (``run_tournament``, one worker): games/s of heuristic vs greedy and of the shipped
  PPO agent (``ppo-2p``) vs the heuristic, played (a) the way ``evaluate.py`` played them before
  issue 15 (one game at a time, every agent fed the observation vector: scripted agents decode it,
  the network does one forward pass per decision) and (b) batched (``batch_size`` games at once,
  scripted agents on their seat's view, the network one forward pass per step over all its games).
  Both paths give identical games (checked here and by tests/test_evaluate.py).
* **AEC env**: steps/s of ``skipbo_env.env()`` and ``raw_env()`` against PettingZoo's
  ``connect_four_v3.env()`` and ``raw_env()`` in the same random-play loop (``last()``, then
  ``step()`` with a random legal action), 2 players.
* **Training** (``--train``): steps/s of the whole ``train.py`` loop on a config (default
  ``configs/default.yaml``, behaviour cloning and evaluations off unless asked) against the engine
  alone (the batched learner stepping random legal actions with the same opponents), and where the
  time of the PPO loop goes (rollout collection: policy forward, env step, buffer; the PPO update).
* **Where the time goes**: the functions with the most own time in the batched tournaments.

    python benchmarks/bench_speed.py [--games 200] [--aec-steps 20000] [--train] [--train-steps 16384]

Run it on an otherwise idle machine; every figure is single-process (torch on one thread).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from skipbo_env.agents import load_agent  # noqa: E402
from skipbo_env.agents import tournament as T  # noqa: E402
from skipbo_env.rules import GameConfig  # noqa: E402


class VectorOnly:
    """An agent seen through ``act`` only: the path every agent took before issue 15."""

    def __init__(self, agent):
        self.agent = agent

    def seed(self, seed=None):
        reseed = getattr(self.agent, "seed", None)
        if callable(reseed):
            reseed(seed)

    def act(self, observation):
        return self.agent.act(observation)


def tournament_rate(specs, games: int, batch: int, vector_only: bool, profile: pstats.Stats | None = None):
    """(games/s, result) of a one-worker tournament; ``vector_only`` wraps every agent as before issue 15."""
    original = T.load_agent
    if vector_only:
        T.load_agent = lambda *a, **k: VectorOnly(original(*a, **k))  # type: ignore[assignment]
    T._WORKER_AGENTS.clear()
    try:
        start = time.perf_counter()
        prof = cProfile.Profile() if profile is not None else None
        if prof is not None:
            prof.enable()
        result = T.run_tournament(list(specs), GameConfig(), games=games, seed=0, workers=1, batch_size=batch)
        if prof is not None:
            prof.disable()
            profile.add(prof)
        return games / (time.perf_counter() - start), result
    finally:
        T.load_agent = original
        T._WORKER_AGENTS.clear()


def tournaments(games: int, batch: int) -> list[str]:
    lines = ["## Tournaments (one worker, 2 players, seed 0)", "",
             "| match | games | before issue 15 (games/s) | batched (games/s) | ratio | same games |",
             "|---|---:|---:|---:|---:|---|"]
    for specs in (("heuristic", "greedy"), ("ppo-2p", "heuristic")):
        old, a = tournament_rate(specs, games, 1, vector_only=True)
        new, b = tournament_rate(specs, games, batch, vector_only=False)
        lines.append(f"| {specs[0]} vs {specs[1]} | {games} | {old:.1f} | {new:.1f} | {new / old:.2f}x | "
                     f"{'yes' if a.games == b.games else 'NO'} |")
        print(lines[-1], flush=True)
    return lines


def where_tournament_time_goes(games: int, batch: int, top: int = 12) -> list[str]:
    stats = None
    for specs in (("heuristic", "greedy"), ("ppo-2p", "heuristic")):
        prof = cProfile.Profile()
        prof.enable()
        T._WORKER_AGENTS.clear()
        T.run_tournament(list(specs), GameConfig(), games=games, seed=0, workers=1, batch_size=batch)
        prof.disable()
        if stats is None:
            stats = pstats.Stats(prof, stream=io.StringIO())
        else:
            stats.add(prof)
    assert stats is not None
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]  # type: ignore[attr-defined]
    lines = ["## Where the batched tournaments' time goes (own time, under cProfile)", "",
             "| function | share |", "|---|---:|"]
    for (path, line, name), v in rows:
        short = path.split("site-packages/")[-1].split("skipbo_env/")[-1]
        lines.append(f"| `{short}:{line} {name}` | {100 * v[2] / total:.1f}% |")
    return lines


def aec_loop(env, steps: int, seed: int = 0) -> float:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return steps / (time.perf_counter() - start)


def aec(steps: int, repeats: int = 3) -> list[str]:
    import skipbo_env
    from skipbo_env.aec import raw_env

    try:
        from pettingzoo.classic import connect_four_v3
        from pettingzoo.classic.connect_four.connect_four import raw_env as c4_raw
    except ImportError as exc:  # connect_four needs pygame
        return ["## AEC env", "", f"connect_four_v3 unavailable ({exc}); pip install pygame"]
    makers = {
        "connect_four_v3.env()": connect_four_v3.env,
        "connect_four_v3.raw_env()": c4_raw,
        "skipbo_env.env()": lambda: skipbo_env.env(num_players=2),
        "skipbo_env.aec.raw_env()": lambda: raw_env(num_players=2),
    }
    rates = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make in makers.items():
            env = make()
            aec_loop(env, steps // 10)
            rates[name] = max(aec_loop(env, steps) for _ in range(repeats))
    ref = rates["connect_four_v3.env()"]
    lines = ["## AEC env (random legal play, 2 players, best of 3)", "",
             "| env | steps/s | vs connect_four_v3.env() |", "|---|---:|---:|"]
    lines += [f"| {name} | {rate:,.0f} | {rate / ref:.2f}x |" for name, rate in rates.items()]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per tournament (default 200)")
    parser.add_argument("--batch", type=int, default=T.DEFAULT_BATCH, help="batched tournaments' batch size")
    parser.add_argument("--aec-steps", type=int, default=20000, help="AEC steps per timed run (default 20000)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["tournaments", "aec", "profile"])
    args = parser.parse_args()
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    print(f"# bench_speed: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}\n")
    load_agent("ppo-2p", GameConfig())  # load torch outside the timings
    out: list[str] = []
    if "tournaments" not in args.skip:
        out += tournaments(args.games, args.batch) + [""]
    if "aec" not in args.skip:
        out += aec(args.aec_steps) + [""]
    if "profile" not in args.skip:
        out += where_tournament_time_goes(max(20, args.games // 4), args.batch) + [""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
