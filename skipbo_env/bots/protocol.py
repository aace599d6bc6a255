"""The agent protocol: ``act(observation) -> int``, and the optional capabilities of :class:`AgentBase`.

``act_view``, ``act_batch`` and ``seed`` have defaults; the class attributes ``batched`` and
``reads_view`` declare how a game loop asks the agent (no caller probes for methods).
:func:`as_agent` wraps any user object once. docs/agents.md ("The agent protocol") has the essay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ..encoding import action_mask
from ..observations import DEFAULT_OBSERVATION, observation_spec
from ..rules import SeatView


@runtime_checkable
class Agent(Protocol):
    """Anything that picks an action id from the observation dict of the seat to move."""

    def act(self, observation: Mapping[str, Any]) -> int: ...


class NeedsViewError(ValueError):
    """An agent that decides from its seat's full view (``reads_view``) was handed an observation dict.

    The observation vector does not hold everything such an agent reads (the discard piles
    below their top two cards, the completed pile). The message says where the view comes from.
    """

    def __init__(self, agent: str) -> None:
        super().__init__(
            f"the {agent} agent decides from its seat's full view, which the observation vector does not hold "
            "(the discard piles below their top two cards, the completed pile): call act_view(view) with "
            "the seat's view: env.unwrapped.seat_view(agent) in a PettingZoo loop, state.view(seat) for a "
            "GameState; as an env opponent or in a tournament, name the agent and the env asks it so"
        )


def view_observation(view: SeatView, observation: str = DEFAULT_OBSERVATION) -> dict[str, Any]:
    """The observation dict of the seat of ``view`` (the vector of observation ``observation``, and the
    mask), built from the view alone."""
    vector = observation_spec(observation).encode(view)
    return {"observation": vector, "action_mask": action_mask(view.legal_moves(), view.config)}


class AgentBase:
    """An agent with every optional capability of the protocol, each with its default.

    Subclasses implement :meth:`act` and override the rest where they do better; they set
    :attr:`batched` or :attr:`reads_view` to say how a game loop should ask them.
    """

    batched: ClassVar[bool] = False
    """The game loops batch this agent's games into one :meth:`act_batch` call."""
    reads_view: ClassVar[bool] = False
    """The game loops ask :meth:`act_view` with the seat's view instead of :meth:`act`."""
    observation: str = DEFAULT_OBSERVATION
    """The name of the observation whose vectors :meth:`act` reads (:mod:`skipbo_env.observations`)."""
    keeps_plan: ClassVar[bool] = False
    """The agent keeps a plan across the moves of a turn, and :meth:`seed` forgets it: a loop that
    seats one agent object in many games at once (the batched engine's learner env) plays each game
    with its own shallow copy, reseeded, so that one game's moves do not throw away another's plan."""

    def act(self, observation: Mapping[str, Any]) -> int:  # pragma: no cover - every agent overrides it
        raise NotImplementedError(f"{type(self).__name__} does not implement act(observation)")

    def act_view(self, view: SeatView) -> int:
        """The action for the seat of ``view`` (which must be to move). Default: :meth:`act` of its observation."""
        return self.act(view_observation(view, self.observation))

    def act_batch(self, observations: Sequence[Mapping[str, Any]]) -> Sequence[int] | np.ndarray:
        """One action per observation (a sequence or an integer array). Default: :meth:`act` on each, in order."""
        return [self.act(observation) for observation in observations]

    def seed(self, seed: int | None = None) -> None:
        """Reset the agent's own generator. Default: nothing (an agent without randomness)."""

    def __repr__(self) -> str:
        path = getattr(self, "path", None)  # an agent read from a file names it
        return f"{type(self).__name__}({str(path)!r})" if path is not None else f"{type(self).__name__}()"


class _Wrapped(AgentBase):
    """A user's object with ``act`` only, given the protocol's defaults."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def act(self, observation: Mapping[str, Any]) -> int:
        return self.agent.act(observation)

    def __repr__(self) -> str:
        return repr(self.agent)


def as_agent(agent: Any) -> AgentBase:
    """``agent`` itself when it is an :class:`AgentBase`, else a wrapper giving it the defaults.

    Raises:
        TypeError: ``agent`` has no callable ``act``.
    """
    if isinstance(agent, AgentBase):
        return agent
    if not isinstance(agent, Agent) or not callable(agent.act):
        raise TypeError(f"an agent needs a method act(observation) -> int, got {agent!r}")
    return _Wrapped(agent)
