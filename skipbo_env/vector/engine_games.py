"""Whole games in the batched engine: scripted seats replayed in compiled code, exactly.

:func:`play_engine_games` plays a tournament's games in one :class:`~skipbo_env.vector.BatchEngine`:
the seats of ``random``, ``greedy`` and ``heuristic`` are decided inside the kernels, each from a
copy of the generator the Python agent would own, so they make the Python agents' moves; other
seats belong to batched agents, asked once per step for all their games.
``tests/test_engine_games.py`` checks the games against :func:`skipbo_env.episode.play_games`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..bots.protocol import AgentBase, as_agent
from ..episode import AgentError
from ..rules import GameState
from .compiled_heuristic import PlanCache
from .engine import BatchEngine, SeatKind, pcg_words

IN_ENGINE: dict[str, SeatKind] = {"random": SeatKind.RANDOM, "greedy": SeatKind.GREEDY, "heuristic": SeatKind.HEURISTIC}
"""Scripted agents the engine replays, by name: their seat kind."""
OUTSIDE = SeatKind.OUTSIDE
"""Kind of a seat whose agent acts from outside the kernels (``act_batch``)."""


def outside_actions(
    engine: BatchEngine, rows: np.ndarray, agents: Sequence[AgentBase], who: Callable[[int, int], str]
) -> np.ndarray:
    """The actions of agents playing outside the kernels: ``agents[i]`` is to move in game ``rows[i]``.

    Each agent is asked as it declares (:mod:`skipbo_env.bots.protocol`), as the rules-core loop
    asks it (:func:`skipbo_env.episode.play_batched`): a ``batched`` agent once for all its games
    (``act_batch`` of their observation dicts; one object may sit in many games); a ``reads_view``
    agent with its seat's view of the game (``act_view``; :meth:`BatchEngine.to_state` gives the
    game, :meth:`~skipbo_env.rules.GameState.view` what the seat sees); any other with its seat's
    observation dict (``act``). The actions are checked against the seats' masks.

    Raises:
        AgentError: an action that is not a legal move, naming ``who(game, seat)``.
    """
    seats = engine.current[rows]
    masks = engine.masks()[rows]
    obs = engine.observe_rows(rows, seats)
    actions = np.empty(rows.size, np.int64)
    groups: dict[int, tuple[AgentBase, list[int]]] = {}
    for i, agent in enumerate(agents):
        if agent.batched:
            groups.setdefault(id(agent), (agent, []))[1].append(i)
        elif agent.reads_view:
            actions[i] = agent.act_view(engine.to_state(int(rows[i])).view(int(seats[i])))
        else:
            actions[i] = agent.act({"observation": obs[i], "action_mask": masks[i]})
    for agent, items in groups.values():
        chosen = np.asarray(agent.act_batch([{"observation": obs[i], "action_mask": masks[i]} for i in items]))
        if chosen.shape != (len(items),):
            raise AgentError(f"{agent!r}: act_batch returned {chosen.shape} actions for {len(items)} games")
        actions[items] = chosen
    for i, a in enumerate(actions.tolist()):
        if not (0 <= a < engine.num_actions and masks[i, a]):
            raise AgentError(f"{who(int(rows[i]), int(seats[i]))} chose action {a}, which is not a legal move here")
    return actions


def play_engine_games(
    states: Sequence[GameState],
    kinds: Sequence[Sequence[int]],
    seeds: Sequence[Sequence[int]],
    outside: Sequence[Sequence[Any]],
    names: Sequence[Sequence[str]] | None = None,
) -> list[GameState]:
    """Play games from their starting states to the end; returns their final states.

    Args:
        states: the games' starting states (one configuration; not changed).
        kinds: per game and seat, an :data:`IN_ENGINE` kind or :data:`OUTSIDE`.
        seeds: per game and seat, the seed of the scripted agent's generator
            (``numpy.random.default_rng(seed)``, as the Python agent is seeded); ignored
            for outside seats.
        outside: per game and seat, the outside agent (an agent declaring ``batched``, asked
            with ``act_batch``), ``None`` for in-engine seats. One object may sit in many games.
        names: per game and seat, names for error messages.

    Raises:
        AgentError: an outside agent chose an illegal action (named by game and seat).
    """
    if not states:
        return []
    config = states[0].config
    n = config.num_players
    count = len(states)
    engine = BatchEngine(config, count, seed=0)
    for g, state in enumerate(states):
        if state.config != config:
            raise ValueError("all games must share one configuration")
        engine.load_state(g, state)  # the rules core's own state: no dict round trip
    kind_arr = np.asarray(kinds, dtype=np.int64).reshape(count, n)
    apcg = np.zeros((count * n, 6), np.uint64)
    for g in range(count):
        for seat in range(n):
            if kind_arr[g, seat] in IN_ENGINE.values():
                apcg[g * n + seat] = pcg_words(np.random.PCG64(int(seeds[g][seat])).state)
    plans = PlanCache(count, n)

    def who(g: int, seat: int) -> str:
        return f"game {g}: player_{seat}" + (f" ({names[g][seat]})" if names is not None else "")

    while True:
        engine.advance_seated(kind_arr, apcg, plans)
        rows = np.flatnonzero(~engine.done)
        if rows.size == 0:
            break
        agents = []
        for g, seat in zip(rows.tolist(), engine.current[rows].tolist(), strict=True):
            agent = None if outside[g][seat] is None else as_agent(outside[g][seat])
            if agent is None or not agent.batched:
                raise ValueError(f"game {g}: seat {seat} has no in-engine kind and no batched agent")
            agents.append(agent)
        actions = outside_actions(engine, rows, agents, who)
        engine.step(actions, rows=rows)
    return [engine.to_state(g) for g in range(count)]


__all__ = ["IN_ENGINE", "OUTSIDE", "outside_actions", "play_engine_games"]
