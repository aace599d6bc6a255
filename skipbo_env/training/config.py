"""Typed, validated training configuration loaded from YAML (configs/*.yaml).

Every field is documented on its dataclass. Loading rejects unknown keys and
bad values with an error that names the key (``ppo.learning_rate: must be > 0``).
Any field can be overridden with a dotted path, e.g.
``--ppo.learning_rate 1e-4`` on the ``train.py`` command line.

Configuration files are read strictly (:func:`load_yaml_text`): a duplicate
key is an error, and so is a YAML alias (``*name``). Aliases are refused
outright rather than bounded: a configuration is short and hand-written,
:meth:`TrainConfig.save_yaml` never writes one, and a refused alias can
neither expand into a "billion laughs" bomb nor build a self-referencing
structure, whatever its size. A file the user passes (``--config``) may leave
fields to their defaults but may not be empty; a run's saved ``config.yaml``
is *complete* (``save_yaml`` writes every field), so :meth:`TrainConfig.from_yaml`
with ``complete=True`` (``--resume``) refuses one that misses any field.
Every number must be finite: NaN and infinities are refused, naming the key.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import math
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import yaml

from ..agents.registry import SHIPPED, is_search_spec
from ..agents.search import parse_search_spec
from ..bots import BOTS
from ..records import write_bytes_atomic
from ..rules import ConfigError, GameConfig

MAX_CONFIG_BYTES = 1 << 20
"""Largest configuration file read (1 MiB; the shipped ones are a few hundred bytes)."""


_Config = TypeVar("_Config", bound="YamlConfig")


def recipe_of(path: str | Path) -> str | None:
    """The ``recipe`` key at the top of the YAML file ``path`` (``"turnnet"``, ``"value"``): a recipe
    file rather than a PPO configuration; ``None`` for anything else, including files that cannot be
    read (the PPO loader reports those)."""
    try:
        data = load_yaml_text(read_config_text(Path(path)), str(path))
    except ConfigError:
        return None
    recipe = data.get("recipe") if isinstance(data, dict) else None
    return recipe if isinstance(recipe, str) else None


class YamlConfig:
    """Reading and writing a configuration dataclass as YAML: the methods the training
    recipes' top-level configurations (:class:`TrainConfig`, the turnnet recipe's) share."""

    def to_dict(self) -> dict[str, Any]:
        return _to_plain(self)

    @classmethod
    def from_dict(cls: type[_Config], data: Mapping[str, Any]) -> _Config:
        return _build(cls, data, "")

    @classmethod
    def from_yaml(cls: type[_Config], path: str | Path, overrides: Mapping[str, Any] | None = None,
                  complete: bool = False) -> _Config:
        """Load a YAML file, apply dotted-path ``overrides``, validate.

        The file must hold a mapping (an empty file is an error, never the defaults). With
        ``complete`` (a run's saved ``config.yaml``), every field must be present: the
        message names the file and the missing keys.
        """
        path = Path(path)
        data = load_yaml_text(read_config_text(path), str(path))
        if data is None:
            raise ConfigError("config", f"{path} is empty; a configuration file must set at least one field")
        if not isinstance(data, dict):
            raise ConfigError("config", f"{path} must hold a mapping at the top level")
        if complete:
            missing = missing_fields(cls, data)
            if missing:
                shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
                raise ConfigError("config", f"{path} is incomplete: a run's configuration holds every field, "
                                            f"this one misses {shown}")
        for key, value in (overrides or {}).items():
            set_dotted(data, key, value)
        return cls.from_dict(data)

    def save_yaml(self, path: str | Path) -> Path:
        """Write every field to ``path`` atomically (a temporary file, fsynced, then a rename)."""
        text = yaml.dump(self.to_dict(), Dumper=_NoAliasDumper, sort_keys=False)
        return write_bytes_atomic(path, text.encode("utf-8"))


@dataclass(frozen=True)
class PPOSettings:
    """Hyper-parameters passed to sb3-contrib ``MaskablePPO``."""

    learning_rate: float = 3e-4
    """Adam step size."""
    n_steps: int = 512
    """Steps collected per environment before each update (rollout = n_steps * n_envs)."""
    batch_size: int = 256
    """Minibatch size of each gradient step."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 0.995
    """Discount factor (episodes last a few hundred learner decisions)."""
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    """Entropy bonus; keeps exploration among legal actions."""
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    policy: Literal["mlp", "scorer"] = "mlp"
    """``mlp``: sb3's MlpPolicy (dense layers from the observation to 125 logits); ``scorer``: the
    action-scoring policy of skipbo_env/training/policy.py (one shared network scores each action
    from its card, pile and chain features)."""
    net_arch: tuple[int, ...] = (256, 256)
    """Hidden layer sizes of the policy and value networks (separate networks); with ``policy: scorer``
    the sizes of its context and value networks."""
    scorer_arch: tuple[int, ...] = (64, 32)
    """Hidden layer sizes of the shared action scorer (``policy: scorer`` only)."""
    activation: Literal["tanh", "relu"] = "relu"

    def __post_init__(self) -> None:
        _positive("ppo.learning_rate", self.learning_rate)
        _positive("ppo.n_steps", self.n_steps)
        _positive("ppo.batch_size", self.batch_size)
        _positive("ppo.n_epochs", self.n_epochs)
        for name in ("gamma", "gae_lambda"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise ConfigError(f"ppo.{name}", f"must be in (0, 1], got {value}")
        _positive("ppo.clip_range", self.clip_range)
        for name in ("ent_coef", "vf_coef", "max_grad_norm"):
            if getattr(self, name) < 0:
                raise ConfigError(f"ppo.{name}", f"must be >= 0, got {getattr(self, name)}")
        for name in ("net_arch", "scorer_arch"):
            sizes = getattr(self, name)
            if not sizes or any(h < 1 for h in sizes):
                raise ConfigError(f"ppo.{name}", f"must be a non-empty list of positive sizes, got {sizes}")


@dataclass(frozen=True)
class CurriculumStage:
    """One stage: opponents drawn from ``opponents`` until the learner's
    evaluation win rate against each of them reaches ``promote_at``."""

    opponents: dict[str, float]
    """Agent name -> sampling weight."""
    promote_at: float | None = None
    """Win rate (0..1) against every opponent of the stage that moves on; ``None`` for the last stage."""

    def __post_init__(self) -> None:
        _check_weights("opponents.curriculum[].opponents", self.opponents)
        if self.promote_at is not None and not 0 < self.promote_at <= 1:
            raise ConfigError("opponents.curriculum[].promote_at", f"must be in (0, 1], got {self.promote_at}")


@dataclass(frozen=True)
class OpponentSettings:
    """Who the learner plays against. Each episode draws its opponents (one per
    other seat, independently) from the current weights."""

    mix: dict[str, float] = field(default_factory=lambda: {"greedy": 1.0})
    """Scripted agent name -> weight; used when ``curriculum`` is empty."""
    curriculum: tuple[CurriculumStage, ...] = ()
    """Stages from weak to strong; replaces ``mix`` when given."""
    selfplay_weight: float = 0.0
    """Share of opponents drawn from the pool of the learner's own snapshots (0 = off)."""
    selfplay_pool: int = 5
    """Number of most recent snapshots kept in the pool."""
    selfplay_every: int = 100_000
    """Steps between snapshots added to the pool."""

    def __post_init__(self) -> None:
        if not self.curriculum:
            _check_weights("opponents.mix", self.mix)
        for i, stage in enumerate(self.curriculum[:-1]):
            if stage.promote_at is None:
                raise ConfigError(f"opponents.curriculum[{i}].promote_at", "every stage but the last needs one")
        if not 0 <= self.selfplay_weight < 1:
            raise ConfigError("opponents.selfplay_weight", f"must be in [0, 1), got {self.selfplay_weight}")
        _positive("opponents.selfplay_pool", self.selfplay_pool)
        _positive("opponents.selfplay_every", self.selfplay_every)


@dataclass(frozen=True)
class EvalSettings:
    """Periodic evaluation with the tournament code of ``evaluate.py``."""

    every: int = 50_000
    """Steps between evaluations."""
    games: int = 200
    """Seat-balanced games against each agent (a multiple of the seatings per deal)."""
    agents: tuple[str, ...] = ("random", "greedy", "heuristic")
    """Scripted agents to evaluate against."""
    best_against: str = "greedy"
    """The agent whose win rate picks the best model (must be in ``agents``)."""
    workers: int = 2
    """Processes for evaluation games."""
    seed: int = 12345
    """Tournament seed: every evaluation replays the same deals."""

    def __post_init__(self) -> None:
        _positive("eval.every", self.every)
        _positive("eval.games", self.games)
        _positive("eval.workers", self.workers)
        if not self.agents:
            raise ConfigError("eval.agents", "needs at least one agent")
        if self.best_against not in self.agents:
            raise ConfigError("eval.best_against", f"must be one of eval.agents {list(self.agents)}, got {_show(self.best_against)}")


@dataclass(frozen=True)
class PretrainSettings:
    """Optional behaviour-cloning warm start before PPO (skipbo_env/training/pretrain.py)."""

    teacher: str | None = None
    """Agent whose decisions the fresh policy imitates first: a scripted agent or the search agent
    (``search``, ``search:W`` or ``search:W:C``, needs the ``fast`` extra); ``None`` (default) skips pretraining."""
    opponents: dict[str, float] = field(default_factory=lambda: {"greedy": 1.0, "heuristic": 1.0})
    """Agent name -> weight of the teacher's opponents in the demonstration games."""
    games: int = 1000
    """Demonstration games."""
    epochs: int = 5
    """Passes over the demonstrations."""
    batch_size: int = 512
    learning_rate: float = 1e-3
    """Adam step size of the cloning phase."""
    dagger_rounds: int = 0
    """DAgger rounds after the first fit: the policy plays ``dagger_games`` games at the learner's
    seat, the teacher labels every position it reached, and the policy is fitted again on all
    labels so far (``epochs`` passes). 0: plain behaviour cloning."""
    dagger_games: int = 500
    """Games per DAgger round."""
    workers: int = 1
    """Processes that play the demonstration and DAgger games (results do not depend on it)."""

    def __post_init__(self) -> None:
        _check_weights("pretrain.opponents", self.opponents)
        if self.dagger_rounds < 0:
            raise ConfigError("pretrain.dagger_rounds", f"must be >= 0, got {self.dagger_rounds}")
        _positive("pretrain.dagger_games", self.dagger_games)
        _positive("pretrain.workers", self.workers)
        _positive("pretrain.games", self.games)
        _positive("pretrain.epochs", self.epochs)
        _positive("pretrain.batch_size", self.batch_size)
        _positive("pretrain.learning_rate", self.learning_rate)


PHASE_KEYS = (
    "opponents.mix", "opponents.selfplay_weight", "eval.every", "eval.games", "eval.agents", "eval.best_against",
    "ppo.learning_rate", "ppo.batch_size", "ppo.n_epochs", "ppo.gamma", "ppo.gae_lambda", "ppo.clip_range",
    "ppo.ent_coef", "ppo.vf_coef", "ppo.max_grad_norm",
)
"""Settings a phase may change: what a resumed run may change (resume.RESUMABLE_PPO, opponents,
evaluation) except the rollout size (``ppo.n_steps``, ``n_envs``), the game and the network."""


@dataclass(frozen=True)
class Phase:
    """From ``start`` learner steps on, the run trains with the settings ``set`` (dotted keys, as on
    the command line) on top of the configuration and the earlier phases: one config holds what
    used to be a chain of ``--resume ... --key value`` commands."""

    start: int
    """Learner steps at which the phase begins (phases are listed in increasing order)."""
    set: dict[str, Any]
    """Dotted setting -> value, e.g. ``{ppo.learning_rate: 1.0e-4, opponents.mix: {heuristic: 1}}``."""

    def __post_init__(self) -> None:
        _positive("phases[].start", self.start)
        for key in self.set:
            if key not in PHASE_KEYS:
                raise ConfigError(f"phases[].set.{_show_text(str(key), 60)}",
                                  f"a phase cannot change this setting; it may change {', '.join(PHASE_KEYS)}")


@dataclass(frozen=True)
class TrainConfig(YamlConfig):
    """A training run: MaskablePPO on the single-agent env against scripted opponents."""

    name: str = "default"
    """Run name: outputs go to ``<runs_dir>/<name>/``."""
    runs_dir: str = "runs"
    seed: int = 0
    """Seeds the model, the environments and the opponent draws: same seed, same run (on CPU)."""
    total_timesteps: int = 1_000_000
    """Learner decisions to train for."""
    n_envs: int = 4
    vec_env: Literal["subproc", "dummy", "batched"] = "subproc"
    """``subproc``: SubprocVecEnv over SkipBo-v0; ``dummy``: DummyVecEnv (one process);
    ``batched``: the compiled batched engine (skipbo_env.vector)."""
    threads: int = 1
    """Torch threads of the learner process (the PPO updates and behaviour cloning); a run repeats
    exactly for a fixed value. More than 1 pays with ``vec_env: batched`` and ``ppo.policy: scorer``."""
    reward_shaping: bool = False
    """The env's documented shaping switch (small reward per own stock card played)."""
    checkpoint_every: int = 20_000
    """Steps between atomic checkpoints of the latest model (a kill loses at most this many)."""
    game: GameConfig = field(default_factory=GameConfig)
    ppo: PPOSettings = field(default_factory=PPOSettings)
    opponents: OpponentSettings = field(default_factory=OpponentSettings)
    eval: EvalSettings = field(default_factory=EvalSettings)
    pretrain: PretrainSettings = field(default_factory=PretrainSettings)
    init_from: str | None = None
    """Weights that start a new run instead of random ones: a shipped agent (``ppo-2p``) or an agent
    file (``.safetensors``, ``train.py --export``) of this run's policy and sizes; ``None`` (default):
    random. Pretraining and PPO then continue from them (expert iteration from a trained agent)."""
    phases: tuple[Phase, ...] = ()
    """Settings that change during the run, by learner steps (see :class:`Phase`); ``train.py`` trains
    each phase as a session of its own, resuming the previous one's checkpoint (exactly what a
    ``--resume`` with those overrides did)."""

    def __post_init__(self) -> None:
        if "\0" in self.name or "\0" in self.runs_dir:
            field_ = "name" if "\0" in self.name else "runs_dir"
            raise ConfigError(field_, f"must not hold a NUL character, got {_show(getattr(self, field_))}")
        if not self.name or "/" in self.name or self.name.startswith(".") or len(self.name.encode()) > 255:
            raise ConfigError("name", f"must be a plain folder name, got {_show(self.name)}")
        if not self.runs_dir:
            raise ConfigError("runs_dir", "must name a folder")
        if self.seed < 0:
            raise ConfigError("seed", f"must be >= 0, got {self.seed}")
        _positive("total_timesteps", self.total_timesteps)
        _positive("n_envs", self.n_envs)
        _positive("threads", self.threads)
        _positive("checkpoint_every", self.checkpoint_every)
        if self.init_from is not None and self.init_from not in SHIPPED and not self.init_from.endswith(".safetensors"):
            # the file itself is read (and checked) when a new run starts: a resume does not need it
            raise ConfigError("init_from", f"must be a shipped agent ({', '.join(sorted(SHIPPED))}) or a "
                                           f".safetensors agent file, got {_show(self.init_from)}")
        names = set(self.opponents.mix) if not self.opponents.curriculum else set()
        for stage in self.opponents.curriculum:
            names |= set(stage.opponents)
        if self.pretrain.teacher is not None:
            names |= set(self.pretrain.opponents)
            if is_search_spec(self.pretrain.teacher):  # the search agent may teach, not play
                try:
                    parse_search_spec(self.pretrain.teacher)
                except ValueError as exc:
                    raise ConfigError("pretrain.teacher", str(exc)) from None
            else:
                names.add(self.pretrain.teacher)
        for name in sorted(names | set(self.eval.agents)):
            if name not in BOTS:  # scripted names only: checkpoints enter through self-play
                raise ConfigError("opponents", f"unknown agent {_show(name)}; known: {', '.join(sorted(BOTS))}")
        if self.ppo.batch_size > self.ppo.n_steps * self.n_envs:
            raise ConfigError(
                "ppo.batch_size",
                f"{self.ppo.batch_size} exceeds the rollout size n_steps * n_envs = {self.ppo.n_steps * self.n_envs}",
            )
        starts = [phase.start for phase in self.phases]
        if starts != sorted(set(starts)):
            raise ConfigError("phases", f"phase starts must increase, got {starts}")
        for i, phase in enumerate(self.phases):
            try:
                self.at(phase.start)
            except ConfigError as exc:
                raise ConfigError(f"phases[{i}] ({exc.field})", str(exc).split(": ", 1)[-1]) from None

    def at(self, timesteps: int) -> TrainConfig:
        """The settings in force at ``timesteps``: this configuration with every phase that has
        started by then applied in order (and no phases of its own)."""
        data = self.to_dict()
        data["phases"] = []
        for phase in self.phases:
            if phase.start <= timesteps:
                for key, value in phase.set.items():
                    set_dotted(data, key, value)
        return TrainConfig.from_dict(data)

    def phase_end(self, timesteps: int) -> int:
        """Where the phase running at ``timesteps`` ends: the next phase's start, or ``total_timesteps``."""
        later = [phase.start for phase in self.phases if phase.start > timesteps]
        return min([*later, self.total_timesteps])


# ====================================================================== YAML
class StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses duplicate keys and aliases (see the module docstring)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"YAML aliases (*{_show_text(str(event.anchor), 40)}) are not allowed in a configuration file",
                event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # an unhashable key: SafeConstructor explains it
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping", node.start_mark, f"found duplicate key {_show(key, 60)}",
                        key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def read_config_text(path: Path) -> str:
    """The text of a configuration file; a missing, unreadable, oversized or binary file is a
    :class:`ConfigError` naming it."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError("config", f"no such file: {path}") from None
    except IsADirectoryError:
        raise ConfigError("config", f"{path} is a directory, not a YAML file") from None
    except OSError as exc:
        raise ConfigError("config", f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError("config", f"{path} is larger than {MAX_CONFIG_BYTES >> 20} MiB; not a configuration file")
    if b"\0" in raw:
        raise ConfigError("config", f"{path} is a binary file (NUL bytes), not YAML")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError("config", f"{path} is not UTF-8 text (byte {exc.start}); not a YAML file") from None


def load_yaml_text(text: str, where: str) -> Any:
    """Parse configuration YAML strictly (:class:`StrictLoader`); errors name ``where`` and stay short."""
    try:
        return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context).split())
        raise ConfigError("config", f"{where} is not valid YAML{at}: {_show_text(problem, 200)}") from None
    except yaml.YAMLError as exc:
        raise ConfigError("config", f"{where} is not valid YAML: {_show_text(' '.join(str(exc).split()), 200)}") from None
    except RecursionError:
        raise ConfigError("config", f"{where} is nested too deeply") from None


def missing_fields(cls: type, data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of the fields of dataclass ``cls`` absent from ``data`` (recursively)."""
    missing = []
    hints = typing.get_type_hints(cls) if cls is not GameConfig else {}
    for f in dataclasses.fields(cls):
        name = f"{prefix}{f.name}"
        if f.name not in data:
            missing.append(name)
            continue
        tp = hints.get(f.name)
        value = data[f.name]
        if dataclasses.is_dataclass(tp) and isinstance(value, Mapping):
            missing.extend(missing_fields(tp, value, f"{name}."))  # type: ignore[arg-type]  # a type hint: a class
        elif typing.get_origin(tp) is tuple and isinstance(value, list):
            item = typing.get_args(tp)[0]
            if dataclasses.is_dataclass(item):
                for i, v in enumerate(value):
                    if isinstance(v, Mapping):
                        missing.extend(missing_fields(item, v, f"{name}[{i}]."))  # type: ignore[arg-type]  # a class
    return missing


# ====================================================================== helpers
def _show(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters: error messages never echo a huge value."""
    return _show_text(repr(value), limit)


def _show_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 15] + f"... ({len(text):,} chars)"


def _positive(name: str, value: float) -> None:
    if value <= 0:
        raise ConfigError(name, f"must be > 0, got {value}")


def check_recipe_run(name: str, seed: int, threads: int) -> None:
    """The fields every recipe's top level shares: a plain run folder name, a seed >= 0, threads > 0."""
    if not name or "/" in name or "\0" in name or name.startswith("."):
        raise ConfigError("name", f"must be a plain folder name, got {_show(name)}")
    if seed < 0:
        raise ConfigError("seed", f"must be >= 0, got {seed}")
    _positive("threads", threads)


def check_fit(hidden: tuple[int, ...], epochs: int, batch_size: int, learning_rate: float, weight_decay: float,
              holdout: float) -> None:
    """The fit settings every recipe shares (``fit.*``), each error naming its key."""
    if not hidden or any(h < 1 or h > 4096 for h in hidden):
        raise ConfigError("fit.hidden", f"must be 1 to 8 layer sizes in 1..4096, got {list(hidden)}")
    if len(hidden) > 8:
        raise ConfigError("fit.hidden", f"at most 8 layers, got {len(hidden)}")
    _positive("fit.epochs", epochs)
    _positive("fit.batch_size", batch_size)
    _positive("fit.learning_rate", learning_rate)
    if weight_decay < 0:
        raise ConfigError("fit.weight_decay", f"must be >= 0, got {weight_decay}")
    if not 0.0 <= holdout < 1.0:
        raise ConfigError("fit.holdout", f"must be in [0, 1), got {holdout}")


class RecipeRun(Protocol):
    """A recipe's top-level configuration, as :func:`open_recipe_run` reads it."""

    @property
    def runs_dir(self) -> str: ...

    @property
    def name(self) -> str: ...

    @classmethod
    def from_yaml(cls, path: str | Path) -> Any: ...

    def save_yaml(self, path: str | Path) -> Path: ...


def open_recipe_run(cfg: RecipeRun) -> Path:
    """``<cfg.runs_dir>/<cfg.name>/``, created, with ``cfg`` saved as its ``config.yaml``; a folder
    holding a run of another configuration is refused (the finished shards it keeps were made for
    that one)."""
    run_dir = Path(cfg.runs_dir) / cfg.name
    run_dir.mkdir(parents=True, exist_ok=True)
    saved = run_dir / "config.yaml"
    if saved.exists() and type(cfg).from_yaml(saved) != cfg:
        raise ConfigError("name", f"{run_dir} holds a run of another configuration; use another name")
    cfg.save_yaml(saved)
    return run_dir


def _check_weights(name: str, weights: Mapping[str, float]) -> None:
    if not weights:
        raise ConfigError(name, "needs at least one agent with a weight")
    for agent, weight in weights.items():
        if weight < 0:
            raise ConfigError(f"{name}.{agent}", f"weight must be >= 0, got {weight}")
    if sum(weights.values()) <= 0:
        raise ConfigError(name, "weights must not all be zero")


def set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    """``set_dotted(d, "ppo.learning_rate", 1e-4)`` sets ``d["ppo"]["learning_rate"]``."""
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ConfigError(dotted, f"{key} is not a section")
        node = child
    node[keys[-1]] = value


def _to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_plain(v) for k, v in value.items()}
    return value


def _build(cls: type, data: Any, path: str) -> Any:
    """Build dataclass ``cls`` from ``data``, checking keys and types field by field."""
    where = path or "config"
    if not isinstance(data, Mapping):
        raise ConfigError(where, f"must be a mapping, got {type(data).__name__}")
    if cls is GameConfig:
        try:
            return GameConfig.from_dict(data)
        except ConfigError as exc:
            raise ConfigError(f"{path}.{exc.field}", str(exc).split(": ", 1)[1]) from None
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in fields:
            raise ConfigError(
                f"{path}.{_show_text(str(key), 60)}" if path else _show_text(str(key), 60),
                f"unknown key; allowed: {', '.join(sorted(fields))}"
            )
    for f in dataclasses.fields(cls):
        if f.name not in data and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{path}.{f.name}" if path else f.name, "missing (this setting has no default)")
    kwargs = {k: _convert(hints[k], v, f"{path}.{k}" if path else k) for k, v in data.items()}
    return cls(**kwargs)


def _convert(tp: Any, value: Any, path: str) -> Any:
    if tp is Any:  # a phase's settings: checked when the phase is applied (TrainConfig.at)
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, path)  # type: ignore[arg-type]  # a type hint: a class
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, path)
    if origin is Literal:
        if value not in args:
            raise ConfigError(path, f"must be one of {list(args)}, got {_show(value)}")
        return value
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(path, f"must be a list, got {_show(value)}")
        return tuple(_convert(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(path, f"must be a mapping, got {_show(value)}")
        return {_convert(args[0], k, path): _convert(args[1], v, f"{path}.{k}") for k, v in value.items()}
    if tp is bool:
        if type(value) is not bool:
            raise ConfigError(path, f"must be true or false, got {_show(value)}")
        return value
    if tp is int:
        if type(value) is not int:
            raise ConfigError(path, f"must be an int, got {_show(value)}")
        return value
    if tp is float:
        if isinstance(value, str):  # YAML 1.1 reads "1e-4" (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(path, f"must be a number, got {_show(value)}") from None
        if type(value) not in (int, float):
            raise ConfigError(path, f"must be a number, got {_show(value)}")
        try:
            number = float(value)
        except OverflowError:
            raise ConfigError(path, f"must be a finite number, got {_show(value)}") from None
        if not math.isfinite(number):
            raise ConfigError(path, f"must be a finite number, got {number}")
        return number
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(path, f"must be a string, got {_show(value)}")
        return value
    raise ConfigError(path, f"unsupported field type {tp!r}")  # pragma: no cover


def flat_fields(cls: type = TrainConfig, prefix: str = "") -> list[tuple[str, Any, str]]:
    """(dotted name, type, help) of every leaf field, for the command line."""
    docs = field_docs()
    out = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        name = f"{prefix}{f.name}"
        tp = hints[f.name]
        if tp is GameConfig:
            for g in dataclasses.fields(GameConfig):
                out.append((f"{name}.{g.name}", g.type, "game setting, see skipbo_env.rules.GameConfig"))
        elif dataclasses.is_dataclass(tp):
            out.extend(flat_fields(tp, f"{name}."))  # type: ignore[arg-type]  # a type hint: a class
        else:
            out.append((name, tp, docs.get(f"{cls.__name__}.{f.name}", "")))
    return out


def field_docs() -> dict[str, str]:
    """Attribute docstrings of the config dataclasses, keyed ``Class.field`` (for ``--help``)."""
    tree = ast.parse(inspect.getsource(sys.modules[__name__]))
    docs: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        body = node.body
        for first, second in zip(body, body[1:], strict=False):
            if (
                isinstance(first, ast.AnnAssign)
                and isinstance(first.target, ast.Name)
                and isinstance(second, ast.Expr)
                and isinstance(second.value, ast.Constant)
                and isinstance(second.value.value, str)
            ):
                docs[f"{node.name}.{first.target.id}"] = " ".join(second.value.value.split())
    return docs
