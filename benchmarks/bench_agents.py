"""Milliseconds per decision of named agents, against a reference agent timed in the same run.

Each agent in ``--agents`` plays ``--games`` paired games (each deal twice, the two seats
swapped) against ``--opponent`` in one process on one core, after one untimed game (deal
``--games``) that compiles and warms caches; only the agent's own decisions are timed
(``act_view(view)`` where the agent has it, else ``act(observe(...))``, as in
``bench_search.py``). Prints one row per agent: its wins in these games, its decisions, ms per
decision, the ratio to the first agent's ms per decision (the reference) and games/s.

    OMP_NUM_THREADS=1 python benchmarks/bench_agents.py --agents heuristic ppo-2p turn-2p --games 100

Deal ``d`` is ``new_game(config, seed=derive_seed(seed, d))``; the agent on side ``t`` is seeded
with ``derive_seed(seed, d, t)``, the opponent with that plus 1.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

from bench_search import play  # noqa: E402  (this folder: run as a script)

from skipbo_env.agents.registry import derive_seed, load_agent  # noqa: E402
from skipbo_env.rules import GameConfig, new_game  # noqa: E402


def measure(spec: str, opponent_spec: str, games: int, seed: int) -> dict:
    """Paired games of ``spec`` against ``opponent_spec`` (2 players); its figures."""
    config = GameConfig()
    agent, opponent = load_agent(spec, config), load_agent(opponent_spec, config)
    play(new_game(config, seed=derive_seed(seed, games)), [agent, opponent])  # untimed: compiles, fills caches
    wins = decided = 0
    spent = 0.0
    start = time.perf_counter()
    for deal in range(games // 2):
        for side in range(2):
            game_seed = derive_seed(seed, deal, side)
            for player, offset in ((agent, 0), (opponent, 1)):
                if hasattr(player, "seed"):
                    player.seed(game_seed + offset)
            agents = [agent, opponent] if side == 0 else [opponent, agent]
            counts: dict[int, int] = {}
            winner, seconds = play(new_game(config, seed=derive_seed(seed, deal)), agents, counts)
            wins += winner == side
            spent += seconds[side]
            decided += counts.get(side, 0)
    played = 2 * (games // 2)
    return {"agent": spec, "games": played, "wins": wins, "decisions": decided,
            "ms_per_decision": 1e3 * spent / max(1, decided), "games_per_s": played / (time.perf_counter() - start)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", default=["heuristic", "ppo-2p", "turn-2p"],
                        help="load_agent specs; the first is the reference of the ratio column")
    parser.add_argument("--opponent", default="heuristic")
    parser.add_argument("--games", type=int, default=100, help="games per agent, a multiple of 2 (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.games < 2 or args.games % 2:
        parser.error(f"--games must be a positive multiple of 2 (each deal is played twice), got {args.games}")
    rows = [measure(spec, args.opponent, args.games, args.seed) for spec in args.agents]
    reference = rows[0]["ms_per_decision"]
    print(f"2 players, against {args.opponent}, {rows[0]['games']} games each, seed {args.seed}, one process")
    print()
    print(f"| agent | wins | decisions | ms/decision | × {rows[0]['agent']} | games/s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['agent']} | {r['wins']} of {r['games']} | {r['decisions']:,} | {r['ms_per_decision']:.3f} | "
              f"{r['ms_per_decision'] / reference:.1f} | {r['games_per_s']:.2f} |")


if __name__ == "__main__":
    main()
