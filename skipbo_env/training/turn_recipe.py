"""The ``turnnet`` recipe: teach the turn network (``turn-2p``) the search agent's scores.

``skipbo train --config turnnet_2p`` runs three steps into ``<runs_dir>/<name>/``: labels (the
teacher search scores the heuristic planner's candidate turns in seeded, resumable shards),
fit (a ReLU network regresses each candidate's score relative to its position's mean) and
export and check (``turnnet.safetensors``, then a tournament into ``metrics.json``).
docs/training.md ("The turn and value recipes") gives every step.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.executors import ChunkRunner
from ..agents.modelfile import CheckpointError
from ..agents.registry import derive_seed, load_agent
from ..agents.search import SearchAgent, parse_search_spec
from ..agents.shipped import SHIPPED, shipped_agent_path
from ..agents.tournament import run_tournament
from ..agents.turnnet import (
    FEATURE_SIZE,
    TurnNet,
    candidate_features,
    is_turn_agent_file,
    load_turn_net,
    write_turn_net,
)
from ..episode import decisions
from ..records import write_npz_atomic
from ..rules import ConfigError, new_game
from .fitting import FitPlan, fit_mlp, split_holdout
from .recipe_settings import TurnNetConfig
from .settings_io import recipe_of
from .shards import ShardLayout, collect_shards, load_shard, open_recipe_run, shards_sha256, write_run_summary

RECIPE = "turnnet"


def is_recipe_file(path: str | Path) -> bool:
    """True when the YAML file ``path`` is a ``turnnet`` recipe (``recipe: turnnet`` at its top);
    False for anything else, including files that cannot be read (the PPO loader reports those)."""
    return recipe_of(path) == RECIPE


# ---------------------------------------------------------------------------- labels
def _shard_settings(cfg: TurnNetConfig, shard: int) -> str:
    """What makes shard ``shard``'s labels: stored in its file and checked on reuse."""
    lab = cfg.labels
    return json.dumps({"seed": cfg.seed, "shard": shard, "game": cfg.game.to_dict(), "teacher": lab.teacher,
                       "lineups": [list(p) for p in lab.lineups], "games": lab.games,
                       "label_share": lab.label_share, "features": FEATURE_SIZE}, sort_keys=True)


def label_shard(cfg: TurnNetConfig, shard: int, progress: bool = True) -> dict[str, np.ndarray]:
    """Play shard ``shard``'s games and label them (step 1): ``X`` (candidate rows), ``S`` (scores),
    ``offsets`` (position ``i``'s rows are ``offsets[i]:offsets[i + 1]``) and ``game`` (per position)."""
    config, lab = cfg.game, cfg.labels
    teacher = load_agent(lab.teacher, config, seed=derive_seed(cfg.seed, 9, shard))
    if not isinstance(teacher, SearchAgent):  # the settings allow search specs only
        raise ConfigError("labels.teacher", f"must be a search agent spec, got {lab.teacher!r}")
    draw = np.random.default_rng(derive_seed(cfg.seed, 8, shard))
    rows: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    offsets = [0]
    games: list[int] = []
    start = time.monotonic()
    for g in range(lab.games):
        gs = derive_seed(cfg.seed, shard, g)
        first, second = lab.lineups[g % len(lab.lineups)]
        a = load_agent(first, config, seed=gs)
        b = load_agent(second, config, seed=gs + 1)
        state = new_game(config, seed=gs)
        for d in decisions(state, [a, b] if g % 2 == 0 else [b, a]):
            if draw.random() > lab.label_share:
                continue
            view = state.view(d.seat)
            legal = view.legal_moves()
            if len(legal) < 2:
                continue
            found = teacher._candidates(view, legal)
            if len(found) < 2:
                continue
            scores.append(np.asarray(teacher._scores(view, found), np.float32))
            rows.append(candidate_features(view, found, teacher.candidates))
            offsets.append(offsets[-1] + len(found))
            games.append(g)
        if progress and ((g + 1) % 10 == 0 or g + 1 == lab.games):
            rate = (g + 1) / (time.monotonic() - start)
            print(f"labels shard {shard}: game {g + 1}/{lab.games}, {len(scores):,} positions, "
                  f"{rate * 60:.1f} games/min, ETA {(lab.games - g - 1) / rate / 60:.1f} min", flush=True)
    return {"X": np.concatenate(rows) if rows else np.zeros((0, FEATURE_SIZE), np.float32),
            "S": np.concatenate(scores) if scores else np.zeros(0, np.float32),
            "offsets": np.array(offsets, np.int64), "game": np.array(games, np.int64)}


def _shard_path(run_dir: Path, shard: int) -> Path:
    return run_dir / "labels" / f"shard_{shard:03d}.npz"


def shard_layout(cfg: TurnNetConfig) -> ShardLayout:
    """What a label shard of ``cfg`` may hold: at most one position per move of each game, each
    with at most the teacher's candidates."""
    teacher = parse_search_spec(cfg.labels.teacher)
    positions = cfg.labels.games * cfg.game.move_limit
    rows = positions * (teacher.candidates + teacher.discards)
    return ShardLayout({"X": ("<f4", ("rows", FEATURE_SIZE)), "S": ("<f4", ("rows",)),
                        "offsets": ("<i8", ("offsets",)), "game": ("<i8", ("positions",))},
                       {"rows": rows, "positions": positions, "offsets": positions + 1})


def read_shard(path: Path, cfg: TurnNetConfig, shard: int) -> dict[str, np.ndarray]:
    """Shard ``shard``'s finished file, checked against the settings of ``cfg`` that should have made it."""
    out = load_shard(path, shard_layout(cfg), _shard_settings(cfg, shard), "labels", "a label shard", "label again")
    n = len(out["game"])
    offsets, game = out["offsets"], out["game"]
    if (len(offsets) != n + 1 or offsets[0] != 0 or np.any(np.diff(offsets) < 2) or offsets[-1] != len(out["X"])
            or np.any((game < 0) | (game >= cfg.labels.games)) or np.any(np.diff(game) < 0)
            or not np.all(np.isfinite(out["X"])) or not np.all(np.isfinite(out["S"]))):
        raise ConfigError("labels", f"{path} is corrupt (inconsistent sizes or non-finite values); move it away")
    return out


def _write_shard(path: Path, data: dict[str, np.ndarray], settings: str) -> None:
    write_npz_atomic(path, {"settings": np.array(settings), **data})


def _label_job(args: tuple[dict[str, Any], int, str, bool]) -> int:
    data, shard, path, progress = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = TurnNetConfig.from_dict(data)
    _write_shard(Path(path), label_shard(cfg, shard, progress), _shard_settings(cfg, shard))
    return shard


def collect_labels(cfg: TurnNetConfig, run_dir: Path, progress: bool = True,
                   runner: ChunkRunner | None = None) -> list[dict[str, np.ndarray]]:
    """Every shard's labels: finished shard files are reused (checked), the others are played, by
    ``runner`` when given, else in ``labels.workers`` processes or on the cluster at ``cfg.ray``."""
    count = cfg.labels.shards
    return collect_shards([_shard_path(run_dir, s) for s in range(count)],
                          lambda s: read_shard(_shard_path(run_dir, s), cfg, s), _label_job,
                          lambda s: (cfg.to_dict(), s, str(_shard_path(run_dir, s)), progress),
                          cfg.labels.workers, progress, "label shards", cfg.ray, runner)


# ---------------------------------------------------------------------------- fit
def starting_net(spec: str, cfg: TurnNetConfig) -> TurnNet:
    """The network ``fit.init`` names (a shipped turn agent or a turn-agent file), checked against
    the recipe's game; a :class:`ConfigError` naming ``fit.init`` when it is neither or unreadable."""
    if spec in SHIPPED:
        path = shipped_agent_path(spec)
    else:
        path = Path(spec)
    if not is_turn_agent_file(path):
        turns = [name for name in SHIPPED if is_turn_agent_file(shipped_agent_path(name))]
        raise ConfigError("fit.init", f"{spec!r} is not a turn-agent file or a shipped turn agent "
                                      f"({', '.join(turns)})")
    try:
        net, _ = load_turn_net(path, cfg.game)
    except CheckpointError as exc:
        raise ConfigError("fit.init", str(exc)) from None
    if net.hidden != list(cfg.fit.hidden):
        raise ConfigError("fit.init", f"{spec!r} has hidden layers {net.hidden}, fit.hidden is {list(cfg.fit.hidden)} "
                                      "(set fit.hidden to its hidden sizes)")
    return net


def _padded_positions(shards: list[dict[str, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every labelled position as a row of ``width`` candidates (the most any position has):
    features ``X``, scores minus the position's mean score ``S``, the mask of real candidates ``M``,
    and each position's game key (shard and game, for the holdout)."""
    xs, ss, keys = [], [], []
    for i, shard in enumerate(shards):
        off = shard["offsets"]
        for j in range(len(off) - 1):
            xs.append(shard["X"][off[j]:off[j + 1]])
            ss.append(shard["S"][off[j]:off[j + 1]])
            keys.append(int(shard["game"][j]) + (i << 32))
    n = len(xs)
    if n < 2:
        raise ConfigError("labels", f"{n} labelled positions: too few to fit (play more games)")
    width = max(len(s) for s in ss)
    X = np.zeros((n, width, FEATURE_SIZE), np.float32)
    S = np.zeros((n, width), np.float32)
    M = np.zeros((n, width), np.float32)
    for i, (x, s) in enumerate(zip(xs, ss, strict=True)):
        X[i, :len(s)] = x
        S[i, :len(s)] = s - s.mean()
        M[i, :len(s)] = 1.0
    return X, S, M, np.array(keys, np.int64)


def fit_turn_net(cfg: TurnNetConfig, shards: list[dict[str, np.ndarray]], log: Path | None = None,
                 progress: bool = True) -> tuple[TurnNet, dict[str, Any]]:
    """Step 2: the network and the fit's figures (held-out loss and agreement, per epoch in ``log``)."""
    import torch  # the train extra, loaded when a fit runs (the command line's --help stays quick)

    fit = cfg.fit
    X, S, M, keys = _padded_positions(shards)
    rng = np.random.default_rng(derive_seed(cfg.seed, 7))
    val, train = split_holdout(keys, fit.holdout, rng)
    start = None if fit.init is None else starting_net(fit.init, cfg)
    if start is not None:  # fine-tuning: the inputs keep the standardization its weights were fitted to
        mean, std = start.mean, start.std
    else:
        rows = M[train].astype(bool)
        mean = X[train][rows].mean(axis=0)
        std = X[train][rows].std(axis=0) + 1e-3
    Xt, St, Mt = torch.from_numpy((X - mean) / std), torch.from_numpy(S), torch.from_numpy(M)

    def centred(net: torch.nn.Module, index: torch.Tensor) -> torch.Tensor:
        """The network's scores of the candidates of positions ``index``, minus their mean."""
        y = net(Xt[index]).squeeze(-1)
        m = Mt[index]
        return y - (y * m).sum(1, keepdim=True) / m.sum(1, keepdim=True)

    def batch_loss(net: torch.nn.Module, idx: np.ndarray) -> tuple[torch.Tensor, int]:
        index = torch.from_numpy(idx)
        y, s, m = centred(net, index), St[index], Mt[index]
        return (((y - s) ** 2) * m).sum() / m.sum(), 1

    def held_out(net: torch.nn.Module) -> dict[str, float]:
        index = torch.from_numpy(val)
        y, s, m = centred(net, index), St[index], Mt[index]
        loss = (((y - s) ** 2) * m).sum() / m.sum()
        pick = torch.where(m > 0, y, torch.full_like(y, -1e9)).argmax(1)
        best = torch.where(m > 0, s, torch.full_like(s, -1e9))
        return {"loss": float(loss.item()),
                "regret": (best.max(1).values - best.gather(1, pick[:, None]).squeeze(1)).mean().item(),
                "agreement": (pick == best.argmax(1)).float().mean().item(),
                "planner_regret": (best.max(1).values - best[:, 0]).mean().item(),
                "planner_agreement": (best.argmax(1) == 0).float().mean().item()}

    plan = FitPlan(FEATURE_SIZE, fit.hidden, fit.epochs, fit.batch_size, fit.learning_rate, fit.weight_decay,
                   seed=cfg.seed, threads=cfg.threads, dropout=fit.dropout, cosine=True,
                   columns=(("heldout_loss", "loss"), ("heldout_regret", "regret"), ("heldout_agreement", "agreement")),
                   init=None if start is None else start.layers)
    fitted = fit_mlp(plan, train, val, rng, batch_loss, held_out, log, progress)
    summary = {"positions": len(X), "candidates": int(M.sum()), "heldout_positions": len(val), **fitted.figures}
    return TurnNet(mean, std, fitted.layers), summary


# ---------------------------------------------------------------------------- the run
def run_recipe(cfg: TurnNetConfig, progress: bool = True) -> dict[str, Any]:
    """Steps 1 to 3 into ``<runs_dir>/<name>/``; returns the summary written to ``metrics.json``."""
    if cfg.fit.init is not None:
        starting_net(cfg.fit.init, cfg)  # refused now, not after the labels' hour
    with open_recipe_run(cfg, "labels") as run_dir:
        start = time.monotonic()
        shards = collect_labels(cfg, run_dir, progress)
        label_seconds = time.monotonic() - start
        net, fit_summary = fit_turn_net(cfg, shards, run_dir / "fit.csv", progress)
        digest = shards_sha256([_shard_path(run_dir, s) for s in range(cfg.labels.shards)])
        out = write_turn_net(run_dir / "turnnet.safetensors", net, cfg.game, {
            "recipe": RECIPE, "config": cfg.to_dict(), "labels_sha256": digest, "positions": fit_summary["positions"]})
        checks = {opponent: _check_against(cfg, out, opponent, progress) for opponent in cfg.eval.agents}
        summary = {"run_dir": str(run_dir), "agent_file": str(out), "label_seconds": round(label_seconds, 1),
                   "seconds": round(time.monotonic() - start, 1), "fit": fit_summary, "checks": checks}
        write_run_summary(run_dir, summary)
    return summary


def _check_against(cfg: TurnNetConfig, out: Path, opponent: str, progress: bool) -> dict[str, Any]:
    """Step 3's tournament of the network file ``out`` against ``opponent``: its games, wins, win rate."""
    mine = run_tournament([str(out), opponent], cfg.game, games=cfg.eval.games, seed=cfg.seed,
                          workers=cfg.eval.workers, ray=cfg.ray).agents[0]
    if progress:
        print(f"check: {mine.wins}/{mine.games} games won against {opponent} ({mine.win_rate:.1%})", flush=True)
    return {"games": mine.games, "wins": mine.wins, "win_rate": mine.win_rate, "ci95": [mine.ci_low, mine.ci_high]}


CONFIG = TurnNetConfig
"""The recipe's configuration class (``train.py --config`` reads a ``recipe: turnnet`` file as it)."""

__all__ = ["CONFIG", "TurnNetConfig", "collect_labels", "fit_turn_net", "is_recipe_file", "label_shard", "run_recipe"]
