"""What each training opponent costs: learner steps per second in the batched engine.

A trained learner (``--learner``, default ``ppo-2p``) plays the learner seat of
``--games`` 2-player games of the batched engine (``LearnerBatch``, the engine
behind ``vec_env: batched``) against each opponent in turn, and the table gives
learner decisions per second (the learner's forward passes included, no PPO
update) and the ratio to the heuristic measured in the same run. Scripted
``greedy`` and ``heuristic`` run inside the engine's kernels; ``ppo-2p`` decides
for all games in one forward pass; ``turn-2p`` searches candidate turns from each
game's view (one copy of it per game, so a turn's plan is kept).

    OMP_NUM_THREADS=1 python benchmarks/bench_opponents.py [--steps 60] [--opponents greedy heuristic ppo-2p turn-2p]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

from skipbo_env.agents import load_agent
from skipbo_env.bots import BOTS
from skipbo_env.episode import load_opponent
from skipbo_env.rules import GameConfig
from skipbo_env.vector import LearnerBatch


def steps_per_second(learner, opponent, config: GameConfig, games: int, steps: int, seed: int) -> float:
    """Learner decisions per second over ``steps`` batch steps of ``games`` games (after 5 warm-up steps)."""
    batch = LearnerBatch(config, games, opponent, seed=seed, reward_shaping=True)
    obs = batch.reset()
    start, done = 0.0, 0
    for i in range(steps + 5):
        if i == 5:
            start, done = time.perf_counter(), 0
        masks = batch.action_masks()
        actions = learner.act_batch([{"observation": o, "action_mask": m} for o, m in zip(obs, masks, strict=True)])
        obs = batch.step(np.asarray(actions)).obs
        done += games
    return done / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learner", default="ppo-2p", help="a batched 2-player agent (name or .safetensors file)")
    parser.add_argument("--opponents", nargs="+", default=["greedy", "heuristic", "ppo-2p", "turn-2p"])
    parser.add_argument("--games", type=int, default=128, help="games in the batch (a training run's n_envs)")
    parser.add_argument("--steps", type=int, default=60, help="timed batch steps per opponent")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = GameConfig(num_players=2)
    learner = load_agent(args.learner, config, seed=args.seed)
    if not learner.batched:
        parser.error(f"--learner {args.learner!r} does not decide in batches (a PPO agent does)")
    print(f"python {platform.python_version()}, torch {torch.__version__}, {args.games} games, "
          f"{args.steps} timed steps, learner {args.learner}\n")
    rates: dict[str, float] = {}
    for name in args.opponents:
        opponent = name if name in BOTS else load_opponent(name, config, 0, seed=args.seed)
        rates[name] = steps_per_second(learner, opponent, config, args.games, args.steps, args.seed)
    reference = rates.get("heuristic")
    print("| opponent | learner steps/s | x heuristic |")
    print("|---|---:|---:|")
    for name, rate in rates.items():
        ratio = f"{rate / reference:.3f}x" if reference else "-"
        print(f"| {name} | {rate:,.0f} | {ratio} |")


if __name__ == "__main__":
    main()
