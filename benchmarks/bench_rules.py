"""Speed of the pure-Python rules core.

Prints decisions per second and games per second under uniform random legal
play and under the greedy policy (stock first, then other plays, then
discard), for 2, 4 and 6 players, as a markdown table.

    python benchmarks/bench_rules.py [--seconds 3]

A decision is one applied move. Random play uses ``random.Random`` over the
rules' legal move list; greedy play builds the seat's view and observation
fields each decision, as an agent would. Games use the default turn limit
(1000): uniform random play often stalls and ends there, which the
``truncated`` column shows.
"""

from __future__ import annotations

import argparse
import platform
import random
import time

from skipbo_env.bots.greedy import as_player, greedy_move
from skipbo_env.rules import GameConfig, new_game


def run(num_players: int, policy: str, seconds: float) -> dict[str, float]:
    config = GameConfig(num_players=num_players)
    picker = random.Random(0)
    decisions = games = truncated = 0
    start = time.perf_counter()
    seed = 0
    while time.perf_counter() - start < seconds:
        state = new_game(config, seed=seed)
        if policy == "random":
            while not state.is_over:
                legal = state.legal_moves()
                state.apply(legal[picker.randrange(len(legal))])
                decisions += 1
        else:
            players = [as_player(greedy_move, seed * 10 + s) for s in range(num_players)]
            while not state.is_over:
                state.apply(players[state.current](state.view(state.current)))
                decisions += 1
        games += 1
        truncated += state.truncated
        seed += 1
    elapsed = time.perf_counter() - start
    return {
        "decisions_per_s": decisions / elapsed,
        "games_per_s": games / elapsed,
        "decisions_per_game": decisions / games,
        "truncated": truncated / games,
        "games": games,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time budget per table row")
    args = parser.parse_args(argv)
    print(f"rules core, Python {platform.python_version()}, {args.seconds:g} s per row\n")
    print("| players | policy | decisions/s | games/s | decisions/game | truncated | games |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for policy in ("random", "greedy"):
        for n in (2, 4, 6):
            r = run(n, policy, args.seconds)
            print(
                f"| {n} | {policy} | {r['decisions_per_s']:,.0f} | {r['games_per_s']:.2f} | "
                f"{r['decisions_per_game']:.0f} | {r['truncated']:.0%} | {r['games']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
