"""The batched engine: B independent games of one configuration, stepped by compiled kernels.

:class:`BatchEngine` owns the kernels' arrays and offers its callers whole-batch operations: deal,
masks, observations, validated steps, in-engine agents (:class:`SeatKind`) and what a search reads.
It follows the rules core exactly (``tests/test_vector_engine.py``); :meth:`BatchEngine.load` and
:meth:`BatchEngine.export` move a game between the two through ``GameState.to_dict()``. Each slot
draws from its own numpy ``PCG64`` state as the rules core does (docs/vector.md, "Randomness").
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Any

import numpy as np

from ..encoding import num_actions
from ..observations import observation_spec
from ..observations.v1 import COUNT_SCALE, DISCARD_SIZE_SCALE
from ..rules import (
    ALL_MOVES,
    DECK_SIZE,
    END_TURN,
    HAND_SIZE,
    NUM_SOLO_MOVES,
    WILD,
    ConfigError,
    Discard,
    GameConfig,
    GameState,
    Play,
    Source,
)
from ..rules.cards import PILE_COMPLETE
from ..rules.errors import GameOverError, IllegalMoveError
from ..rules.serialization import FORMAT, VERSION
from . import _kernels as K
from .compiled_heuristic import PlanCache


class SeatKind(IntEnum):
    """Who plays a seat when the engine advances its games (:meth:`BatchEngine.advance`)."""

    LEARNER = 0
    """The caller's seat: advancing stops when it is to move."""
    RANDOM = 1
    """The in-engine random agent (a uniformly random legal action)."""
    GREEDY = 2
    """The in-engine greedy agent (:class:`skipbo_env.bots.GreedyAgent`'s moves)."""
    OUTSIDE = 3
    """An agent outside the kernels (a Python callback, a batched network): advancing stops."""
    HEURISTIC = 4
    """The compiled heuristic planner, with a :class:`PlanCache` (else it stops like ``OUTSIDE``)."""


OBSERVATION = "v1"
"""The observation the kernels write (:mod:`skipbo_env.observations`); their offsets are checked
against its layout at import, and the engine refuses any other."""
_layout = observation_spec(OBSERVATION).layout


def check_engine_observation(name: Any) -> str:
    """``name`` if it is :data:`OBSERVATION`; :class:`~skipbo_env.rules.ConfigError` naming both else."""
    spec = observation_spec(name)  # an unknown name: ConfigError naming the known ones
    if spec.name != OBSERVATION:
        raise ConfigError("observation", f"the batched engine writes observation {OBSERVATION!r}, not {spec.name!r}")
    return spec.name
AGENT_KINDS = {"random": SeatKind.RANDOM, "greedy": SeatKind.GREEDY}
"""In-engine agents that choose one action at a time (:meth:`BatchEngine.agent_actions`), by name."""


def _check_kernel_constants() -> None:
    """The kernels keep literal constants (numba's cached compilation needs them); they must equal the
    card constants, the action table, the layout of observation :data:`OBSERVATION` and the seat
    kinds they stand for. Runs at import."""
    head = _layout(GameConfig(num_players=2))
    seat0, seat1 = head.start("seat0.stock_top"), head.start("seat1.stock_top")
    in_seat = {name.removeprefix("seat0."): start - seat0 for name, start, _ in head.pieces
               if name.startswith("seat0.")}
    pairs = {
        "WILD": (K.WILD, WILD), "HAND_SIZE": (K.HAND_SIZE, HAND_SIZE), "DECK": (K.DECK, DECK_SIZE),
        "PILE_COMPLETE": (K.PILE_COMPLETE, PILE_COMPLETE),
        "OBS_HAND": (K.OBS_HAND, head.start("hand_counts")), "OBS_BUILD": (K.OBS_BUILD, head.start("building_values")),
        "OBS_SEATS": (K.OBS_SEATS, seat0), "OBS_SEAT_WIDTH": (K.OBS_SEAT_WIDTH, seat1 - seat0),
        "OBS_STOCK_SIZE": (K.OBS_STOCK_SIZE, in_seat["stock_size"]),
        "OBS_HAND_SIZE": (K.OBS_HAND_SIZE, in_seat["hand_size"]),
        "OBS_TOPS": (K.OBS_TOPS, in_seat["discard_tops"]), "OBS_SECONDS": (K.OBS_SECONDS, in_seat["discard_seconds"]),
        "OBS_COUNTS": (K.OBS_COUNTS, in_seat["discard_counts"]), "OBS_DSIZES": (K.OBS_DSIZES, in_seat["discard_sizes"]),
        "OBS_PARTNER": (K.OBS_PARTNER, in_seat["is_partner"]),
        "A_HAND": (K.A_HAND, ALL_MOVES.index(Play(Source.HAND, 0, card=1))),
        "A_HAND_WILD": (K.A_HAND_WILD, ALL_MOVES.index(Play(Source.HAND, 0, card=WILD))),
        "A_STOCK": (K.A_STOCK, ALL_MOVES.index(Play(Source.STOCK, 0))),
        "A_DISC": (K.A_DISC, ALL_MOVES.index(Play(Source.DISCARD, 0, discard_pile=0))),
        "A_DISCARD": (K.A_DISCARD, ALL_MOVES.index(Discard(1, 0))),
        "A_END": (K.A_END, ALL_MOVES.index(END_TURN)),
        "A_PSTOCK": (K.A_PSTOCK, ALL_MOVES.index(Play(Source.PARTNER_STOCK, 0))),
        "A_PDISC": (K.A_PDISC, ALL_MOVES.index(Play(Source.PARTNER_DISCARD, 0, discard_pile=0))),
        **{f"KIND_{kind.name}": (getattr(K, f"KIND_{kind.name}"), int(kind)) for kind in SeatKind},
    }
    wrong = [f"{name}: kernels {ours}, rules/observation {theirs}"
             for name, (ours, theirs) in pairs.items() if ours != theirs]
    if NUM_SOLO_MOVES != K.A_PSTOCK:
        wrong.append(f"A_PSTOCK: {K.A_PSTOCK}, the solo action count {NUM_SOLO_MOVES}")
    if wrong:
        raise ImportError(f"the batched engine's kernel constants disagree with the rules and observation "
                          f"{OBSERVATION!r}: " + "; ".join(wrong))


_check_kernel_constants()

_M64 = (1 << 64) - 1


def pcg_words(raw: Mapping[str, Any]) -> list[int]:
    """A numpy ``PCG64`` state dict (``bit_generator.state``) as the kernels' six words: state
    hi/lo, increment hi/lo, ``has_uint32``, ``uinteger``."""
    state, inc = raw["state"]["state"], raw["state"]["inc"]
    return [state >> 64, state & _M64, inc >> 64, inc & _M64, raw["has_uint32"], raw["uinteger"]]


def _stock_size(config: GameConfig) -> int:
    """The configuration's stock size (``GameConfig`` resolves a default at construction)."""
    size = config.stock_size
    assert size is not None
    return size


def _config_array(config: GameConfig) -> np.ndarray:
    """The ``cf`` array of the kernels: settings and the row widths of this configuration."""
    stock_size = _stock_size(config)
    cf = np.zeros(K.CF_SIZE, np.int64)
    cf[K.C_N] = config.num_players
    cf[K.C_S] = stock_size
    cf[K.C_PARTNER] = int(config.partner_game)
    cf[K.C_WILD_OK] = int(config.allow_wild_discard)
    cf[K.C_MUST] = int(config.must_play_stock)
    cf[K.C_LIMIT] = config.turn_limit
    cf[K.C_FIRST] = -1 if config.first_player is None else config.first_player
    cf[K.C_NA] = num_actions(config)
    cf[K.C_SC] = stock_size + 4 * K.CAP
    cf[K.C_OBS] = _layout(config).size
    cf[K.C_MOVE_LIMIT] = config.move_limit
    return cf


def _obs_tables(config: GameConfig) -> np.ndarray:
    """Float32 lookup table of every scaled value ``encoding.encode_view`` writes (quotients rounded once)."""
    count_scale = COUNT_SCALE
    stock_size = _stock_size(config)
    sizes = np.arange(DECK_SIZE + 1)
    parts: list[np.ndarray] = [
        np.arange(HAND_SIZE + 1, dtype=np.float32) / HAND_SIZE,  # hand counts (float32 / int)
        np.array([h / HAND_SIZE for h in range(HAND_SIZE + 1)], dtype=np.float32),  # hand sizes
        np.array([k / DECK_SIZE for k in sizes], dtype=np.float32),  # draw and completed sizes
        sizes.astype(np.float32) / DISCARD_SIZE_SCALE,  # discard sizes (float32 / float)
        (sizes.astype(np.float32)[:, None] / count_scale[None, :]).ravel(),  # discard counts
        np.array([k / float(stock_size) for k in range(stock_size + 1)], dtype=np.float32),
    ]
    tab = np.concatenate(parts).astype(np.float32)
    assert tab.shape[0] == K.T_STOCK + stock_size + 1
    return tab


def _plan_arrays(kinds: np.ndarray, plans: PlanCache | None) -> tuple[np.ndarray | None, ...]:
    """The plan cache's arrays for the advance kernels; four Nones when no seat plans, so that the
    first env without a heuristic seat does not wait for the planner to compile."""
    if plans is None or not np.any(kinds == SeatKind.HEURISTIC):
        return None, None, None, None
    return plans.weights, plans.plans, plans.state, plans.expect


def _as_rows(rows: Any, batch: int) -> np.ndarray:
    """Slot indexes from ``None`` (all), a bool mask or a sequence of ints; bad input raises."""
    if rows is None:
        return np.arange(batch, dtype=np.int64)
    arr = np.asarray(rows)
    if arr.dtype == bool:
        if arr.shape != (batch,):
            raise ValueError(f"a slot mask must have shape ({batch},), got {arr.shape}")
        return np.flatnonzero(arr).astype(np.int64)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"slots must be a 1-D sequence of ints or a bool mask, got {rows!r}")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= batch):
        raise ValueError(f"slot indexes must be in 0..{batch - 1}, got {arr.tolist()}")
    return arr


MEMORY_SHARE = 0.5
"""The largest share of the machine's memory a batch (engine arrays plus one observation batch) may need."""


def batch_bytes(config: GameConfig, batch_size: int) -> int:
    """Bytes a batch of ``batch_size`` games needs: the engine's arrays and one batch of
    observations (float32) and masks, as the vector envs hold them."""
    n = config.num_players
    stock_size = _stock_size(config)
    per_game = (
        K.G_SEATS + n * K.SEAT_HOT  # hot
        + K.K_SEATS + n * (stock_size + 4 * K.CAP)  # cold
        + 8 * 4 + 6 * 8  # turn, moves, legal counts, movers; pcg
        + 2 * num_actions(config)  # masks, legal buffer
        + 4 * _layout(config).size * 2  # observations and final observations
        + num_actions(config)  # the learner's bool masks
    )
    return per_game * batch_size


def check_batch_memory(config: GameConfig, batch_size: int) -> None:
    """Refuse a batch that would need more than :data:`MEMORY_SHARE` of the machine's memory,
    before allocating anything (a ``ValueError`` with both sizes)."""
    need = batch_bytes(config, batch_size)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): do not guess
        return
    if need > MEMORY_SHARE * total:
        raise ValueError(
            f"{batch_size:,} games need about {need / 2**30:.1f} GiB of arrays, more than "
            f"{MEMORY_SHARE:.0%} of this machine's {total / 2**30:.1f} GiB; use fewer games (n_envs / batch_size)"
        )


class BatchEngine:
    """``batch_size`` games of ``config``, all dealt at construction.

    Attributes (arrays are live; change games only through the methods):
        config, batch_size, num_actions, obs_size.
        hot, cold, turn, moves, pcg, arng, cf, tab: the kernels' arrays (described in ``_kernels``;
            read and change them through the methods).
        legal_counts: number of legal actions per game, as of the last :meth:`masks`.
    """

    def __init__(
        self, config: GameConfig, batch_size: int, seed: int | np.random.SeedSequence | None = None
    ) -> None:
        if not isinstance(config, GameConfig):
            raise TypeError(f"config must be a GameConfig, got {type(config).__name__}")
        if type(batch_size) is not int or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        check_batch_memory(config, batch_size)
        self.config = config
        self.batch_size = batch_size
        self.cf = _config_array(config)
        self.tab = _obs_tables(config)
        self.num_actions = int(self.cf[K.C_NA])
        self.obs_size = int(self.cf[K.C_OBS])
        n = config.num_players
        self.hot = np.zeros((batch_size, K.G_SEATS + n * K.SEAT_HOT), np.uint8)
        self.cold = np.zeros((batch_size, K.K_SEATS + n * int(self.cf[K.C_SC])), np.uint8)
        self.turn = np.zeros(batch_size, np.int64)
        self.moves = np.zeros(batch_size, np.int64)
        self.pcg = np.zeros((batch_size, 6), np.uint64)
        self.arng = np.zeros(batch_size, np.uint64)
        self.legal_counts = np.zeros(batch_size, np.int64)
        self._masks = np.zeros((batch_size, self.num_actions), np.int8)
        self._masks_view = self._masks.view()  # read-only: step() validates against this buffer
        self._masks_view.flags.writeable = False
        self._legal = np.zeros((batch_size, self.num_actions), np.uint8)
        self._all = np.arange(batch_size, dtype=np.int64)
        self._movers = np.full(batch_size, -1, np.int64)  # "the seat to move" for every game
        self._err = np.zeros(2, np.int64)
        self.seed(seed)
        self.reset()

    # ------------------------------------------------------------ seeding
    def seed(self, seed: int | np.random.SeedSequence | None = None) -> None:
        """Reseed every slot's generators (used from the next deal or reshuffle on).

        Slot ``i`` gets ``PCG64(SeedSequence(seed).spawn(B + 1)[i])``; the last
        child seeds the agent streams. ``None`` seeds from fresh entropy.
        """
        if isinstance(seed, np.random.SeedSequence):
            children = seed.spawn(self.batch_size + 1)
        elif seed is None or (type(seed) is int and seed >= 0):
            children = np.random.SeedSequence(seed).spawn(self.batch_size + 1)
        else:
            raise ValueError(f"seed must be a non-negative int, a SeedSequence or None, got {seed!r}")
        for b in range(self.batch_size):
            self._set_pcg(b, np.random.PCG64(children[b]).state)
        self.arng[:] = children[-1].generate_state(self.batch_size, np.uint64)

    def _set_pcg(self, b: int, raw: Mapping[str, Any]) -> None:
        self.pcg[b] = pcg_words(raw)

    def generator(self, slot: int) -> np.random.Generator:
        """A numpy Generator holding a copy of the slot's current PCG64 state."""
        hi, lo, ihi, ilo, has, value = (int(x) for x in self.pcg[slot])
        bits = np.random.PCG64()
        bits.state = {
            "bit_generator": "PCG64",
            "state": {"state": (hi << 64) | lo, "inc": (ihi << 64) | ilo},
            "has_uint32": has,
            "uinteger": value,
        }
        return np.random.Generator(bits)

    # ------------------------------------------------------------ status
    @property
    def status(self) -> np.ndarray:
        """Per game: 0 running, 1 won, 2 truncated (at the turn limit or the move limit)."""
        return self.hot[:, K.G_DONE].copy()

    @property
    def done(self) -> np.ndarray:
        """Per game: True once won or truncated."""
        return self.hot[:, K.G_DONE] != 0

    @property
    def current(self) -> np.ndarray:
        """Per game: the seat to move."""
        return self.hot[:, K.G_CUR].astype(np.int64)

    @property
    def winner(self) -> np.ndarray:
        """Per game: the seat whose play won, -1 while none."""
        return self.hot[:, K.G_WIN].astype(np.int64) - 1

    @property
    def stock_sizes(self) -> np.ndarray:
        """(B, num_players) int64: each seat's stock size in every game."""
        seats = K.G_SEATS + np.arange(self.config.num_players) * K.SEAT_HOT + K.S_STN
        return self.hot[:, seats].astype(np.int64)

    def reach_chances(self, seat: int, q: float) -> np.ndarray:
        """Per game: the heuristic's chance that ``seat`` brings a building pile to its stock top this
        turn from its hand and discard tops (:func:`skipbo_env.bots.heuristic.reach_chance`, compiled),
        each other missing number coming from unseen cards with chance ``q``; 1 for a wild stock
        top, 0 for an empty stock. The piles' failure chances multiply in pile order."""
        if not isinstance(seat, int | np.integer) or isinstance(seat, bool) or not 0 <= seat < self.config.num_players:
            raise ValueError(f"seat must be in 0..{self.config.num_players - 1}, got {seat!r}")
        powers = q ** np.arange(K.PILE_COMPLETE + 1)  # numpy's vectorized powers: the search's scores rest on them
        out = np.empty(self.batch_size, np.float64)
        K.batch_reach_chance(self.hot, int(seat), powers, out)
        return out

    @property
    def legal_ids(self) -> list[np.ndarray]:
        """Per game, the legal action ids (ascending) as of the last :meth:`masks`."""
        return [self._legal[b, : self.legal_counts[b]].astype(np.int64) for b in range(self.batch_size)]

    # ------------------------------------------------------------ batch operations
    def reset(self, slots: Any = None) -> None:
        """Deal new games in ``slots`` (default all): indexes or a bool mask."""
        which = np.zeros(self.batch_size, np.int8)
        which[_as_rows(slots, self.batch_size)] = 1
        K.batch_deal(self.hot, self.cold, self.turn, self.moves, self.pcg, self.cf, which)

    def masks(self) -> np.ndarray:
        """(B, num_actions) int8 legal-action masks of the seat to move; rows of games over are 0.

        Returns a read-only view of the engine's own buffer (which :meth:`step`
        validates against), overwritten by the next call: copy it to keep it.
        The number of legal actions per game is left in :attr:`legal_counts`,
        the ids themselves in :attr:`legal_ids`.
        """
        K.batch_masks(self.hot, self.cf, self._masks, self._legal, self.legal_counts)
        return self._masks_view

    def observations(self, seats: Any = None, out: np.ndarray | None = None) -> np.ndarray:
        """(B, obs_size) float32 observations; ``seats`` per game (default: the seat to move)."""
        if out is None:
            out = np.empty((self.batch_size, self.obs_size), np.float32)
        elif out.shape != (self.batch_size, self.obs_size) or out.dtype != np.float32:
            raise ValueError(f"out must be a float32 array of shape {(self.batch_size, self.obs_size)}")
        if seats is None:
            seat_arr = self._movers
        else:
            seat_arr = np.ascontiguousarray(np.broadcast_to(np.asarray(seats, dtype=np.int64), (self.batch_size,)))
            if seat_arr.min() < 0 or seat_arr.max() >= self.config.num_players:
                raise ValueError(f"seats must be in 0..{self.config.num_players - 1}")
        K.batch_observe(self.hot, self.turn, self.cf, self.tab, seat_arr, out)
        return out

    def observe_rows(self, rows: Sequence[int] | np.ndarray, seats: Sequence[int] | np.ndarray) -> np.ndarray:
        """Observation of ``seats[i]`` in game ``rows[i]``, one row each."""
        rows_arr = _as_rows(rows, self.batch_size)
        seat_arr = np.asarray(seats, dtype=np.int64).reshape(-1)
        if seat_arr.shape != rows_arr.shape:
            raise ValueError("rows and seats must have the same length")
        if seat_arr.size and (seat_arr.min() < 0 or seat_arr.max() >= self.config.num_players):
            raise ValueError(f"seats must be in 0..{self.config.num_players - 1}")
        out = np.empty((rows_arr.shape[0], self.obs_size), np.float32)
        K.batch_observe_rows(self.hot, self.turn, self.cf, self.tab, rows_arr, seat_arr, out)
        return out

    def step(self, actions: Any, rows: Any = None) -> None:
        """Apply ``actions[i]`` to game ``rows[i]`` (default: one action per game, in slot order).

        Every action is checked first; if one is out of range, comes after the
        end of its game or is illegal, an error naming the slot and the move is
        raised and no game changes.
        """
        if rows is None:
            rows_arr = self._all
        else:
            rows_arr = _as_rows(rows, self.batch_size)
            if np.unique(rows_arr).size != rows_arr.size:
                raise ValueError(f"a slot may take one action per step, got slots {rows_arr.tolist()}")
        acts = np.asarray(actions)
        if acts.shape != rows_arr.shape or (acts.size and acts.dtype.kind not in "iu"):
            raise ValueError(f"actions must be {rows_arr.shape[0]} ints, got {acts!r}")
        if acts.dtype != np.int64:
            acts = acts.astype(np.int64)
        if not K.batch_check(self.hot, self.cf, self._masks, self._legal, self.legal_counts, rows_arr, acts, self._err):
            i = int(self._err[0])
            self._raise(int(rows_arr[i]), int(acts[i]), int(self._err[1]))
        K.batch_apply(self.hot, self.cold, self.turn, self.moves, self.pcg, self.cf, rows_arr, acts)

    def _raise(self, slot: int, action: int, code: int) -> None:
        if code == 1:
            raise IllegalMoveError(action, f"slot {slot}: action ids are 0..{self.num_actions - 1}")
        move = ALL_MOVES[action]
        if code == 2:
            raise GameOverError(move, f"slot {slot}: the game is over; reset the slot first")
        seat = int(self.hot[slot, K.G_CUR])
        raise IllegalMoveError(move, f"slot {slot}: action {action} is not legal for seat {seat} now")

    def agent_actions(self, agent: str) -> np.ndarray:
        """The in-engine agent's choice (``'random'`` or ``'greedy'``) in every game; -1 for games over."""
        if agent not in AGENT_KINDS:
            raise ValueError(f"unknown in-engine agent {agent!r}; known: {', '.join(AGENT_KINDS)}")
        out = np.empty(self.batch_size, np.int64)
        K.batch_agent_actions(self.hot, self.cf, self.arng, int(AGENT_KINDS[agent]), out)
        return out

    def random_legal(self) -> np.ndarray:
        """A uniformly random legal action in every game; -1 for games over.

        Drawn from each slot's agent stream, as the in-engine RandomAgent does.
        Reuses the legal lists of the last :meth:`masks` for games unchanged since.
        """
        out = np.empty(self.batch_size, np.int64)
        K.batch_random_legal(self.hot, self.cf, self._masks, self._legal, self.legal_counts, self.arng, out)
        return out

    def play_random(self, rounds: int, with_obs: bool = False) -> int:
        """``rounds`` rounds of one uniformly random legal decision in every game, fused in one
        compiled call (each computes the mask, and the mover's observation when ``with_obs``), a
        new game dealt where one ends: the engine's top speed, for benchmarks. Returns the number
        of games finished."""
        obs = np.empty((self.batch_size if with_obs else 0, self.obs_size), np.float32)
        return int(K.rollout_random(self.hot, self.cold, self.turn, self.moves, self.pcg, self.cf, self.tab, self.arng,
                                    rounds, self._masks, obs, with_obs))

    # ------------------------------------------------------------ in-engine agents
    def advance(self, seat_kinds: Sequence[int] | np.ndarray, anchors: np.ndarray,
                plans: PlanCache | None = None) -> int:
        """Play the in-engine seats until every game waits for a ``LEARNER`` or ``OUTSIDE`` seat, or has ended.

        ``seat_kinds[r]`` (:class:`SeatKind`, one per seat) is the kind of the seat ``r`` places
        after ``anchors[b]`` in game ``b`` (``seat_kinds[0]``: the anchor's own). ``HEURISTIC``
        seats plan with ``plans`` (one per game and seat; without it they stop like ``OUTSIDE``).
        The agents draw from the games' agent streams (:meth:`set_agent_streams`). Returns the
        number of decisions played.
        """
        kinds = np.asarray(seat_kinds, dtype=np.int64)
        anchor = np.asarray(anchors, dtype=np.int64)
        if kinds.shape != (self.config.num_players,) or anchor.shape != (self.batch_size,):
            raise ValueError(f"advance needs {self.config.num_players} seat kinds and {self.batch_size} anchors, "
                             f"got shapes {kinds.shape} and {anchor.shape}")
        return int(K.learner_advance(self.hot, self.cold, self.turn, self.moves, self.pcg, self.cf, self.arng,
                                     kinds, anchor, *_plan_arrays(kinds, plans)))

    def advance_seated(self, kinds: np.ndarray, generators: np.ndarray, plans: PlanCache) -> int:
        """Play the in-engine seats until every game waits for an ``OUTSIDE`` seat or has ended, each
        in-engine seat drawing from its own numpy generator, exactly as the Python agent would.

        ``kinds[b, seat]``: the :class:`SeatKind` of each seat of each game; ``generators[b * n + seat]``:
        that seat's ``PCG64`` state as six words (:func:`pcg_words`), advanced as it draws. Returns
        the number of decisions played.
        """
        n = self.config.num_players
        if kinds.shape != (self.batch_size, n) or generators.shape != (self.batch_size * n, 6):
            raise ValueError(f"advance_seated needs kinds of shape {(self.batch_size, n)} and generators of shape "
                             f"{(self.batch_size * n, 6)}, got {kinds.shape} and {generators.shape}")
        kinds = np.asarray(kinds, np.int64)
        return int(K.tour_advance(self.hot, self.cold, self.turn, self.moves, self.pcg, self.cf, self.arng, generators,
                                  kinds, *_plan_arrays(kinds, plans)))

    def play_until(self, stop: np.ndarray, kind: SeatKind, plans: PlanCache | None = None) -> int:
        """Every seat played by the in-engine agent ``kind`` until seat ``stop[b]`` is to move in game
        ``b`` (or the game ends); see :meth:`advance`. Returns the number of decisions played."""
        kinds = np.full(self.config.num_players, SeatKind(kind), np.int64)
        kinds[0] = SeatKind.LEARNER
        return self.advance(kinds, stop, plans)

    def set_agent_streams(self, streams: np.ndarray) -> None:
        """The in-engine agents of slot ``i`` draw from then on from ``streams[i % len(streams)]``
        (uint64 splitmix64 states): equal streams, equal draws."""
        self.arng[:] = np.resize(np.asarray(streams, dtype=np.uint64), self.batch_size)

    # ------------------------------------------------------------ copies
    def tile_games(self, count: int, copies: int) -> None:
        """Copy the games of slots ``0..count-1`` (generators included) into the next ``copies - 1``
        blocks of ``count`` slots: slot ``k * count + j`` then holds game ``j``."""
        if type(count) is not int or type(copies) is not int or count < 1 or copies < 1 \
                or count * copies > self.batch_size:
            raise ValueError(f"{copies} copies of {count} games do not fit a batch of {self.batch_size}")
        for k in range(1, copies):
            rows = slice(k * count, (k + 1) * count)
            self.hot[rows] = self.hot[:count]
            self.cold[rows] = self.cold[:count]
            self.turn[rows] = self.turn[:count]
            self.moves[rows] = self.moves[:count]
            self.pcg[rows] = self.pcg[:count]
        self.hot[count: count * copies, K.G_FRESH] = 0  # the mask buffer rows belong to other games

    def park(self, start: int) -> None:
        """Slots ``start`` and after sit still until loaded or dealt again: marked truncated, so no
        step or advance plays them."""
        self.hot[start:, K.G_DONE] = 2
        self.hot[start:, K.G_FRESH] = 0

    # ------------------------------------------------------------ bridge
    def load(self, slot: int, data: dict) -> None:
        """Put the game of a state dict (``GameState.to_dict()``) into ``slot``, generator included.

        The dict is validated by the rules core's loader first; its config must
        equal the engine's and its generator must be a ``PCG64``.
        """
        self.load_state(slot, GameState.from_dict(data))  # full validation, StateError on bad input

    def load_state(self, slot: int, state: GameState) -> None:
        """Put a rules-core :class:`~skipbo_env.rules.GameState` into ``slot``, generator included.

        The state is trusted as it is (a ``GameState`` built by the rules core keeps its own
        invariants): no dict round trip, which makes this the fast path for states built in
        memory (the search agent's sampled worlds). Its config must be the engine's game in every
        rule (:meth:`GameConfig.same_rules`: who moved first is only read when a game is dealt)
        and its generator must be a ``PCG64``.
        """
        slot = int(_as_rows([slot], self.batch_size)[0])
        if not isinstance(state, GameState):
            raise TypeError(f"load_state needs a GameState, got {type(state).__name__}")
        if not self.config.same_rules(state.config):
            raise ValueError(f"the state's config {state.config} differs from the engine's {self.config}")
        raw = state.rng.bit_generator.state
        if raw["bit_generator"] != "PCG64":
            raise ValueError(f"the engine replays numpy PCG64 generators only, got {raw['bit_generator']}")
        hot = np.zeros(self.hot.shape[1], np.int64)
        cold = np.zeros(self.cold.shape[1], np.int64)
        hot[K.G_CUR] = state.current
        hot[K.G_WIN] = 0 if state.winner is None else state.winner + 1
        hot[K.G_DONE] = 1 if state.winner is not None else (2 if state.truncated else 0)
        hot[K.G_DRAWN] = len(state.draw_pile)
        cold[K.K_DRAW : K.K_DRAW + len(state.draw_pile)] = state.draw_pile
        hot[K.G_COMPN] = len(state.completed)
        cold[K.K_COMP : K.K_COMP + len(state.completed)] = state.completed
        for k, pile in enumerate(state.building):
            hot[K.G_BN + k] = len(pile)
            cold[K.K_BUILD + 12 * k : K.K_BUILD + 12 * k + len(pile)] = pile
        stock_size = _stock_size(self.config)
        for seat in range(self.config.num_players):
            h = K.G_SEATS + seat * K.SEAT_HOT
            c = K.K_SEATS + seat * int(self.cf[K.C_SC])
            hot[h + 1 : h + WILD + 1] = state.hands[seat][1:]
            hot[h + K.S_HAND] = sum(state.hands[seat])
            stock = state.stocks[seat]
            hot[h + K.S_STN] = len(stock)
            hot[h + K.S_STOP] = stock[-1] if stock else 0
            cold[c : c + len(stock)] = stock
            for d, pile in enumerate(state.discards[seat]):
                hot[h + K.S_DN + d] = len(pile)
                hot[h + K.S_TOP + d] = pile[-1] if pile else 0
                hot[h + K.S_SEC + d] = pile[-2] if len(pile) > 1 else 0
                start = c + stock_size + d * K.CAP
                cold[start : start + len(pile)] = pile
                for card in pile:
                    hot[h + K.S_DCNT + d * 13 + card - 1] += 1
        self.hot[slot] = hot
        self.cold[slot] = cold
        self.turn[slot] = state.turn
        self.moves[slot] = state.moves
        self._set_pcg(slot, raw)

    def export(self, slot: int) -> dict:
        """The slot's game as a state dict, equal to ``GameState.to_dict()`` of the same game."""
        slot = int(_as_rows([slot], self.batch_size)[0])
        hot = self.hot[slot].astype(np.int64).tolist()
        cold = self.cold[slot].astype(np.int64).tolist()
        stock_size = _stock_size(self.config)
        hands, stocks, discards = [], [], []
        for seat in range(self.config.num_players):
            h = K.G_SEATS + seat * K.SEAT_HOT
            c = K.K_SEATS + seat * int(self.cf[K.C_SC])
            hands.append([v for v in range(1, WILD + 1) for _ in range(hot[h + v])])
            stocks.append(cold[c : c + hot[h + K.S_STN]])
            piles = []
            for d in range(4):
                start = c + stock_size + d * K.CAP
                piles.append(cold[start : start + hot[h + K.S_DN + d]])
            discards.append(piles)
        hi, lo, ihi, ilo, has, value = (int(x) for x in self.pcg[slot])
        return {
            "format": FORMAT,
            "version": VERSION,
            "config": self.config.to_dict(),
            "draw_pile": cold[K.K_DRAW : K.K_DRAW + hot[K.G_DRAWN]],
            "hands": hands,
            "stocks": stocks,
            "discard_piles": discards,
            "building_piles": [cold[K.K_BUILD + 12 * k : K.K_BUILD + 12 * k + hot[K.G_BN + k]] for k in range(4)],
            "completed": cold[K.K_COMP : K.K_COMP + hot[K.G_COMPN]],
            "current_player": hot[K.G_CUR],
            "turn": int(self.turn[slot]),
            "moves": int(self.moves[slot]),
            "winner": None if hot[K.G_WIN] == 0 else hot[K.G_WIN] - 1,
            "rng": {
                "bit_generator": "PCG64",
                "state": str((hi << 64) | lo),
                "inc": str((ihi << 64) | ilo),
                "has_uint32": has,
                "uinteger": value,
            },
        }

    def to_state(self, slot: int) -> GameState:
        """The slot's game as a rules-core :class:`GameState` (through the state dict)."""
        return GameState.from_dict(self.export(slot))

    def __repr__(self) -> str:
        return f"BatchEngine({self.config.num_players} players, batch {self.batch_size})"
