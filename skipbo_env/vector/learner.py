"""One learner seat per game, every other seat played inside the batch.

:class:`LearnerBatch` is the logic the Gymnasium and SB3 vector envs share; it follows
``SkipBoSingleEnv`` (opponent specs, learner seat, rewards, re-deals, illegal-action modes) for B
games at once, over the episode contract (:mod:`skipbo_env.episode`). ``random``, ``greedy`` and
``heuristic`` opponents play inside the engine; any other agent plays from Python, asked as it
declares, with a shallow copy per game for agents that keep a plan. See docs/vector.md.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bots import AgentBase
from ..episode import (
    ILLEGAL_ACTION_REWARD,
    MAX_REDEALS,
    STOCK_CARD_REWARD,
    check_flag,
    check_illegal_action,
    check_learner_seat,
    load_opponent,
    opponent_specs,
    redeal_error,
    shaped_actions,
    terminal_rewards,
)
from ..rules import GameConfig
from .compiled_heuristic import PlanCache
from .engine import AGENT_KINDS, BatchEngine, SeatKind
from .engine_games import outside_actions

ENGINE_OPPONENTS = {**AGENT_KINDS, "heuristic": SeatKind.HEURISTIC}
"""Opponents played inside the kernels, by name: random, greedy, and the heuristic (one plan
cache per game and seat, the compiled planner: the Python agent's moves). Any other opponent is
called from Python (:attr:`SeatKind.OUTSIDE`)."""


@dataclass
class StepResult:
    """What one batch step returns (arrays of length B; observations are fresh arrays)."""

    obs: np.ndarray
    """(B, obs_size) float32: the learner's observation in each game (a new game's after an autoreset)."""
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_obs: np.ndarray
    """(B, obs_size) float32: the learner's last observation of each game that ended (rows of the others are 0)."""
    winners: list[tuple[int, ...] | None]
    """Per game that ended, the winning seats (empty on truncation); None for games still on."""
    illegal: np.ndarray
    """Per game: True when its game ended by an illegal learner action (``illegal_action="lose"``)."""
    redeals: np.ndarray
    """Per game: re-deals before the learner's first move in the game now running."""
    learner_seats: np.ndarray
    """Per game: the learner's seat in the game this step was played in (before any autoreset)."""


def _opponent_kinds(
    specs: Any, config: GameConfig, seed_seq: np.random.SeedSequence
) -> tuple[np.ndarray, dict[int, AgentBase]]:
    """(kind per relative seat, agent per relative seat played from Python) from the opponents spec."""
    n = config.num_players
    checked = opponent_specs(specs, config)
    kinds = np.full(n, SeatKind.LEARNER, np.int64)
    callbacks: dict[int, AgentBase] = {}
    seeds = seed_seq.spawn(n - 1)
    for k, spec in enumerate(checked):
        rel = k + 1
        if isinstance(spec, AgentBase):
            callbacks[rel] = spec
        elif isinstance(spec, str) and spec in ENGINE_OPPONENTS:
            kinds[rel] = ENGINE_OPPONENTS[spec]
            continue
        else:
            callbacks[rel] = load_opponent(spec, config, k, seed=int(seeds[k].generate_state(1)[0]))
        kinds[rel] = SeatKind.OUTSIDE
    return kinds, callbacks


class LearnerBatch:
    """B games of ``config``, each with one learner seat; see the module docstring."""

    def __init__(
        self,
        config: GameConfig,
        num_envs: int,
        opponents: Any = "random",
        learner_seat: int | None = None,
        seed: int | None = None,
        illegal_action: str = "raise",
        reward_shaping: bool = False,
    ) -> None:
        if not isinstance(config, GameConfig):
            raise TypeError(f"config must be a GameConfig, got {type(config).__name__}")
        self.config = config
        self.num_envs = num_envs
        self.learner_seat_config = check_learner_seat(learner_seat, config)
        self.illegal_action = check_illegal_action(illegal_action)
        self.stock_reward = STOCK_CARD_REWARD if check_flag("reward_shaping", reward_shaping) else 0.0
        self._shaped = shaped_actions(config.partner_game)
        self._opponent_specs = opponents
        self.engine = BatchEngine(config, num_envs, seed=seed)
        self.learner = np.zeros(num_envs, np.int64)
        self.redeals = np.zeros(num_envs, np.int64)
        self.decisions = 0
        """Decisions applied so far, learner's and opponents' (for throughput figures)."""
        self._masks_bool = np.zeros((num_envs, self.engine.num_actions), bool)
        self._plans = PlanCache(num_envs, config.num_players)
        self._started = False
        self._seed_all(seed)

    # ------------------------------------------------------------ seeding
    def _seed_all(self, seed: int | None) -> None:
        seq = np.random.SeedSequence(seed)
        engine_seq, seat_seq, agent_seq = seq.spawn(3)
        self.engine.seed(engine_seq)
        self.rng = np.random.default_rng(seat_seq)
        self._seat_opponents(self._opponent_specs, agent_seq)

    def _seat_opponents(self, specs: Any, seq: np.random.SeedSequence) -> None:
        """The opponents of ``specs`` in their seats, seeded from ``seq``; no game copies yet."""
        self.seat_kind, self.callbacks = _opponent_kinds(specs, self.config, seq)
        self._game_agents: dict[tuple[int, int], AgentBase] = {}
        self._copy_seed = int(seq.generate_state(1)[0])

    def set_opponents(self, opponents: Any) -> None:
        """Replace the opponents (same spec as the constructor); games in progress continue with them."""
        seq = np.random.SeedSequence(int(self.rng.integers(2**63)))
        self._seat_opponents(opponents, seq)
        self._opponent_specs = opponents
        self._plans.forget()  # a seat that turns heuristic starts without a plan

    def _seat_agent(self, game: int, rel: int) -> AgentBase:
        """The agent playing relative seat ``rel`` of game ``game``: the seat's own object, or that
        game's copy of it for an agent that keeps a plan (see the module docstring)."""
        agent = self.callbacks[rel]
        if not agent.keeps_plan:
            return agent
        mine = self._game_agents.get((game, rel))
        if mine is None:
            mine = self._game_agents[(game, rel)] = copy.copy(agent)
            mine.seed(int(np.random.SeedSequence([self._copy_seed, game, rel]).generate_state(1)[0]))
        return mine

    # ------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> np.ndarray:
        """Deal every game (reseeding everything first when ``seed`` is given); the learners' observations."""
        if seed is not None:
            self._seed_all(seed)
        self._start_games(np.arange(self.num_envs))
        self._started = True
        return self._finish_observations()

    def step(self, actions: Any, hold: np.ndarray | None = None) -> StepResult:
        """Apply one learner action per game, play the other seats, autoreset ended games.

        ``hold`` (bool per game) leaves those games as they are, their actions unread: reward 0, not
        ended (how a next-step autoreset skips a game's reset step)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        eng = self.engine
        seats = self.learner.copy()
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} ints, got shape {acts.shape} dtype {acts.dtype}")
        acts = acts.astype(np.int64)
        playing = np.ones(self.num_envs, bool) if hold is None else ~np.asarray(hold, bool)
        rewards = np.zeros(self.num_envs, np.float64)
        illegal = np.zeros(self.num_envs, bool)
        if self.illegal_action == "raise" and playing.all():
            eng.step(acts)
        else:
            rows = np.flatnonzero(playing)
            if self.illegal_action != "raise":
                in_range = (acts[rows] >= 0) & (acts[rows] < eng.num_actions)
                bad = ~in_range
                bad[in_range] = eng.masks()[rows[in_range], acts[rows[in_range]]] == 0
                illegal[rows[bad]] = True
                rows = rows[~bad]
            eng.step(acts[rows], rows=rows)
        moved = playing & ~illegal
        self.decisions += int(moved.sum())
        if self.stock_reward:
            shaped = np.zeros(self.num_envs, bool)
            shaped[moved] = self._shaped[acts[moved]]
            rewards += np.where(shaped, self.stock_reward, 0.0)
        self._advance()
        status = eng.status
        terminated = (status == 1) | illegal
        truncated = (status == 2) & ~illegal
        ended = np.flatnonzero(terminated | truncated)
        final_obs = np.zeros((self.num_envs, eng.obs_size), np.float32)
        winners: list[tuple[int, ...] | None] = [None] * self.num_envs
        if ended.size:
            final_obs[ended] = eng.observe_rows(ended, seats[ended])
            winner = eng.winner
            for b in ended.tolist():
                if illegal[b]:
                    rewards[b] = ILLEGAL_ACTION_REWARD
                    winners[b] = ()
                elif winner[b] >= 0:
                    rewards[b] += terminal_rewards(self.config, int(winner[b]))[seats[b]]
                    winners[b] = self.config.team_seats(self.config.team(int(winner[b])))
                else:
                    winners[b] = ()
            self._start_games(ended)
        obs = self._finish_observations()
        return StepResult(obs, rewards, terminated, truncated, final_obs, winners, illegal, self.redeals.copy(), seats)

    def action_masks(self) -> np.ndarray:
        """(B, num_actions) bool: the learner's legal actions in each game (a view, refreshed every step)."""
        return self._masks_bool

    # ------------------------------------------------------------ internals
    def _start_games(self, rows: np.ndarray) -> None:
        """Deal new games in ``rows`` and play up to the learner's first move, re-dealing games that end before it."""
        eng = self.engine
        self.redeals[rows] = 0
        pending = rows
        while pending.size:
            if self.learner_seat_config is None:
                self.learner[pending] = self.rng.integers(self.config.num_players, size=pending.size)
            else:
                self.learner[pending] = self.learner_seat_config
            eng.reset(pending)
            self._plans.forget(pending)  # new games: no plans cached
            self._advance()
            pending = pending[eng.done[pending]]
            if pending.size:
                self.redeals[pending] += 1
                if self.redeals[pending].max() > MAX_REDEALS:
                    raise redeal_error()

    def _advance(self) -> None:
        """Play every non-learner seat until each game waits for its learner or has ended."""
        eng = self.engine
        while True:
            self.decisions += eng.advance(self.seat_kind, self.learner, self._plans)
            if not self.callbacks:
                return
            n = self.config.num_players
            current = eng.current
            rel = (current - self.learner) % n
            waiting = np.flatnonzero(~eng.done & (self.seat_kind[rel] == SeatKind.OUTSIDE))
            if not waiting.size:
                return
            agents = [self._seat_agent(g, r) for g, r in zip(waiting.tolist(), rel[waiting].tolist(), strict=True)]
            actions = outside_actions(eng, waiting, agents, self._opponent_label)
            eng.step(actions, rows=waiting)
            self.decisions += waiting.size

    def _opponent_label(self, game: int, seat: int) -> str:
        """How an error names the opponent playing ``seat`` in game ``game``."""
        agent = self.callbacks[int((seat - self.learner[game]) % self.config.num_players)]
        return f"game {game}: opponent {agent!r} playing player_{seat}"

    def _finish_observations(self) -> np.ndarray:
        """Fresh learner observations of every game, and the masks behind :meth:`action_masks`."""
        eng = self.engine
        obs = eng.observations(seats=self.learner)
        np.not_equal(eng.masks(), 0, out=self._masks_bool)
        return obs
