"""PPO for Skip-Bo with TorchRL, the action-scoring network as its actor and critic.

The games are ``SkipBo-v0`` envs in TorchRL's ``GymWrapper`` (the env's ``info["action_mask"]``
read into the tensordict), batched by ``SerialEnv``; a ``MaskedCategorical`` actor draws no
illegal action. Needs the ``torchrl`` extra::

    python -m skipbo_env.recipes.torchrl_ppo --total-timesteps 1000000 --opponents greedy

It writes ``runs/NAME/`` as every PPO recipe does (:mod:`.common`). docs/pipelines.md says why
the compiled vector env is not used here.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..extras import require

require("torchrl", "the TorchRL recipe (skipbo_env.recipes.torchrl_ppo)", "torchrl", "tensordict")

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402
from tensordict import TensorDictBase  # noqa: E402
from tensordict.nn import TensorDictModule  # noqa: E402
from torch import nn, optim  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.data import Binary  # noqa: E402
from torchrl.envs import GymWrapper, SerialEnv  # noqa: E402
from torchrl.envs.libs.gym import default_info_dict_reader  # noqa: E402
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator  # noqa: E402
from torchrl.objectives import ClipPPOLoss  # noqa: E402
from torchrl.objectives.value import GAE  # noqa: E402

from ..encoding import num_actions  # noqa: E402
from ..nets import ScorerNet  # noqa: E402
from .common import EnvSettings, RunLog, make_net, parse_settings, run_main, setting, start_run  # noqa: E402


@dataclass(frozen=True)
class Args(EnvSettings):
    """Every setting of a run (:class:`~.common.EnvSettings`); each field is a command-line option."""

    name: str = setting("torchrl_ppo", "the run's folder under --runs-dir (it must not exist yet)")


def parse_args(argv: list[str] | None = None) -> Args:
    """The :class:`Args` of a command line (``--help`` lists every field with its text and default)."""
    return parse_settings(Args, argv, "python -m skipbo_env.recipes.torchrl_ppo", __doc__)


# ----------------------------------------------------------------------------------- the env
def make_env(args: Args) -> SerialEnv:
    """``num_envs`` ``SkipBo-v0`` games in TorchRL's wrapper, the mask read from the info, game ``i``
    against ``opponents[i % len(opponents)]``, seeded."""
    mask_spec = Binary(num_actions(args.game), dtype=torch.bool)

    def make(spec: str) -> Any:
        def build() -> GymWrapper:
            env = GymWrapper(gym.make("SkipBo-v0", num_players=args.num_players, opponents=spec,
                                      reward_shaping=args.reward_shaping, illegal_action="raise"),
                             categorical_action_encoding=True)
            # the spec given: TorchRL does not step the env with random (illegal) actions to find it
            env.set_info_dict_reader(default_info_dict_reader(["action_mask"], spec=[mask_spec]))
            return env
        return build

    env = SerialEnv(args.num_envs, [make(args.opponent_of(i)) for i in range(args.num_envs)])
    env.set_seed(args.seed * args.num_envs)
    return env


# ----------------------------------------------------------------------------------- the adapters
class MaskedLogits(nn.Module):
    """The network's masked logits (``"observation"``, ``"action_mask"`` -> ``"logits"``), over any
    leading batch dimensions (the collector's ``[envs]``, GAE's ``[envs, steps]``)."""

    def __init__(self, net: ScorerNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        lead = observation.shape[:-1]
        logits, _ = self.net(
            observation.reshape(-1, observation.shape[-1]), action_mask.reshape(-1, action_mask.shape[-1])
        )
        return logits.reshape(*lead, -1)


class Values(nn.Module):
    """The network's values (``"observation"`` -> ``"state_value"``, any leading batch dimensions), the
    same weights as the actor's."""

    def __init__(self, net: ScorerNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return self.net.value(observation.reshape(-1, observation.shape[-1])).reshape(*observation.shape[:-1], 1)


def make_actor_critic(net: ScorerNet) -> tuple[ProbabilisticActor, ValueOperator]:
    """TorchRL's actor (a ``MaskedCategorical`` over the masked logits, the action's log-probability
    kept for PPO) and critic, both over ``net``."""
    logits = TensorDictModule(MaskedLogits(net), in_keys=["observation", "action_mask"], out_keys=["logits"])
    actor = ProbabilisticActor(logits, in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
                               distribution_class=MaskedCategorical, return_log_prob=True)
    return actor, ValueOperator(Values(net), in_keys=["observation"])


# ----------------------------------------------------------------------------------- the update
def update(loss: ClipPPOLoss, optimizer: optim.Optimizer, data: TensorDictBase, args: Args,
           generator: torch.Generator) -> dict[str, float]:
    """PPO's clipped update on one rollout (flat, with advantages): ``update_epochs`` passes of
    ``num_minibatches`` minibatches."""
    size = data.shape[0]
    stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl",
                                                      "clip_fraction")}
    for _ in range(args.update_epochs):
        for minibatch in torch.randperm(size, generator=generator).split(size // args.num_minibatches):
            out = loss(data[minibatch])
            total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
            optimizer.zero_grad()
            total.backward()
            torch.nn.utils.clip_grad_norm_(loss.parameters(), args.max_grad_norm)
            optimizer.step()
            for name, key in (("policy_loss", "loss_objective"), ("value_loss", "loss_critic"), ("entropy", "entropy"),
                              ("approx_kl", "kl_approx"), ("clip_fraction", "clip_fraction")):
                stats[name].append(float(out[key].detach()))
    return {k: sum(v) / len(v) for k, v in stats.items()}


# ----------------------------------------------------------------------------------- the run
def train(args: Args) -> Path:
    """Train a network as ``args`` says; returns the path of its agent file."""
    run_dir = start_run(args)
    env = make_env(args)
    net = make_net(args)
    run_dir.mkdir(parents=True)
    actor, critic = make_actor_critic(net)
    advantage = GAE(gamma=args.gamma, lmbda=args.gae_lambda, value_network=critic, average_gae=False)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=args.clip_coef, entropy_coeff=args.ent_coef,
                       critic_coeff=args.vf_coef, loss_critic_type="l2", normalize_advantage=args.norm_adv,
                       functional=False)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    generator = torch.Generator().manual_seed(args.seed)
    collector = Collector(env, actor, frames_per_batch=args.rollout, total_frames=args.updates * args.rollout,
                          auto_register_policy_transforms=False)
    log = RunLog(args, run_dir)
    for index, data in enumerate(collector, start=1):  # data: [num_envs, num_steps]
        lr = args.learning_rate * (1.0 - (index - 1) / args.updates if args.anneal_lr else 1.0)
        optimizer.param_groups[0]["lr"] = lr
        log.count(data["next", "reward"][data["next", "done"]].numpy())
        with torch.no_grad():
            advantage(data)
        stats = update(loss, optimizer, data.reshape(-1), args, generator)
        collector.update_policy_weights_()
        log.after_update(net, index, {**stats, "learning_rate": lr}, "+".join(args.opponents))
    collector.shutdown()
    return log.finish(net, args.updates * args.rollout)


def main(argv: list[str] | None = None) -> int:
    return run_main(parse_args, train, argv, "torchrl_ppo")


if __name__ == "__main__":
    sys.exit(main())
