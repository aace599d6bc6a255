"""The recipes' settings (``recipe: turnnet`` and ``recipe: value`` in ``configs/``).

Frozen, validated dataclasses, each error naming its key: :class:`TurnNetConfig` for
:mod:`.turn_recipe`, :class:`ValueNetConfig` for :mod:`.value_recipe`; the fit settings both
share are checked by :func:`check_fit`. Reading and writing them as YAML is :mod:`.settings_io`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..agents.registry import is_search_spec, known_agents
from ..agents.search import parse_search_spec
from ..agents.turnnet import check_turn_game
from ..bots import BOTS
from ..rules import ConfigError, GameConfig
from .settings import check_ray, check_seed, check_threads, positive
from .settings_io import YamlConfig, show

MAX_SHARDS = 1000
"""Most shards a recipe splits its data into (files ``shard_000`` to ``shard_999``)."""
MAX_SHARD_GAMES = 100_000
"""Most games of one shard (the value recipe plays a shard's games at once in one batched engine)."""


def check_recipe_run(name: str, seed: int, threads: int, runs_dir: str, ray: str | None = None) -> None:
    """The fields every recipe's top level shares: a plain run folder name, a seed in 0..2**63-1,
    1 to 1024 threads, a runs folder without NUL characters, no Ray address or a valid one."""
    if not name or "/" in name or "\0" in name or name.startswith(".") or len(name.encode()) > 255:
        raise ConfigError("name", f"must be a plain folder name, got {show(name)}")
    if not runs_dir or "\0" in runs_dir:
        raise ConfigError("runs_dir", f"must name a folder, got {show(runs_dir)}")
    check_seed("seed", seed)
    check_threads("threads", threads)
    check_ray("ray", ray)


def check_shards(section: str, shards: int, games: int, workers: int) -> None:
    """A recipe's data split (``<section>.shards``, ``.games`` per shard, ``.workers``), each bounded."""
    for key, value, high in (("shards", shards, MAX_SHARDS), ("games", games, MAX_SHARD_GAMES)):
        if not 1 <= value <= high:
            raise ConfigError(f"{section}.{key}", f"must be in 1..{high:,}, got {show(value, 40)}")
    positive(f"{section}.workers", workers)


def check_search_spec(key: str, spec: str) -> None:
    """Refuse a search agent spec that the search agent would refuse (``search:0``), naming ``key``."""
    try:
        parse_search_spec(spec)
    except ValueError as exc:
        raise ConfigError(key, str(exc)) from None


def check_fit(hidden: tuple[int, ...], epochs: int, batch_size: int, learning_rate: float, weight_decay: float,
              holdout: float) -> None:
    """The fit settings every recipe shares (``fit.*``), each error naming its key."""
    if not hidden or any(h < 1 or h > 4096 for h in hidden):
        raise ConfigError("fit.hidden", f"must be 1 to 8 layer sizes in 1..4096, got {list(hidden)}")
    if len(hidden) > 8:
        raise ConfigError("fit.hidden", f"at most 8 layers, got {len(hidden)}")
    positive("fit.epochs", epochs)
    positive("fit.batch_size", batch_size)
    positive("fit.learning_rate", learning_rate)
    if weight_decay < 0:
        raise ConfigError("fit.weight_decay", f"must be >= 0, got {weight_decay}")
    if not 0.0 <= holdout < 1.0:
        raise ConfigError("fit.holdout", f"must be in [0, 1), got {holdout}")


# ---------------------------------------------------------------------------- the turnnet recipe
@dataclass(frozen=True)
class LabelSettings:
    """The labelled games (step 1 of :mod:`.turn_recipe`)."""

    teacher: str = "search:32"
    """The search agent spec whose candidate scores are the labels (``search``, ``search:W``, ``search:W:C``)."""
    lineups: tuple[tuple[str, str], ...] = (("search", "heuristic"), ("heuristic", "heuristic"),
                                            ("heuristic", "ppo-2p"))
    """Seat pairs whose games give the positions, cycled over the games of a shard."""
    shards: int = 2
    """Seeded game sequences (1 to :data:`MAX_SHARDS`)."""
    games: int = 300
    """Games per shard (1 to :data:`MAX_SHARD_GAMES`)."""
    label_share: float = 0.5
    """Share of the decisions (with two or more candidates) that are labelled."""
    workers: int = 2
    """Processes that play the shards (results do not depend on it)."""

    def __post_init__(self) -> None:
        if not is_search_spec(self.teacher):
            raise ConfigError("labels.teacher", f"must be a search agent spec (search, search:W, search:W:C), "
                                                f"got {show(self.teacher)}")
        check_search_spec("labels.teacher", self.teacher)
        if not self.lineups:
            raise ConfigError("labels.lineups", "needs at least one pair")
        known = known_agents()
        for pair in self.lineups:
            if len(pair) != 2:
                raise ConfigError("labels.lineups", f"each lineup is a pair of agents, got {show(list(pair))}")
            for name in pair:
                if name not in known and not is_search_spec(name):
                    raise ConfigError("labels.lineups", f"unknown agent {show(name)}; known: {', '.join(known)}")
                if is_search_spec(name):
                    check_search_spec("labels.lineups", name)
        check_shards("labels", self.shards, self.games, self.workers)
        if not 0.0 < self.label_share <= 1.0:
            raise ConfigError("labels.label_share", f"must be in (0, 1], got {self.label_share}")


@dataclass(frozen=True)
class FitSettings:
    """The regression (step 2 of :mod:`.turn_recipe`)."""

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
    init: str | None = None
    """Start from this turn network instead of random weights (fine-tuning): a shipped turn agent's
    name (``turn-2p``) or a turn-agent file. Its input standardization is kept and its hidden sizes
    must be ``hidden``; ``None`` (default): a fresh network."""

    def __post_init__(self) -> None:
        check_fit(self.hidden, self.epochs, self.batch_size, self.learning_rate, self.weight_decay, self.holdout)
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError("fit.dropout", f"must be in [0, 1), got {self.dropout}")
        if self.init is not None and (not isinstance(self.init, str) or not self.init):
            raise ConfigError("fit.init", f"must be a turn agent's name or file, got {show(self.init)}")


@dataclass(frozen=True)
class CheckSettings:
    """The tournament after the export (step 3 of :mod:`.turn_recipe`)."""

    agents: tuple[str, ...] = ("heuristic",)
    """Opponents, each in a tournament of its own against the network."""
    games: int = 400
    """Games per opponent (a multiple of 2: every deal with both seatings)."""
    workers: int = 2

    def __post_init__(self) -> None:
        if self.games < 2 or self.games % 2:
            raise ConfigError("eval.games", f"must be a positive multiple of 2, got {self.games}")
        positive("eval.workers", self.workers)
        known = known_agents()
        for name in self.agents:
            if name not in known:
                raise ConfigError("eval.agents", f"unknown agent {show(name)}; known: {', '.join(known)}")


@dataclass(frozen=True)
class TurnNetConfig(YamlConfig):
    """The ``turnnet`` recipe (see :mod:`.turn_recipe`)."""

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
    ray: str | None = None
    """Make the data shards (and play the checks' tournaments) as Ray tasks on the cluster at this
    address (``auto``, ``HOST:PORT``; the ``ray`` extra; ``--ray auto``) instead of local processes;
    ``None`` (default): local. The run folder must be reachable at the same path on every node.
    Results do not depend on it, and a run started locally resumes on a cluster and back."""

    def __post_init__(self) -> None:
        check_recipe_run(self.name, self.seed, self.threads, self.runs_dir, self.ray)
        try:
            check_turn_game(self.game)
        except ValueError as exc:
            raise ConfigError("game", str(exc)) from None


# ---------------------------------------------------------------------------- the value recipe
@dataclass(frozen=True)
class PositionSettings:
    """The self-play positions (step 1 of :mod:`.value_recipe`)."""

    shards: int = 12
    """Seeded batches of games (1 to :data:`MAX_SHARDS`)."""
    games: int = 5000
    """Games per shard (one batched engine each; 1 to :data:`MAX_SHARD_GAMES`)."""
    share: float = 0.1
    """Chance that a running game gives a position at the start of each turn."""
    workers: int = 2
    """Processes that play the shards (results do not depend on it)."""
    field: tuple[str, ...] = ("heuristic",)
    """Scripted agents (``skipbo_env.bots.BOTS`` names) the seats of each game are drawn from,
    with replacement. The heuristic alone (the default) is self-play in the batched engine; any
    other field plays its games on the rules layer (a few games a second)."""

    def __post_init__(self) -> None:
        check_shards("positions", self.shards, self.games, self.workers)
        if not 0.0 < self.share <= 1.0:
            raise ConfigError("positions.share", f"must be in (0, 1], got {self.share}")
        if not self.field:
            raise ConfigError("positions.field", "must name at least one scripted agent")
        for name in self.field:
            if not isinstance(name, str) or name not in BOTS:
                raise ConfigError("positions.field", f"unknown agent {show(name)}; known: {', '.join(sorted(BOTS))}")

    @property
    def self_play(self) -> bool:
        """The heuristic in every seat: the games are played in the batched engine."""
        return set(self.field) == {"heuristic"}


@dataclass(frozen=True)
class ValueFitSettings:
    """The logistic regression (step 2 of :mod:`.value_recipe`)."""

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
    """The ``value`` recipe (see :mod:`.value_recipe`)."""

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
    ray: str | None = None
    """Make the position shards as Ray tasks on the cluster at this
    address (``auto``, ``HOST:PORT``; the ``ray`` extra; ``--ray auto``) instead of local processes;
    ``None`` (default): local. The run folder must be reachable at the same path on every node.
    Results do not depend on it, and a run started locally resumes on a cluster and back."""

    def __post_init__(self) -> None:
        check_recipe_run(self.name, self.seed, self.threads, self.runs_dir, self.ray)


__all__ = ["MAX_SHARDS", "MAX_SHARD_GAMES", "CheckSettings", "FitSettings", "LabelSettings", "PositionSettings",
           "TurnNetConfig", "ValueFitSettings", "ValueNetConfig", "check_fit", "check_recipe_run", "check_search_spec",
           "check_shards"]
