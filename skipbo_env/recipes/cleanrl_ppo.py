"""PPO for Skip-Bo in one file, read top to bottom, in the style of CleanRL's ``ppo.py``.

The learner is the action-scoring network (:class:`skipbo_env.nets.ScorerNet`): every legal action
is scored from its own features by one shared network, which is what lets PPO learn this game (a
plain MLP over the observation does not, docs/benchmark.md). The games are the compiled vector env
(``gym.make_vec("SkipBo-v0", ..., vectorization_mode="vector_entry_point")``, the ``fast`` extra); the
legal-action masks come from its ``infos["action_mask"]``, and an illegal action is never sent (the
env is built to raise on one). The opponents are scripted or trained agents by name, or ``self``:
frozen snapshots of the learner. Everything is seeded from ``--seed``: the same seed gives the same
run on the CPU with one torch thread.

    python -m skipbo_env.recipes.cleanrl_ppo --total-timesteps 2000000 --opponents greedy

It writes, under ``runs/NAME/``: ``agent.safetensors`` (an agent file: ``skipbo evaluate --agents
runs/NAME/agent.safetensors greedy`` and ``load_agent`` play it), ``progress.csv`` (a row per
progress line), and with evaluations ``metrics.csv`` (the rows of ``train.py``'s file, which
``benchmarks/learning_curves.py`` reads) and the evaluated networks in ``snapshots/``.
"""

from __future__ import annotations

import argparse
import copy
import csv
import random
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import optim
from torch.distributions import Categorical

from ..agents import load_agent
from ..agents.agentfile import load_scorer_net, write_scorer_net
from ..agents.tournament import lineups, run_tournament
from ..bots.protocol import AgentBase
from ..nets import ScorerNet
from ..rules import ConfigError, GameConfig
from ..training.metrics import append_rows, evaluation_lineup, evaluation_row
from ..vector.learner import ENGINE_OPPONENTS


def _arg(default: Any, doc: str) -> Any:
    """A documented field of :class:`Args` (the text is its ``--help``)."""
    return field(default=default, metadata={"help": doc})


@dataclass(frozen=True)
class Args:
    """Every setting of a run; each field is a command-line option (``--total-timesteps``, ...)."""

    name: str = _arg("cleanrl_ppo", "the run's folder under --runs-dir (it must not exist yet)")
    runs_dir: str = _arg("runs", "where run folders go")
    seed: int = _arg(0, "seeds the env, the network, the sampling and the opponent draws")
    threads: int = _arg(1, "torch threads (one thread: the same seed gives the same run)")
    num_players: int = _arg(2, "players at the table (2..6); the learner holds one seat")
    opponents: tuple[str, ...] = _arg(("greedy",), "opponents, one drawn per rollout for every other seat: "
                                      "agent names (greedy, heuristic, ppo-2p, an agent file, ...) or self "
                                      "(a frozen snapshot of the learner)")
    selfplay_every: int = _arg(250_000, "steps between two snapshots of the learner for the self opponent")
    reward_shaping: bool = _arg(True, "+0.01 for every card played off the own stock, on top of +1/-1 per game")
    total_timesteps: int = _arg(2_000_000, "learner decisions to train for, summed over the games")
    num_envs: int = _arg(128, "games played at once")
    num_steps: int = _arg(64, "decisions per game in one rollout (a rollout is num_envs * num_steps)")
    learning_rate: float = _arg(1e-3, "Adam's step size")
    anneal_lr: bool = _arg(True, "decrease the step size linearly to 0 over the run")
    gamma: float = _arg(0.995, "discount per decision (a game is about 100 of the learner's)")
    gae_lambda: float = _arg(0.95, "lambda of the generalized advantage estimate")
    num_minibatches: int = _arg(8, "minibatches per epoch (they must divide the rollout)")
    update_epochs: int = _arg(2, "passes over each rollout")
    norm_adv: bool = _arg(True, "normalize the advantages per minibatch")
    clip_coef: float = _arg(0.2, "PPO's ratio clip")
    clip_vloss: bool = _arg(False, "clip the value loss as the ratio is clipped")
    ent_coef: float = _arg(0.01, "weight of the entropy bonus")
    vf_coef: float = _arg(0.5, "weight of the value loss")
    max_grad_norm: float = _arg(0.5, "clip the gradient's global norm")
    target_kl: float | None = _arg(None, "stop a rollout's epochs once the approximate KL passes this")
    context_arch: tuple[int, ...] = _arg((256, 256), "context MLP widths of the network")
    scorer_arch: tuple[int, ...] = _arg((64, 32), "action-scoring MLP widths")
    value_arch: tuple[int, ...] = _arg((256, 256), "value MLP widths")
    init_from: str | None = _arg(None, "start from these weights: a scorer agent file or a shipped one "
                                 "(ppo-2p-plus, ...); its sizes replace the three above")
    eval_every: int = _arg(0, "steps between evaluations (0: none; the final network is always written)")
    eval_games: int = _arg(400, "games per evaluation and opponent, seat-balanced on paired deals")
    eval_agents: tuple[str, ...] = _arg(("greedy", "heuristic"), "the evaluation's opponents")
    eval_seed: int = _arg(12345, "the evaluation's deals (the same at every evaluation)")
    log_every: int = _arg(10, "rollouts between two progress lines")

    def __post_init__(self) -> None:
        for name in ("threads", "total_timesteps", "num_envs", "num_steps", "num_minibatches", "update_epochs",
                     "eval_games", "log_every", "selfplay_every"):
            _check(name, getattr(self, name), lambda v: type(v) is int and v >= 1, "an integer >= 1")
        for name in ("seed", "eval_every", "eval_seed"):
            _check(name, getattr(self, name), lambda v: type(v) is int and v >= 0, "an integer >= 0")
        positive = lambda v: type(v) in (int, float) and 0 < v < float("inf")  # noqa: E731
        for name in ("learning_rate", "clip_coef", "max_grad_norm"):
            _check(name, getattr(self, name), positive, "a finite number > 0")
        for name in ("ent_coef", "vf_coef"):
            _check(name, getattr(self, name), lambda v: type(v) in (int, float) and 0 <= v < float("inf"),
                   "a finite number >= 0")
        for name in ("gamma", "gae_lambda"):
            _check(name, getattr(self, name), lambda v: type(v) in (int, float) and 0 <= v <= 1, "a number in 0..1")
        _check("target_kl", self.target_kl, lambda v: v is None or positive(v), "a finite number > 0 or None")
        for name in ("context_arch", "scorer_arch", "value_arch"):
            _check(name, getattr(self, name), lambda v: len(v) > 0 and all(type(w) is int and w > 0 for w in v),
                   "a non-empty list of positive layer widths")
        for name in ("opponents", "eval_agents"):
            _check(name, getattr(self, name), lambda v: len(v) > 0 and all(isinstance(s, str) and s for s in v),
                   "a non-empty list of agent names")
        _check("name", self.name, lambda v: v and Path(v).name == v and v not in (".", ".."), "a folder name")
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise ConfigError("num_minibatches", f"must divide the rollout of num_envs * num_steps = "
                                                 f"{self.num_envs * self.num_steps} decisions, got {self.num_minibatches}")
        plan = len(lineups(self.game.num_teams, self.game))  # checks num_players
        _check("eval_games", self.eval_games, lambda v: v % plan == 0, f"a multiple of {plan} (the seatings of a deal)")

    @property
    def game(self) -> GameConfig:
        return GameConfig(num_players=self.num_players)


def _check(name: str, value: Any, ok: Any, what: str) -> None:
    """Raise ConfigError naming ``name`` unless ``ok(value)``."""
    if not ok(value):
        raise ConfigError(name, f"must be {what}, got {value!r}")


def parse_args(argv: list[str] | None = None) -> Args:
    """The :class:`Args` of a command line (``--help`` lists every field with its text and default)."""
    parser = argparse.ArgumentParser(prog="python -m skipbo_env.recipes.cleanrl_ppo", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    scalar = {"int": int, "float": float, "str": str, "float | None": float, "str | None": str}
    for f in fields(Args):
        flag, doc = "--" + f.name.replace("_", "-"), f.metadata["help"]
        if f.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=doc)
        elif str(f.type).startswith("tuple["):
            kind = int if "int" in str(f.type) else str
            parser.add_argument(flag, nargs="+", type=kind, default=f.default, metavar=kind.__name__.upper(), help=doc)
        else:
            parser.add_argument(flag, type=scalar[str(f.type)], default=f.default, help=doc)
    values = vars(parser.parse_args(argv))
    try:
        settings: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
        return Args(**settings)
    except ConfigError as exc:
        parser.error(str(exc))
        raise  # parser.error exits


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


def collect(envs: Any, net: ScorerNet, buf: Rollout, state: dict[str, torch.Tensor], tally: dict[str, int]) -> None:
    """Play ``num_steps`` decisions in every game with the current policy into ``buf``. ``state``
    holds the next observation, mask and done flag (updated); ``tally`` counts the finished games
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
        tally["games"] += int(ended.sum())
        tally["wins"] += int((reward[ended] > 0.5).sum())
        buf.rewards[t] = torch.as_tensor(reward, dtype=torch.float32)
        state["obs"] = torch.as_tensor(obs)
        state["mask"] = torch.as_tensor(infos["action_mask"] != 0)
        state["done"] = torch.as_tensor(ended, dtype=torch.float32)


def advantages(net: ScorerNet, buf: Rollout, state: dict[str, torch.Tensor], args: Args) -> tuple[torch.Tensor, torch.Tensor]:
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
    stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")}
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


# ----------------------------------------------------------------------------------- evaluation
def evaluate(net: ScorerNet, args: Args, run_dir: Path, step: int, wall: float) -> str:
    """Write the network to ``snapshots/`` and play ``eval_games`` seat-balanced games against each
    of ``eval_agents`` (the tournament of ``skipbo evaluate``, in this process); the rows go to
    ``metrics.csv``. Returns a summary for the progress line."""
    path = write_scorer_net(run_dir / "snapshots" / f"agent_{step:010d}.safetensors", net, args.game,
                            source=args.name, timesteps=step)
    rows = []
    with torch.random.fork_rng(devices=[]):  # loading and playing leave the training's generator alone
        for opponent in args.eval_agents:
            result = run_tournament(evaluation_lineup(str(path), opponent, args.game), args.game,
                                    games=args.eval_games, seed=args.eval_seed, workers=1)
            rows.append(evaluation_row(result, step, wall, 0, opponent))
    append_rows(run_dir / "metrics.csv", rows)
    return ", ".join(f"{r['opponent']} {r['win_rate']:.1%}" for r in rows)


PROGRESS_FIELDS = ("step", "wall_seconds", "steps_per_second", "games", "win_rate", "policy_loss", "value_loss",
                   "entropy", "approx_kl", "clip_fraction", "learning_rate")
"""Columns of ``progress.csv``: one row per progress line (``games`` and ``win_rate``: the training
games finished since the previous row)."""


def log_progress(run_dir: Path, row: dict[str, Any], args: Args, opponent: str) -> None:
    """Print a progress line (rate and ETA) and append it to ``progress.csv``."""
    path = run_dir / "progress.csv"
    new = not path.exists()
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=PROGRESS_FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)
    eta = (args.total_timesteps - row["step"]) / max(row["steps_per_second"], 1e-9)
    print(f"step {row['step']:,}/{args.total_timesteps:,} | {row['steps_per_second']:,.0f} steps/s | "
          f"ETA {eta / 60:.1f} min | vs {opponent}: won {row['win_rate']:.1%} of {row['games']} games | "
          f"pg {row['policy_loss']:.4f} v {row['value_loss']:.4f} ent {row['entropy']:.3f} "
          f"kl {row['approx_kl']:.4f} clip {row['clip_fraction']:.3f}", flush=True)


# ----------------------------------------------------------------------------------- the run
def make_run(args: Args) -> tuple[Path, Any, ScorerNet]:
    """Seed everything, make the run folder, the vector env and the network."""
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    run_dir = Path(args.runs_dir) / args.name
    if run_dir.exists():
        raise ConfigError("name", f"{run_dir} exists already; choose another name or remove it")
    envs = gym.make_vec("SkipBo-v0", num_envs=args.num_envs, vectorization_mode="vector_entry_point",
                        num_players=args.num_players, opponents="random", reward_shaping=args.reward_shaping,
                        illegal_action="raise", seed=args.seed)
    if args.init_from is not None:
        net = load_scorer_net(args.init_from, args.game)[0].train()
    else:
        net = ScorerNet.for_game(args.game, context_arch=args.context_arch, scorer_arch=args.scorer_arch,
                                 value_arch=args.value_arch)
    run_dir.mkdir(parents=True)
    return run_dir, envs, net


def train(args: Args) -> Path:
    """Train a network as ``args`` says; returns the path of its agent file."""
    run_dir, envs, net = make_run(args)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    rng = np.random.default_rng(args.seed)
    opponents = Opponents(args, envs)
    rollout_size = args.num_envs * args.num_steps
    updates = -(-args.total_timesteps // rollout_size)
    buf = Rollout.empty(args.num_steps, args.num_envs, envs.single_observation_space.shape[0],
                        int(envs.single_action_space.n))
    obs, infos = envs.reset(seed=args.seed)
    state = {"obs": torch.as_tensor(obs), "mask": torch.as_tensor(infos["action_mask"] != 0),
             "done": torch.zeros(args.num_envs)}
    tally, start, eval_seconds, mark = {"games": 0, "wins": 0}, time.perf_counter(), 0.0, (0, time.perf_counter())
    for update_index in range(1, updates + 1):
        step = (update_index - 1) * rollout_size
        lr = args.learning_rate * (1.0 - (update_index - 1) / updates if args.anneal_lr else 1.0)
        optimizer.param_groups[0]["lr"] = lr
        opponent = opponents.draw(net, step)
        collect(envs, net, buf, state, tally)
        adv, returns = advantages(net, buf, state, args)
        stats = update(net, optimizer, buf, adv, returns, args, rng)
        step += rollout_size
        if update_index % args.log_every == 0 or update_index == updates:
            now = time.perf_counter()
            rate = (step - mark[0]) / max(now - mark[1], 1e-9)
            log_progress(run_dir, {"step": step, "wall_seconds": round(now - start, 1), "steps_per_second": round(rate, 1),
                                   "games": tally["games"], "win_rate": tally["wins"] / max(tally["games"], 1),
                                   **stats, "learning_rate": lr}, args, opponent)
            tally, mark = {"games": 0, "wins": 0}, (step, time.perf_counter())
        if args.eval_every and (step // args.eval_every > (step - rollout_size) // args.eval_every or update_index == updates):
            began = time.perf_counter()
            summary = evaluate(net, args, run_dir, step, began - start)
            eval_seconds += time.perf_counter() - began
            print(f"evaluation at {step:,} steps ({(began - start) / 60:.1f} min): {summary}", flush=True)
            mark = (mark[0], mark[1] + time.perf_counter() - began)  # the rate counts training time only
    envs.close()
    path = write_scorer_net(run_dir / "agent.safetensors", net, args.game, source=args.name, timesteps=step)
    total = time.perf_counter() - start
    print(f"wrote {path}: {step:,} steps in {total / 60:.1f} min ({eval_seconds / 60:.1f} min of it evaluating)", flush=True)
    return path


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        train(args)
    except ConfigError as exc:
        print(f"cleanrl_ppo: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
