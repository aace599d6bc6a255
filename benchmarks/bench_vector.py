"""Speed of the batched engine against the AEC env, and of MaskablePPO training with each.

Prints markdown tables, all measured in one run (the machine may be shared,
so compare the ratios, which are measured side by side):

1. Batched engine, uniform random legal play, default 2-player games:
   decisions per second at batch sizes 1, 64, 256, 1024 and 4096 with the
   legal-action mask computed every decision, and with the mask and the
   mover's observation vector every decision; then 4 and 6 players at 1024.
   Two ways to drive it: ``api`` calls ``masks()``, ``observations()``,
   ``random_legal()``, ``step()`` and ``reset(done)`` from Python once per
   batch step (what a vector env pays); ``fused`` is the compiled rollout
   kernel doing the same per decision without returning to Python.
2. The PettingZoo AEC env (``skipbo_env.aec.raw_env``): ``last()`` (mask
   and observation) and ``step()`` with a random legal action, and the ratio.
3. A profile: nanoseconds per game of each engine call at two batch sizes.
4. MaskablePPO training steps per second: ``SkipBoVecEnv`` against
   ``SubprocVecEnv`` over ``SkipBoSingleEnv`` (random opponents, same
   hyper-parameters). ``--skip-ppo`` leaves it out.

    python benchmarks/bench_vector.py [--seconds 1.5] [--skip-ppo]

A decision is one applied move (plays, discards and end-turns alike). Each
engine figure is the best of three timed repetitions after a warm-up;
compilation is excluded (and cached on disk after the first run).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from skipbo_env.rules import GameConfig
from skipbo_env.vector import BatchEngine


def best_rate(run, reps: int = 3) -> float:
    """Best of ``reps`` calls of ``run() -> (decisions, seconds)``, in decisions per second."""
    return max(d / s for d, s in (run() for _ in range(reps)))


def api_rate(engine: BatchEngine, with_obs: bool, seconds: float) -> float:
    """Decisions/s driving the engine from Python, one call of each kind per batch step."""
    obs = np.empty((engine.batch_size, engine.obs_size), np.float32)

    def run():
        start = time.perf_counter()
        decisions = 0
        while time.perf_counter() - start < seconds:
            engine.masks()
            if with_obs:
                engine.observations(out=obs)
            actions = engine.random_legal()
            engine.step(actions)
            decisions += engine.batch_size
            done = engine.done
            if done.any():
                engine.reset(done)
        return decisions, time.perf_counter() - start

    run()
    return best_rate(run)


def fused_rate(engine: BatchEngine, with_obs: bool, seconds: float) -> float:
    """Decisions/s of the compiled rollout kernel (masks, optional observations, random pick, apply, redeal)."""
    rounds = 1

    def run():
        start = time.perf_counter()
        engine.play_random(rounds, with_obs)
        return rounds * engine.batch_size, time.perf_counter() - start

    elapsed = run()[1]  # size the timed runs to about ``seconds`` each
    while elapsed < seconds / 20:
        rounds *= 4
        elapsed = run()[1]
    rounds = max(1, int(rounds * seconds / elapsed))
    return best_rate(run)


def aec_rate(num_players: int, seconds: float) -> float:
    """Steps/s of the AEC env under random legal play (``last()`` then ``step()``)."""
    from skipbo_env.aec import raw_env

    env = raw_env(num_players=num_players)
    rng = np.random.default_rng(0)

    def run():
        steps = 0
        start = time.perf_counter()
        env.reset(seed=int(rng.integers(2**31)))
        while time.perf_counter() - start < seconds:
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.reset(seed=int(rng.integers(2**31)))
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        return steps, time.perf_counter() - start

    return best_rate(run)


def profile(engine: BatchEngine, seconds: float) -> dict[str, float]:
    """Nanoseconds per game of each call of the api loop (with observations), summed over ``seconds``."""
    obs = np.empty((engine.batch_size, engine.obs_size), np.float32)
    names = ("masks()", "observations()", "random_legal()", "step()", "done check + reset(done)")
    totals = dict.fromkeys(names, 0.0)
    games = 0
    clock = time.perf_counter
    end = clock() + seconds
    while clock() < end:
        t0 = clock()
        engine.masks()
        t1 = clock()
        engine.observations(out=obs)
        t2 = clock()
        actions = engine.random_legal()
        t3 = clock()
        engine.step(actions)
        t4 = clock()
        done = engine.done
        if done.any():
            engine.reset(done)
        t5 = clock()
        for name, dt in zip(names, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
            totals[name] += dt
        games += engine.batch_size
    return {name: total / games * 1e9 for name, total in totals.items()}


def ppo_rate(kind: str, n_envs: int, timesteps: int) -> float:
    """MaskablePPO training steps/s (``model.learn``), environment construction excluded."""
    import torch
    from sb3_contrib import MaskablePPO

    config = GameConfig(num_players=2)
    if kind == "vector":
        from skipbo_env.vector import make_vec_env

        env = make_vec_env(config, n_envs, opponents="random", seed=0)
    else:
        from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
        from stable_baselines3.common.vec_env import SubprocVecEnv

        from skipbo_env.single import SkipBoSingleEnv

        env = sb3_make_vec_env(
            SkipBoSingleEnv, n_envs=n_envs, seed=0, vec_env_cls=SubprocVecEnv,
            env_kwargs={"num_players": 2, "opponents": "random"},
        )
    torch.manual_seed(0)
    model = MaskablePPO("MlpPolicy", env, n_steps=max(16, 2048 // n_envs), batch_size=256, n_epochs=4,
                        seed=0, device="cpu", verbose=0)
    model.learn(n_envs * model.n_steps)  # warm-up (compilation, process start)
    start = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    rate = timesteps / (time.perf_counter() - start)
    env.close()
    return rate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="rough time budget per repetition")
    parser.add_argument("--skip-ppo", action="store_true", help="leave out the MaskablePPO comparison")
    parser.add_argument("--ppo-steps", type=int, default=16384, help="timed MaskablePPO steps per row")
    parser.add_argument(
        "--torch-threads", type=int, default=1,
        help="torch intra-op threads for MaskablePPO (1: spinning torch threads collapse on a busy 2-core machine)",
    )
    args = parser.parse_args(argv)
    print(
        f"batched engine, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{args.seconds:g} s per repetition, best of 3\n"
    )
    rows = [(2, b) for b in (1, 64, 256, 1024, 4096)] + [(4, 1024), (6, 1024)]
    print("| players | batch | masks, api | masks, fused | masks+obs, api | masks+obs, fused |")
    print("|---:|---:|---:|---:|---:|---:|")
    best_masks = best_obs = 0.0
    for n, batch in rows:
        engine = BatchEngine(GameConfig(num_players=n), batch, seed=0)
        rates = [
            api_rate(engine, False, args.seconds), fused_rate(engine, False, args.seconds),
            api_rate(engine, True, args.seconds), fused_rate(engine, True, args.seconds),
        ]
        if n == 2:
            best_masks = max(best_masks, rates[0])
            best_obs = max(best_obs, rates[2])
        print(f"| {n} | {batch} | " + " | ".join(f"{r:,.0f}" for r in rates) + " |", flush=True)

    aec = aec_rate(2, args.seconds)
    print("\n| reference (2 players) | steps/s |")
    print("|---|---:|")
    print(f"| AEC env `raw_env`: last() + step(), random legal | {aec:,.0f} |")
    print(f"| best engine api rate, masks only | {best_masks:,.0f} ({best_masks / aec:,.0f}x the AEC env) |")
    print(f"| best engine api rate, masks + observations | {best_obs:,.0f} ({best_obs / aec:,.0f}x the AEC env) |")

    sizes = (1, 64, 1024, 4096)
    print("\n| profile of the api loop, 2 players: ns per game | " + " | ".join(f"batch {b}" for b in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    profiles = [profile(BatchEngine(GameConfig(), b, seed=1), args.seconds) for b in sizes]
    for name in profiles[0]:
        print(f"| {name} | " + " | ".join(f"{p[name]:,.0f}" for p in profiles) + " |")

    if args.skip_ppo:
        return
    import torch

    torch.set_num_threads(args.torch_threads)
    print(
        f"\n| MaskablePPO (2 players, random opponents, n_steps*n_envs=2048, batch 256, 4 epochs, "
        f"{args.torch_threads} torch thread(s)) | steps/s |"
    )
    print("|---|---:|")
    for kind, n_envs in (("subproc", 2), ("subproc", 8), ("vector", 8), ("vector", 64)):
        label = f"SubprocVecEnv x {n_envs} SkipBoSingleEnv" if kind == "subproc" else f"SkipBoVecEnv, {n_envs} games"
        print(f"| {label} | {ppo_rate(kind, n_envs, args.ppo_steps):,.0f} |", flush=True)


if __name__ == "__main__":
    main()
