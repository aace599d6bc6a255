"""The episode contract: what every env path and the imitation data agree on.

One module owns each piece, and the PettingZoo AEC env (:mod:`skipbo_env.aec`),
the single-agent env (:mod:`skipbo_env.single`), the batched learner
(:mod:`skipbo_env.vector.learner`) and behaviour-cloning data
(:mod:`skipbo_env.training.pretrain`) all use it:

* **Terminal rewards** (:func:`terminal_rewards`): +1 to every seat of the
  winning side (both partners in the partner game), -1 to every other seat,
  0 to all when the game is truncated (turn limit R23 or move limit).
* **Shaping** (:func:`is_shaped_move`, :func:`shaping_reward`,
  :func:`shaped_actions`): with ``reward_shaping`` on, the mover also gets
  :data:`STOCK_CARD_REWARD` for each card it plays from its own stock (or,
  in the partner game, its partner's). The terminal rewards are the same
  with or without shaping.
* **Illegal actions** (:data:`ILLEGAL_ACTION_MODES`): ``"raise"`` raises the
  rules' ``IllegalMoveError`` and changes nothing; ``"lose"`` ends the
  episode with :data:`ILLEGAL_ACTION_REWARD` for the offender.
* **Re-deals** (:data:`MAX_REDEALS`, :func:`redeal_error`): a game that ends
  before the learner's first move is dealt again, a bounded number of times.
* **Opponent specs** (:func:`opponent_specs`): one per other seat, from the
  learner's left, or one for all; a scripted name or an object with
  ``act(observation) -> int``.
* **Truncation wording**: :func:`skipbo_env.rules.truncation_cause` (the
  rules' own errors word it too, so it lives in the rules).
* **The game loop** (:func:`decisions`): observe the seat to move, ask its
  agent, check the action, apply it; imitation data, terminal play, the web
  table and benchmarks run games through it. :func:`play_games` is the same
  loop over many games at once (tournaments): each agent that can act in
  batches (``act_batch``) decides all its games of a step in one call.

Agents are asked in this order of preference: ``act_batch(observations)``
(many games in one call; :func:`play_games` only), ``act_view(view)``
(the seat's :class:`~skipbo_env.rules.SeatView`, no observation vector:
scripted agents and search), ``act(observation)`` (the AEC observation dict).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bots import BOTS
from .encoding import decode_action, observe
from .rules import ALL_MOVES, NUM_SOLO_MOVES, ConfigError, GameConfig, GameState, Move, Play, Source

WIN_REWARD = 1.0
"""Terminal reward of every seat of the winning side."""
LOSS_REWARD = -1.0
"""Terminal reward of every other seat when a side wins."""
ILLEGAL_ACTION_REWARD = -1.0
"""Reward of a learner whose illegal action ended its episode (``illegal_action="lose"``)."""
STOCK_CARD_REWARD = 0.01
"""Shaping reward per own (or partner's) stock card played, when ``reward_shaping`` is on."""
ILLEGAL_ACTION_MODES = ("raise", "lose")
"""What an env does with an illegal learner action: raise, or end the episode as a loss."""
MAX_REDEALS = 100
"""Deals in a row that may end before the learner's first move before a reset gives up."""

_SHAPED_SOURCES = (Source.STOCK, Source.PARTNER_STOCK)


# ==================================================================== rewards
def terminal_rewards(config: GameConfig, winner: int | None) -> tuple[float, ...]:
    """Per seat, the reward at the end of a game won by seat ``winner`` (``None``: truncated)."""
    if winner is None:
        return (0.0,) * config.num_players
    side = config.team(winner)
    return tuple(WIN_REWARD if config.team(s) == side else LOSS_REWARD for s in range(config.num_players))


def is_shaped_move(move: Move) -> bool:
    """True for a move that earns the shaping reward: a play from the mover's own stock
    or, in the partner game, from the partner's stock."""
    return isinstance(move, Play) and move.source in _SHAPED_SOURCES


def shaping_reward(move: Move, reward_shaping: bool) -> float:
    """The mover's shaping reward for ``move`` (0 with shaping off)."""
    return STOCK_CARD_REWARD if reward_shaping and is_shaped_move(move) else 0.0


@functools.cache
def shaped_actions(partner_game: bool) -> np.ndarray:
    """Bool mask over the action ids of a game: True where :func:`is_shaped_move` holds
    (the batched engine's form of the shaping rule)."""
    n = len(ALL_MOVES) if partner_game else NUM_SOLO_MOVES
    mask = np.array([is_shaped_move(m) for m in ALL_MOVES[:n]], dtype=bool)
    mask.setflags(write=False)
    return mask


# ==================================================================== options
def check_illegal_action(mode: Any) -> str:
    """``mode`` if it is one of :data:`ILLEGAL_ACTION_MODES`, else :class:`ConfigError`."""
    if mode not in ILLEGAL_ACTION_MODES:
        raise ConfigError("illegal_action", f"must be one of {ILLEGAL_ACTION_MODES}, got {mode!r}")
    return mode


def check_flag(key: str, value: Any) -> bool:
    """``value`` if it is a bool (``reward_shaping``, ``render_full``), else :class:`ConfigError`."""
    if type(value) is not bool:
        raise ConfigError(key, f"must be true or false, got {value!r}")
    return value


def check_learner_seat(seat: Any, config: GameConfig) -> int | None:
    """``seat`` if it is ``None`` or a seat of ``config``, else :class:`ConfigError`."""
    n = config.num_players
    if seat is not None and (type(seat) is not int or not 0 <= seat < n):
        raise ConfigError("learner_seat", f"must be None or an int in 0..{n - 1}, got {seat!r}")
    return seat


def redeal_error() -> RuntimeError:
    """The error of a reset whose deals all ended before the learner's first move."""
    return RuntimeError(
        f"{MAX_REDEALS} deals in a row ended before the learner's first move; "
        "raise stock_size, turn_limit or move_limit"
    )


def opponent_specs(specs: Any, config: GameConfig) -> list[str | Any]:
    """One opponent spec per other seat, listed from the learner's left.

    ``specs`` is one spec for every other seat or a sequence of ``n - 1``
    (in the partner game entry ``n/2 - 1`` is the learner's partner). A spec
    is a scripted agent name (:data:`skipbo_env.bots.BOTS`) or an object with
    ``act(observation) -> int``; anything else raises :class:`ConfigError`
    naming the entry.
    """
    n = config.num_players
    if isinstance(specs, str) or not isinstance(specs, Sequence):
        specs = [specs] * (n - 1)
    if len(specs) != n - 1:
        raise ConfigError("opponents", f"needs one spec per other seat ({n - 1}) or a single spec, got {len(specs)}")
    for i, spec in enumerate(specs):
        if isinstance(spec, str):
            if spec not in BOTS:
                raise ConfigError(f"opponents[{i}]", f"unknown agent {spec!r}; known agents: {', '.join(sorted(BOTS))}")
        elif not callable(getattr(spec, "act", None)):
            raise ConfigError(
                f"opponents[{i}]", f"must be an agent name or an object with act(observation) -> int, got {spec!r}"
            )
    return list(specs)


# ==================================================================== the game loop
class AgentError(RuntimeError):
    """An agent returned an action that is not a legal move of its seat."""


@dataclass(frozen=True)
class Decision:
    """One decision of a game: who moved, what it saw, the action id it chose and its move."""

    seat: int
    observation: dict[str, np.ndarray]
    action: int
    move: Move


def _who(seat: int, names: Sequence[str] | None) -> str:
    return f"player_{seat}" + (f" ({names[seat]})" if names is not None else "")


def decisions(state: GameState, agents: Sequence[Any], names: Sequence[str] | None = None) -> Iterator[Decision]:
    """Play ``state`` to its end with ``agents[seat].act(observe(state, seat))``.

    Yields each :class:`Decision` before its move is applied (the state still
    shows the position the agent saw), and applies the move when the loop
    resumes. An action outside the action table or an illegal move raises
    :class:`AgentError` naming the seat (``names[seat]`` when given) and the
    action; the state is unchanged then.
    """
    while not state.is_over:
        seat = state.current
        view = state.view(seat)
        observation = observe(state, seat, view)
        agent = agents[seat]
        action = agent.act_view(view) if hasattr(agent, "act_view") else agent.act(observation)
        move = checked_move(state, action, _who(seat, names))
        yield Decision(seat, observation, int(action), move)
        state.apply(move)


def checked_move(state: GameState, action: Any, who: str) -> Move:
    """The move of ``action`` if it is legal in ``state``; else :class:`AgentError` naming ``who``."""
    try:
        move = decode_action(action, state.config)
    except ValueError as exc:
        raise AgentError(f"{who} chose action {action!r}: {exc}") from exc
    if not state.is_legal(move):
        raise AgentError(f"{who} chose an illegal move: {move}")
    return move


def play_games(
    states: Sequence[GameState],
    players: Sequence[Sequence[Any]],
    names: Sequence[Sequence[str]] | None = None,
    on_move: Callable[[int, Move], None] | None = None,
) -> None:
    """Play every game of ``states`` to its end, many at once: the loop of :func:`decisions`, batched.

    ``players[g][seat]`` is the agent of ``seat`` in game ``g``; the same object may sit in
    many games. At each step every game still on has one decision: agents with
    ``act_batch(observations) -> actions`` get all their games in one call (a network does one
    forward pass), the others are asked game by game (``act_view``, else ``act``). Moves are
    checked as in :func:`decisions` (:class:`AgentError` names the game's seat and
    ``names[g][seat]``) and ``on_move(g, move)`` is called before each is applied. An agent
    that sits in several games must not carry state from one decision to the next (a batched
    network); scripted agents with a generator get one object per game.
    """
    if len(players) != len(states):
        raise ValueError(f"{len(states)} games need {len(states)} seatings, got {len(players)}")
    live = [g for g, state in enumerate(states) if not state.is_over]
    while live:
        batched: dict[int, tuple[Any, list[int]]] = {}
        actions: dict[int, Any] = {}
        for g in live:
            state = states[g]
            agent = players[g][state.current]
            if hasattr(agent, "act_batch"):
                batched.setdefault(id(agent), (agent, []))[1].append(g)
            elif hasattr(agent, "act_view"):
                actions[g] = agent.act_view(state.view(state.current))
            else:
                actions[g] = agent.act(observe(state, state.current))
        for agent, games in batched.values():
            chosen = agent.act_batch([observe(states[g], states[g].current) for g in games])
            if len(chosen) != len(games):
                raise AgentError(f"{agent!r}: act_batch returned {len(chosen)} actions for {len(games)} games")
            actions.update(zip(games, chosen, strict=True))
        for g in live:
            state = states[g]
            seat = state.current
            move = checked_move(state, actions[g], f"game {g}: " + _who(seat, None if names is None else names[g]))
            if on_move is not None:
                on_move(g, move)
            state.apply(move)
        live = [g for g in live if not states[g].is_over]
