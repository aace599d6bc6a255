"""Cost of the two policy networks of train.py: ``mlp`` (sb3's MlpPolicy) and ``scorer``.

Prints, for each, the time of one agent decision (``PPOAgent.act`` on one
observation, single torch thread, as in tournaments) and of one PPO gradient
step (forward and backward of ``evaluate_actions`` on a minibatch), with the
scorer's figures as ratios against the MLP measured in the same run. The scorer is
measured twice: as it runs (only the legal actions scored) and with every action scored
(sb3's full pass, what it computed before).

    python benchmarks/bench_policy.py [--seconds 3] [--batch 1024] [--threads 2]

Networks are the shipped default.yaml sizes (``net_arch`` [256, 256],
``scorer_arch`` [64, 32]), untrained; speed does not depend on the weights.
Observations are real ones from random-play games.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from skipbo_env.agents.ppo import PPOAgent
from skipbo_env.bots import RandomAgent
from skipbo_env.episode import decisions
from skipbo_env.rules import GameConfig, new_game
from skipbo_env.single import SkipBoSingleEnv


def observations(count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` observations and masks met in random-play games (the one game loop)."""
    config = GameConfig()
    obs, masks = [], []
    seed = 0
    while len(obs) < count:
        players = [RandomAgent(config, seed=seed * 10 + s) for s in range(config.num_players)]
        for decision in decisions(new_game(config, seed=seed), players):
            obs.append(decision.observation["observation"])
            masks.append(decision.observation["action_mask"].astype(bool))
            if len(obs) == count:
                break
        seed += 1
    return np.asarray(obs), np.asarray(masks)


def timed(fn, seconds: float) -> float:
    """Mean seconds per call of ``fn`` over about ``seconds``."""
    fn()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        calls += 1
    return (time.perf_counter() - start) / calls


def measure(
    name, policy, kwargs, env, obs, masks, tmp: Path, args, every_row: bool = False
) -> tuple[float, float, int]:
    """(seconds per decision, seconds per gradient step, parameters) of one policy network;
    ``every_row``: the scorer's full pass of sb3's base class, every action scored (what the
    scorer computed before it scored the legal actions only)."""
    import torch  # the train extra (torch, sb3)
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    model = MaskablePPO(policy, env, policy_kwargs=kwargs, seed=0, device="cpu")
    path = tmp / f"{name}.zip"
    model.save(path)
    agent = PPOAgent(path, GameConfig(), allow_pickle=True)  # the model saved just above
    counter = iter(range(10**9))

    def act():
        k = next(counter) % 256
        if every_row:
            logits = agent.logits(obs[k])
            logits[~masks[k]] = -np.inf
            logits.argmax()
        else:
            agent.act({"observation": obs[k], "action_mask": masks[k]})

    torch.set_num_threads(1)
    act_s = timed(act, args.seconds)
    torch.set_num_threads(args.threads)
    x = torch.as_tensor(obs[: args.batch])
    m = masks[: args.batch]
    a = torch.as_tensor(np.array([np.flatnonzero(r)[0] for r in m]))
    net = model.policy
    evaluate = MaskableActorCriticPolicy.evaluate_actions if every_row else type(net).evaluate_actions

    def step():
        values, log_prob, _ = evaluate(net, x, a, action_masks=m)
        loss = -log_prob.mean() + values.pow(2).mean()
        net.optimizer.zero_grad()
        loss.backward()

    step_s = timed(step, args.seconds)
    return act_s, step_s, sum(p.numel() for p in net.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--batch", type=int, default=1024, help="minibatch of the gradient step")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of the gradient step")
    args = parser.parse_args()

    import torch  # the train extra (torch, sb3)

    from skipbo_env.agents.scorer import ScorerPolicy  # the train extra

    obs, masks = observations(max(args.batch, 256))
    env = SkipBoSingleEnv(num_players=2)
    scorer = {"context_arch": [256, 256], "value_arch": [256, 256], "scorer_arch": [64, 32]}
    nets = {
        "mlp": ("MlpPolicy", {"net_arch": [256, 256]}, False),
        "scorer": (ScorerPolicy, scorer, False),
        "scorer, every action scored": (ScorerPolicy, scorer, True),
    }
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (policy, kwargs, every_row) in nets.items():
            rows[name] = measure(name.split(",")[0], policy, kwargs, env, obs, masks, Path(tmp), args, every_row)
    print(f"# policy networks ({platform.processor() or platform.machine()}, torch {torch.__version__})\n")
    print(f"| policy | parameters | one decision (ms) | PPO gradient step, batch {args.batch} (ms) "
          f"| decision vs mlp | gradient step vs mlp |")
    print("|---|---:|---:|---:|---:|---:|")
    base_act, base_step, _ = rows["mlp"]
    for name, (act_s, step_s, params) in rows.items():
        print(f"| {name} | {params:,} | {act_s * 1e3:.2f} | {step_s * 1e3:.1f} | {act_s / base_act:.1f}x "
              f"| {step_s / base_step:.1f}x |")


if __name__ == "__main__":
    main()
