"""What Tianshou's PettingZoo path hands each seat's learner in Skip-Bo (why the Tianshou recipe trains on
``SkipBo-v0`` instead, docs/research/training.md).

Two greedy agents play ``--games`` games of the AEC env through Tianshou's ``PettingZooEnv``, its
``MultiAgentPolicy`` and ``Collector``, as its multi-agent examples do. Then, for each seat, the
transitions that ``MultiAgentOnPolicyAlgorithm`` would give that seat's learner (those of its own moves)
are counted: how many games end in one of them, how many of its wins and losses its rewards show, and
how many have the other seat's observation as the next one. Needs the ``tianshou`` extra. Example::

    python benchmarks/tianshou_marl_probe.py --games 30 --seed 0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from tianshou.algorithm.algorithm_base import Policy  # noqa: E402
from tianshou.algorithm.multiagent.marl import MultiAgentPolicy  # noqa: E402
from tianshou.data import Batch, Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402

import skipbo_env  # noqa: E402
from skipbo_env.agents import make_agent  # noqa: E402
from skipbo_env.rules import GameConfig  # noqa: E402


class ScriptedPolicy(Policy):
    """A Tianshou policy that plays one of the package's scripted agents from the masked observations."""

    def __init__(self, action_space, name: str, seed: int) -> None:
        super().__init__(action_space=action_space)
        self.agent = make_agent(name, GameConfig(num_players=2), seed=seed)

    def forward(self, batch, state=None, **kwargs):
        acts = [self.agent.act({"observation": obs, "action_mask": mask.astype(np.int8)})
                for obs, mask in zip(batch.obs.obs, batch.obs.mask, strict=True)]
        return Batch(act=np.array(acts))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    env = PettingZooEnv(skipbo_env.env(num_players=2))
    policy = MultiAgentPolicy({seat: ScriptedPolicy(env.action_space, "greedy", args.seed + i)
                               for i, seat in enumerate(env.agents)})
    envs = DummyVectorEnv([lambda: PettingZooEnv(skipbo_env.env(num_players=2))])
    envs.seed(args.seed)
    buffer = VectorReplayBuffer(400_000, 1)
    Collector(policy, envs, buffer).collect(n_episode=args.games, reset_before_collect=True)
    data = buffer[buffer.sample_indices(0)]
    mover, after = np.asarray(data.obs.agent_id), np.asarray(data.obs_next.agent_id)
    ended = np.logical_or(data.terminated, data.truncated)
    rewards = np.asarray(data.rew)
    print(f"{int(ended.sum())} games, {len(mover)} moves")
    for index, seat in enumerate(env.agents):
        own = mover == seat
        print(f"{seat}: {int(own.sum())} own moves | games that end on its move: {int((ended & own).sum())} | "
              f"games it won: {int((rewards[ended][:, index] > 0.5).sum())}, lost: "
              f"{int((rewards[ended][:, index] < -0.5).sum())} | +1 in its own transitions: "
              f"{int((rewards[own][:, index] > 0.5).sum())}, -1: {int((rewards[own][:, index] < -0.5).sum())} | "
              f"own moves whose next observation is the other seat's: {int((own & (after != seat)).sum())}")


if __name__ == "__main__":
    main()
