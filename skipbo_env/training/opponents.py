"""Who the learner plays against: the draw weights of a run and the draws themselves.

A weight key is a scripted agent name (:data:`skipbo_env.bots.BOTS`), a trained
agent (a shipped one such as ``turn-2p``, or a ``.safetensors`` agent file) or the
path of a MaskablePPO snapshot of the learner (self-play). The weights come
from the configuration's mix, or the current curriculum stage, plus the
self-play pool (:func:`opponent_weights`); each env process draws its
opponents per episode (:class:`OpponentDraws`), and the batched engine,
whose games share one set of opponents, draws them per rollout
(:class:`BatchedOpponents`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..agents import PPOAgent, is_checkpoint_spec
from ..bots import BOTS
from ..episode import load_opponent
from ..rules import ConfigError, GameConfig
from .checkpoints import TrainState
from .settings import TrainConfig, is_trained_opponent


def opponent_weights(cfg: TrainConfig, state: TrainState) -> dict[str, float]:
    """Current draw weights: the mix or curriculum stage, plus self-play snapshots (only the
    snapshots in pure self-play; a snapshot is taken before the first rollout, so the pool of a
    running pure self-play run is never empty)."""
    ops = cfg.opponents
    if ops.pure_selfplay:
        if not state.pool:
            raise ConfigError("opponents.selfplay_weight", "pure self-play has no snapshot of the learner yet")
        return {snap: 1.0 / len(state.pool) for snap in state.pool}
    scripted = dict(ops.curriculum[state.stage].opponents) if ops.curriculum else dict(ops.mix)
    total = sum(scripted.values())
    weights = {k: v / total for k, v in scripted.items()}
    if ops.selfplay_weight > 0 and state.pool:
        weights = {k: v * (1 - ops.selfplay_weight) for k, v in weights.items()}
        for snap in state.pool:
            weights[snap] = ops.selfplay_weight / len(state.pool)
    return weights


class OpponentDraws:
    """Weighted opponent draws shared by both training paths.

    A scripted name is passed on as the name (so the env builds and reseeds
    the agent); a trained agent (shipped name or agent file) is loaded once,
    when the weights first name it (so a file that does not play the run's
    game fails then, naming it), a snapshot path when first drawn; both are
    cached.
    """

    def __init__(self, config: GameConfig, weights: Mapping[str, float]) -> None:
        self.config = config
        self._snapshots: dict[str, Any] = {}
        self.set_weights(weights)

    def set_weights(self, weights: Mapping[str, float]) -> None:
        specs = list(weights)
        w = np.asarray([float(weights[s]) for s in specs], dtype=np.float64)
        if not specs or (w < 0).any() or w.sum() <= 0:
            raise ConfigError("opponents", f"weights must be >= 0 and not all zero, got {dict(weights)}")
        for spec in filter(is_trained_opponent, specs):  # snapshots: loaded when first drawn
            self._agent(spec)
        self._specs, self._probs = specs, w / w.sum()

    def draw(self, rng: np.random.Generator) -> list[Any]:
        """One opponent per other seat, drawn independently."""
        picks = rng.choice(len(self._specs), size=self.config.num_players - 1, p=self._probs)
        return [self._agent(self._specs[i]) for i in picks]

    def _agent(self, spec: str) -> Any:
        if spec in BOTS:
            return spec
        if spec not in self._snapshots:
            if is_checkpoint_spec(spec):
                self._snapshots[spec] = PPOAgent(spec, self.config, allow_pickle=True)  # the run's own snapshots
            elif is_trained_opponent(spec):
                self._snapshots[spec] = load_opponent(spec, self.config, 0, seed=0)
            else:
                raise ConfigError("opponents", f"unknown agent {spec!r}")
        return self._snapshots[spec]


class BatchedOpponents:
    """Opponent draws for the batched engine, whose games share one set of opponents.

    At the start of every rollout each opponent seat is drawn from the weights
    (the trainer's own generator, seeded from the run seed and the step count).
    """

    def __init__(self, cfg: TrainConfig, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.draws = OpponentDraws(cfg.game, {"random": 1.0})  # the trainer sets the real weights

    def draw(self, venv: Any) -> None:
        venv.env_method("set_opponents", self.draws.draw(self.rng), indices=[0])
