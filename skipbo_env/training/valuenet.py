"""The ``value`` recipe: fit a value network (``value-6p``) to the winners of self-play games.

One command (``python train.py --config configs/value_6p.yaml``) runs three steps into
``<runs_dir>/<name>/``:

1. **Positions** (``positions``): ``shards`` × ``games`` games of the heuristic in every seat,
   played to the end inside the batched engine (:class:`~skipbo_env.vector.BatchEngine`, the
   compiled heuristic; shard ``s`` is the engine seeded ``derive_seed(seed, s)``, so the result does
   not depend on ``workers``). At the start of every turn, each running game is sampled with
   chance ``share`` (generator ``derive_seed(seed, 8, s)``), and then the observation of one seat
   drawn at random (the seat to move or not) is kept with its label: 1 if that seat wins the
   game, else 0 (a game stopped at the turn limit has no winner: 0 for every seat). A finished
   shard is written to ``positions/shard_SSS.npz`` (atomically, with the settings that made it);
   running the same command again reuses finished shards and refuses ones made with other
   settings.
2. **Fit** (``fit``): a ReLU network (``hidden``) of the standardized observation, trained with
   the logistic loss on the labels (Adam, weight decay, one thread: same seed, same network). A
   share ``holdout`` of the games (not of positions: positions of one game share its label) is
   held out; per epoch ``fit.csv`` records the held-out loss beside the loss of the base rate, and
   the network of the epoch with the lowest held-out loss is kept (the positions of 60,000 games
   are learned by heart after two epochs).
3. **Export** ``value.safetensors`` (a value file: :mod:`skipbo_env.agents.valuenet`, no pickle)
   and ``metrics.json``: the held-out losses and ``stock_card_gain``, the mean rise of the win
   chance on held-out positions when the seat's own stock holds one card less, whose inverse is
   the search weight at which one stock card counts as much through the value as through the
   stock race (``SearchAgent(value=...)``; 33 for ``value-6p``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..agents.netfile import MLP
from ..agents.registry import derive_seed
from ..agents.valuenet import write_value_net
from ..bots.heuristic import DEFAULT_WEIGHTS
from ..encoding import observation_layout
from ..records import write_bytes_atomic, write_npz_atomic
from ..rules import ConfigError, GameConfig
from .config import YamlConfig, _positive, check_fit, check_recipe_run, open_recipe_run
from .shards import collect_shards

RECIPE = "value"
STD_FLOOR = 0.05
"""Smallest standard deviation of an input in the standardization (rare one-hot entries)."""


@dataclass(frozen=True)
class PositionSettings:
    """The self-play positions (step 1 of the module docstring)."""

    shards: int = 12
    """Seeded batches of games."""
    games: int = 5000
    """Games per shard (one batched engine each)."""
    share: float = 0.1
    """Chance that a running game gives a position at the start of each turn."""
    workers: int = 2
    """Processes that play the shards (results do not depend on it)."""

    def __post_init__(self) -> None:
        _positive("positions.shards", self.shards)
        _positive("positions.games", self.games)
        _positive("positions.workers", self.workers)
        if not 0.0 < self.share <= 1.0:
            raise ConfigError("positions.share", f"must be in (0, 1], got {self.share}")


@dataclass(frozen=True)
class ValueFitSettings:
    """The logistic regression (step 2)."""

    hidden: tuple[int, ...] = (256, 128)
    """Hidden layer sizes (ReLU)."""
    epochs: int = 2
    batch_size: int = 2048
    learning_rate: float = 1e-3
    weight_decay: float = 1e-5
    holdout: float = 0.08
    """Share of the games held out to measure the fit and choose the epoch (0: none, the last epoch)."""

    def __post_init__(self) -> None:
        check_fit(self.hidden, self.epochs, self.batch_size, self.learning_rate, self.weight_decay, self.holdout)


@dataclass(frozen=True)
class ValueNetConfig(YamlConfig):
    """The ``value`` recipe (see the module docstring)."""

    recipe: Literal["value"] = "value"
    """Which recipe ``train.py`` runs: this file's key that tells it from a PPO configuration."""
    name: str = "value_6p"
    """Run name: outputs go to ``<runs_dir>/<name>/``."""
    runs_dir: str = "runs"
    seed: int = 0
    """Seeds the games, the position draws and the fit: same seed, same network (on CPU)."""
    threads: int = 1
    """Torch threads of the fit."""
    game: GameConfig = field(default_factory=lambda: GameConfig(num_players=6))
    positions: PositionSettings = field(default_factory=PositionSettings)
    fit: ValueFitSettings = field(default_factory=ValueFitSettings)

    def __post_init__(self) -> None:
        check_recipe_run(self.name, self.seed, self.threads)


# ---------------------------------------------------------------------------- positions
def _shard_settings(cfg: ValueNetConfig, shard: int) -> str:
    """What makes shard ``shard``'s positions: stored in its file and checked on reuse."""
    pos = cfg.positions
    return json.dumps({"seed": cfg.seed, "shard": shard, "game": cfg.game.to_dict(), "games": pos.games,
                       "share": pos.share, "observation_size": observation_layout(cfg.game).size},
                      sort_keys=True)


def self_play_positions(config: GameConfig, games: int, seed: int, share: float,
                        draw: np.random.Generator) -> dict[str, np.ndarray]:
    """Play ``games`` games of the compiled heuristic in every seat (engine seeded ``seed``) to the
    end; at each turn start keep, with chance ``share`` per running game, one random seat's
    observation. Returns ``obs`` (float32), ``game``, ``seat`` and ``y`` (1: that seat won)."""
    from ..vector import BatchEngine, kernels
    from ..vector.heuristic import plan_caches, weights_vector

    n = config.num_players
    engine = BatchEngine(config, games, seed=seed)
    kinds = np.full(n, 4, np.int64)  # the heuristic in every seat ...
    kinds[0] = 0  # ... but the "learner" seat, where each advance stops: one turn a call
    plans, hstate, expect = plan_caches(games * n)
    weights = weights_vector(DEFAULT_WEIGHTS)
    args = (engine.hot, engine.cold, engine.turn, engine.moves, engine.pcg, engine.cf, engine.arng, kinds)
    obs, game_ids, seats = [], [], []
    while True:
        live = np.flatnonzero(~engine.done)
        if live.size == 0:
            break
        pick = live[draw.random(live.size) < share]
        if pick.size:
            who = draw.integers(0, n, pick.size)
            obs.append(engine.observe_rows(pick, who))
            game_ids.append(pick)
            seats.append(who)
        kernels.learner_advance(*args, (engine.current + 1) % n, weights, plans, hstate, expect)
    size = engine.obs_size
    g = np.concatenate(game_ids) if game_ids else np.zeros(0, np.int64)
    s = np.concatenate(seats) if seats else np.zeros(0, np.int64)
    return {"obs": np.concatenate(obs) if obs else np.zeros((0, size), np.float32),
            "game": g.astype(np.int64), "seat": s.astype(np.int64),
            "y": (engine.winner[g] == s).astype(np.float32)}


def _shard_path(run_dir: Path, shard: int) -> Path:
    return run_dir / "positions" / f"shard_{shard:03d}.npz"


def read_shard(path: Path, settings: str, obs_size: int) -> dict[str, np.ndarray]:
    """A finished shard file, checked against the ``settings`` that should have made it."""
    try:
        with np.load(path, allow_pickle=False) as data:
            out = {k: data[k] for k in ("obs", "game", "seat", "y", "settings")}
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError("positions", f"{path} is not a position shard ({exc}); move it away to play again") from None
    if str(out.pop("settings")) != settings:
        raise ConfigError("positions", f"{path} was made with other settings than this configuration's; "
                                       "use another run name or move the file away")
    n = len(out["y"])
    if (out["obs"].shape != (n, obs_size) or out["obs"].dtype != np.float32 or len(out["game"]) != n
            or len(out["seat"]) != n or not np.all(np.isfinite(out["obs"])) or not np.isin(out["y"], (0, 1)).all()):
        raise ConfigError("positions", f"{path} is corrupt (inconsistent sizes or values); move it away")
    return out


def _shard_job(args: tuple[dict[str, Any], int, str, bool]) -> int:
    data, shard, path, progress = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = ValueNetConfig.from_dict(data)
    pos = cfg.positions
    start = time.monotonic()
    out = self_play_positions(cfg.game, pos.games, derive_seed(cfg.seed, shard), pos.share,
                              np.random.default_rng(derive_seed(cfg.seed, 8, shard)))
    write_npz_atomic(path, {"settings": np.array(_shard_settings(cfg, shard)), **out})
    if progress:
        print(f"positions shard {shard}: {pos.games} games, {len(out['y']):,} positions, "
              f"{time.monotonic() - start:.0f} s", flush=True)
    return shard


def collect_positions(cfg: ValueNetConfig, run_dir: Path, progress: bool = True) -> list[dict[str, np.ndarray]]:
    """Every shard's positions: finished shard files are reused (checked), the others are played."""
    size = observation_layout(cfg.game).size
    return collect_shards([_shard_path(run_dir, s) for s in range(cfg.positions.shards)],
                          lambda s: read_shard(_shard_path(run_dir, s), _shard_settings(cfg, s), size), _shard_job,
                          lambda s: (cfg.to_dict(), s, str(_shard_path(run_dir, s)), progress),
                          cfg.positions.workers, progress, "position shards")


# ---------------------------------------------------------------------------- fit
def fit_value_net(cfg: ValueNetConfig, shards: list[dict[str, np.ndarray]], log: Path | None = None,
                  progress: bool = True) -> tuple[MLP, dict[str, Any]]:
    """Step 2: the network (its output a logit) and the fit's figures (per epoch in ``log``)."""
    import torch

    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    fit = cfg.fit
    X = np.concatenate([s["obs"] for s in shards])
    y = np.concatenate([s["y"] for s in shards])
    keys = np.concatenate([s["game"] + i * (1 << 32) for i, s in enumerate(shards)])
    if len(y) < 2:
        raise ConfigError("positions", f"{len(y)} positions: too few to fit (play more games)")
    rng = np.random.default_rng(derive_seed(cfg.seed, 7))
    games = np.unique(keys)
    held = np.zeros(0, keys.dtype)
    if fit.holdout > 0:
        held = rng.choice(games, max(1, int(len(games) * fit.holdout)), replace=False)
    is_held = np.isin(keys, held)
    val, train = np.flatnonzero(is_held), np.flatnonzero(~is_held)
    if len(train) == 0:
        raise ConfigError("fit.holdout", "holds out every game: nothing left to fit")
    mean = np.zeros(X.shape[1])
    square = np.zeros(X.shape[1])
    for j in range(0, len(train), 65536):
        chunk = X[train[j:j + 65536]].astype(np.float64)
        mean += chunk.sum(axis=0)
        square += (chunk ** 2).sum(axis=0)
    mean /= len(train)
    std = np.maximum(np.sqrt(np.maximum(square / len(train) - mean ** 2, 0.0)), STD_FLOOR)
    mean32, std32 = mean.astype(np.float32), std.astype(np.float32)
    sizes = [X.shape[1], *fit.hidden]
    layers: list[torch.nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(sizes[-1], 1))
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(net.parameters(), lr=fit.learning_rate, weight_decay=fit.weight_decay)
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="sum")
    base_rate = float(np.clip(y[train].mean(), 1e-6, 1 - 1e-6))

    def inputs(idx: np.ndarray) -> Any:
        return torch.from_numpy((X[idx] - mean32) / std32)

    def held_loss() -> float:
        if len(val) == 0:
            return math.nan
        net.eval()
        total = 0.0
        with torch.no_grad():
            for j in range(0, len(val), 8192):
                idx = val[j:j + 8192]
                total += float(loss_fn(net(inputs(idx))[:, 0], torch.from_numpy(y[idx])).item())
        net.train()
        return total / len(val)

    yv = y[val]
    base_loss = float(-np.mean(yv * np.log(base_rate) + (1 - yv) * np.log(1 - base_rate))) if len(val) else math.nan
    lines = ["epoch,seconds,train_loss,heldout_loss,base_rate_loss"]
    best: tuple[float, list[tuple[np.ndarray, np.ndarray]], int] | None = None
    start = time.monotonic()
    steps = math.ceil(len(train) / fit.batch_size)
    for epoch in range(fit.epochs):
        t0 = time.monotonic()
        order = rng.permutation(train)
        total = 0.0
        for k, j in enumerate(range(0, len(order), fit.batch_size)):
            idx = np.sort(order[j:j + fit.batch_size])
            loss = loss_fn(net(inputs(idx))[:, 0], torch.from_numpy(y[idx])) / len(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.item()) * len(idx)
            if progress and (k + 1) % 100 == 0:
                rate = (k + 1) / (time.monotonic() - t0)
                print(f"fit epoch {epoch + 1}/{fit.epochs}: step {k + 1}/{steps}, train loss {total / (j + len(idx)):.4f}, "
                      f"ETA {(steps - k - 1) / rate + (fit.epochs - epoch - 1) * steps / rate:.0f} s", flush=True)
        heldout = held_loss()
        lines.append(f"{epoch + 1},{time.monotonic() - t0:.1f},{total / len(train):.4f},{heldout:.4f},{base_loss:.4f}")
        if progress:
            print(f"fit epoch {epoch + 1}/{fit.epochs}: train loss {total / len(train):.4f}, held-out {heldout:.4f} "
                  f"(base rate {base_loss:.4f}), {time.monotonic() - start:.0f} s", flush=True)
        linears = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())
                   for m in net if isinstance(m, torch.nn.Linear)]
        if best is None or math.isnan(heldout) or heldout < best[0]:
            best = (heldout, linears, epoch + 1)
    assert best is not None  # fit.epochs >= 1
    if log is not None:
        write_bytes_atomic(log, ("\n".join(lines) + "\n").encode())
    value_net = MLP(mean32, std32, best[1])
    summary: dict[str, Any] = {"positions": int(len(y)), "games": int(len(games)), "heldout_positions": int(len(val)),
                               "win_rate": float(y.mean()), "epoch": best[2], "heldout_loss": best[0],
                               "base_rate_loss": base_loss}
    if len(val):
        summary["stock_card_gain"] = stock_card_gain(value_net, X[val[:20000]], cfg.game)
    return value_net, summary


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x.astype(np.float64), -60.0, 60.0)))


def stock_card_gain(net: MLP, obs: np.ndarray, game: GameConfig) -> float:
    """Mean rise of the win chance over the rows of ``obs`` when the seat's own stock holds one card
    less (its ``stock_size`` entry lowered by one card, at least 0; the stock top unchanged)."""
    at = observation_layout(game).start("seat0.stock_size")
    fewer = obs.copy()
    assert game.stock_size is not None  # GameConfig fills in the table's default
    fewer[:, at] = np.maximum(fewer[:, at] - 1.0 / game.stock_size, 0.0)
    return float(np.mean(_sigmoid(net.scores(fewer)) - _sigmoid(net.scores(obs))))


# ---------------------------------------------------------------------------- the run
def run_recipe(cfg: ValueNetConfig, progress: bool = True) -> dict[str, Any]:
    """Steps 1 to 3 into ``<runs_dir>/<name>/``; returns the summary written to ``metrics.json``."""
    run_dir = open_recipe_run(cfg)
    start = time.monotonic()
    shards = collect_positions(cfg, run_dir, progress)
    position_seconds = time.monotonic() - start
    net, fit_summary = fit_value_net(cfg, shards, run_dir / "fit.csv", progress)
    digest = hashlib.sha256(b"".join(_shard_path(run_dir, s).read_bytes()
                                     for s in range(cfg.positions.shards))).hexdigest()
    out = write_value_net(run_dir / "value.safetensors", net, cfg.game, {
        "recipe": RECIPE, "config": cfg.to_dict(), "positions_sha256": digest, "fit": fit_summary})
    summary = {"run_dir": str(run_dir), "agent_file": str(out), "position_seconds": round(position_seconds, 1),
               "seconds": round(time.monotonic() - start, 1), "fit": fit_summary,
               "checks": {"heldout_loss": fit_summary["heldout_loss"], "base_rate_loss": fit_summary["base_rate_loss"],
                          "stock_card_gain": fit_summary.get("stock_card_gain")}}
    write_bytes_atomic(run_dir / "metrics.json", (json.dumps(summary, indent=2) + "\n").encode())
    return summary


CONFIG = ValueNetConfig
"""The recipe's configuration class (``train.py --config`` reads a ``recipe: value`` file as it)."""

__all__ = ["CONFIG", "ValueNetConfig", "collect_positions", "fit_value_net", "run_recipe", "self_play_positions",
           "stock_card_gain"]
