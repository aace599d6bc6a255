"""The ``value`` recipe: fit a value network (``value-6p``) to the winners of self-play games.

``skipbo train --config value_6p`` runs three steps into ``<runs_dir>/<name>/``: positions
(sampled observations of games played to the end, labelled 1 if the seat won, in seeded,
resumable shards), fit (a ReLU network with the logistic loss) and export
(``value.safetensors`` and ``metrics.json`` with ``stock_card_gain``). docs/training.md ("The
turn and value recipes") gives every step.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.executors import ChunkRunner
from ..agents.netfile import MLP
from ..agents.registry import derive_seed
from ..agents.valuenet import write_value_net
from ..encoding import observation_layout
from ..records import write_npz_atomic
from ..rules import ConfigError, GameConfig
from .fitting import FitPlan, fit_mlp, split_holdout
from .recipe_settings import ValueNetConfig
from .shards import ShardLayout, collect_shards, load_shard, open_recipe_run, shards_sha256, write_run_summary

RECIPE = "value"
STD_FLOOR = 0.05
"""Smallest standard deviation of an input in the standardization (rare one-hot entries)."""


# ---------------------------------------------------------------------------- positions
def _shard_settings(cfg: ValueNetConfig, shard: int) -> str:
    """What makes shard ``shard``'s positions: stored in its file and checked on reuse (the field
    only when it is not the heuristic alone, so shards of heuristic self-play keep their settings)."""
    pos = cfg.positions
    settings: dict[str, Any] = {"seed": cfg.seed, "shard": shard, "game": cfg.game.to_dict(), "games": pos.games,
                                "share": pos.share, "observation_size": observation_layout(cfg.game).size}
    if not pos.self_play:
        settings["field"] = list(pos.field)
    return json.dumps(settings, sort_keys=True)


def self_play_positions(config: GameConfig, games: int, seed: int, share: float,
                        draw: np.random.Generator) -> dict[str, np.ndarray]:
    """Play ``games`` games of the compiled heuristic in every seat (engine seeded ``seed``) to the
    end; at each turn start keep, with chance ``share`` per running game, one random seat's
    observation. Returns ``obs`` (float32), ``game``, ``seat`` and ``y`` (1: that seat won)."""
    from ..vector import BatchEngine, PlanCache, SeatKind  # the fast extra (numba), only to play positions

    n = config.num_players
    engine = BatchEngine(config, games, seed=seed)
    plans = PlanCache(games, n)  # the heuristic in every seat
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
        engine.play_until((engine.current + 1) % n, SeatKind.HEURISTIC, plans)  # one turn a call
    size = engine.obs_size
    g = np.concatenate(game_ids) if game_ids else np.zeros(0, np.int64)
    s = np.concatenate(seats) if seats else np.zeros(0, np.int64)
    return {"obs": np.concatenate(obs) if obs else np.zeros((0, size), np.float32),
            "game": g.astype(np.int64), "seat": s.astype(np.int64),
            "y": (engine.winner[g] == s).astype(np.float32)}


def field_positions(config: GameConfig, games: int, seed: int, share: float, field: Sequence[str],
                    draw: np.random.Generator) -> dict[str, np.ndarray]:
    """Play ``games`` games whose seats are drawn from the scripted agents ``field`` (with
    replacement, each game its own draw), on the rules layer. Game ``g`` is the deal
    ``derive_seed(seed, g)``, its seats drawn with ``derive_seed(seed, g, 1)`` and seat ``k``'s agent
    seeded ``derive_seed(seed, g, 2, k)``. At each turn start keep, with chance ``share``, one random
    seat's observation (the same vector the batched engine gives). Returns what
    :func:`self_play_positions` returns."""
    from ..bots import make_bot
    from ..encoding import encode_view
    from ..episode import decisions
    from ..rules import new_game

    n = config.num_players
    agents = {name: [make_bot(name, config) for _ in range(n)] for name in dict.fromkeys(field)}
    obs, game_ids, seats, labels = [], [], [], []
    for g in range(games):
        names = [field[i] for i in np.random.default_rng(derive_seed(seed, g, 1)).integers(len(field), size=n)]
        table = [agents[name][k] for k, name in enumerate(names)]
        for k, agent in enumerate(table):
            agent.seed(derive_seed(seed, g, 2, k))
        state = new_game(config, seed=derive_seed(seed, g))
        kept: list[int] = []
        turn = -1
        for _ in decisions(state, table, names):  # the state is still before the decision's move
            if state.turn != turn:  # a turn starts
                turn = state.turn
                if draw.random() < share:
                    who = int(draw.integers(0, n))
                    obs.append(encode_view(state.view(who)))
                    kept.append(who)
        game_ids += [g] * len(kept)
        seats += kept
        labels += [float(state.winner == who) for who in kept]
    size = observation_layout(config).size
    return {"obs": np.stack(obs).astype(np.float32) if obs else np.zeros((0, size), np.float32),
            "game": np.asarray(game_ids, np.int64), "seat": np.asarray(seats, np.int64),
            "y": np.asarray(labels, np.float32)}


def _shard_path(run_dir: Path, shard: int) -> Path:
    return run_dir / "positions" / f"shard_{shard:03d}.npz"


def shard_layout(cfg: ValueNetConfig) -> ShardLayout:
    """What a position shard of ``cfg`` may hold: at most one position per game and turn start."""
    rows = cfg.positions.games * (min(cfg.game.turn_limit, cfg.game.move_limit) + 1)
    return ShardLayout({"obs": ("<f4", ("rows", observation_layout(cfg.game).size)), "game": ("<i8", ("rows",)),
                        "seat": ("<i8", ("rows",)), "y": ("<f4", ("rows",))}, {"rows": rows})


def read_shard(path: Path, cfg: ValueNetConfig, shard: int) -> dict[str, np.ndarray]:
    """Shard ``shard``'s finished file, checked against the settings of ``cfg`` that should have made it."""
    out = load_shard(path, shard_layout(cfg), _shard_settings(cfg, shard), "positions", "a position shard",
                     "play again")
    game, seat = out["game"], out["seat"]
    if (
        not np.all(np.isfinite(out["obs"]))
        or not np.isin(out["y"], (0, 1)).all()
        or np.any((game < 0) | (game >= cfg.positions.games))
        or np.any((seat < 0) | (seat >= cfg.game.num_players))
    ):
        raise ConfigError("positions", f"{path} is corrupt (values out of range or not finite); move it away")
    return out


def _shard_job(args: tuple[dict[str, Any], int, str, bool]) -> int:
    data, shard, path, progress = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = ValueNetConfig.from_dict(data)
    pos = cfg.positions
    start = time.monotonic()
    draw = np.random.default_rng(derive_seed(cfg.seed, 8, shard))
    if pos.self_play:
        out = self_play_positions(cfg.game, pos.games, derive_seed(cfg.seed, shard), pos.share, draw)
    else:
        out = field_positions(cfg.game, pos.games, derive_seed(cfg.seed, shard), pos.share, pos.field, draw)
    write_npz_atomic(path, {"settings": np.array(_shard_settings(cfg, shard)), **out})
    if progress:
        print(f"positions shard {shard}: {pos.games} games, {len(out['y']):,} positions, "
              f"{time.monotonic() - start:.0f} s", flush=True)
    return shard


def collect_positions(cfg: ValueNetConfig, run_dir: Path, progress: bool = True,
                      runner: ChunkRunner | None = None) -> list[dict[str, np.ndarray]]:
    """Every shard's positions: finished shard files are reused (checked), the others are played, by
    ``runner`` when given, else in ``positions.workers`` processes or on the cluster at ``cfg.ray``."""
    return collect_shards([_shard_path(run_dir, s) for s in range(cfg.positions.shards)],
                          lambda s: read_shard(_shard_path(run_dir, s), cfg, s), _shard_job,
                          lambda s: (cfg.to_dict(), s, str(_shard_path(run_dir, s)), progress),
                          cfg.positions.workers, progress, "position shards", cfg.ray, runner)


# ---------------------------------------------------------------------------- fit
def _standardisation(X: np.ndarray, train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation (at least :data:`STD_FLOOR`) of each input over the rows
    ``train``, summed in float64 by chunks; returned as float32."""
    mean = np.zeros(X.shape[1])
    square = np.zeros(X.shape[1])
    for j in range(0, len(train), 65536):
        chunk = X[train[j:j + 65536]].astype(np.float64)
        mean += chunk.sum(axis=0)
        square += (chunk ** 2).sum(axis=0)
    mean /= len(train)
    std = np.maximum(np.sqrt(np.maximum(square / len(train) - mean ** 2, 0.0)), STD_FLOOR)
    return mean.astype(np.float32), std.astype(np.float32)


def fit_value_net(cfg: ValueNetConfig, shards: list[dict[str, np.ndarray]], log: Path | None = None,
                  progress: bool = True) -> tuple[MLP, dict[str, Any]]:
    """Step 2: the network (its output a logit) and the fit's figures (per epoch in ``log``)."""
    import torch  # the train extra, loaded when a fit runs (the command line's --help stays quick)

    fit = cfg.fit
    X = np.concatenate([s["obs"] for s in shards])
    y = np.concatenate([s["y"] for s in shards])
    keys = np.concatenate([s["game"] + i * (1 << 32) for i, s in enumerate(shards)])
    if len(y) < 2:
        raise ConfigError("positions", f"{len(y)} positions: too few to fit (play more games)")
    rng = np.random.default_rng(derive_seed(cfg.seed, 7))
    val, train = split_holdout(keys, fit.holdout, rng)
    mean32, std32 = _standardisation(X, train)
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="sum")
    base_rate = float(np.clip(y[train].mean(), 1e-6, 1 - 1e-6))
    yv = y[val]
    base_loss = float(-np.mean(yv * np.log(base_rate) + (1 - yv) * np.log(1 - base_rate))) if len(val) else math.nan

    def summed_loss(net: torch.nn.Module, idx: np.ndarray) -> torch.Tensor:
        return loss_fn(net(torch.from_numpy((X[idx] - mean32) / std32))[:, 0], torch.from_numpy(y[idx]))

    def batch_loss(net: torch.nn.Module, idx: np.ndarray) -> tuple[torch.Tensor, int]:
        idx = np.sort(idx)
        return summed_loss(net, idx) / len(idx), len(idx)

    def held_out(net: torch.nn.Module) -> dict[str, float]:
        total = sum(float(summed_loss(net, val[j:j + 8192]).item()) for j in range(0, len(val), 8192))
        return {"heldout_loss": total / len(val), "base_rate_loss": base_loss}

    plan = FitPlan(X.shape[1], fit.hidden, fit.epochs, fit.batch_size, fit.learning_rate, fit.weight_decay,
                   seed=cfg.seed, threads=cfg.threads, keep="heldout_loss",
                   columns=(("heldout_loss", "heldout_loss"), ("base_rate_loss", "base_rate_loss")))
    fitted = fit_mlp(plan, train, val, rng, batch_loss, held_out, log, progress)
    value_net = MLP(mean32, std32, fitted.layers)
    summary: dict[str, Any] = {"positions": int(len(y)), "games": int(len(np.unique(keys))),
                               "heldout_positions": int(len(val)), "win_rate": float(y.mean()),
                               "epoch": fitted.epoch, "heldout_loss": fitted.figures.get("heldout_loss", math.nan),
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
    fewer[:, at] = np.maximum(fewer[:, at] - 1.0 / game.stock_size, 0.0)
    return float(np.mean(_sigmoid(net.scores(fewer)) - _sigmoid(net.scores(obs))))


# ---------------------------------------------------------------------------- the run
def run_recipe(cfg: ValueNetConfig, progress: bool = True) -> dict[str, Any]:
    """Steps 1 to 3 into ``<runs_dir>/<name>/``; returns the summary written to ``metrics.json``."""
    with open_recipe_run(cfg, "positions") as run_dir:
        start = time.monotonic()
        shards = collect_positions(cfg, run_dir, progress)
        position_seconds = time.monotonic() - start
        net, fit_summary = fit_value_net(cfg, shards, run_dir / "fit.csv", progress)
        digest = shards_sha256([_shard_path(run_dir, s) for s in range(cfg.positions.shards)])
        out = write_value_net(run_dir / "value.safetensors", net, cfg.game, {
            "recipe": RECIPE, "config": cfg.to_dict(), "positions_sha256": digest, "fit": fit_summary})
        summary = {"run_dir": str(run_dir), "agent_file": str(out), "position_seconds": round(position_seconds, 1),
                   "seconds": round(time.monotonic() - start, 1), "fit": fit_summary,
                   "checks": {"heldout_loss": fit_summary["heldout_loss"],
                              "base_rate_loss": fit_summary["base_rate_loss"],
                              "stock_card_gain": fit_summary.get("stock_card_gain")}}
        write_run_summary(run_dir, summary)
    return summary


CONFIG = ValueNetConfig
"""The recipe's configuration class (``train.py --config`` reads a ``recipe: value`` file as it)."""

__all__ = ["CONFIG", "ValueNetConfig", "collect_positions", "field_positions", "fit_value_net", "run_recipe",
           "self_play_positions", "stock_card_gain"]
