"""SearchAgent (``search``): a turn-level determinized search over what one seat knows.

At a decision its plan did not foresee, it proposes candidate turns with the heuristic planner,
samples full states consistent with the seat's view (:mod:`skipbo_env.rules.sampling`),
simulates every candidate in every world in the batched engine and plays the first move of the
best-scored one; the rest of the plan is played while each new view is the one predicted.
It reads only the :class:`~skipbo_env.rules.SeatView` (``act_view``). Settings: one frozen
:class:`SearchSettings`; specs ``search``, ``search:W``, ``search:W:C``. Needs the ``fast``
extra (and ``train`` where a learned value is on). docs/search.md describes the choices.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..bots.heuristic import CHAIN_WEIGHTS, TABLE_WEIGHTS, HeuristicWeights, default_weights
from ..encoding import encode_action
from ..extras import require
from ..rules import GameConfig, IllegalMoveError, Move, SeatView
from ..rules.sampling import sample_states
from .ppo import one_torch_thread
from .shipped import shipped_model_path
from .turns import (
    DEFAULT_CANDIDATES,
    DEFAULT_DISCARDS,
    MAX_CANDIDATES,
    TurnAgent,
    path_log_probs,
    with_policy_turn,
)
from .valuenet import ValueNet, is_value_file, load_value_net

_T = TypeVar("_T")
_U = TypeVar("_U")

DEFAULT_WORLDS = 32
"""Sampled worlds per search by default at the tables :data:`DEFAULT_WORLDS_BY_PLAYERS` does not
list (3 to 6 players and the partner games)."""
DEFAULT_WORLDS_BY_PLAYERS = {2: 64}
"""Sampled worlds per search by default, per number of players (games without partners): 64 in
the 2-player game (16 of them played by the network, ``net_opponents``)."""
DEFAULT_PRIOR = 2.0
"""Weight of the heuristic planner's own score (per 100 points) beside the simulated score."""
DEFAULT_WIN = 30.0
"""Value, in stock cards, of a game won inside the simulated horizon (minus: lost)."""
DEFAULT_REACH = 1.0
"""Weight (stock cards) of the own side's chance, at the horizon, to reach its stock top in the coming turn."""
DEFAULT_REACH_Q = 0.3
"""For ``reach``: the chance that an unseen card supplies one of the own side's missing numbers."""
DEFAULT_VALUES = {2: 12.0, 6: 36.0}
"""Weight (stock cards per unit) of the learned value at the horizon by default, per number of
players (games without partners), where :data:`VALUE_NETS` has a network; 0 elsewhere. In the
2-player game ``ppo-2p``'s value head, weighed 12; at 6 players the win chance of ``value-6p``,
weighed 36: one own stock card less raises that chance by 0.0278 on held-out positions, so
36 (1 / 0.0278) makes a stock card worth as much through the value as through the stock race."""
DEFAULT_VALUE = DEFAULT_VALUES[2]
"""The 2-player default weight (:data:`DEFAULT_VALUES`)."""
VALUE_NETS = {2: "ppo-2p", 6: "value-6p"}
"""The shipped network that scores the horizon by default, per number of players (games without
partners): a shipped agent, whose value head reads the seat about to move (2 players: ``ppo-2p``), or
a shipped value network (:mod:`skipbo_env.agents.valuenet`), which reads any seat at any turn start
(6 players: ``value-6p``). Each reads only its own table's observations."""
POLICY_NETS = {3: "ppo-3p", 4: "ppo-4p", 6: "ppo-6p"}
"""The shipped agent whose move probabilities weigh the candidates (``policy``) by default, per
number of players (games without partners)."""
DEFAULT_POLICIES: dict[int, float] = {3: 0.5, 4: 0.5, 6: 0.5}
"""Weight (stock cards per nat) of the policy network's log-probability of each candidate by
default, per number of players, in the classic game of the table (the one its network plays);
0 at the tables not listed and in the variants (the short game, other stock sizes, partners)."""
OPPONENT_NETS = {2: "ppo-2p"}
"""The shipped agent that plays the other seats in a share of the worlds by default, per number of
players (games without partners)."""
DEFAULT_NET_OPPONENTS = 0.25
"""Share of the sampled worlds in which a network (``opponent_net``) plays the other seats' turns
instead of the rollout agent, by default where a shipped agent fits the table (:data:`OPPONENT_NETS`);
0 elsewhere."""
DEFAULT_HORIZON = 0
"""Extra simulated rounds (every seat's turn, played by the rollout agent) after the other seats'
turns, by default at every table: none. Each round costs about as much time again."""
DEFAULT_DEPTHS = {6: 1}
"""Other seats' turns simulated after the seat's own by default, per number of players (games
without partners); every other seat (up to the seat's next turn) at the tables not listed. At 6
players the next seat alone: the four later seats' simulated turns add more noise than signal
about the turn being chosen, at twice the time."""
SEARCH_WEIGHTS: dict[int, HeuristicWeights] = {n: CHAIN_WEIGHTS for n in TABLE_WEIGHTS}
"""The planner's weights of the search (its candidates and heuristic rollouts, every seat) by number
of players, where they differ from the heuristic agent's: at 3 to 6 players
:data:`~skipbo_env.bots.heuristic.CHAIN_WEIGHTS`, the heuristic's weights there before hand plays
were credited 5. Every search table was measured with these weights; with the credit, paired games
moved inside the noise (+11, +5 and -4 games on three tables: docs/research/heuristic.md)."""
ROLLOUTS = ("greedy", "heuristic")
"""In-engine agents that may finish the seat's turn and play the other seats (``rollout``)."""
DEFAULT_ROLLOUT = "heuristic"
MAX_WORLDS = 4096
MAX_HORIZON = 8


def parse_search_spec(spec: str) -> SearchSettings:
    """``search``, ``search:W`` or ``search:W:C`` -> the settings with ``worlds=W`` and ``candidates=C``.

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
    values: list[int] = []
    for key, text, high in zip(("worlds", "candidates"), parts, (MAX_WORLDS, MAX_CANDIDATES), strict=False):
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= high:
            raise ValueError(f"search agent spec {spec!r}: {key} must be an int in 1..{high}, got {text!r}")
        values.append(int(text))
    return SearchSettings(worlds=values[0] if values else None,
                          candidates=values[1] if len(values) > 1 else DEFAULT_CANDIDATES)


def _check_int(name: str, value: object, low: int, high: int, what: str = "") -> None:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{name} must be an int in {low}..{high}{what}, got {value!r}")


def _is_real(value: object) -> bool:
    """An int or float (numpy's included), not a bool."""
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool | np.bool_)


@dataclass(frozen=True)
class SearchSettings:
    """The search agent's settings (see the module docstring), validated when built.

    ``None`` stands for the table's default, which :meth:`for_table` (and so
    :class:`SearchAgent`) resolves from the game configuration. Bad values raise a
    ``ValueError`` naming the setting.
    """

    worlds: int | None = None
    """Sampled states per search; ``None``: :data:`DEFAULT_WORLDS_BY_PLAYERS` (games without
    partners), else :data:`DEFAULT_WORLDS`."""
    candidates: int = DEFAULT_CANDIDATES
    """Turn prefixes the heuristic proposes per search."""
    discards: int = DEFAULT_DISCARDS
    """Extra candidates with another discard after the same plays (:class:`~skipbo_env.agents.turns.TopK`)."""
    prior: float = DEFAULT_PRIOR
    """Weight of the heuristic's score (per 100 points) beside the simulated score."""
    win: float = DEFAULT_WIN
    """Value of a game won (minus: lost) inside the simulated horizon, in stock cards."""
    reach: float = DEFAULT_REACH
    """Weight (stock cards) of the own side's chance, at the horizon, to reach its stock top in the
    coming turn (from its simulated hand and discard tops)."""
    reach_q: float = DEFAULT_REACH_Q
    """Chance that an unseen card supplies one of the own side's missing numbers."""
    horizon: int = DEFAULT_HORIZON
    """Extra rounds (every seat's turn, played by the rollout agent) simulated after the other seats' turns."""
    depth: int | None = None
    """How many of the other seats' turns (the next ones in play order) the simulations play after
    the seat's own before the position is scored; ``None``: :data:`DEFAULT_DEPTHS` where it lists
    the table, else all of them (``num_players - 1``: up to the seat's next turn); 0: the position
    is scored when the seat's own turn ends. Fewer than all needs ``horizon`` 0, and a ``value``
    from a value network (an agent's value head reads the seat's position only when it is to move
    again)."""
    rollout: str = DEFAULT_ROLLOUT
    """The in-engine agent of the simulations: ``"heuristic"`` or ``"greedy"`` (:data:`ROLLOUTS`)."""
    weights: HeuristicWeights | None = None
    """The heuristic planner's weights (candidates, and the heuristic rollouts); ``None``: the
    table's (:func:`search_weights`)."""
    value: float | None = None
    """Weight (stock cards per unit) of a learned value of the seat's position at the horizon
    (``value_net`` evaluated on the seat's observation there); 0: none; ``None``:
    :data:`DEFAULT_VALUES` where :data:`VALUE_NETS` has a network for the table, else 0 (and 0
    where that network is a value network made for another game: the shipped ``value-6p`` reads
    the classic 6-player game, not its variants)."""
    value_net: str | os.PathLike | None = None
    """For ``value``, a value file (:mod:`skipbo_env.agents.valuenet`: the seat's win chance) or an
    agent file (``.safetensors``) whose policy has a value head; ``None``: the table's shipped
    network (:data:`VALUE_NETS`)."""
    net_opponents: float | None = None
    """Share (0..1) of the sampled worlds in which the other seats' simulated turns are played by
    the network of ``opponent_net`` (its greedy legal action, as
    :class:`~skipbo_env.agents.ppo.PPOAgent` plays) instead of the rollout agent: the first
    ``round(share * worlds)`` worlds, the same ones for every candidate. ``None``:
    :data:`DEFAULT_NET_OPPONENTS` where :data:`OPPONENT_NETS` has a network for the table, else 0."""
    opponent_net: str | os.PathLike | None = None
    """The agent file for ``net_opponents``; ``None``: the table's shipped network."""
    policy: float | None = None
    """Weight (stock cards per nat) of ``policy_net``'s log-probability of each candidate turn prefix
    (:func:`~skipbo_env.agents.turns.path_log_probs`) beside the simulated score; with a weight, the
    network's own prefix (:func:`~skipbo_env.agents.turns.policy_turn`) joins the candidates when the
    planner did not propose it. 0: none; ``None``: :data:`DEFAULT_POLICIES` where it lists the
    table, else 0."""
    policy_net: str | os.PathLike | None = None
    """The agent file for ``policy``; ``None``: the table's shipped network (:data:`POLICY_NETS`)."""
    opponent_weights: tuple[HeuristicWeights, ...] = ()
    """Models of the other sides in the heuristic rollouts: world ``j`` plays the opponents'
    seats with ``opponent_weights[j % len]`` (:func:`opponent_styles` gives a mixture of play
    styles); empty: every seat plays the seat's own ``weights``. Partners keep the own weights."""

    def __post_init__(self) -> None:
        if self.worlds is not None:
            _check_int("worlds", self.worlds, 1, MAX_WORLDS)
        _check_int("candidates", self.candidates, 1, MAX_CANDIDATES)
        _check_int("discards", self.discards, 0, MAX_CANDIDATES)
        _check_int("horizon", self.horizon, 0, MAX_HORIZON)
        for name in ("prior", "win", "reach"):  # the depth is checked against the table (for_table)
            if not _is_real(getattr(self, name)) or not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)!r}")
        if not _is_real(self.reach_q) or not 0.0 <= self.reach_q <= 1.0:
            raise ValueError(f"reach_q must be a chance in 0..1, got {self.reach_q!r}")
        if self.rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, got {self.rollout!r}")
        if not isinstance(self.opponent_weights, tuple) or not all(
                isinstance(w, HeuristicWeights) for w in self.opponent_weights):
            raise TypeError("opponent_weights must be a tuple of HeuristicWeights")
        if self.weights is not None and not isinstance(self.weights, HeuristicWeights):
            raise TypeError(f"weights must be HeuristicWeights, got {type(self.weights).__name__}")
        if self.value is not None and (not _is_real(self.value) or not math.isfinite(self.value) or self.value < 0):
            raise ValueError(f"value must be a finite weight >= 0, got {self.value!r}")
        if self.policy is not None and (not _is_real(self.policy) or not math.isfinite(self.policy) or self.policy < 0):
            raise ValueError(f"policy must be a finite weight >= 0, got {self.policy!r}")
        if self.net_opponents is not None and (not _is_real(self.net_opponents)
                                               or not 0.0 <= self.net_opponents <= 1.0):  # NaN fails too
            raise ValueError(f"net_opponents must be a share in 0..1, got {self.net_opponents!r}")

    def for_table(self, config: GameConfig) -> SearchSettings:
        """These settings with every ``None`` replaced by ``config``'s table default (the network
        files stay ``None``: :class:`SearchAgent` finds the shipped ones), checked against the table."""
        others = config.num_players - 1
        depth = _by_table(DEFAULT_DEPTHS, config, others) if self.depth is None else self.depth
        _check_int("depth", depth, 0, others, " (the other seats)")
        if depth < others and self.horizon:
            raise ValueError(f"depth {depth} stops before the seat's next turn: it needs horizon 0, "
                             f"got horizon {self.horizon}")
        shipped_value = _by_table(VALUE_NETS, config, None) is not None
        shipped_opponent = _by_table(OPPONENT_NETS, config, None) is not None
        return replace(
            self,
            worlds=_by_table(DEFAULT_WORLDS_BY_PLAYERS, config, DEFAULT_WORLDS) if self.worlds is None else self.worlds,
            depth=depth,
            weights=search_weights(config.num_players) if self.weights is None else self.weights,
            value=(_by_table(DEFAULT_VALUES, config, 0.0) if shipped_value else 0.0) if self.value is None
            else float(self.value),
            net_opponents=(DEFAULT_NET_OPPONENTS if shipped_opponent else 0.0) if self.net_opponents is None
            else float(self.net_opponents),
            # the shipped networks play the classic game of their table: a variant searches without them
            policy=(_by_table(DEFAULT_POLICIES, config, 0.0) if _classic(config) else 0.0) if self.policy is None
            else float(self.policy),
        )


class SearchAgent(TurnAgent):
    """Determinized turn search (see the module docstring). Implements ``act_view``.

    Args:
        config: the game configuration.
        seed: seeds the agent's generator (sampling and the in-engine rollout agents).
        settings: the search's settings; ``None``: every default.

    Attributes:
        settings: the settings resolved for the table (:meth:`SearchSettings.for_table`; ``value``
            0 where the table's shipped value network reads another game).
        value_net, opponent_net: the network files read (``None`` when none is).
    """

    name = "search"

    def __init__(self, config: GameConfig, seed: int | None = None, settings: SearchSettings | None = None) -> None:
        settings = SearchSettings() if settings is None else settings
        if not isinstance(settings, SearchSettings):
            raise TypeError(f"settings must be SearchSettings, got {type(settings).__name__}")
        resolved = settings.for_table(config)
        super().__init__(config, seed, candidates=settings.candidates, discards=settings.discards,
                         weights=resolved.weights)
        self.settings = resolved
        from ..vector import (  # needs numba (the 'fast' extra); loaded only for this agent
            BatchEngine,
            PlanCache,
            SeatKind,
        )

        worlds = self.worlds
        own_turn = 1 if resolved.policy else 0  # the policy network's own prefix may join the candidates
        self._engine = BatchEngine(config, worlds * (self.candidates + self.discards + own_turn), seed=0)
        self._plans = PlanCache(self._engine.batch_size, config.num_players, self.settings.weights)
        self._rollout = SeatKind[settings.rollout.upper()]
        share = self.settings.net_opponents
        assert share is not None  # resolved by for_table
        self._net_worlds = int(round(share * worlds))
        self._weights_seat: int | None = None  # the seat the plan cache's weights are set for
        self.value_net: Path | None = None
        self.opponent_net: Path | None = None
        self._value_policy: Any = None
        self._value_network: ValueNet | None = None
        self._opponent: Any = None
        self._policy: Any = None
        self.policy_net: Path | None = None
        self._nets: dict[Path, Any] = {}
        default_value = settings.value is None and settings.value_net is None
        if self.settings.value:
            self._load_value_net(default_value)
        if self._net_worlds:
            self.opponent_net = self._network_path(self.settings.opponent_net, _by_table(OPPONENT_NETS, config, None),
                                                   "net_opponents > 0", "net_opponents=0")
            self._opponent = self._load_net(self.opponent_net)
        if self.settings.policy:
            self.policy_net = self._network_path(self.settings.policy_net, _by_table(POLICY_NETS, config, None),
                                                 "policy > 0", "policy=0")
            self._policy = self._load_net(self.policy_net)

    @property
    def worlds(self) -> int:
        """Sampled worlds per search (the resolved ``settings.worlds``)."""
        assert self.settings.worlds is not None  # resolved by for_table
        return self.settings.worlds

    def _load_value_net(self, default_value: bool) -> None:
        """Load the network that scores the horizon (``settings.value > 0``): a value network, or an
        agent's value head. A default value network made for another game turns the value off."""
        path = self._network_path(self.settings.value_net, _by_table(VALUE_NETS, self.config, None),
                                  "value > 0", "value=0")
        if is_value_file(path):  # a seat's win chance, at any seat's turn start
            network = load_value_net(path, None if default_value else self.config)
            if network.game.same_rules(self.config):
                self.value_net, self._value_network = path, network
            else:  # the shipped network reads the classic game only: a variant searches without it
                self.settings = replace(self.settings, value=0.0)
            return
        if self.settings.depth is not None and self.settings.depth < self.config.num_players - 1:
            raise ValueError(f"depth {self.settings.depth} stops before the seat's next turn, where an agent's value "
                             f"head cannot read the position ({path}): it needs value 0 or a value network")
        self.value_net = path
        self._value_policy = self._load_net(path).policy

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

    def _candidates(self, view: SeatView, legal: tuple[Move, ...]) -> list[tuple[float, tuple[Move, ...]]]:
        """The planner's candidates; with a ``policy`` network, also the network's own turn prefix
        when the planner did not propose it (with the lowest planner score among the candidates)."""
        found = super()._candidates(view, legal)
        return found if self._policy is None else with_policy_turn(found, self._policy, view)

    def _scores(self, view: SeatView, found: list[tuple[float, tuple[Move, ...]]]) -> np.ndarray:
        paths = [path for _, path in found]
        scores = self._simulate(view, paths) + self.settings.prior * np.array([value for value, _ in found]) / 100.0
        if self._policy is not None:
            assert self.settings.policy is not None  # resolved by for_table
            scores = scores + self.settings.policy * path_log_probs(self._policy, view, paths)
        return scores

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
        """Mean simulated score per candidate over the sampled worlds (step 4 without the prior)."""
        m, c = self.worlds, len(paths)
        self._load_worlds(view, c)
        self._seat_rollout_weights(view.seat)
        self._play_candidates(paths)
        self._play_out(view.seat, c)
        return self._horizon_scores(view.seat, m * c).reshape(c, m) @ np.full(m, 1.0 / m)

    def _seat_rollout_weights(self, me: int) -> None:
        """With ``opponent_weights``: the opponents of world ``j`` plan with set ``j % len``, the
        own side with the own weights (set once for the agent's seat)."""
        mix = self.settings.opponent_weights
        if not mix or self._weights_seat == me:
            return
        games = np.arange(self._engine.batch_size)
        model = games % self.worlds % len(mix)
        for seat in range(self.config.num_players):
            if self.config.team(seat) == self.config.team(me):
                assert self.settings.weights is not None  # resolved by for_table
                self._plans.set_weights(games, seat, self.settings.weights)
            else:
                for k, weights in enumerate(mix):
                    self._plans.set_weights(games[model == k], seat, weights)
        self._weights_seat = me

    def _load_worlds(self, view: SeatView, copies: int) -> None:
        """Sample the worlds into the first slots, one copy per candidate; park the slots no candidate
        uses; give world ``j``'s rollout agents one stream under every candidate (common random numbers)."""
        eng, m = self._engine, self.worlds
        for j, world in enumerate(sample_states(view, self.rng, m)):
            eng.load_state(j, world)
        eng.tile_games(m, copies)
        eng.park(m * copies)
        eng.set_agent_streams(self.rng.integers(1, 2**63, size=m, dtype=np.int64).astype(np.uint64))

    def _play_candidates(self, paths: list[tuple[Move, ...]]) -> None:
        """Play candidate ``i``'s moves in its block of worlds (slots ``i * worlds ..``)."""
        eng, m = self._engine, self.worlds
        ids = [[encode_action(move, self.config) for move in path] for path in paths]
        off = np.zeros(eng.batch_size, bool)  # worlds where a candidate's next move is not legal
        for step in range(max(len(p) for p in ids)):
            which = [i for i in range(len(ids)) if len(ids[i]) > step]
            rows = np.concatenate([np.arange(i * m, (i + 1) * m) for i in which])
            acts = np.concatenate([np.full(m, ids[i][step], np.int64) for i in which])
            live = ~eng.done[rows] & ~off[rows]
            try:
                eng.step(acts[live], rows[live])
            except IllegalMoveError:
                # The view decides every move of a candidate but one: a refill drawn from the
                # completed piles shuffled back in (R19) when the hand empties on an empty draw
                # pile, which the planner reads as "no refill". The engine changed nothing; worlds
                # where the next move is not legal stop following the candidate and the rollout
                # agent finishes the turn.
                if step == 0:
                    raise  # a first move is legal in the view, so in every world
                legal = eng.masks()[rows, acts] != 0
                off[rows[live & ~legal]] = True
                live &= legal
                eng.step(acts[live], rows[live])

    def _play_out(self, me: int, copies: int) -> None:
        """The rollout agent finishes seat ``me``'s turn; then the other seats' turns (``depth`` of
        them: up to ``me``'s next turn at full depth) and ``horizon`` extra rounds are played, by the
        network in its share of the worlds."""
        eng, m, n = self._engine, self.worlds, self.config.num_players
        assert self.settings.depth is not None  # resolved by for_table
        after = np.full(eng.batch_size, (me + 1) % n, np.int64)
        stop = (me + self.settings.depth + 1) % n  # the first seat not simulated (``me`` at full depth)
        until = np.full(eng.batch_size, stop, np.int64)
        net_rows = np.concatenate([np.arange(i * m, i * m + self._net_worlds) for i in range(copies)])
        self._plans.forget()  # rollout heuristics start without plans

        def others() -> None:  # the other seats' turns, up to the seat's next one (or ``depth`` of them)
            if net_rows.size:
                self._net_turns(net_rows, stop)  # the network plays them in these worlds (the rollout then skips them)
            eng.play_until(until, self._rollout, self._plans)

        eng.play_until(after, self._rollout, self._plans)  # the rollout agent finishes the seat's turn
        others()
        for _ in range(self.settings.horizon):
            eng.play_until(after, self._rollout, self._plans)  # the seat's next turn
            others()

    def _horizon_scores(self, me: int, used: int) -> np.ndarray:
        """Per used slot: the stock race at the horizon, the reach term and the learned value."""
        eng, config, settings = self._engine, self.config, self.settings
        stock = eng.stock_sizes[:used]
        team = config.team(me)
        ours = list(config.team_seats(team))
        sides = [list(config.team_seats(t)) for t in range(config.num_teams) if t != team]
        side_stock = np.stack([stock[:, seats].mean(axis=1) for seats in sides], axis=1)  # each opposing side's mean
        value = side_stock.mean(axis=1) - stock[:, ours].mean(axis=1)
        winner = eng.winner[:used]
        value = value + np.where(winner >= 0, np.where(np.isin(winner, ours), settings.win, -settings.win), 0.0)
        running = ~eng.done[:used]
        if settings.reach:
            own = np.mean([eng.reach_chances(s, settings.reach_q)[:used] for s in ours], axis=0)
            value = value + settings.reach * np.where(running, own, 0.0)
        if settings.value:
            value = value + settings.value * self._learned_value(running, me)
        return value

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
            import torch  # the 'train' extra, checked when the network was loaded

            with torch.no_grad(), one_torch_thread():  # each row's value from its own observation
                out[rows] = self._value_policy.predict_values(torch.as_tensor(obs)).numpy().reshape(-1)
        return out

    def _net_turns(self, rows: np.ndarray, until: int) -> None:
        """The network plays every seat in ``rows`` (its greedy legal action, one batch per step)
        until seat ``until`` is to move or the game ends."""
        eng = self._engine
        while True:
            live = rows[~eng.done[rows] & (eng.current[rows] != until)]
            if not live.size:
                return
            obs = eng.observe_rows(live, eng.current[live])
            eng.step(self._opponent.greedy_actions(obs, eng.masks()[live]), live)


def search_weights(num_players: int) -> HeuristicWeights:
    """The search's planner weights at a table of ``num_players`` (:data:`SEARCH_WEIGHTS`, else the
    heuristic's, :func:`~skipbo_env.bots.heuristic.default_weights`)."""
    return SEARCH_WEIGHTS.get(num_players, default_weights(num_players))


def opponent_styles(config: GameConfig) -> tuple[HeuristicWeights, ...]:
    """Three models of other players for :attr:`SearchSettings.opponent_weights`: the search's own
    weights (:func:`search_weights`); a hand emptier (a refill worth
    90, wilds nearly free, every hand card played worth 3, the next seat's stock watched a little);
    and a stock chaser (the shortest chain to the stock, its set-up weighted 10, little blocking)."""
    base = search_weights(config.num_players)
    return (
        base,
        replace(base, refill=90.0, wild_spent=5.0, hand_play=3.0, danger=10.0, stock_detour=0.0, stock_need=0.0),
        replace(base, stock_detour=7.0, stock_need=10.0, danger=10.0),
    )


def _classic(config: GameConfig) -> bool:
    """Whether ``config`` is the classic game of its number of players (the game the shipped agents play)."""
    return config.same_rules(GameConfig(num_players=config.num_players))


def _by_table(table: Mapping[int, _T], config: GameConfig, otherwise: _U) -> _T | _U:
    """A per-table default: ``table``'s entry for the number of players in a game without partners,
    else ``otherwise`` (the partner games and the tables ``table`` does not list)."""
    return otherwise if config.partner_game else table.get(config.num_players, otherwise)


__all__ = ["DEFAULT_CANDIDATES", "DEFAULT_HORIZON", "DEFAULT_WORLDS", "DEFAULT_WORLDS_BY_PLAYERS", "SEARCH_WEIGHTS",
           "SearchAgent", "SearchSettings", "opponent_styles", "parse_search_spec", "search_weights"]
