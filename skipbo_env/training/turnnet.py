"""The ``turnnet`` recipe: teach the turn network (``turn-2p``) the search agent's scores.

One command (``python train.py --config configs/turnnet_2p.yaml``) runs three steps into
``<runs_dir>/<name>/``:

1. **Labels** (``labels``): ``shards`` × ``games`` 2-player games, each shard a seeded sequence of
   its own (so the result does not depend on ``workers``, the processes that play the shards).
   Game ``g`` of shard ``s`` is dealt with seed ``derive_seed(seed, s, g)`` and seats the pair
   ``lineups[g % len(lineups)]`` (swapped for odd ``g``; agent seeds ``derive_seed(seed, s, g)``
   and one more). At each decision a share ``label_share`` of the positions with two or more
   candidate turns are labelled: the teacher (a search agent spec, e.g. ``search:32``, seeded
   ``derive_seed(seed, 9, s)``) scores the heuristic planner's candidates
   (:class:`~skipbo_env.agents.turns.TopK`), and each candidate's
   :func:`~skipbo_env.agents.turnnet.turn_features` row is kept with its score. A finished
   shard is written to ``labels/shard_SSS.npz`` (atomically, with the settings that made it);
   running the same command again reuses finished shards and refuses ones made with other
   settings, so an interrupted run resumes where it stopped.
2. **Fit** (``fit``): a ReLU network (``hidden``) regresses each candidate's score minus the mean
   score of its position (only differences between the candidates of one position matter to the
   choice), Adam with cosine decay, dropout, weight decay; a share ``holdout`` of the games (not of
   positions: positions of one game are alike) is held out, and per epoch ``fit.csv`` records the
   held-out loss and how often the network's pick is the teacher's. Torch runs on one thread
   (``threads``); same seed, same network.
3. **Export and check**: ``turnnet.safetensors`` (a turn-agent file, no pickle), then a
   seat-balanced paired-deal tournament of it against each of ``eval.agents``
   (``eval.games`` games each) into ``metrics.json``.
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

from ..agents.registry import derive_seed, is_search_spec, known_agents, load_agent
from ..agents.turnnet import FEATURE_SIZE, TurnNet, candidate_features, check_turn_game, write_turn_net
from ..episode import decisions
from ..records import write_bytes_atomic, write_npz_atomic
from ..rules import ConfigError, GameConfig, new_game
from .config import YamlConfig, _positive, _show, check_fit, check_recipe_run, open_recipe_run, recipe_of
from .shards import collect_shards

RECIPE = "turnnet"


@dataclass(frozen=True)
class LabelSettings:
    """The labelled games (step 1 of the module docstring)."""

    teacher: str = "search:32"
    """The search agent spec whose candidate scores are the labels (``search``, ``search:W``, ``search:W:C``)."""
    lineups: tuple[tuple[str, str], ...] = (("search", "heuristic"), ("heuristic", "heuristic"),
                                            ("heuristic", "ppo-2p"))
    """Seat pairs whose games give the positions, cycled over the games of a shard."""
    shards: int = 2
    """Seeded game sequences."""
    games: int = 300
    """Games per shard."""
    label_share: float = 0.5
    """Share of the decisions (with two or more candidates) that are labelled."""
    workers: int = 2
    """Processes that play the shards (results do not depend on it)."""

    def __post_init__(self) -> None:
        if not is_search_spec(self.teacher):
            raise ConfigError("labels.teacher", f"must be a search agent spec (search, search:W, search:W:C), "
                                                f"got {_show(self.teacher)}")
        if not self.lineups:
            raise ConfigError("labels.lineups", "needs at least one pair")
        known = known_agents()
        for pair in self.lineups:
            if len(pair) != 2:
                raise ConfigError("labels.lineups", f"each lineup is a pair of agents, got {_show(list(pair))}")
            for name in pair:
                if name not in known and not is_search_spec(name):
                    raise ConfigError("labels.lineups", f"unknown agent {_show(name)}; known: {', '.join(known)}")
        _positive("labels.shards", self.shards)
        _positive("labels.games", self.games)
        _positive("labels.workers", self.workers)
        if not 0.0 < self.label_share <= 1.0:
            raise ConfigError("labels.label_share", f"must be in (0, 1], got {self.label_share}")


@dataclass(frozen=True)
class FitSettings:
    """The regression (step 2)."""

    hidden: tuple[int, ...] = (128, 64)
    """Hidden layer sizes (ReLU)."""
    epochs: int = 15
    batch_size: int = 256
    """Positions per gradient step (each with all its candidates)."""
    learning_rate: float = 1e-3
    weight_decay: float = 1e-3
    dropout: float = 0.3
    holdout: float = 0.1
    """Share of the labelled games held out to measure the fit (0: none)."""

    def __post_init__(self) -> None:
        check_fit(self.hidden, self.epochs, self.batch_size, self.learning_rate, self.weight_decay, self.holdout)
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError("fit.dropout", f"must be in [0, 1), got {self.dropout}")


@dataclass(frozen=True)
class CheckSettings:
    """The tournament after the export (step 3)."""

    agents: tuple[str, ...] = ("heuristic",)
    """Opponents, each in a tournament of its own against the network."""
    games: int = 400
    """Games per opponent (a multiple of 2: every deal with both seatings)."""
    workers: int = 2

    def __post_init__(self) -> None:
        if self.games < 2 or self.games % 2:
            raise ConfigError("eval.games", f"must be a positive multiple of 2, got {self.games}")
        _positive("eval.workers", self.workers)
        known = known_agents()
        for name in self.agents:
            if name not in known:
                raise ConfigError("eval.agents", f"unknown agent {_show(name)}; known: {', '.join(known)}")


@dataclass(frozen=True)
class TurnNetConfig(YamlConfig):
    """The ``turnnet`` recipe (see the module docstring)."""

    recipe: Literal["turnnet"] = "turnnet"
    """Which recipe ``train.py`` runs: this file's key that tells it from a PPO configuration."""
    name: str = "turnnet_2p"
    """Run name: outputs go to ``<runs_dir>/<name>/``."""
    runs_dir: str = "runs"
    seed: int = 0
    """Seeds the games, the teacher, the label draws and the fit: same seed, same network (on CPU)."""
    threads: int = 1
    """Torch threads of the fit."""
    game: GameConfig = field(default_factory=GameConfig)
    labels: LabelSettings = field(default_factory=LabelSettings)
    fit: FitSettings = field(default_factory=FitSettings)
    eval: CheckSettings = field(default_factory=CheckSettings)

    def __post_init__(self) -> None:
        check_recipe_run(self.name, self.seed, self.threads)
        try:
            check_turn_game(self.game)
        except ValueError as exc:
            raise ConfigError("game", str(exc)) from None


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
            found = teacher._candidates(view, legal)  # type: ignore[attr-defined]  # a search agent
            if len(found) < 2:
                continue
            scores.append(np.asarray(teacher._scores(view, found), np.float32))  # type: ignore[attr-defined]
            rows.append(candidate_features(view, found, teacher.candidates))  # type: ignore[attr-defined]
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


def read_shard(path: Path, settings: str) -> dict[str, np.ndarray]:
    """A finished shard file, checked against the ``settings`` that should have made it."""
    try:
        with np.load(path, allow_pickle=False) as data:
            out = {k: data[k] for k in ("X", "S", "offsets", "game", "settings")}
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError("labels", f"{path} is not a label shard ({exc}); move it away to label again") from None
    if str(out.pop("settings")) != settings:
        raise ConfigError("labels", f"{path} was made with other settings than this configuration's; "
                                    "use another run name or move the file away")
    n = len(out["game"])
    offsets = out["offsets"]
    if (out["X"].ndim != 2 or out["X"].shape[1] != FEATURE_SIZE or len(offsets) != n + 1 or offsets[0] != 0
            or np.any(np.diff(offsets) < 2) or offsets[-1] != len(out["X"]) or len(out["S"]) != len(out["X"])
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


def collect_labels(cfg: TurnNetConfig, run_dir: Path, progress: bool = True) -> list[dict[str, np.ndarray]]:
    """Every shard's labels: finished shard files are reused (checked), the others are played."""
    count = cfg.labels.shards
    return collect_shards([_shard_path(run_dir, s) for s in range(count)],
                          lambda s: read_shard(_shard_path(run_dir, s), _shard_settings(cfg, s)), _label_job,
                          lambda s: (cfg.to_dict(), s, str(_shard_path(run_dir, s)), progress),
                          cfg.labels.workers, progress, "label shards")


# ---------------------------------------------------------------------------- fit
def fit_turn_net(cfg: TurnNetConfig, shards: list[dict[str, np.ndarray]], log: Path | None = None,
                 progress: bool = True) -> tuple[TurnNet, dict[str, Any]]:
    """Step 2: the network and the fit's figures (held-out loss and agreement, per epoch in ``log``)."""
    import torch

    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    fit = cfg.fit
    xs, ss, keys = [], [], []
    for i, shard in enumerate(shards):
        off = shard["offsets"]
        for j in range(len(off) - 1):
            xs.append(shard["X"][off[j]:off[j + 1]])
            ss.append(shard["S"][off[j]:off[j + 1]])
            keys.append((i, int(shard["game"][j])))
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
    rng = np.random.default_rng(derive_seed(cfg.seed, 7))
    games = sorted(set(keys))
    held = set()
    if fit.holdout > 0:
        count = max(1, int(len(games) * fit.holdout))
        held = {games[k] for k in rng.choice(len(games), count, replace=False)}
    is_held = np.array([k in held for k in keys])
    val, train = np.where(is_held)[0], np.where(~is_held)[0]
    if len(train) == 0:
        raise ConfigError("fit.holdout", "holds out every labelled game: nothing left to fit")
    rows = M[train].astype(bool)
    mean = X[train][rows].mean(axis=0)
    std = X[train][rows].std(axis=0) + 1e-3
    X = (X - mean) / std
    Xt, St, Mt = torch.from_numpy(X), torch.from_numpy(S), torch.from_numpy(M)
    sizes = [FEATURE_SIZE, *fit.hidden]
    layers: list[torch.nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU(), torch.nn.Dropout(fit.dropout)]
    layers.append(torch.nn.Linear(sizes[-1], 1))
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(net.parameters(), lr=fit.learning_rate, weight_decay=fit.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, fit.epochs)

    def loss_of(idx: np.ndarray) -> tuple[Any, Any]:
        index = torch.from_numpy(idx)
        x, s, m = Xt[index], St[index], Mt[index]
        y = net(x).squeeze(-1)
        y = y - (y * m).sum(1, keepdim=True) / m.sum(1, keepdim=True)
        return (((y - s) ** 2) * m).sum() / m.sum(), y

    def measure(idx: np.ndarray) -> dict[str, float]:
        if len(idx) == 0:
            return {}
        net.eval()
        with torch.no_grad():
            loss, y = loss_of(idx)
            m, s = Mt[torch.from_numpy(idx)], St[torch.from_numpy(idx)]
            pick = torch.where(m > 0, y, torch.full_like(y, -1e9)).argmax(1)
            best = torch.where(m > 0, s, torch.full_like(s, -1e9))
            regret = (best.max(1).values - best.gather(1, pick[:, None]).squeeze(1)).mean().item()
            agree = (pick == best.argmax(1)).float().mean().item()
            first_regret = (best.max(1).values - best[:, 0]).mean().item()
            first_agree = (best.argmax(1) == 0).float().mean().item()
        net.train()
        return {"loss": float(loss.item()), "regret": regret, "agreement": agree,
                "planner_regret": first_regret, "planner_agreement": first_agree}

    lines = ["epoch,seconds,train_loss,heldout_loss,heldout_regret,heldout_agreement"]
    start = time.monotonic()
    for epoch in range(fit.epochs):
        t0 = time.monotonic()
        order = rng.permutation(train)
        total, count = 0.0, 0
        for j in range(0, len(order), fit.batch_size):
            loss, _ = loss_of(order[j:j + fit.batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.item())
            count += 1
        sched.step()
        figures = measure(val)
        lines.append(f"{epoch + 1},{time.monotonic() - t0:.1f},{total / count:.4f},{figures.get('loss', math.nan):.4f},"
                     f"{figures.get('regret', math.nan):.4f},{figures.get('agreement', math.nan):.4f}")
        if progress:
            done = epoch + 1
            eta = (time.monotonic() - start) / done * (fit.epochs - done)
            print(f"fit epoch {done}/{fit.epochs}: train loss {total / count:.3f}, held-out "
                  f"{figures.get('loss', math.nan):.3f}, agrees with the teacher "
                  f"{figures.get('agreement', math.nan):.1%} (planner's first choice "
                  f"{figures.get('planner_agreement', math.nan):.1%}), ETA {eta:.0f} s", flush=True)
    if log is not None:
        write_bytes_atomic(log, ("\n".join(lines) + "\n").encode())
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    turn_net = TurnNet(mean, std, [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())
                                   for m in linears])
    summary = {"positions": n, "candidates": int(M.sum()), "heldout_positions": len(val), **measure(val)}
    return turn_net, summary


# ---------------------------------------------------------------------------- the run
def run_recipe(cfg: TurnNetConfig, progress: bool = True) -> dict[str, Any]:
    """Steps 1 to 3 into ``<runs_dir>/<name>/``; returns the summary written to ``metrics.json``."""
    from ..agents.tournament import run_tournament

    run_dir = open_recipe_run(cfg)
    start = time.monotonic()
    shards = collect_labels(cfg, run_dir, progress)
    label_seconds = time.monotonic() - start
    net, fit_summary = fit_turn_net(cfg, shards, run_dir / "fit.csv", progress)
    digest = hashlib.sha256(b"".join(_shard_path(run_dir, s).read_bytes()
                                     for s in range(cfg.labels.shards))).hexdigest()
    out = write_turn_net(run_dir / "turnnet.safetensors", net, cfg.game, {
        "recipe": RECIPE, "config": cfg.to_dict(), "labels_sha256": digest, "positions": fit_summary["positions"]})
    checks = {}
    for opponent in cfg.eval.agents:
        result = run_tournament([str(out), opponent], cfg.game, games=cfg.eval.games, seed=cfg.seed,
                                workers=cfg.eval.workers)
        mine = result.agents[0]
        checks[opponent] = {"games": mine.games, "wins": mine.wins, "win_rate": mine.win_rate,
                            "ci95": [mine.ci_low, mine.ci_high]}
        if progress:
            print(f"check: {mine.wins}/{mine.games} games won against {opponent} ({mine.win_rate:.1%})", flush=True)
    summary = {"run_dir": str(run_dir), "agent_file": str(out), "label_seconds": round(label_seconds, 1),
               "seconds": round(time.monotonic() - start, 1), "fit": fit_summary, "checks": checks}
    write_bytes_atomic(run_dir / "metrics.json", (json.dumps(summary, indent=2) + "\n").encode())
    return summary


CONFIG = TurnNetConfig
"""The recipe's configuration class (``train.py --config`` reads a ``recipe: turnnet`` file as it)."""

__all__ = ["CONFIG", "TurnNetConfig", "collect_labels", "fit_turn_net", "is_recipe_file", "label_shard", "run_recipe"]
