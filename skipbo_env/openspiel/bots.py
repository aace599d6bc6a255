"""Any project agent as an OpenSpiel bot (``pyspiel.Bot``), for OpenSpiel's evaluation."""

from __future__ import annotations

from typing import Any

import pyspiel

from ..bots.protocol import AgentBase, as_agent


class SkipBoBot(pyspiel.Bot):
    """A project agent (a scripted bot, a trained agent, the search agent, any object with
    ``act(observation) -> int``) playing one seat of ``python_skipbo``.

    It asks the agent's ``act_view`` with the seat's view of the rules' state (what a game loop
    of the project asks), so the action is one of the project's ids. Example::

        from skipbo_env.bots import make_bot
        bot = SkipBoBot(make_bot("heuristic", game.config, seed=0))
    """

    def __init__(self, agent: Any) -> None:
        pyspiel.Bot.__init__(self)
        self.agent: AgentBase = as_agent(agent)

    def step(self, state: Any) -> int:
        """The agent's action for the seat to move in ``state`` (a decision node)."""
        gs = state.game_state
        if gs is None or state.is_chance_node() or state.is_terminal():
            raise ValueError(
                f"SkipBoBot.step needs a decision node, got {'terminal' if state.is_terminal() else 'chance'} state"
            )
        return int(self.agent.act_view(gs.view(state.current_player())))

    def restart_at(self, state: Any) -> None:
        """Nothing to reset: the agent decides from the current view alone."""

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        """Nothing to track: the agent decides from the current view alone."""
