"""The training run's settings (``configs/*.yaml``): frozen, validated dataclasses.

Every field is documented on its dataclass. Construction rejects bad values with an error that
names the key (``ppo.learning_rate: must be > 0``); every number must be finite. Reading and writing
them as YAML (strict files, dotted overrides such as ``--ppo.learning_rate 1e-4`` on the
``train.py`` command line) is :mod:`.settings_io`'s; the recipes' settings are
:mod:`.recipe_settings`. ``ray`` (where a run's games run) is a setting of every run and recipe
(:func:`check_ray`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..agents.executors import MAX_WORKERS, check_ray_address
from ..agents.registry import SHIPPED, is_search_spec
from ..agents.search import parse_search_spec
from ..bots import BOTS
from ..rules import ConfigError, GameConfig
from .settings_io import YamlConfig, set_dotted, show, show_text


def is_trained_opponent(name: str) -> bool:
    """Whether an opponent or evaluation name stands for a trained agent: a shipped one
    (:data:`~skipbo_env.agents.registry.SHIPPED`) or a ``.safetensors`` agent file (read, and
    checked against the run's game, when the run first draws or evaluates it)."""
    return name in SHIPPED or name.endswith(".safetensors")


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
    action-scoring policy of skipbo_env/agents/scorer.py (one shared network scores each action
    from its card, pile and chain features)."""
    net_arch: tuple[int, ...] = (256, 256)
    """Hidden layer sizes of the policy and value networks (separate networks); with ``policy: scorer``
    the sizes of its context and value networks."""
    scorer_arch: tuple[int, ...] = (64, 32)
    """Hidden layer sizes of the shared action scorer (``policy: scorer`` only)."""
    activation: Literal["tanh", "relu"] = "relu"

    def __post_init__(self) -> None:
        positive("ppo.learning_rate", self.learning_rate)
        positive("ppo.n_steps", self.n_steps)
        positive("ppo.batch_size", self.batch_size)
        positive("ppo.n_epochs", self.n_epochs)
        for name in ("gamma", "gae_lambda"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise ConfigError(f"ppo.{name}", f"must be in (0, 1], got {value}")
        positive("ppo.clip_range", self.clip_range)
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
    """Share of opponents drawn from the pool of the learner's own snapshots (0 = off). 1 is pure
    self-play: every opponent is a snapshot (the first one, of the untrained network, is taken
    before the first rollout), ``mix`` must be ``{}`` and there is no curriculum."""
    selfplay_pool: int = 5
    """Number of most recent snapshots kept in the pool."""
    selfplay_every: int = 100_000
    """Steps between snapshots added to the pool."""

    def __post_init__(self) -> None:
        if not 0 <= self.selfplay_weight <= 1:
            raise ConfigError("opponents.selfplay_weight", f"must be in [0, 1], got {self.selfplay_weight}")
        if self.pure_selfplay:
            if self.curriculum:
                raise ConfigError("opponents.curriculum", "selfplay_weight 1 draws only the learner's own snapshots: "
                                                          "leave out the curriculum")
            if self.mix:
                raise ConfigError("opponents.mix", "selfplay_weight 1 draws only the learner's own snapshots: "
                                                   "set mix to {}")
        elif not self.curriculum:
            _check_weights("opponents.mix", self.mix)
        for i, stage in enumerate(self.curriculum[:-1]):
            if stage.promote_at is None:
                raise ConfigError(f"opponents.curriculum[{i}].promote_at", "every stage but the last needs one")
        positive("opponents.selfplay_pool", self.selfplay_pool)
        positive("opponents.selfplay_every", self.selfplay_every)

    @property
    def pure_selfplay(self) -> bool:
        """Every opponent is one of the learner's own snapshots (``selfplay_weight`` 1)."""
        return self.selfplay_weight == 1


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
    overlap: bool = False
    """Play each evaluation's games in the worker processes while training goes on, and take its
    result in at the next checkpoint (or the next evaluation, or the session's end, whichever
    comes first): the evaluations' games overlap the training instead of pausing it, which pays
    where their workers have cores of their own. It needs worker processes: with ``workers`` 1 (and
    no Ray cluster) the evaluations run in the training process, between the updates, as without it.
    A run stays deterministic: the result is taken in at a fixed step, so the best
    model, the metrics and a curriculum promotion (applied then, not right after the games) are
    the same on every repeat."""

    def __post_init__(self) -> None:
        positive("eval.every", self.every)
        positive("eval.games", self.games)
        bounded("eval.workers", self.workers, MAX_WORKERS)
        if not self.agents:
            raise ConfigError("eval.agents", "needs at least one agent")
        if self.best_against not in self.agents:
            raise ConfigError(
                "eval.best_against", f"must be one of eval.agents {list(self.agents)}, got {show(self.best_against)}"
            )


@dataclass(frozen=True)
class PretrainSettings:
    """Optional behaviour-cloning warm start before PPO (skipbo_env/training/pretrain.py)."""

    teacher: str | None = None
    """Agent whose decisions the fresh policy imitates first: a scripted agent, the search agent
    (``search``, ``search:W`` or ``search:W:C``, needs the ``fast`` extra) or the shipped turn network
    ``turn-2p`` (2 players); ``None`` (default) skips pretraining."""
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
        positive("pretrain.dagger_games", self.dagger_games)
        bounded("pretrain.workers", self.workers, MAX_WORKERS)
        positive("pretrain.games", self.games)
        positive("pretrain.epochs", self.epochs)
        positive("pretrain.batch_size", self.batch_size)
        positive("pretrain.learning_rate", self.learning_rate)


PHASE_KEYS = (
    "pipeline", "opponents.mix", "opponents.selfplay_weight", "opponents.selfplay_pool", "opponents.selfplay_every",
    "eval.every", "eval.games", "eval.agents", "eval.best_against", "eval.workers", "eval.overlap",
    "ppo.learning_rate", "ppo.batch_size", "ppo.n_epochs", "ppo.gamma", "ppo.gae_lambda", "ppo.clip_range",
    "ppo.ent_coef", "ppo.vf_coef", "ppo.max_grad_norm",
)
"""Settings a phase may change: what a resumed run may change (resume.RESUMABLE_PPO, the pipeline,
opponents, evaluation) except the rollout size (``ppo.n_steps``, ``n_envs``), the game and the network."""


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
        positive("phases[].start", self.start)
        for key in self.set:
            if key not in PHASE_KEYS:
                raise ConfigError(f"phases[].set.{show_text(str(key), 60)}",
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
    pipeline: bool = False
    """Collect each rollout in a second process while PPO updates on the previous one (needs
    ``vec_env: batched``; :mod:`skipbo_env.training.pipeline`): both cores work, and every rollout
    but the first is played by the policy one update older than the one its update starts from."""
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
    ray: str | None = None
    """Play the evaluation and pretraining (teacher, DAgger) games as Ray tasks on the cluster at
    this address (``auto``, ``HOST:PORT``; the ``ray`` extra; ``--ray auto``) instead of
    ``eval.workers`` and ``pretrain.workers`` local processes; ``None`` (default): local. The run
    folder must be reachable at the same path on every node. Results do not depend on it."""

    def __post_init__(self) -> None:
        if "\0" in self.name or "\0" in self.runs_dir:
            field_ = "name" if "\0" in self.name else "runs_dir"
            raise ConfigError(field_, f"must not hold a NUL character, got {show(getattr(self, field_))}")
        if not self.name or "/" in self.name or self.name.startswith(".") or len(self.name.encode()) > 255:
            raise ConfigError("name", f"must be a plain folder name, got {show(self.name)}")
        if not self.runs_dir:
            raise ConfigError("runs_dir", "must name a folder")
        check_seed("seed", self.seed)
        bounded("total_timesteps", self.total_timesteps, MAX_TIMESTEPS)
        bounded("n_envs", self.n_envs, MAX_ENVS)
        check_threads("threads", self.threads)
        check_ray("ray", self.ray)
        positive("checkpoint_every", self.checkpoint_every)
        if self.pipeline and self.vec_env != "batched":
            raise ConfigError("pipeline", f"collects rollouts in the batched engine: it needs vec_env batched, "
                                          f"got {show(self.vec_env)}")
        if self.init_from is not None and not is_trained_opponent(self.init_from):
            # the file itself is read (and checked) when a new run starts: a resume does not need it
            raise ConfigError("init_from", f"must be a shipped agent ({', '.join(sorted(SHIPPED))}) or a "
                                           f".safetensors agent file, got {show(self.init_from)}")
        names = set(self.opponents.mix) if not self.opponents.curriculum else set()
        for stage in self.opponents.curriculum:
            names |= set(stage.opponents)
        for name in sorted(names | set(self.eval.agents)):
            if name not in BOTS and not is_trained_opponent(name):
                raise ConfigError("opponents", f"unknown agent {show(name)}; known: {', '.join(sorted(BOTS))}, "
                                               f"the shipped agents ({', '.join(sorted(SHIPPED))}) and "
                                               f".safetensors agent files")
        if self.pretrain.teacher is not None:
            for name in sorted(self.pretrain.opponents):  # the cloning games seat scripted agents only
                if name not in BOTS:
                    raise ConfigError(
                        "pretrain.opponents", f"unknown agent {show(name)}; known: {', '.join(sorted(BOTS))}"
                    )
            if is_search_spec(self.pretrain.teacher):  # the search agent may teach, not play
                try:
                    parse_search_spec(self.pretrain.teacher)
                except ValueError as exc:
                    raise ConfigError("pretrain.teacher", str(exc)) from None
            elif self.pretrain.teacher in SHIPPED:  # a shipped network may teach if it reads views: turn-2p
                if self.pretrain.teacher != "turn-2p":
                    raise ConfigError(
                        "pretrain.teacher",
                        f"{show(self.pretrain.teacher)} cannot teach: a teacher decides "
                        "from the seat's view (a scripted agent, the search agent "
                        "or turn-2p)",
                    )
            elif self.pretrain.teacher not in BOTS:
                raise ConfigError("pretrain.teacher", f"unknown agent {show(self.pretrain.teacher)}; known: "
                                                      f"{', '.join(sorted(BOTS))}, search specs and turn-2p")
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


def positive(name: str, value: float) -> None:
    """Refuse ``value`` <= 0, naming the setting ``name``."""
    if value <= 0:
        raise ConfigError(name, f"must be > 0, got {value}")


def bounded(name: str, value: int, high: int) -> None:
    """Refuse ``value`` outside ``1..high``, naming the setting ``name``."""
    if not 1 <= value <= high:
        raise ConfigError(name, f"must be in 1..{high}, got {show_text(str(value), 40)}")


MAX_TIMESTEPS = 10**12
"""Most learner decisions a run asks for."""
MAX_ENVS = 4096
"""Most environments a run steps at once (each rollout holds n_steps x n_envs observations)."""
MAX_SEED = 2**63 - 1
"""Largest seed a run takes (torch's and numpy's generators take 63-bit seeds)."""


def check_seed(name: str, value: int) -> None:
    """Refuse a seed outside ``0..MAX_SEED``, naming the setting ``name``."""
    if not 0 <= value <= MAX_SEED:
        raise ConfigError(name, f"must be in 0..2**63-1, got {show_text(str(value), 40)}")


MAX_THREADS = 1024
"""Most torch threads a run asks for."""


def check_threads(name: str, value: int) -> None:
    """Refuse a thread count outside ``1..MAX_THREADS``, naming the setting ``name``."""
    bounded(name, value, MAX_THREADS)


def check_ray(name: str, value: str | None) -> None:
    """Refuse a ``ray`` setting that is neither ``None`` nor a Ray address, naming the setting ``name``."""
    if value is not None:
        try:
            check_ray_address(value)
        except ValueError as exc:
            raise ConfigError(name, str(exc)) from None


def _check_weights(name: str, weights: Mapping[str, float]) -> None:
    if not weights:
        raise ConfigError(name, "needs at least one agent with a weight")
    for agent, weight in weights.items():
        if weight < 0:
            raise ConfigError(f"{name}.{agent}", f"weight must be >= 0, got {weight}")
    if sum(weights.values()) <= 0:
        raise ConfigError(name, "weights must not all be zero")


__all__ = ["PHASE_KEYS", "CurriculumStage", "EvalSettings", "OpponentSettings", "PPOSettings", "Phase",
           "MAX_ENVS", "MAX_SEED", "MAX_THREADS", "MAX_TIMESTEPS", "PretrainSettings", "TrainConfig",
           "bounded", "check_seed", "check_threads",
           "positive"]
