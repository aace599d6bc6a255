"""The heuristic's planner compiled: the same plans as :func:`skipbo_env.bots.heuristic.plan_turn`.

:func:`compiled_plan` packs the decoded observation into the compiled planner's position vector and
runs the same depth-first search, visit order, node budget and float sums as the Python planner
(``tests/test_compiled_heuristic.py`` compares them); :func:`compiled_heuristic` builds a
:class:`~skipbo_env.bots.HeuristicAgent` on it, which ``load_agent("heuristic")`` uses with numba.
The batched engine packs the same vector from its arrays and keeps plans in a :class:`PlanCache`.
"""

from __future__ import annotations

from dataclasses import astuple, fields

import numpy as np

from ..bots.heuristic import HeuristicAgent, HeuristicWeights, default_weights
from ..encoding import ObservationFields
from ..rules import ALL_MOVES, GameConfig, Move
from . import _kernels as K

_WEIGHT_NAMES = tuple(f.name for f in fields(HeuristicWeights))
if len(_WEIGHT_NAMES) != K.W_SIZE or _WEIGHT_NAMES[K.W_MAX_NODES] != "max_nodes":  # pragma: no cover
    raise ImportError("_kernels.W_* do not match HeuristicWeights' fields")
_WEIGHT_CACHE: dict[HeuristicWeights, np.ndarray] = {}


def weights_vector(weights: HeuristicWeights) -> np.ndarray:
    """The weights as the kernel's float64 vector (``_kernels.W_*``): the dataclass fields in order,
    then ``unseen_card ** k`` and ``own_unseen_card ** k`` for k = 0..12 (Python's powers, as
    :func:`skipbo_env.bots.heuristic.reach_chance` computes them)."""
    vec = _WEIGHT_CACHE.get(weights)
    if vec is None:
        powers = (tuple(weights.unseen_card ** k for k in range(13))
                  + tuple(weights.own_unseen_card ** k for k in range(13)))
        vec = np.array(astuple(weights) + powers, dtype=np.float64)
        assert vec.shape == (K.W_VECTOR,)
        _WEIGHT_CACHE[weights] = vec
    return vec


class PlanCache:
    """The in-engine heuristic of a batch: one plan and one set of weights per (game, seat).

    Row ``game * num_players + seat`` holds that seat's weights (:func:`weights_vector`), its
    plan, its (length, next index, expectation valid) state and the signature its next decision
    must show (``_kernels.heuristic_choice``). :meth:`BatchEngine.advance` plays heuristic seats
    with it. Every row starts with ``weights``, by default the table's
    (:func:`~skipbo_env.bots.heuristic.default_weights`); :meth:`set_weights` gives rows others.
    """

    def __init__(self, games: int, num_players: int, weights: HeuristicWeights | None = None) -> None:
        rows = games * num_players
        self.num_players = num_players
        vec = weights_vector(default_weights(num_players) if weights is None else weights)
        self.weights = np.repeat(vec[None, :], rows, axis=0)
        self.plans = np.zeros((rows, K.PLAN_MAX), np.int64)
        self.state = np.zeros((rows, 3), np.int64)
        self.expect = np.zeros((rows, K.H_SIG), np.int64)

    def set_weights(self, games: np.ndarray, seat: int, weights: HeuristicWeights) -> None:
        """Seat ``seat`` of each game in ``games`` plans with ``weights`` from its next search on."""
        if not isinstance(weights, HeuristicWeights):
            raise TypeError(f"weights must be HeuristicWeights, got {type(weights).__name__}")
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be in 0..{self.num_players - 1}, got {seat}")
        rows = np.asarray(games, np.int64)
        self.weights.reshape(-1, self.num_players, K.W_VECTOR)[rows, seat] = weights_vector(weights)

    def forget(self, games: np.ndarray | None = None) -> None:
        """Drop the plans of ``games`` (default: every game): their seats plan afresh at their next decision."""
        if games is None:
            self.state[:] = 0
        else:
            self.state.reshape(-1, self.num_players, 3)[games] = 0


def _card(card: int | None) -> int:
    return 0 if card is None else card


def pack_position(obs: ObservationFields, config: GameConfig) -> np.ndarray:
    """The kernel's position vector (``_kernels.H_*``) of the seat the observation belongs to."""
    pos = np.zeros(K.H_SIZE, np.int64)
    pos[K.H_HAND + 1:K.H_HAND + 14] = obs.hand_counts
    pos[K.H_BUILD:K.H_BUILD + 4] = obs.building_values
    me = obs.me
    pos[K.H_STOCK] = _card(me.stock_top)
    pos[K.H_LAST] = me.stock_size == 1
    for d in range(4):
        top, second = me.discard_tops[d], me.discard_seconds[d]
        pos[K.H_OWN_N + d] = 0 if top is None else (1 if second is None else 2)
        pos[K.H_OWN + 2 * d] = _card(top)
        pos[K.H_OWN + 2 * d + 1] = _card(second)
        pos[K.H_OWN_SIZE + d] = me.discard_sizes[d]
    partner = obs.partner
    if partner is not None:
        pos[K.H_PARTNER] = 1
        pos[K.H_PSTOCK] = _card(partner.stock_top)
        for d in range(4):
            top, second = partner.discard_tops[d], partner.discard_seconds[d]
            pos[K.H_PN + d] = 0 if top is None else (1 if second is None else 2)
            pos[K.H_PCARDS + 2 * d] = _card(top)
            pos[K.H_PCARDS + 2 * d + 1] = _card(second)
    pos[K.H_DRAWABLE] = obs.draw_size + obs.completed_size
    pos[K.H_WILD_OK] = config.allow_wild_discard
    pos[K.H_MUST] = config.must_play_stock
    others = obs.seats[1:]
    pos[K.H_OTHERS] = len(others)
    for s, seat in enumerate(others):
        o = K.H_SEATS + s * K.H_SEAT_W
        pos[o] = _card(seat.stock_top)
        pos[o + 1:o + 5] = [_card(c) for c in seat.discard_tops]
        pos[o + 5] = seat.is_partner
    return pos


def compiled_plan(obs: ObservationFields, config: GameConfig,
                  weights: HeuristicWeights | None = None) -> tuple[Move, ...]:
    """:func:`skipbo_env.bots.heuristic.plan_turn`, compiled (same plan; by default the table's
    weights, :func:`~skipbo_env.bots.heuristic.default_weights`)."""
    if weights is None:
        weights = default_weights(config.num_players)
    out = np.empty(K.PLAN_MAX, np.int64)
    length = K.heuristic_plan(pack_position(obs, config), weights_vector(weights), out)
    return tuple(ALL_MOVES[a] for a in out[:length].tolist())


def compiled_heuristic(config: GameConfig, seed: int | None = None,
                       weights: HeuristicWeights | None = None) -> HeuristicAgent:
    """A :class:`~skipbo_env.bots.HeuristicAgent` that plans with :func:`compiled_plan` (same moves, faster)."""
    return HeuristicAgent(config, seed, weights, planner=compiled_plan)


__all__ = ["PlanCache", "compiled_heuristic", "compiled_plan", "pack_position", "weights_vector"]
