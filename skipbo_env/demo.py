"""Play one game between scripted players and print it: ``python -m skipbo_env.demo``."""

from __future__ import annotations

import argparse

from .bots.greedy import as_player, greedy_move, random_move
from .render import render_state
from .rules import ConfigError, GameConfig, game_points, new_game

POLICIES = {"greedy": greedy_move, "random": random_move}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="skipbo demo", description=__doc__)
    parser.add_argument("--players", nargs="+", default=["greedy", "greedy"], choices=sorted(POLICIES),
                        help="one policy per seat (2-6 seats)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--short", action="store_true", help="short game: stocks of 10 (R26)")
    parser.add_argument("--partner", action="store_true", help="partner game (4 or 6 players, R27)")
    parser.add_argument("--quiet", action="store_true", help="print only the final table")
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    try:
        config = GameConfig(num_players=len(args.players), short_game=args.short, partner_game=args.partner)
    except ConfigError as exc:
        parser.error(f"--players/--partner: {exc}")
    players = [as_player(POLICIES[name], seed=args.seed * 100 + i) for i, name in enumerate(args.players)]
    state = new_game(config, seed=args.seed)
    print(f"Skip-Bo: {', '.join(f'player_{i}={p}' for i, p in enumerate(args.players))}, seed {args.seed}")
    print(render_state(state))
    turn_moves: list[str] = []
    while not state.is_over:
        seat, turn = state.current, state.turn
        move = players[seat](state.view(seat))
        state.apply(move)
        turn_moves.append(str(move))
        if state.turn != turn or state.is_over:
            if not args.quiet:
                print(f"turn {turn + 1:4d} player_{seat}: " + "; ".join(turn_moves))
            turn_moves = []
    print()
    print(render_state(state))
    print(f"points per side (R24): {game_points(state)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
