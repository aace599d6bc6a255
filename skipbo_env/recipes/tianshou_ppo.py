"""PPO for Skip-Bo with Tianshou 2, the action-scoring network as its actor and critic.

The games are ``SkipBo-v0`` envs in Tianshou's ``DummyVectorEnv``; :class:`MaskedObservation` hands
Tianshou ``{"obs": vector, "mask": legal actions}`` and the actor masks illegal actions out. Game
``i`` plays ``opponents[i % len(opponents)]``. Needs the ``tianshou`` extra::

    python -m skipbo_env.recipes.tianshou_ppo --total-timesteps 1000000 --opponents greedy

It writes ``runs/NAME/`` as every PPO recipe does (:mod:`.common`). docs/pipelines.md says why
Tianshou's PettingZoo path is not used.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..extras import require

require("tianshou", "the Tianshou recipe (skipbo_env.recipes.tianshou_ppo)", "tianshou")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402
from tianshou.algorithm import PPO  # noqa: E402
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory, LRSchedulerFactoryLinear  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402
from tianshou.trainer import OnPolicyTrainerParams  # noqa: E402
from tianshou.utils.logger.logger_base import LazyLogger  # noqa: E402
from tianshou.utils.net.common import ActionReprNet  # noqa: E402
from torch import nn  # noqa: E402

from ..nets import ScorerNet  # noqa: E402
from .common import EnvSettings, RunLog, make_net, parse_settings, run_main, setting, start_run  # noqa: E402


@dataclass(frozen=True)
class Args(EnvSettings):
    """Every setting of a run (:class:`~.common.EnvSettings`); each field is a command-line option."""

    name: str = setting("tianshou_ppo", "the run's folder under --runs-dir (it must not exist yet)")


def parse_args(argv: list[str] | None = None) -> Args:
    """The :class:`Args` of a command line (``--help`` lists every field with its text and default)."""
    return parse_settings(Args, argv, "python -m skipbo_env.recipes.tianshou_ppo", __doc__)


# ----------------------------------------------------------------------------------- the env
class MaskedObservation(gym.Wrapper):
    """``SkipBo-v0`` as Tianshou takes a masked env: the observation is ``{"obs": vector, "mask": legal
    actions}`` and the info is empty (Tianshou stacks infos into its buffer and refuses a game's
    ``winners``, which is None-padded until the game ends)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        n = int(env.action_space.n)  # type: ignore[attr-defined]
        self.observation_space = spaces.Dict({"obs": env.observation_space, "mask": spaces.MultiBinary(n)})

    def _observe(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {"obs": obs, "mask": self.env.unwrapped.action_masks()}  # type: ignore[attr-defined]

    def reset(self, **kwargs: Any) -> tuple[dict[str, np.ndarray], dict]:
        obs, _ = self.env.reset(**kwargs)
        return self._observe(obs), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        obs, reward, terminated, truncated, _ = self.env.step(action)
        return self._observe(obs), float(reward), terminated, truncated, {}


def make_envs(args: Args) -> DummyVectorEnv:
    """``num_envs`` masked ``SkipBo-v0`` games, game ``i`` against ``opponents[i % len(opponents)]``, seeded."""
    def make(spec: str) -> Any:
        return lambda: MaskedObservation(gym.make("SkipBo-v0", num_players=args.num_players, opponents=spec,
                                                  reward_shaping=args.reward_shaping, illegal_action="raise"))

    envs = DummyVectorEnv([make(args.opponent_of(i)) for i in range(args.num_envs)])
    envs.seed([args.seed * args.num_envs + i for i in range(args.num_envs)])
    return envs


# ----------------------------------------------------------------------------------- the adapters
class ScorerActor(ActionReprNet):
    """Tianshou's discrete actor over :class:`ScorerNet`: a batch of ``{"obs", "mask"}`` observations in,
    the masked logits out (an illegal action's logit is -1e8: probability 0)."""

    def __init__(self, net: ScorerNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        logits, _ = self.net(torch.as_tensor(obs.obs), torch.as_tensor(obs.mask, dtype=torch.bool))
        return logits, state


class ScorerCritic(nn.Module):
    """Tianshou's critic over the same :class:`ScorerNet` (shared weights): the values of the observations."""

    def __init__(self, net: ScorerNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: Any, **kwargs: Any) -> torch.Tensor:
        return self.net.value(torch.as_tensor(obs.obs))


def make_algorithm(args: Args, net: ScorerNet, envs: DummyVectorEnv) -> PPO:
    """Tianshou's PPO with the network as actor and critic, Adam with the step size annealed linearly."""
    optim = AdamOptimizerFactory(lr=args.learning_rate, eps=1e-5)
    if args.anneal_lr:
        optim = optim.with_lr_scheduler_factory(LRSchedulerFactoryLinear(args.updates, args.rollout, args.rollout))
    policy = DiscreteActorPolicy(actor=ScorerActor(net), action_space=envs.action_space[0],
                                 observation_space=envs.observation_space[0])
    return PPO(policy=policy, critic=ScorerCritic(net), optim=optim, eps_clip=args.clip_coef,
               advantage_normalization=args.norm_adv, vf_coef=args.vf_coef, ent_coef=args.ent_coef,
               max_grad_norm=args.max_grad_norm, gae_lambda=args.gae_lambda, gamma=args.gamma,
               max_batchsize=args.rollout // args.num_minibatches)


# ----------------------------------------------------------------------------------- the run
class ProgressLogger(LazyLogger):
    """Tianshou's logger hook: after each rollout and update (the trainer logs the update first, then
    the rollout), the games won and the losses go to the run's log, which prints, writes and
    evaluates (:class:`~.common.RunLog`)."""

    def __init__(self, args: Args, net: ScorerNet, log: RunLog) -> None:
        super().__init__()
        self.args, self.net, self.log = args, net, log
        self.losses: dict[str, float] = {}

    def log_update_data(self, log_data: dict, step: int) -> None:
        self.losses = {name: float(log_data[key]["mean"]) for name, key in
                       (("policy_loss", "actor_loss"), ("value_loss", "vf_loss"), ("entropy", "ent_loss"))}

    def log_training_data(self, log_data: dict, step: int) -> None:
        self.log.count(np.asarray(log_data["returns"]))
        index = step // self.args.rollout
        lr = self.args.learning_rate * (1.0 - (index - 1) / self.args.updates if self.args.anneal_lr else 1.0)
        self.log.after_update(self.net, index, {**self.losses, "learning_rate": lr}, "+".join(self.args.opponents))


def train(args: Args) -> Path:
    """Train a network as ``args`` says; returns the path of its agent file."""
    run_dir = start_run(args)
    envs = make_envs(args)
    net = make_net(args)
    run_dir.mkdir(parents=True)
    algorithm = make_algorithm(args, net, envs)
    collector: Collector = Collector(algorithm, envs, VectorReplayBuffer(args.rollout, args.num_envs))
    log = RunLog(args, run_dir)
    algorithm.run_training(OnPolicyTrainerParams(
        training_collector=collector, max_epochs=args.updates, epoch_num_steps=args.rollout,
        collection_step_num_env_steps=args.rollout, batch_size=args.rollout // args.num_minibatches,
        update_step_num_repetitions=args.update_epochs, logger=ProgressLogger(args, net, log),
        verbose=False, show_progress=False))
    envs.close()
    return log.finish(net, args.updates * args.rollout)


def main(argv: list[str] | None = None) -> int:
    return run_main(parse_args, train, argv, "tianshou_ppo")


if __name__ == "__main__":
    sys.exit(main())
