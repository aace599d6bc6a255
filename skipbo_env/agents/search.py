"""SearchAgent (``search``): a turn-level determinized search over what one seat knows.

For each decision that the previous plan did not foresee, the agent

1. **proposes** candidate turn prefixes with the heuristic planner
   (:mod:`skipbo_env.bots.heuristic`): its depth-first search over the plays the
   seat can see, keeping the ``candidates`` best-scored sequences instead of
   only the best. A sequence ends with a discard, an end of turn, a stock play
   (the next stock card is unknown, R14) or the play that empties the hand
   (the refill is unknown, R15);
2. **samples** ``worlds`` full states (by default 64 in the 2-player game, 32 elsewhere:
   :data:`DEFAULT_WORLDS_BY_PLAYERS`) consistent with the seat's view
   (:func:`skipbo_env.rules.sampling.sample_states`: other hands, stocks below
   their tops and the draw pile drawn from the unseen cards);
3. **simulates** every candidate in every world in the batched engine
   (:class:`skipbo_env.vector.BatchEngine`): the candidate's moves, then the
   in-engine ``rollout`` agent (default the heuristic, compiled, one plan per
   world and seat; ``"greedy"`` is cheaper and weaker) finishes the turn and
   plays every other seat's turn, up to the start of the seat's next turn
   (or only the next ``depth`` seats' turns: by default all of them, except at
   6 players, see :data:`DEFAULT_DEPTHS`; ``horizon`` extra rounds of all
   seats' turns may follow: none by default, see :data:`DEFAULT_HORIZON` and
   docs/search.md); in a share ``net_opponents``
   of the worlds (by default a quarter in the 2-player game) a network, the
   shipped ``ppo-2p``, plays the other seats instead: a second opponent model;
4. **scores** each candidate by the mean over worlds of the stock race at that
   horizon (the opposing sides' stock size minus the own side's, ±``win`` for a
   game won or lost inside the horizon; a side's stock is its seats' mean, and
   with several opposing sides ``lead`` weighs the leading one, the smallest,
   against their mean) plus ``reach`` times the own side's chance
   to reach its stock top in the coming turn (the heuristic's ``reach_chance``
   computed from the simulated hand and discard tops at the horizon), plus
   ``value`` times a learned value of the seat's position at the horizon, read on the seat's
   observation there (by default in the 2-player game the value head of the shipped ``ppo-2p``,
   and at 6 players the win chance of the shipped value network ``value-6p``,
   :mod:`skipbo_env.agents.valuenet`; none at the other tables), plus
   ``prior`` times the heuristic's own score / 100, and plays the best
   candidate's first move. Besides the heuristic's ``candidates`` best
   sequences, ``discards`` extra candidates keep the plays of the best
   discard-ending sequences with another card discarded, so that the reach
   term can judge what is kept in hand and on the discard piles.

The rest of the chosen sequence is played without searching again while each
new view is exactly the one the plan predicted (hand and discard plays reveal
nothing); any surprise starts a new search. The agent reads only the
:class:`~skipbo_env.rules.SeatView` (``act_view``); the observation vector does
not hold enough (no discard piles below the top two, no completed pile), so
:meth:`SearchAgent.act` refuses with a ValueError.

Budget: ``worlds`` (samples per search) and ``candidates``. Spec strings for
:func:`skipbo_env.agents.registry.load_agent`: ``search`` (defaults),
``search:W`` (W worlds) or ``search:W:C`` (W worlds, C candidates). Needs the
``fast`` extra (numba) for the engine, and in the 2-player and 6-player games, where a learned
value is on by default, the ``train`` extra (safetensors; torch for the 2-player network). See ``docs/search.md`` for
the choices and their measurements.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..bots.heuristic import DEFAULT_WEIGHTS, HeuristicWeights
from ..encoding import encode_action
from ..extras import require
from ..rules import WILD, GameConfig, IllegalMoveError, Move, SeatView, missing_numbers
from ..rules.sampling import sample_states
from .ppo import one_torch_thread
from .shipped import shipped_model_path
from .turns import DEFAULT_CANDIDATES, DEFAULT_DISCARDS, MAX_CANDIDATES, TurnAgent
from .valuenet import ValueNet, is_value_file, load_value_net

_T = TypeVar("_T")
_U = TypeVar("_U")

DEFAULT_WORLDS = 32
"""Sampled worlds per search by default at the tables :data:`DEFAULT_WORLDS_BY_PLAYERS` does not
list (3 to 6 players and the partner games)."""
DEFAULT_WORLDS_BY_PLAYERS = {2: 64}
"""Sampled worlds per search by default, per number of players (games without partners). In the
2-player game 64 worlds (16 of them played by the network, ``net_opponents``) won 679 of 1,000
games against ``ppo-2p`` where 32 won 649 on the same deals, and 743 of 1,000 against the
heuristic where 32 won 745, at 33 to 39 ms a decision instead of 18 to 22 (docs/search.md, round 15)."""
DEFAULT_PRIOR = 2.0
DEFAULT_WIN = 30.0
DEFAULT_REACH = 1.0
DEFAULT_THREAT = 0.0
DEFAULT_FLEX = 0.0
DEFAULT_REACH_Q = 0.3
DEFAULT_THREAT_Q = 0.55
DEFAULT_REPLY = 0.0
DEFAULT_REPLY_Q = 0.3
DEFAULT_LEAD = 0.0
DEFAULT_VALUES = {2: 12.0, 6: 33.0}
"""Weight (stock cards per unit) of the learned value at the horizon by default, per number of
players (games without partners), where :data:`VALUE_NETS` has a network; 0 elsewhere. In the
2-player game ``ppo-2p``'s value head, weighed 12 (docs/search.md, round 8); at 6 players the win
chance of ``value-6p``, weighed 33: one own stock card less raises that chance by 0.0307 on held-out
positions, so 33 makes a stock card worth as much through the value as through the stock race
(round 18: 298 of 1,002 games against five heuristics where the search without it won 247; three
times the weight won 126)."""
DEFAULT_VALUE = DEFAULT_VALUES[2]
"""The 2-player default weight (:data:`DEFAULT_VALUES`)."""
VALUE_NETS = {2: "ppo-2p", 6: "value-6p"}
"""The shipped network that scores the horizon by default, per number of players (games without
partners): a shipped agent, whose value head reads the seat about to move (2 players: ``ppo-2p``), or
a shipped value network (:mod:`skipbo_env.agents.valuenet`), which reads any seat at any turn start
(6 players: ``value-6p``). Each reads only its own table's observations."""
OPPONENT_NETS = {2: "ppo-2p"}
"""The shipped agent that plays the other seats in a share of the worlds by default, per number of
players (games without partners)."""
DEFAULT_NET_OPPONENTS = 0.25
"""Share of the sampled worlds in which a network (``opponent_net``) plays the other seats' turns
instead of the heuristic, by default where a shipped agent fits the table (:data:`OPPONENT_NETS`);
0 elsewhere (docs/search.md, round 9)."""
MISS_RATES = ((0.01, 0.01), (0.01, 0.8))
"""For ``infer``: the chance that an opponent ends its turn with a play of its stock top in reach
(a chain from its hand and discard tops, :func:`_stock_reachable`), under the heuristic's model of
the opponent (first row) and under the network's (``net_opponents``, second row); per row, for a
chain without a wild and for one that needs a wild. Measured by ``benchmarks/stock_misses.py`` in
60 games each against the heuristic: the heuristic as the opponent left 0.1% of its turn ends with
such a play (about 0.004 of the plays it could make); ``ppo-2p`` never left one without a wild but
about 0.8 of those that need one: it keeps its wilds (docs/search.md, round 11)."""
DEFAULT_HORIZON = 0
"""Extra simulated rounds by default, at every table. One more round (``horizon=1``) fits the
heuristic that plays the simulations: with two players it won 69.3% against the heuristic where 0
won 68.1% (same 1,000 deals), but 56.7% against ``ppo-2p`` where 0 won 64.3% of the first 384 of
the same deals, at twice the time per decision (docs/search.md, rounds 4 and 6)."""
DEFAULT_DEPTHS = {6: 1}
"""Other seats' turns simulated after the seat's own by default, per number of players (games
without partners); every other seat (up to the seat's next turn) at the tables not listed. At 6
players the next seat alone won 93 of 360 games against five heuristics where every seat won 73
on the same deals (docs/search.md, round 12): the four later seats' simulated turns add more noise
than signal about the turn being chosen, at twice the time. At 4 players (and the partner game) the
next seat alone won a few games fewer than every seat (100 against 108 of 300; 126 against 133 of
160), so those tables simulate every seat."""
ROLLOUTS = {"greedy": 2, "heuristic": 4}
"""Rollout agents (in-engine kinds) that finish the turn and play the other seats."""
DEFAULT_ROLLOUT = "heuristic"
MAX_WORLDS = 4096
MAX_HORIZON = 8


def parse_search_spec(spec: str) -> dict[str, int | None]:
    """``search``, ``search:W`` or ``search:W:C`` -> ``{"worlds": W, "candidates": C}``.

    Without ``W`` the worlds are ``None``: the table's default (:data:`DEFAULT_WORLDS_BY_PLAYERS`,
    else :data:`DEFAULT_WORLDS`), which :class:`SearchAgent` resolves from its game configuration.

    Raises:
        ValueError: naming what is wrong with the spec.
    """
    if not isinstance(spec, str) or not (spec == "search" or spec.startswith("search:")):
        raise ValueError(f"a search agent spec is 'search', 'search:W' or 'search:W:C', got {spec!r}")
    parts = spec.split(":")[1:]
    if len(parts) > 2:
        raise ValueError(f"a search agent spec is 'search', 'search:W' or 'search:W:C', got {spec!r}")
    out: dict[str, int | None] = {"worlds": None, "candidates": DEFAULT_CANDIDATES}
    for key, text, high in zip(("worlds", "candidates"), parts, (MAX_WORLDS, MAX_CANDIDATES), strict=False):
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= high:
            raise ValueError(f"search agent spec {spec!r}: {key} must be an int in 1..{high}, got {text!r}")
        out[key] = int(text)
    return out


class SearchAgent(TurnAgent):
    """Determinized turn search (see the module docstring). Implements ``act_view``.

    Args:
        config: the game configuration.
        seed: seeds the agent's generator (sampling and the in-engine rollout agents).
        worlds: sampled states per search; ``None``: the table's default,
            :data:`DEFAULT_WORLDS_BY_PLAYERS` (games without partners), else :data:`DEFAULT_WORLDS`.
        candidates: turn prefixes the heuristic proposes per search.
        prior: weight of the heuristic's score (per 100 points) beside the simulated stock race.
        win: value of a game won (minus: lost) inside the simulated horizon, in stock cards.
        horizon: extra rounds (every seat's turn, played by the rollout agent) simulated after the
            other seats' turns; ``None``: :data:`DEFAULT_HORIZON`.
        depth: how many of the other seats' turns (the next ones in play order) the simulations play
            after the seat's own before the position is scored; ``None``: :data:`DEFAULT_DEPTHS`
            where it lists the table, else all of them (``num_players - 1``: up to the seat's next
            turn); 0: the position is scored when the seat's own turn ends. Fewer than all needs
            ``horizon`` 0, and a ``value`` from a value network (an agent's value head reads the
            seat's position only when it is to move again).
        lead: with several opposing sides (3+ players, the 6-player partner game), the weight (0..1)
            of the leading side's stock (the smallest) in the stock race; the rest is the mean over
            the opposing sides. No effect with one opposing side.
        reach: weight (stock cards) of the own side's chance, at the horizon, to reach its stock top
            in the coming turn (from its simulated hand and discard tops, :func:`_reach_chance`).
        threat: weight (stock cards) of the opponents' same chance at the horizon (subtracted).
        flex: weight (stock cards) of the own side's chance to reach its stock top from its hand and
            discard tops at the horizon on building piles it cannot foresee (:func:`_flex_chance`:
            each pile showing any of 0..11 alike), unlike ``reach``, which reads the simulated piles.
        reach_q: chance that an unseen card supplies one of the own side's missing numbers.
        threat_q: the same chance for the opponents.
        reply: weight (stock cards) of the next seat's chance to reach its stock top at the start of
            its turn right after the seat's (its refilled simulated hand; subtracted for an opponent).
        reply_q: the unseen-card chance for ``reply``.
        discards: extra candidates with another discard after the same plays (see :class:`~skipbo_env.agents.turns.TopK`).
        weights: the heuristic planner's weights (candidates, and the heuristic rollouts).
        rollout: the in-engine agent of the simulations: ``"heuristic"`` or ``"greedy"`` (:data:`ROLLOUTS`).
        value: weight (stock cards per unit) of a learned value of the seat's position at the horizon
            (``value_net`` evaluated on the seat's observation there); 0: none; ``None``:
            :data:`DEFAULT_VALUES` where :data:`VALUE_NETS` has a network for the table, else 0 (and
            0 where that network is a value network made for another game: the shipped
            ``value-6p`` reads the classic 6-player game, not its variants).
        value_net: for ``value``, a value file (:mod:`skipbo_env.agents.valuenet`: the seat's win
            chance) or an agent file (``.safetensors``) whose policy has a value head; ``None``: the
            table's shipped network (:data:`VALUE_NETS`).
        net_opponents: share (0..1) of the sampled worlds in which the other seats' simulated turns
            are played by the network of ``opponent_net`` (its greedy legal action, as
            :class:`~skipbo_env.agents.ppo.PPOAgent` plays) instead of the heuristic: an opponent
            model that is not the heuristic. The first ``round(share * worlds)`` worlds, the same
            ones for every candidate. ``None``: :data:`DEFAULT_NET_OPPONENTS` where :data:`VALUE_NETS`
            has a network for the table, else 0.
        opponent_net: the agent file for ``net_opponents``; ``None``: the table's shipped network.
        infer: weigh each sampled world by how likely the seat before this one (an opponent) was to
            end its last turn as it did: a world whose hand for that seat could have played its
            stock top on the building piles it left (:func:`_stock_reachable`) counts
            :data:`MISS_RATES` (the heuristic's model; the network's in the ``net_opponents``
            worlds) instead of 1. Uses the building piles the agent saw at the first decision of
            its turn, so only when it was asked every decision of the turn (``act_view``).
            Off by default: measured in the 2-player game and not kept (docs/search.md, round 11).
    """

    name = "search"

    def __init__(
        self,
        config: GameConfig,
        seed: int | None = None,
        *,
        worlds: int | None = None,
        candidates: int = DEFAULT_CANDIDATES,
        prior: float = DEFAULT_PRIOR,
        win: float = DEFAULT_WIN,
        horizon: int | None = None,
        depth: int | None = None,
        lead: float = DEFAULT_LEAD,
        reach: float = DEFAULT_REACH,
        threat: float = DEFAULT_THREAT,
        flex: float = DEFAULT_FLEX,
        reach_q: float = DEFAULT_REACH_Q,
        threat_q: float = DEFAULT_THREAT_Q,
        discards: int = DEFAULT_DISCARDS,
        reply: float = DEFAULT_REPLY,
        reply_q: float = DEFAULT_REPLY_Q,
        weights: HeuristicWeights = DEFAULT_WEIGHTS,
        rollout: str = DEFAULT_ROLLOUT,
        value: float | None = None,
        value_net: str | os.PathLike | None = None,
        net_opponents: float | None = None,
        opponent_net: str | os.PathLike | None = None,
        infer: bool = False,
    ) -> None:
        super().__init__(config, seed, candidates=candidates, discards=discards, weights=weights)
        if worlds is None:
            worlds = _by_table(DEFAULT_WORLDS_BY_PLAYERS, config, DEFAULT_WORLDS)
        if type(worlds) is not int or not 1 <= worlds <= MAX_WORLDS:
            raise ValueError(f"worlds must be an int in 1..{MAX_WORLDS}, got {worlds!r}")
        from ..vector import (
            BatchEngine,  # needs numba (the 'fast' extra); loaded only for this agent
            kernels,
        )
        from ..vector.heuristic import plan_caches, weights_vector

        self.worlds = worlds
        self.prior = float(prior)
        self.win = float(win)
        if horizon is None:
            horizon = DEFAULT_HORIZON
        if type(horizon) is not int or not 0 <= horizon <= MAX_HORIZON:
            raise ValueError(f"horizon must be an int in 0..{MAX_HORIZON}, got {horizon!r}")
        self.horizon = horizon
        others = config.num_players - 1
        if depth is None:
            depth = _by_table(DEFAULT_DEPTHS, config, others)
        if type(depth) is not int or not 0 <= depth <= others:
            raise ValueError(f"depth must be an int in 0..{others} (the other seats), got {depth!r}")
        self.depth = depth
        lead = float(lead)
        if not 0.0 <= lead <= 1.0:  # NaN fails too
            raise ValueError(f"lead must be in 0..1, got {lead!r}")
        self.lead = lead
        self.reach = float(reach)
        self.threat = float(threat)
        self.flex = float(flex)
        self.reach_q = float(reach_q)
        self.threat_q = float(threat_q)
        self.reply = float(reply)
        self.reply_q = float(reply_q)
        self._k = kernels
        self._engine = BatchEngine(config, worlds * (candidates + self.discards), seed=0)
        n = config.num_players
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
        self.rollout = rollout
        self._seat_kind = np.full(n, ROLLOUTS[rollout], np.int64)  # the rollout agent everywhere ...
        self._seat_kind[0] = 0  # ... except the "learner" seat, where learner_advance stops
        rows = self._engine.batch_size * n
        self._hweights = weights_vector(weights)
        self._plans, self._hstate, self._hexpect = plan_caches(rows)
        shipped = _by_table(VALUE_NETS, config, None)
        default_value = value is None and value_net is None
        if value is None:
            value = _by_table(DEFAULT_VALUES, config, 0.0) if shipped is not None else 0.0
        self.value = float(value)
        if not np.isfinite(self.value) or self.value < 0:
            raise ValueError(f"value must be a finite weight >= 0, got {value!r}")
        if self.depth < others and self.horizon:
            raise ValueError(f"depth {self.depth} stops before the seat's next turn: it needs horizon 0, "
                             f"got horizon {self.horizon}")
        opponents_net = _by_table(OPPONENT_NETS, config, None)
        if net_opponents is None:
            net_opponents = DEFAULT_NET_OPPONENTS if opponents_net is not None else 0.0
        share = float(net_opponents)
        if not 0.0 <= share <= 1.0:  # NaN fails too
            raise ValueError(f"net_opponents must be a share in 0..1, got {net_opponents!r}")
        self.net_opponents = share
        self._net_worlds = int(round(share * worlds))
        self.value_net: Path | None = None
        self.opponent_net: Path | None = None
        self._value_policy: Any = None
        self._value_network: ValueNet | None = None
        self._opponent: Any = None
        self._nets: dict[Path, Any] = {}
        if self.value:
            self.value_net = self._network_path(value_net, shipped, "value > 0", "value=0")
            if is_value_file(self.value_net):  # a seat's win chance, at any seat's turn start
                network = load_value_net(self.value_net, None if default_value else config)
                if network.game.same_rules(config):
                    self._value_network = network
                else:  # the shipped network reads the classic game only: a variant searches without it
                    self.value, self.value_net = 0.0, None
            else:  # an agent's value head: the seat about to move
                if self.depth < others:
                    raise ValueError(f"depth {self.depth} stops before the seat's next turn, where an agent's value "
                                     f"head cannot read the position ({self.value_net}): it needs value 0 or a value "
                                     "network")
                self._value_policy = self._load_net(self.value_net).policy
        if self._net_worlds:
            self.opponent_net = self._network_path(opponent_net, opponents_net, "net_opponents > 0",
                                                   "net_opponents=0")
            self._opponent = self._load_net(self.opponent_net)
        if not isinstance(infer, bool):
            raise TypeError(f"infer must be a bool, got {type(infer).__name__}")
        self.infer = infer

    def _network_path(self, path: str | os.PathLike | None, shipped: str | None, what: str, without: str) -> Path:
        """The agent file for ``what``: ``path``, else the table's shipped network (error if none)."""
        if path is None:
            if shipped is None:
                raise ValueError(
                    f"{what} needs a network (an agent or value file): no shipped network reads this table "
                    f"({self.config.num_players} players, partner_game={self.config.partner_game})")
            path = shipped_model_path(shipped)
        require("train", f"the search agent's network ({without} searches without it)", "safetensors")
        return Path(path)

    def _load_net(self, path: Path) -> Any:
        """A :class:`PPOAgent` of ``path``, loaded once per file (the value and the opponent model may share it)."""
        require("train", "the search agent's network agent", "torch")
        from .ppo import PPOAgent  # CheckpointError names a bad or mismatched file

        if path not in self._nets:
            self._nets[path] = PPOAgent(path, self.config)
        return self._nets[path]

    def _scores(self, view: SeatView, found: list[tuple[float, tuple[Move, ...]]]) -> np.ndarray:
        race = self._simulate(view, [path for _, path in found])
        return race + self.prior * np.array([value for value, _ in found]) / 100.0

    def score_candidates(self, view: SeatView) -> tuple[list[tuple[Move, ...]], np.ndarray]:
        """The candidate turns a search in ``view`` compares and their scores (the value of step 4
        of the module docstring, higher is better), over ``worlds`` newly sampled worlds.

        For analysis (``benchmarks/search_regret.py`` compares the choices of small budgets with a
        large one's scores): it draws from the agent's generator, so it changes the agent's later
        decisions, but it does not touch the agent's plan. The candidates depend only on the view.
        Raises ``ValueError`` when the seat is not to move or its view has another config.
        """
        found = self._candidates(view, self._legal(view, "score_candidates"))
        if not found:
            return [], np.zeros(0)
        return [path for _, path in found], self._scores(view, found)

    def _simulate(self, view: SeatView, paths: list[tuple[Move, ...]]) -> np.ndarray:
        """Mean stock race per candidate over the sampled worlds."""
        eng, K = self._engine, self._k
        m, c = self.worlds, len(paths)
        worlds = sample_states(view, self.rng, m)
        weight = self._world_weights(view, worlds)
        for j, world in enumerate(worlds):
            eng.load_state(j, world)
        used = m * c
        for i in range(1, c):
            rows = slice(i * m, (i + 1) * m)
            eng.hot[rows] = eng.hot[:m]
            eng.cold[rows] = eng.cold[:m]
            eng.turn[rows] = eng.turn[:m]
            eng.moves[rows] = eng.moves[:m]
            eng.pcg[rows] = eng.pcg[:m]
        eng.hot[used:, K.G_DONE] = 2  # slots no candidate uses sit still
        eng.hot[:, K.G_FRESH] = 0  # copied rows: the mask buffer rows no longer match
        # common random numbers: world j's rollout agents draw the same stream under every candidate
        streams = self.rng.integers(1, 2**63, size=m, dtype=np.int64).astype(np.uint64)
        eng.arng[:] = np.resize(streams, eng.batch_size)
        ids = [[encode_action(move, self.config) for move in path] for path in paths]
        off = np.zeros(eng.batch_size, bool)  # worlds where a candidate's next move is not legal
        for step in range(max(len(p) for p in ids)):
            which = [i for i in range(c) if len(ids[i]) > step]
            rows_arr = np.concatenate([np.arange(i * m, (i + 1) * m) for i in which])
            acts = np.concatenate([np.full(m, ids[i][step], np.int64) for i in which])
            live = (eng.hot[rows_arr, K.G_DONE] == 0) & ~off[rows_arr]
            try:
                eng.step(acts[live], rows_arr[live])
            except IllegalMoveError:
                # The view decides every move of a candidate but one: a refill drawn from the
                # completed piles shuffled back in (R19) when the hand empties on an empty draw
                # pile, which the planner reads as "no refill". The engine changed nothing; worlds
                # where the next move is not legal stop following the candidate and the rollout
                # agent finishes the turn.
                if step == 0:
                    raise  # a first move is legal in the view, so in every world
                legal = eng.masks()[rows_arr, acts] != 0
                off[rows_arr[live & ~legal]] = True
                live &= legal
                eng.step(acts[live], rows_arr[live])
        me = view.seat
        n = self.config.num_players
        after = np.full(eng.batch_size, (me + 1) % n, np.int64)
        stop = (me + self.depth + 1) % n  # the first seat not simulated (``me`` at full depth)
        until = np.full(eng.batch_size, stop, np.int64)
        self._hstate[:] = 0  # rollout heuristics start without plans
        state = (self._hweights, self._plans, self._hstate, self._hexpect)
        args = (eng.hot, eng.cold, eng.turn, eng.moves, eng.pcg, eng.cf, eng.arng, self._seat_kind)

        net_rows = np.concatenate([np.arange(i * m, i * m + self._net_worlds) for i in range(c)])

        def advance(learner: np.ndarray) -> None:
            K.learner_advance(*args, learner, *state)

        def others() -> None:  # the other seats' turns, up to the seat's next one (or ``depth`` of them)
            if net_rows.size:
                self._net_turns(net_rows, stop)  # the network plays them in these worlds (learner_advance then skips them)
            advance(until)

        advance(after)  # the rollout agent finishes the seat's turn
        reply: float | np.ndarray = 0.0
        if self.reply:
            nxt = (me + 1) % n
            hot0 = eng.hot[:used].astype(np.int64)
            sign = -1.0 if self.config.team(nxt) != self.config.team(me) else 1.0
            chance = _reach_chance(hot0, K, nxt, self.reply_q)
            reply = sign * self.reply * np.where(hot0[:, K.G_DONE] == 0, chance, 0.0)
        others()
        for _ in range(self.horizon):
            advance(after)  # the seat's next turn
            others()
        hot = eng.hot[:used].astype(np.int64)
        stock = np.stack([hot[:, K.G_SEATS + s * K.SEAT_HOT + K.S_STN] for s in range(n)], axis=1)
        team = self.config.team(me)
        ours = list(self.config.team_seats(team))
        theirs = [s for s in range(n) if s not in ours]
        # each opposing side's mean stock; its mean over the sides and the leader's (smallest)
        sides = [list(self.config.team_seats(t)) for t in range(self.config.num_teams) if t != team]
        side_stock = np.stack([stock[:, seats].mean(axis=1) for seats in sides], axis=1)
        opp = (1.0 - self.lead) * side_stock.mean(axis=1) + self.lead * side_stock.min(axis=1)
        value = opp - stock[:, ours].mean(axis=1)
        winner = hot[:, K.G_WIN] - 1
        won = winner >= 0
        ours_won = np.isin(winner, ours)
        value = value + np.where(won, np.where(ours_won, self.win, -self.win), 0.0)
        value = value + reply
        running = hot[:, K.G_DONE] == 0
        if self.reach:
            own = np.mean([_reach_chance(hot, K, s, self.reach_q) for s in ours], axis=0)
            value = value + self.reach * np.where(running, own, 0.0)
        if self.flex:
            own = np.mean([_flex_chance(hot, K, s, self.reach_q) for s in ours], axis=0)
            value = value + self.flex * np.where(running, own, 0.0)
        if self.threat:
            opp = np.mean([_reach_chance(hot, K, s, self.threat_q) for s in theirs], axis=0)
            value = value - self.threat * np.where(running, opp, 0.0)
        if self.value:
            value = value + self.value * self._learned_value(running, me)
        return value.reshape(c, m) @ weight

    def _world_weights(self, view: SeatView, worlds: list[Any]) -> np.ndarray:
        """Each world's weight (summing to 1) for ``infer`` (see the class docstring); equal
        weights when the inference does not apply."""
        m = len(worlds)
        flat = np.full(m, 1.0 / m)
        n = self.config.num_players
        before = (view.seat - 1) % n
        if (not self.infer or self._turn_start is None or self._turn_start[0] != view.turn or view.turn < 1
                or self.config.team(before) == self.config.team(view.seat)):
            return flat
        hands = np.array([world.hands[before] for world in worlds], np.int64)
        args = (view.discard_tops(before), self._turn_start[1], view.stock_tops[before])
        plain = _stock_reachable(hands, *args, wilds=False)
        could = _stock_reachable(hands, *args)
        rates = np.array(MISS_RATES)[(np.arange(m) < self._net_worlds).astype(int)]  # [m, 2]: the world's model
        weight = np.where(plain, rates[:, 0], np.where(could, rates[:, 1], 1.0))
        return weight / weight.sum()

    def _learned_value(self, running: np.ndarray, seat: int) -> np.ndarray:
        """The learned value of the seat's position in each running row (0 elsewhere): the value
        network's win chance, or the value head's estimate."""
        rows = np.nonzero(running)[0]
        out = np.zeros(running.shape[0])
        if rows.size:
            obs = self._engine.observe_rows(rows, np.full(rows.size, seat))
            if self._value_network is not None:
                out[rows] = self._value_network.win_chance(obs)
                return out
            import torch

            with torch.no_grad(), one_torch_thread():  # each row's value from its own observation
                out[rows] = self._value_policy.predict_values(torch.as_tensor(obs)).numpy().reshape(-1)
        return out

    def _net_turns(self, rows: np.ndarray, until: int) -> None:
        """The network plays every seat in ``rows`` (its greedy legal action, one batch per step)
        until seat ``until`` is to move or the game ends."""
        eng = self._engine
        while True:
            live = rows[(eng.hot[rows, self._k.G_DONE] == 0) & (eng.current[rows] != until)]
            if not live.size:
                return
            obs = eng.observe_rows(live, eng.current[live])
            eng.step(self._opponent.greedy_actions(obs, eng.masks()[live]), live)


# _NEED[pile, target, v - 1]: number v must go on a pile showing ``pile`` (0..11) before ``target``
# (1..12) fits (R12, R13); chains longer than _MAX_CHAIN are left out (no seat fills them in a turn).
_MAX_CHAIN = 9
_NEED = np.zeros((12, 14, 12), bool)
for _pile in range(12):
    for _target in range(1, 13):
        _chain = missing_numbers(_pile, _target)
        if len(_chain) <= _MAX_CHAIN:
            for _v in _chain:
                _NEED[_pile, _target, _v - 1] = True
_LONG = np.zeros((12, 14), bool)
for _pile in range(12):
    for _target in range(1, 13):
        _LONG[_pile, _target] = len(missing_numbers(_pile, _target)) > _MAX_CHAIN


# _NEVER: the missing count of a pile whose chain is longer than _MAX_CHAIN (more than any wilds cover).
_NEVER = 13


def _available(hand: np.ndarray, tops: np.ndarray, wilds: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per row: which numbers 1..12 a seat can supply this turn without drawing (``(R, 12)`` bool: in
    hand or on a discard top) and how many wilds it holds there (``(R,)``). ``hand``: counts of
    values 1..13 (``(R, 13)``, the last column wilds); ``tops``: discard tops (``(R, 4)``, 0 for an
    empty pile). ``wilds=False`` counts no wild."""
    avail = hand[:, :12] > 0
    for d in range(tops.shape[1]):
        t = tops[:, d]
        rows = np.nonzero((t >= 1) & (t <= 12))[0]
        avail[rows, t[rows] - 1] = True
    jokers = (hand[:, 12] + (tops == WILD).sum(axis=1)).astype(np.int64)
    return avail, (jokers if wilds else np.zeros_like(jokers))


def _missing(avail: np.ndarray, building: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per row and building pile (``(R, 4)``): how many of the numbers that must go on the pile
    before ``target`` fits (R12, R13) the row cannot supply (``avail``, from :func:`_available`);
    :data:`_NEVER` for chains longer than :data:`_MAX_CHAIN`. ``building``: ``(R, 4)`` pile values
    0..11; ``target``: ``(R,)`` numbers 1..12 (0 rows give 0: no chain is needed)."""
    need = _NEED[building, target[:, None]]  # [R, 4, 12]
    missing = (need & ~avail[:, None, :]).sum(axis=2)
    return np.where(_LONG[building, target[:, None]], _NEVER, missing)


def _pile_failures(hot: np.ndarray, K: Any, seat: int, q: float, building: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per engine row and building pile value in ``building`` (``(R, P)``, 0..11): the chance that
    ``seat`` does not bring such a pile to its stock top this turn from its hand and discard tops in
    the simulated state (each other missing number from unseen cards with chance ``q``; 1 for chains
    longer than :data:`_MAX_CHAIN`); and the stock top per row (13 wild, 0 none)."""
    base = K.G_SEATS + seat * K.SEAT_HOT
    avail, jokers = _available(hot[:, base + K.S_HAND + 1: base + K.S_HAND + 14],  # values 1..13
                               hot[:, base + K.S_TOP: base + K.S_TOP + 4])
    top = hot[:, base + K.S_STOP]
    missing = _missing(avail, building, np.where(top == 13, 0, top))
    short = missing - jokers[:, None]
    fail = np.where(short <= 0, 0.0, 1.0 - q ** np.maximum(short, 1))
    return np.where(missing == _NEVER, 1.0, fail), top


def _for_top(chance: np.ndarray, top: np.ndarray) -> np.ndarray:
    """``chance`` per row, except 1 for a wild stock top and 0 for an empty stock."""
    return np.where(top == 0, 0.0, np.where(top == 13, 1.0, chance))


def _reach_chance(hot: np.ndarray, K: Any, seat: int, q: float) -> np.ndarray:
    """Per engine row: the heuristic's ``reach_chance`` of ``seat``'s stock top from its hand and
    discard tops in the simulated state (each other missing number from unseen cards with chance
    ``q``), on the simulated building piles. 1 for a wild top, 0 for an empty stock."""
    fail, top = _pile_failures(hot, K, seat, q, hot[:, K.G_BN: K.G_BN + 4])
    return _for_top(1.0 - fail.prod(axis=1), top)


_ANY_PILE = np.arange(12)  # a building pile's possible values, for _flex_chance


def _flex_chance(hot: np.ndarray, K: Any, seat: int, q: float) -> np.ndarray:
    """Per engine row: :func:`_reach_chance` when the four building piles are unknown: each shows
    any of 0..11 alike, independently. The piles the seat will meet after several other seats'
    turns are not the simulated ones, so this reads how many pile values the seat is ready for."""
    fail, top = _pile_failures(hot, K, seat, q, np.broadcast_to(_ANY_PILE, (hot.shape[0], _ANY_PILE.size)))
    return _for_top(1.0 - fail.mean(axis=1) ** 4, top)  # four piles, each failing with the mean chance


def _stock_reachable(hands: np.ndarray, tops: tuple[int | None, ...], building: tuple[int, ...],
                     stock_top: int | None, wilds: bool = True) -> np.ndarray:
    """Per row of ``hands`` (hand counts, ``(R, 14)``, index 13 = wild): can a seat holding that hand,
    with discard tops ``tops``, play its number ``stock_top`` this turn, on building piles showing
    ``building``? True when some pile's missing numbers (:func:`missing_numbers`, at most
    :data:`_MAX_CHAIN`) are all in hand or on a discard top, wilds (in hand or on a discard top)
    filling the gaps. Cards below the discard tops and the hand refill after an emptied hand
    (R15) are left out, so a True is always a real chain. All False for a wild or no stock top.
    ``wilds=False``: chains without a wild (hand and discard-top wilds left out)."""
    rows = hands.shape[0]
    if stock_top is None or stock_top == WILD:
        return np.zeros(rows, bool)
    top_row = np.array([0 if t is None else t for t in tops], np.int64)
    avail, jokers = _available(hands[:, 1:WILD + 1], np.broadcast_to(top_row, (rows, top_row.size)), wilds)
    missing = _missing(avail, np.broadcast_to(np.array(building, np.int64), (rows, len(building))),
                       np.full(rows, stock_top, np.int64))
    return ((missing <= jokers[:, None]) & (missing != _NEVER)).any(axis=1)


def _by_table(table: Mapping[int, _T], config: GameConfig, otherwise: _U) -> _T | _U:
    """A per-table default: ``table``'s entry for the number of players in a game without partners,
    else ``otherwise`` (the partner games and the tables ``table`` does not list)."""
    return otherwise if config.partner_game else table.get(config.num_players, otherwise)


__all__ = ["DEFAULT_CANDIDATES", "DEFAULT_HORIZON", "DEFAULT_WORLDS", "DEFAULT_WORLDS_BY_PLAYERS", "SearchAgent",
           "parse_search_spec"]
