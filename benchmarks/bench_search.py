"""Strength and speed of the search agent (``skipbo_env.agents.search``) at one budget.

Plays ``--games`` paired 2-player games (each deal twice, the agents swapping seats) of the
search agent against ``--opponent`` (any ``load_agent`` spec: heuristic, ppo-2p, ...), in one
process on one core, driving the games itself: ``act_view(state.view(seat))`` for agents that
have it, else ``act(observe(state, seat))``. Prints the search agent's win rate (draws count
half), the ms per decision of the search agent (mean over all its decisions, plan
continuations included) and of its searches, and games/s.

    OMP_NUM_THREADS=1 python benchmarks/bench_search.py --opponent heuristic --games 200 \
        --worlds 32 --candidates 12 [--seed 0] [--prior 2.0] [--horizon 0]

Deal ``d`` is ``new_game(config, seed=derive_seed(seed, d))``; agents are seeded per game.
"""

from __future__ import annotations

import argparse
import math
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

from skipbo_env.agents.registry import derive_seed, load_agent  # noqa: E402
from skipbo_env.agents.search import SearchAgent  # noqa: E402
from skipbo_env.encoding import decode_action, observe  # noqa: E402
from skipbo_env.rules import GameConfig, new_game  # noqa: E402


def play(state, agents) -> tuple[int | None, dict[int, float]]:
    """Play ``state`` out; returns the winner and each seat's seconds spent deciding."""
    spent = {s: 0.0 for s in range(len(agents))}
    while not state.is_over:
        seat = state.current
        agent = agents[seat]
        t = time.perf_counter()
        if hasattr(agent, "act_view"):
            action = agent.act_view(state.view(seat))
        else:
            action = agent.act(observe(state, seat))
        spent[seat] += time.perf_counter() - t
        state.apply(decode_action(action, state.config))
    return state.winner, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opponent", default="heuristic")
    parser.add_argument("--games", type=int, default=100, help="games, even (paired deals)")
    parser.add_argument("--worlds", type=int, default=32)
    parser.add_argument("--candidates", type=int, default=12)
    parser.add_argument("--prior", type=float, default=2.0)
    parser.add_argument("--win", type=float, default=30.0)
    parser.add_argument("--horizon", type=int, default=0)
    parser.add_argument("--reach", type=float, default=None, help="own reach weight at the horizon")
    parser.add_argument("--threat", type=float, default=None, help="opponents' reach weight at the horizon")
    parser.add_argument("--reach-q", type=float, default=None)
    parser.add_argument("--threat-q", type=float, default=None)
    parser.add_argument("--reply", type=float, default=None, help="next seat's reach weight after the turn")
    parser.add_argument("--reply-q", type=float, default=None)
    parser.add_argument("--discards", type=int, default=None, help="extra alternative-discard candidates")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    config = GameConfig()
    extra = {key: getattr(args, key) for key in ("reach", "threat", "reach_q", "threat_q", "reply", "reply_q", "discards")
             if getattr(args, key) is not None}
    search = SearchAgent(config, worlds=args.worlds, candidates=args.candidates, prior=args.prior, win=args.win,
                          horizon=args.horizon, **extra)
    opponent = load_agent(args.opponent, config)
    score = 0.0
    decided = 0.0
    games = 0
    start = time.perf_counter()
    decisions0 = 0
    for deal in range(args.games // 2):
        for seat in (0, 1):
            game_seed = derive_seed(args.seed, deal, seat)
            search.seed(game_seed)
            if hasattr(opponent, "seed"):
                opponent.seed(game_seed + 1)
            agents = [opponent, opponent]
            agents[seat] = search
            winner, spent = play(new_game(config, seed=derive_seed(args.seed, deal)), agents)
            score += 1.0 if winner == seat else 0.5 if winner is None else 0.0
            decided += spent[seat]
            games += 1
    elapsed = time.perf_counter() - start
    decisions = search.decisions - decisions0
    rate = score / games
    err = math.sqrt(rate * (1 - rate) / games)
    print(
        f"search W={args.worlds} C={args.candidates} prior={args.prior} H={args.horizon} "
        f"reach={search.reach} threat={search.threat} rq={search.reach_q} tq={search.threat_q} "
        f"reply={search.reply} pq={search.reply_q} D={search.discards} vs {args.opponent}: "
        f"{rate:.3f} +- {err:.3f} over {games} games (seed {args.seed}); "
        f"{decided / decisions * 1e3:.2f} ms/decision ({decisions} decisions, {search.searches} searches, "
        f"{decided / max(1, search.searches) * 1e3:.2f} ms/search); {games / elapsed:.2f} games/s"
    )


if __name__ == "__main__":
    main()
