"""The one game loop: the seat to move decides, the rules check the move, the state applies it.

A :class:`GameLoop` steps one game a decision at a time over its :class:`~skipbo_env.rules.GameState`
and one agent per seat (``None`` for a seat whose moves come from outside: a person);
``decide()``, ``take(action)`` and ``apply(decision)`` are driven by the caller. :func:`decisions`
is its generator form and :func:`play_batched` plays many games in lockstep. Agents are asked as
they declare (``act_batch``, ``act_view`` or ``act``); a bad action raises :class:`AgentError`
naming the seat, the state unchanged. See docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bots import AgentBase, as_agent
from ..encoding import decode_action, observe
from ..rules import GameState, Move, SeatView


class AgentError(RuntimeError):
    """An agent returned an action that is not a legal move of its seat."""


@dataclass(frozen=True)
class Decision:
    """One decision of a game: who moved, what it saw, the action id it chose and its move."""

    seat: int
    observation: dict[str, np.ndarray]
    action: int
    move: Move


class GameLoop:
    """One game stepped a decision at a time (see the module docstring).

    Args:
        state: the game; the loop applies the moves to it.
        agents: one per seat: an agent (anything :func:`~skipbo_env.bots.as_agent` accepts), or
            ``None`` for a seat whose moves come from outside (:meth:`take`).
        names: one label per seat for error messages (``player_1 (greedy)``).
        game: a prefix for error messages when several games run at once (``"game 3"``).
    """

    def __init__(
        self, state: GameState, agents: Sequence[Any], names: Sequence[str] | None = None, game: str = ""
    ) -> None:
        n = state.config.num_players
        if len(agents) != n:
            raise ValueError(f"a game of {n} players needs one agent (or None) per seat, got {len(agents)}")
        self.state = state
        self.agents: list[AgentBase | None] = [None if a is None else as_agent(a) for a in agents]
        self.names = names
        self.game = game

    @property
    def over(self) -> bool:
        """The game has ended (won or truncated)."""
        return self.state.is_over

    @property
    def waiting(self) -> bool:
        """The game is on and the seat to move has no agent: the loop waits for :meth:`take`."""
        return not self.state.is_over and self.agents[self.state.current] is None

    def who(self, seat: int) -> str:
        """``player_1 (greedy)`` (with the game prefix, when given): how errors name a seat."""
        name = f"player_{seat}" + (f" ({self.names[seat]})" if self.names is not None else "")
        return f"{self.game}: {name}" if self.game else name

    def agent(self) -> AgentBase:
        """The agent of the seat to move."""
        if self.state.is_over:
            raise RuntimeError("the game is over: no seat is to move")
        seat = self.state.current
        agent = self.agents[seat]
        if agent is None:
            raise RuntimeError(f"{self.who(seat)} has no agent: its moves come from outside (GameLoop.take)")
        return agent

    def observation(self) -> dict[str, np.ndarray]:
        """The observation dict of the seat to move."""
        return observe(self.state, self.state.current)

    def ask(self, view: SeatView | None = None, observation: dict[str, np.ndarray] | None = None) -> Any:
        """The action the agent of the seat to move chooses, not yet checked: ``act_view`` for an
        agent that reads the view, else ``act``. ``view`` and ``observation`` are the seat's, when
        the caller has them already."""
        agent, state, seat = self.agent(), self.state, self.state.current
        if agent.reads_view:
            return agent.act_view(view if view is not None else state.view(seat))
        return agent.act(observation if observation is not None else observe(state, seat, view))

    def check(self, action: Any) -> Move:
        """The move of ``action`` if it is legal for the seat to move; else :class:`AgentError`."""
        try:
            move = decode_action(action, self.state.config)
        except ValueError as exc:
            raise AgentError(f"{self.who(self.state.current)} chose action {action!r}: {exc}") from exc
        if not self.state.is_legal(move):
            raise AgentError(f"{self.who(self.state.current)} chose an illegal move: {move}")
        return move

    def decide(self) -> Decision:
        """The decision of the agent of the seat to move, checked; not applied yet (:meth:`apply`)."""
        state, seat = self.state, self.state.current
        view = state.view(seat)
        observation = observe(state, seat, view)
        action = self.ask(view, observation)
        return Decision(seat, observation, int(action), self.check(action))

    def take(self, action: Any) -> Decision:
        """The decision of the seat to move made outside the loop (a person's action id), checked
        as an agent's is; not applied yet (:meth:`apply`). Only for a seat without an agent."""
        if not self.waiting:
            seat = self.state.current
            why = "the game is over" if self.state.is_over else f"{self.who(seat)} moves by its agent"
            raise RuntimeError(f"no move is taken from outside now: {why}")
        move = self.check(action)
        seat = self.state.current
        return Decision(seat, observe(self.state, seat), int(action), move)

    def apply(self, decision: Decision) -> None:
        """Play ``decision``'s move (a decision of the position the game is in)."""
        if decision.seat != self.state.current or self.state.is_over:
            raise RuntimeError(f"the decision of player_{decision.seat} is not one of the game's current position")
        self.state.apply(decision.move)


def decisions(state: GameState, agents: Sequence[Any], names: Sequence[str] | None = None) -> Iterator[Decision]:
    """Play ``state`` to its end, every seat asked through its agent (:meth:`GameLoop.decide`).

    Yields each :class:`Decision` before its move is applied (the state still shows the
    position the agent saw), and applies the move when the loop resumes. An action outside the
    action table or an illegal move raises :class:`AgentError` naming the seat
    (``names[seat]`` when given) and the action; the state is unchanged then.
    """
    loop = GameLoop(state, agents, names)
    while not loop.over:
        decision = loop.decide()
        yield decision
        loop.apply(decision)


def play_batched(loops: Sequence[GameLoop], on_move: Callable[[int, Move], None] | None = None) -> None:
    """Play every game of ``loops`` to its end, in lockstep: the batched form of the loop.

    At each step every game still on has one decision. Agents that decide in batches
    (``batched``: a network) get all their games of the step in one ``act_batch`` call (one
    forward pass); the others are asked game by game (:meth:`GameLoop.ask`). Moves are checked
    as one game's are, and ``on_move(g, move)`` is called before the move of ``loops[g]`` is
    applied. An agent that sits in several games must not carry state from one decision to the
    next (a batched network); scripted agents with a generator get one object per game.
    Every seat needs an agent.
    """
    live = [g for g, loop in enumerate(loops) if not loop.over]
    while live:
        batches: dict[int, tuple[AgentBase, list[int]]] = {}
        actions: dict[int, Any] = {}
        for g in live:
            agent = loops[g].agent()
            if agent.batched:
                batches.setdefault(id(agent), (agent, []))[1].append(g)
            else:
                actions[g] = loops[g].ask()
        for agent, games in batches.values():
            chosen = agent.act_batch([loops[g].observation() for g in games])
            if len(chosen) != len(games):
                raise AgentError(f"{agent!r}: act_batch returned {len(chosen)} actions for {len(games)} games")
            actions.update(zip(games, chosen, strict=True))
        for g in live:
            loop = loops[g]
            move = loop.check(actions[g])
            if on_move is not None:
                on_move(g, move)
            loop.state.apply(move)
        live = [g for g in live if not loops[g].over]
