"""OpenSpiel's IS-MCTS bot (and MCTS on determinized games) against the project's heuristic.

Plays 2-player games of ``python_skipbo`` through OpenSpiel's ``evaluate_bots``, the search bot
alternating seats, and prints its win rate with a 95% Wilson interval (the ``openspiel`` extra)::

    python -m skipbo_env.recipes.openspiel_ismcts --games 20 --sims 100 --seed 0

``--bot`` is ``ismcts``, ``ismcts-prior`` (PUCT with the heuristic's prior) or ``pimc``; leaves are
scored by :class:`StockEvaluator`. Use this module's :class:`ISMCTSBot`: OpenSpiel 2.0.2's own
lacks ``restart_at``. See docs/pipelines.md ("OpenSpiel").
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts

from ..agents.tournament import wilson_interval
from ..bots import BOTS, make_bot
from ..openspiel import SkipBoBot  # registers python_skipbo
from ..rules import WILD, cards_until_playable


class StockEvaluator(mcts.Evaluator):
    """Leaf value from the stocks. A side's distance to winning is its stock cards left (per
    seat) plus a tenth of the numbers its stock tops still wait for on the building piles
    (:func:`skipbo_env.rules.cards_until_playable`; a wild waits for none). A seat's value is
    ``tanh(d / 3)``, ``d`` the other sides' mean distance less its own side's: one stock card
    is worth about 0.3. The real returns at a terminal state; a uniform prior."""

    def evaluate(self, state: Any) -> np.ndarray:
        if state.is_terminal():
            return np.array(state.returns())
        gs = state.game_state
        config = gs.config
        building = gs.building_values()
        sides = config.num_teams
        distance = []
        for side in range(sides):
            seats = config.team_seats(side)
            waits = sum(cards_until_playable(gs.stocks[s][-1], building) for s in seats
                        if gs.stocks[s] and gs.stocks[s][-1] != WILD)
            distance.append((sum(len(gs.stocks[s]) for s in seats) + 0.1 * waits) / len(seats))
        total = sum(distance)
        return np.array([np.tanh(((total - distance[config.team(s)]) / (sides - 1) - distance[config.team(s)]) / 3.0)
                         for s in range(config.num_players)])

    def prior(self, state: Any) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        actions = state.legal_actions()
        return [(a, 1.0 / len(actions)) for a in actions]


class HeuristicPriorEvaluator(StockEvaluator):
    """:class:`StockEvaluator` with the heuristic's move as the prior: half the probability on
    the action the project's heuristic picks from the seat's view, half spread evenly (for
    IS-MCTS's PUCT selection)."""

    def __init__(self, config: Any, seed: int) -> None:
        self.agent = make_bot("heuristic", config, seed=seed)

    def prior(self, state: Any) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        actions = state.legal_actions()
        best = self.agent.act_view(state.game_state.view(state.current_player()))
        share = 0.5 / len(actions)
        return [(a, share + (0.5 if a == best else 0.0)) for a in actions]


class Sampler:
    """A seeded ``probability_sampler`` for ``resample_from_infostate``: uniform floats in [0, 1)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self) -> float:
        return float(self.rng.random())


class DeterminizedMCTSBot(pyspiel.Bot):
    """OpenSpiel's ``MCTSBot`` run on ``worlds`` sampled full games per decision; votes by visits."""

    def __init__(self, game: Any, sims: int, worlds: int, seed: int, uct_c: float) -> None:
        pyspiel.Bot.__init__(self)
        self.sampler = Sampler(seed)
        self.worlds = worlds
        self.mcts = mcts.MCTSBot(game, uct_c=uct_c, max_simulations=max(1, sims // worlds),
                                 evaluator=StockEvaluator(), random_state=np.random.RandomState(seed),
                                 solve=False)

    def step(self, state: Any) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        visits: Counter[int] = Counter()
        player = state.current_player()
        for _ in range(self.worlds):
            world = state.resample_from_infostate(player, self.sampler)
            root = self.mcts.mcts_search(world)
            for child in root.children:
                visits[child.action] += child.explore_count
        return max(legal, key=lambda a: (visits[a], -a))

    def restart_at(self, state: Any) -> None:
        pass

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        pass


class ISMCTSBot(ismcts.ISMCTSBot):
    """OpenSpiel's ``ISMCTSBot`` with the two calls ``evaluate_bots`` makes of every bot (each
    search starts afresh from the current state, so both do nothing)."""

    def restart_at(self, state: Any) -> None:
        pass

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        pass


def make_search_bot(kind: str, game: Any, sims: int, worlds: int, seed: int, uct_c: float = 0.5) -> pyspiel.Bot:
    if kind == "pimc":
        return DeterminizedMCTSBot(game, sims, worlds, seed, uct_c)
    if kind == "ismcts-prior":
        bot = ISMCTSBot(game, HeuristicPriorEvaluator(game.config, seed), uct_c=uct_c, max_simulations=sims,
                        random_state=np.random.RandomState(seed),
                        child_selection_policy=ismcts.ChildSelectionPolicy.PUCT)
    else:
        bot = ISMCTSBot(game, StockEvaluator(), uct_c=uct_c, max_simulations=sims,
                        random_state=np.random.RandomState(seed))
    sampler = Sampler(seed)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
    return bot


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m skipbo_env.recipes.openspiel_ismcts",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--bot", choices=("ismcts", "ismcts-prior", "pimc"), default="ismcts")
    parser.add_argument("--opponent", choices=sorted(BOTS), default="heuristic", help="a scripted agent")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--sims", type=int, default=100, help="simulations per decision")
    parser.add_argument("--worlds", type=int, default=4, help="sampled games per decision (pimc)")
    parser.add_argument("--uct-c", type=float, default=0.5, help="UCT exploration constant")
    parser.add_argument("--stock-size", type=int, default=0, help="0: the rules' default (30)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": args.stock_size})
    wins = ties = stock_left = 0
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(args.games):
        seat = i % 2  # the search bot alternates seats
        search = make_search_bot(args.bot, game, args.sims, args.worlds, args.seed + i, args.uct_c)
        opponent = SkipBoBot(make_bot(args.opponent, game.config, seed=args.seed + i))
        bots = [search, opponent] if seat == 0 else [opponent, search]
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, bots, np.random.RandomState(args.seed + i))
        wins += returns[seat] > 0
        ties += returns[seat] == 0
        left = len(state.game_state.stocks[seat])  # evaluate_bots played `state` to its end
        stock_left += left
        print(f"game {i + 1}: {args.bot} in seat {seat} returns {returns[seat]:+.0f}, "
              f"its stock left {left}", flush=True)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    low, high = wilson_interval(wins, args.games)
    print(f"{args.bot} vs {args.opponent}, {args.games} games, {args.sims} sims/decision: "
          f"win rate {wins / args.games:.1%} [{low:.1%}, {high:.1%}] (95% Wilson), {ties} truncated, "
          f"its stock left {stock_left / args.games:.1f} of {game.config.stock_size} on average, "
          f"{elapsed:.0f} s wall, {cpu:.0f} s CPU")


if __name__ == "__main__":
    main()
