"""PPO for Skip-Bo in one file, read top to bottom, in the style of CleanRL's ``ppo.py``.

The learner is the action-scoring network (:class:`skipbo_env.nets.ScorerNet`) on the compiled
vector env (the ``fast`` extra), masks from ``infos["action_mask"]``; opponents are agents by
name or ``self`` (frozen snapshots). Everything is seeded from ``--seed``::

    python -m skipbo_env.recipes.cleanrl_ppo --total-timesteps 2000000 --opponents greedy

It writes ``runs/NAME/`` as every PPO recipe does (:mod:`.common`). See docs/pipelines.md.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import optim
from torch.distributions import Categorical

from ..agents import load_agent
from ..bots.protocol import AgentBase
from ..nets import ScorerNet
from ..vector.learner import ENGINE_OPPONENTS
from .common import PPOSettings, RunLog, check, make_net, parse_settings, run_main, setting, start_run


@dataclass(frozen=True)
class Args(PPOSettings):
    """Every setting of a run (:class:`~.common.PPOSettings`' and three of its own); each field is a
    command-line option (``--total-timesteps``, ...)."""

    name: str = setting("cleanrl_ppo", "the run's folder under --runs-dir (it must not exist yet)")
    opponents: tuple[str, ...] = setting(("greedy",), "opponents, one drawn per rollout for every other seat: "
                                         "agent names (greedy, heuristic, ppo-2p, an agent file, ...) or self "
                                         "(a frozen snapshot of the learner)")
    selfplay_every: int = setting(250_000, "steps between two snapshots of the learner for the self opponent")
    clip_vloss: bool = setting(False, "clip the value loss as the ratio is clipped")
    target_kl: float | None = setting(None, "stop a rollout's epochs once the approximate KL passes this")

    def __post_init__(self) -> None:
        super().__post_init__()
        check("selfplay_every", self.selfplay_every, lambda v: type(v) is int and v >= 1, "an integer >= 1")
        check("target_kl", self.target_kl, lambda v: v is None or (type(v) in (int, float) and 0 < v < float("inf")),
              "a finite number > 0 or None")


def parse_args(argv: list[str] | None = None) -> Args:
    """The :class:`Args` of a command line (``--help`` lists every field with its text and default)."""
    return parse_settings(Args, argv, "python -m skipbo_env.recipes.cleanrl_ppo", __doc__)


# ----------------------------------------------------------------------------------- opponents
class SnapshotOpponent(AgentBase):
    """A frozen copy of the learner in the other seats (self-play): it samples its moves from its
    policy with its own generator, one forward pass for all its games."""

    batched = True

    def __init__(self, net: ScorerNet, seed: int) -> None:
        self.net = copy.deepcopy(net).eval()
        self.generator = torch.Generator().manual_seed(seed)

    def act(self, observation: Any) -> int:
        return int(self.act_batch([observation])[0])

    def act_batch(self, observations: Any) -> np.ndarray:
        obs = torch.as_tensor(np.stack([o["observation"] for o in observations]))
        mask = torch.as_tensor(np.stack([o["action_mask"] for o in observations]) != 0)
        with torch.no_grad():
            logits, _ = self.net(obs, mask)
        return torch.multinomial(torch.softmax(logits, -1), 1, generator=self.generator).squeeze(1).numpy()


class Opponents:
    """Draws the opponent of each rollout (one spec for every other seat of every game)."""

    def __init__(self, args: Args, envs: Any) -> None:
        self.args, self.envs = args, envs
        self.rng = np.random.default_rng(args.seed)
        # agents that play from Python (files, shipped networks, other styles) are loaded once, here;
        # the engine's own (random, greedy, heuristic) are named, and play inside its kernels
        self.loaded = {spec: load_agent(spec, args.game, seed=args.seed + i)
                       for i, spec in enumerate(dict.fromkeys(args.opponents))
                       if spec != "self" and spec not in ENGINE_OPPONENTS}
        self.snapshot: SnapshotOpponent | None = None
        self.snapshot_step = -1
        self.current: Any = None

    def draw(self, net: ScorerNet, step: int) -> str:
        spec = self.args.opponents[int(self.rng.integers(len(self.args.opponents)))]
        chosen: Any = self.loaded.get(spec, spec)
        if spec == "self":
            if self.snapshot is None or step - self.snapshot_step >= self.args.selfplay_every:
                self.snapshot, self.snapshot_step = SnapshotOpponent(net, self.args.seed + step), step
            chosen = self.snapshot
        if chosen is not self.current:
            self.envs.set_opponents(chosen)
            self.current = chosen
        return spec


# ----------------------------------------------------------------------------------- the rollout
@dataclass
class Rollout:
    """One rollout: ``num_steps`` decisions of each of ``num_envs`` games, step-major."""

    obs: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    values: torch.Tensor

    @classmethod
    def empty(cls, steps: int, envs: int, obs_size: int, n_actions: int) -> Rollout:
        z = torch.zeros((steps, envs))
        return cls(torch.zeros((steps, envs, obs_size)), torch.zeros((steps, envs, n_actions), dtype=torch.bool),
                   torch.zeros((steps, envs), dtype=torch.long), z.clone(), z.clone(), z.clone(), z.clone())


def collect(envs: Any, net: ScorerNet, buf: Rollout, state: dict[str, torch.Tensor], log: RunLog) -> None:
    """Play ``num_steps`` decisions in every game with the current policy into ``buf``. ``state``
    holds the next observation, mask and done flag (updated); ``log`` counts the finished games
    and the learner's wins among them (a win pays +1, a loss -1, a truncated game 0)."""
    for t in range(buf.obs.shape[0]):
        buf.obs[t], buf.masks[t], buf.dones[t] = state["obs"], state["mask"], state["done"]
        with torch.no_grad():
            logits, value = net(state["obs"], state["mask"])
        dist = Categorical(logits=logits, validate_args=False)
        action = dist.sample()
        if not bool(state["mask"].gather(1, action[:, None]).all()):
            raise RuntimeError("the policy drew an illegal action")  # the masking makes this impossible
        buf.actions[t], buf.logprobs[t], buf.values[t] = action, dist.log_prob(action), value
        obs, reward, terminated, truncated, infos = envs.step(action.numpy())
        ended = terminated | truncated
        log.count(reward[ended])
        buf.rewards[t] = torch.as_tensor(reward, dtype=torch.float32)
        state["obs"] = torch.as_tensor(obs)
        state["mask"] = torch.as_tensor(infos["action_mask"] != 0)
        state["done"] = torch.as_tensor(ended, dtype=torch.float32)


def advantages(
    net: ScorerNet, buf: Rollout, state: dict[str, torch.Tensor], args: Args
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimates and returns of a rollout (a finished game cuts the chain)."""
    with torch.no_grad():
        next_value = net.value(state["obs"])
    adv = torch.zeros_like(buf.rewards)
    last = torch.zeros_like(next_value)
    steps = buf.rewards.shape[0]
    for t in reversed(range(steps)):
        alive = 1.0 - (state["done"] if t == steps - 1 else buf.dones[t + 1])
        following = next_value if t == steps - 1 else buf.values[t + 1]
        delta = buf.rewards[t] + args.gamma * following * alive - buf.values[t]
        last = delta + args.gamma * args.gae_lambda * alive * last
        adv[t] = last
    return adv, adv + buf.values


def update(net: ScorerNet, optimizer: optim.Optimizer, buf: Rollout, adv: torch.Tensor, returns: torch.Tensor,
           args: Args, rng: np.random.Generator) -> dict[str, float]:
    """PPO's clipped update on one rollout: ``update_epochs`` passes of ``num_minibatches`` minibatches."""
    b_obs, b_masks = buf.obs.flatten(0, 1), buf.masks.flatten(0, 1)
    b_actions, b_logprobs, b_values = buf.actions.flatten(), buf.logprobs.flatten(), buf.values.flatten()
    b_adv, b_returns = adv.flatten(), returns.flatten()
    size = b_obs.shape[0]
    minibatch = size // args.num_minibatches
    stats: dict[str, list[float]] = {
        k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")
    }
    for _ in range(args.update_epochs):
        order = torch.as_tensor(rng.permutation(size))
        for start in range(0, size, minibatch):
            mb = order[start:start + minibatch]
            logits, new_value = net(b_obs[mb], b_masks[mb])
            dist = Categorical(logits=logits, validate_args=False)
            log_ratio = dist.log_prob(b_actions[mb]) - b_logprobs[mb]
            ratio = log_ratio.exp()
            with torch.no_grad():
                stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                stats["clip_fraction"].append(float(((ratio - 1.0).abs() > args.clip_coef).float().mean()))
            mb_adv = b_adv[mb]
            if args.norm_adv:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            v_loss = (new_value - b_returns[mb]).square()
            if args.clip_vloss:
                clipped = b_values[mb] + (new_value - b_values[mb]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = torch.max(v_loss, (clipped - b_returns[mb]).square())
            v_loss = 0.5 * v_loss.mean()
            entropy = dist.entropy().mean()
            loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            for key, value in (("policy_loss", pg_loss), ("value_loss", v_loss), ("entropy", entropy)):
                stats[key].append(value.item())
        if args.target_kl is not None and stats["approx_kl"][-1] > args.target_kl:
            break
    return {k: float(np.mean(v)) for k, v in stats.items()}


# ----------------------------------------------------------------------------------- the run
def train(args: Args) -> Path:
    """Train a network as ``args`` says; returns the path of its agent file."""
    run_dir = start_run(args)
    envs: Any = gym.make_vec("SkipBo-v0", num_envs=args.num_envs, vectorization_mode="vector_entry_point",
                             num_players=args.num_players, opponents="random", reward_shaping=args.reward_shaping,
                             illegal_action="raise", seed=args.seed)
    net = make_net(args)
    run_dir.mkdir(parents=True)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    rng = np.random.default_rng(args.seed)
    opponents = Opponents(args, envs)
    log = RunLog(args, run_dir)
    buf = Rollout.empty(args.num_steps, args.num_envs, envs.single_observation_space.shape[0],
                        int(envs.single_action_space.n))
    obs, infos = envs.reset(seed=args.seed)
    state = {"obs": torch.as_tensor(obs), "mask": torch.as_tensor(infos["action_mask"] != 0),
             "done": torch.zeros(args.num_envs)}
    for update_index in range(1, args.updates + 1):
        lr = args.learning_rate * (1.0 - (update_index - 1) / args.updates if args.anneal_lr else 1.0)
        optimizer.param_groups[0]["lr"] = lr
        opponent = opponents.draw(net, (update_index - 1) * args.rollout)
        collect(envs, net, buf, state, log)
        adv, returns = advantages(net, buf, state, args)
        stats = update(net, optimizer, buf, adv, returns, args, rng)
        log.after_update(net, update_index, {**stats, "learning_rate": lr}, opponent)
    envs.close()
    return log.finish(net, args.updates * args.rollout)


def main(argv: list[str] | None = None) -> int:
    return run_main(parse_args, train, argv, "cleanrl_ppo")


if __name__ == "__main__":
    sys.exit(main())
