"""Speed figures in one run: tournaments, the AEC env against ``connect_four_v3``, PPO training.

Prints, each as a ratio against its reference measured in the same run on this machine:

* **Tournaments** (``run_tournament``, one worker): games/s of heuristic vs greedy and of the shipped
  PPO agent (``ppo-2p``) vs the heuristic, played (a) one game at a time on the rules core, every
  agent fed the observation vector (scripted agents decode it, the network does one forward pass
  per decision, the heuristic plans in Python) and (b) as ``evaluate.py`` plays them:
  ``batch_size`` games at once in the batched engine, the scripted seats replayed in compiled code
  (the compiled planner for the heuristic), the network one forward pass per step over all its games.
  Both paths give identical games (checked here and by tests/test_engine_games.py).
* **AEC env**: steps/s of ``skipbo_env.env()`` and ``raw_env()`` against PettingZoo's
  ``connect_four_v3.env()`` and ``raw_env()`` in the same random-play loop (``last()``, then
  ``step()`` with a random legal action), 2 players.
* **Training** (``--train``): steps/s of the whole ``train.py`` loop on a config (default
  ``configs/default.yaml``; PPO with its evaluations, behaviour cloning off) against the engine
  alone (the batched learner stepping random legal actions against the same opponents), and where
  the loop's time goes (rollout collection: policy forward, env step, buffer; PPO updates; the rest).
* **Where the time goes**: the functions with the most own time in the batched tournaments.

    python benchmarks/bench_speed.py [--games 200] [--aec-steps 20000] [--train] [--train-steps 32768]

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
from skipbo_env.bots import BOTS, make_bot  # noqa: E402
from skipbo_env.rules import GameConfig  # noqa: E402


class VectorOnly:
    """An agent seen through ``act`` only (the observation vector, one decision at a time)."""

    def __init__(self, agent):
        self.agent = agent

    def seed(self, seed=None):
        reseed = getattr(self.agent, "seed", None)
        if callable(reseed):
            reseed(seed)

    def act(self, observation):
        return self.agent.act(observation)


def _python_agent(spec, config, seed=None, **kwargs):
    """Scripted agents with the Python planner (``make_bot``), others as ``load_agent`` makes them."""
    return make_bot(spec, config, seed) if spec in BOTS else load_agent(spec, config, seed, **kwargs)


def tournament_rate(specs, games: int, batch: int, vector_only: bool, profile: pstats.Stats | None = None):
    """(games/s, result) of a one-worker tournament; ``vector_only`` plays one game at a time: the
    rules-core loop, every agent through ``act`` (the observation vector), the Python planner."""
    original, engine_games = T.load_agent, T._engine_games
    if vector_only:
        T.load_agent = lambda *a, **k: VectorOnly(_python_agent(*a, **k))  # type: ignore[assignment]
        T._engine_games = lambda: None  # type: ignore[assignment]
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
        T.load_agent, T._engine_games = original, engine_games  # type: ignore[assignment]
        T._WORKER_AGENTS.clear()


def tournaments(games: int, batch: int) -> list[str]:
    lines = ["## Tournaments (one worker, 2 players, seed 0)", "",
             "| match | games | one at a time (games/s) | batched (games/s) | ratio | same games |",
             "|---|---:|---:|---:|---:|---|"]
    for specs in (("heuristic", "greedy"), ("ppo-2p", "heuristic")):
        old, a = tournament_rate(specs, games, 1, vector_only=True)
        tournament_rate(specs, 2, batch, vector_only=False)  # warm-up: numba loads its cached kernels
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
    by_file: dict[str, float] = {}
    for (path, _, _), v in stats.stats.items():  # type: ignore[attr-defined]
        key = path.split("site-packages/")[-1].split("skipbo_env/")[-1] if "/" in path else "builtins (C calls)"
        by_file[key] = by_file.get(key, 0.0) + v[2]
    lines = ["## Where the batched tournaments' time goes (heuristic vs greedy and ppo-2p vs heuristic, "
             "own time under cProfile)", "", "| file | share |", "|---|---:|"]
    for key, t in sorted(by_file.items(), key=lambda kv: kv[1], reverse=True)[:8]:
        lines.append(f"| `{key}` | {100 * t / total:.1f}% |")
    lines += ["", "| function | share |", "|---|---:|"]
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


def engine_alone(config_path: str, steps: int) -> float:
    """Learner steps/s of the batched learner alone (random legal learner actions, the config's
    opponents mix played in every game by its first opponent kind list, autoreset): the env side
    of training with no network."""
    from skipbo_env.training.settings import TrainConfig
    from skipbo_env.vector.learner import LearnerBatch

    cfg = TrainConfig.from_yaml(config_path)
    mix = cfg.opponents.mix
    batches = {name: LearnerBatch(cfg.game, cfg.n_envs, opponents=name, seed=0) for name in mix}
    rng = np.random.default_rng(0)
    total_weight = sum(mix.values())
    elapsed = 0.0
    for name, batch in batches.items():
        share = max(1, int(steps * mix[name] / total_weight) // cfg.n_envs)
        batch.reset()
        start = time.perf_counter()
        for _ in range(share):
            masks = batch.action_masks()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            batch.step(actions)
        elapsed += (time.perf_counter() - start) / (share * cfg.n_envs) * mix[name] / total_weight
    return 1.0 / elapsed


def training(config_path: str, steps: int) -> list[str]:
    """Steps/s of the whole ``train.py`` loop (PPO and its evaluations; no behaviour cloning) and
    of the engine alone, and the PPO loop's split between rollouts and updates (tensorboard's
    ``time/`` counters are not split that way, so the loop is timed by wrapping sb3's methods)."""
    import tempfile

    from sb3_contrib import MaskablePPO

    from skipbo_env.training.commands import main as train_main
    from skipbo_env.training.run import Trainer

    owners = {"collect_rollouts": MaskablePPO, "train": MaskablePPO, "_evaluate": Trainer}
    spent = dict.fromkeys(owners, 0.0)
    originals = {name: getattr(owner, name) for name, owner in owners.items()}

    def timed(name):
        def wrapper(self, *a, **k):
            start = time.perf_counter()
            try:
                return originals[name](self, *a, **k)
            finally:
                spent[name] += time.perf_counter() - start
        return wrapper

    for name, owner in owners.items():
        setattr(owner, name, timed(name))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            train_main(["--config", config_path, "--runs_dir", tmp, "--name", "bench", "--no-progress",
                        "--total_timesteps", str(steps), "--pretrain.teacher", "null",
                        "--eval.every", str(steps // 2), "--checkpoint_every", str(steps)])
            wall = time.perf_counter() - start
    finally:
        for name, fn in originals.items():
            setattr(owners[name], name, fn)
    engine = engine_alone(config_path, min(steps, 65536))
    rollouts = spent["collect_rollouts"] - spent["_evaluate"]  # evaluations run inside sb3's step callback
    other = wall - spent["collect_rollouts"] - spent["train"]
    return [
        f"## Training ({config_path}, {steps:,} PPO steps, evaluations every {steps // 2:,}, no behaviour cloning)",
        "",
        "| what | figure |",
        "|---|---:|",
        f"| whole train.py loop | {steps / wall:,.0f} steps/s |",
        f"| the batched learner alone (random actions, same opponents) | {engine:,.0f} steps/s |",
        f"| train.py / engine alone | {steps / wall / engine:.3f} |",
        f"| rollout collection (policy forward, env step, buffer) | {rollouts:.1f} s ({100 * rollouts / wall:.0f}%) |",
        f"| PPO updates (forward, backward, Adam) | {spent['train']:.1f} s ({100 * spent['train'] / wall:.0f}%) |",
        f"| evaluations | {spent['_evaluate']:.1f} s ({100 * spent['_evaluate'] / wall:.0f}%) |",
        f"| checkpoints, setup, the rest | {other:.1f} s ({100 * other / wall:.0f}%) |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per tournament (default 200)")
    parser.add_argument("--batch", type=int, default=T.DEFAULT_BATCH, help="batched tournaments' batch size")
    parser.add_argument("--aec-steps", type=int, default=20000, help="AEC steps per timed run (default 20000)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["tournaments", "aec", "profile"])
    parser.add_argument("--train", action="store_true", help="also time train.py (minutes)")
    parser.add_argument("--train-config", default="configs/default.yaml")
    parser.add_argument("--train-steps", type=int, default=32768)
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
    if args.train:
        out += training(args.train_config, args.train_steps) + [""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
