"""What the PPO recipes share: settings, command line, run folder, network and bookkeeping.

Each recipe (:mod:`.cleanrl_ppo`, :mod:`.tianshou_ppo`, :mod:`.torchrl_ppo`) subclasses
:class:`PPOSettings` with its own ``Args`` and writes the same files under ``runs/NAME/``:
``agent.safetensors`` (an agent file), ``progress.csv`` (a row per progress line) and, with
evaluations, ``metrics.csv`` (``train.py``'s rows) and the evaluated networks in ``snapshots/``.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..agents.agentfile import load_scorer_net, write_scorer_net
from ..agents.tournament import lineups, run_tournament
from ..nets import ScorerNet
from ..rules import ConfigError, GameConfig
from ..training.metrics import append_rows, evaluation_lineup, evaluation_row


def setting(default: Any, doc: str) -> Any:
    """A documented settings field (the text is its ``--help``)."""
    return field(default=default, metadata={"help": doc})


def check(name: str, value: Any, ok: Any, what: str) -> None:
    """Raise ConfigError naming ``name`` unless ``ok(value)``."""
    if not ok(value):
        raise ConfigError(name, f"must be {what}, got {value!r}")


@dataclass(frozen=True)
class PPOSettings:
    """The settings every PPO recipe has; each field is a command-line option (``--total-timesteps``, ...)."""

    name: str = setting("ppo", "the run's folder under --runs-dir (it must not exist yet)")
    runs_dir: str = setting("runs", "where run folders go")
    seed: int = setting(0, "seeds the env, the network, the sampling and the opponents")
    threads: int = setting(1, "torch threads (one thread: the same seed gives the same run)")
    num_players: int = setting(2, "players at the table (2..6); the learner holds one seat")
    opponents: tuple[str, ...] = setting(("greedy",), "opponents in every other seat: agent names (greedy, "
                                         "heuristic, ppo-2p, an agent file, ...)")
    reward_shaping: bool = setting(True, "+0.01 for every card played off the own stock, on top of +1/-1 per game")
    total_timesteps: int = setting(2_000_000, "learner decisions to train for, summed over the games")
    num_envs: int = setting(128, "games played at once")
    num_steps: int = setting(64, "decisions per game in one rollout (a rollout is num_envs * num_steps)")
    learning_rate: float = setting(1e-3, "Adam's step size")
    anneal_lr: bool = setting(True, "decrease the step size linearly to 0 over the run")
    gamma: float = setting(0.995, "discount per decision (a game is about 100 of the learner's)")
    gae_lambda: float = setting(0.95, "lambda of the generalized advantage estimate")
    num_minibatches: int = setting(8, "minibatches per epoch (they must divide the rollout)")
    update_epochs: int = setting(2, "passes over each rollout")
    norm_adv: bool = setting(True, "normalize the advantages per minibatch")
    clip_coef: float = setting(0.2, "PPO's ratio clip")
    ent_coef: float = setting(0.01, "weight of the entropy bonus")
    vf_coef: float = setting(0.5, "weight of the value loss")
    max_grad_norm: float = setting(0.5, "clip the gradient's global norm")
    context_arch: tuple[int, ...] = setting((256, 256), "context MLP widths of the network")
    scorer_arch: tuple[int, ...] = setting((64, 32), "action-scoring MLP widths")
    value_arch: tuple[int, ...] = setting((256, 256), "value MLP widths")
    init_from: str | None = setting(None, "start from these weights: a scorer agent file or a shipped one "
                                    "(ppo-2p-plus, ...); its sizes replace the three above")
    eval_every: int = setting(0, "steps between evaluations (0: none; the final network is always written)")
    eval_games: int = setting(400, "games per evaluation and opponent, seat-balanced on paired deals")
    eval_agents: tuple[str, ...] = setting(("greedy", "heuristic"), "the evaluation's opponents")
    eval_seed: int = setting(12345, "the evaluation's deals (the same at every evaluation)")
    log_every: int = setting(10, "rollouts between two progress lines")

    def __post_init__(self) -> None:
        for name in ("threads", "total_timesteps", "num_envs", "num_steps", "num_minibatches", "update_epochs",
                     "eval_games", "log_every"):
            check(name, getattr(self, name), lambda v: type(v) is int and v >= 1, "an integer >= 1")
        for name in ("seed", "eval_every", "eval_seed"):
            check(name, getattr(self, name), lambda v: type(v) is int and v >= 0, "an integer >= 0")
        for name in ("learning_rate", "clip_coef", "max_grad_norm"):
            check(name, getattr(self, name), _positive, "a finite number > 0")
        for name in ("ent_coef", "vf_coef"):
            check(name, getattr(self, name), lambda v: type(v) in (int, float) and 0 <= v < float("inf"),
                  "a finite number >= 0")
        for name in ("gamma", "gae_lambda"):
            check(name, getattr(self, name), lambda v: type(v) in (int, float) and 0 <= v <= 1, "a number in 0..1")
        for name in ("context_arch", "scorer_arch", "value_arch"):
            check(name, getattr(self, name), lambda v: len(v) > 0 and all(type(w) is int and w > 0 for w in v),
                  "a non-empty list of positive layer widths")
        for name in ("opponents", "eval_agents"):
            check(name, getattr(self, name), lambda v: len(v) > 0 and all(isinstance(s, str) and s for s in v),
                  "a non-empty list of agent names")
        check("name", self.name, lambda v: v and Path(v).name == v and v not in (".", ".."), "a folder name")
        if self.rollout % self.num_minibatches:
            raise ConfigError("num_minibatches", f"must divide the rollout of num_envs * num_steps = "
                                                 f"{self.rollout} decisions, got {self.num_minibatches}")
        plan = len(lineups(self.game.num_teams, self.game))  # checks num_players
        check("eval_games", self.eval_games, lambda v: v % plan == 0, f"a multiple of {plan} (the seatings of a deal)")

    @property
    def game(self) -> GameConfig:
        return GameConfig(num_players=self.num_players)

    @property
    def rollout(self) -> int:
        """Learner decisions per rollout (``num_envs * num_steps``)."""
        return self.num_envs * self.num_steps

    @property
    def updates(self) -> int:
        """Rollouts (each followed by an update) that ``total_timesteps`` takes, the last one whole."""
        return -(-self.total_timesteps // self.rollout)


@dataclass(frozen=True)
class EnvSettings(PPOSettings):
    """:class:`PPOSettings` of the recipes that play ``SkipBo-v0`` envs, the opponents inside each: game
    ``i`` plays ``opponents[i % len(opponents)]`` for the whole run."""

    opponents: tuple[str, ...] = setting(("greedy",), "opponents in every other seat, game i against the i-th "
                                         "(cycling): agent names (greedy, heuristic, ppo-2p, an agent file, ...)")
    total_timesteps: int = setting(1_000_000, "learner decisions to train for, summed over the games")

    def __post_init__(self) -> None:
        super().__post_init__()
        check("opponents", self.opponents, lambda v: "self" not in v,
              "agent names or files (self-play is cleanrl_ppo's)")

    def opponent_of(self, game: int) -> str:
        """The opponent spec of game ``game``."""
        return self.opponents[game % len(self.opponents)]


def _positive(value: Any) -> bool:
    return type(value) in (int, float) and 0 < value < float("inf")


def parse_settings(cls: type, argv: list[str] | None, prog: str, doc: str | None) -> Any:
    """The ``cls`` (a :class:`PPOSettings` dataclass) of a command line; ``--help`` lists every field with
    its text and default. A bad value exits with the usage and the field's message."""
    parser = argparse.ArgumentParser(prog=prog, description=(doc or "").split("\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    scalar = {"int": int, "float": float, "str": str, "float | None": float, "str | None": str}
    for f in fields(cls):
        flag, text = "--" + f.name.replace("_", "-"), f.metadata["help"]
        if f.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=text)
        elif str(f.type).startswith("tuple["):
            kind = int if "int" in str(f.type) else str
            parser.add_argument(flag, nargs="+", type=kind, default=f.default, metavar=kind.__name__.upper(), help=text)
        else:
            parser.add_argument(flag, type=scalar[str(f.type)], default=f.default, help=text)
    values = vars(parser.parse_args(argv))
    try:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})
    except ConfigError as exc:
        parser.error(str(exc))
        raise  # parser.error exits


def run_main(parse: Callable[[list[str] | None], Any], train: Callable[[Any], Path], argv: list[str] | None,
             prog: str) -> int:
    """A recipe's command: parse ``argv``, train; a ConfigError found on the way (an existing run folder,
    say) is one line on stderr and exit status 2."""
    args = parse(argv)
    try:
        train(args)
    except ConfigError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0


def start_run(args: PPOSettings) -> Path:
    """Seed Python's, numpy's and torch's generators, set torch's threads, and return the run's folder
    (not made yet: :func:`make_net` may still fail). Raises ConfigError if it exists."""
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    run_dir = Path(args.runs_dir) / args.name
    if run_dir.exists():
        raise ConfigError("name", f"{run_dir} exists already; choose another name or remove it")
    return run_dir


def make_net(args: PPOSettings) -> ScorerNet:
    """The network to train: ``init_from``'s weights, or fresh ones of the settings' sizes."""
    if args.init_from is not None:
        return load_scorer_net(args.init_from, args.game)[0].train()
    return ScorerNet.for_game(args.game, context_arch=args.context_arch, scorer_arch=args.scorer_arch,
                              value_arch=args.value_arch)


def evaluate(net: ScorerNet, args: PPOSettings, run_dir: Path, step: int, wall: float) -> str:
    """Write the network to ``snapshots/`` and play ``eval_games`` seat-balanced games against each
    of ``eval_agents`` (the tournament of ``skipbo evaluate``, in this process); the rows go to
    ``metrics.csv``. Returns a summary for the progress line."""
    path = write_scorer_net(run_dir / "snapshots" / f"agent_{step:010d}.safetensors", net, args.game,
                            source=args.name, timesteps=step)
    rows = []
    python_state, numpy_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=[]):  # loading and playing leave the training's generators alone
        for opponent in args.eval_agents:
            result = run_tournament(evaluation_lineup(str(path), opponent, args.game), args.game,
                                    games=args.eval_games, seed=args.eval_seed, workers=1)
            rows.append(evaluation_row(result, step, wall, 0, opponent))
    random.setstate(python_state)
    np.random.set_state(numpy_state)  # Tianshou shuffles its minibatches with numpy's global generator
    append_rows(run_dir / "metrics.csv", rows)
    return ", ".join(f"{r['opponent']} {r['win_rate']:.1%}" for r in rows)


class RunLog:
    """A run's clock and bookkeeping: the training games won since the last progress line (``tally``,
    which the rollouts count into), progress lines with ``progress.csv``, the evaluations every
    ``eval_every`` steps, and the agent file at the end. Evaluation time is left out of the rates."""

    def __init__(self, args: PPOSettings, run_dir: Path) -> None:
        self.args, self.run_dir = args, run_dir
        self.tally = {"games": 0, "wins": 0}
        self.start = time.perf_counter()
        self.mark = (0, self.start)  # (step, time) of the previous progress line
        self.eval_seconds = 0.0

    def count(self, rewards: np.ndarray) -> None:
        """Count finished games, won when their reward (the last one, or the game's sum) passes 0.5: a win
        pays +1, a loss -1, and stock-card shaping adds at most 0.3 in a game."""
        self.tally["games"] += int(rewards.size)
        self.tally["wins"] += int((rewards > 0.5).sum())

    def after_update(self, net: ScorerNet, update_index: int, stats: dict[str, float], opponent: str) -> None:
        """After rollout ``update_index`` (1-based) and its update: a progress line every ``log_every``
        updates and at the last, an evaluation when a multiple of ``eval_every`` steps was passed."""
        args, step = self.args, update_index * self.args.rollout
        last = update_index == args.updates
        if update_index % args.log_every == 0 or last:
            now = time.perf_counter()
            rate = (step - self.mark[0]) / max(now - self.mark[1], 1e-9)
            self._progress({"step": step, "wall_seconds": round(now - self.start, 1),
                            "steps_per_second": round(rate, 1), "games": self.tally["games"],
                            "win_rate": self.tally["wins"] / max(self.tally["games"], 1), **stats}, opponent)
            self.tally, self.mark = {"games": 0, "wins": 0}, (step, time.perf_counter())
        if args.eval_every and (step // args.eval_every > (step - args.rollout) // args.eval_every or last):
            began = time.perf_counter()
            summary = evaluate(net, args, self.run_dir, step, began - self.start)
            self.eval_seconds += time.perf_counter() - began
            print(f"evaluation at {step:,} steps ({(began - self.start) / 60:.1f} min): {summary}", flush=True)
            self.mark = (self.mark[0], self.mark[1] + time.perf_counter() - began)  # rates count training time only

    def _progress(self, row: dict[str, Any], opponent: str) -> None:
        """Print a progress line (rate and ETA) and append ``row`` to ``progress.csv``."""
        path = self.run_dir / "progress.csv"
        new = not path.exists()
        with open(path, "a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
        eta = (self.args.total_timesteps - row["step"]) / max(row["steps_per_second"], 1e-9)
        losses = " ".join(f"{key} {row[key]:.4g}" for key in list(row)[5:])
        print(f"step {row['step']:,}/{self.args.total_timesteps:,} | {row['steps_per_second']:,.0f} steps/s | "
              f"ETA {eta / 60:.1f} min | vs {opponent}: won {row['win_rate']:.1%} of {row['games']} games | {losses}",
              flush=True)

    def finish(self, net: ScorerNet, step: int) -> Path:
        """Write the final network as ``agent.safetensors`` and print the run's time; returns its path."""
        path = write_scorer_net(self.run_dir / "agent.safetensors", net, self.args.game, source=self.args.name,
                                timesteps=step)
        total = time.perf_counter() - self.start
        print(f"wrote {path}: {step:,} steps in {total / 60:.1f} min ({self.eval_seconds / 60:.1f} min of it "
              "evaluating)", flush=True)
        return path
