"""Play one game between agents and print it: ``skipbo demo`` (or ``python -m skipbo_env.demo``).

Each seat is any agent :func:`skipbo_env.agents.load_agent` accepts (a name such as ``heuristic``,
``ppo-2p`` or ``search``, or an agent file). The deal is ``new_game(config, seed=SEED)`` and seat
``s``'s agent is seeded ``derive_seed(SEED, s, bits=32)``, as in ``skipbo play --seed SEED`` and the
browser's first game of seed ``SEED``: the same seed deals the same game everywhere. Turns and
piles are counted from 1, as at the terminal and in the browser.
"""

from __future__ import annotations

import argparse

from .agents import agent_label, derive_seed, known_agents, load_agent
from .episode import GameLoop
from .extras import HelpFormatter
from .human import describe_move
from .render import render_state
from .rules import ConfigError, GameConfig, game_points, new_game


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skipbo demo", description="Play one game between agents and print it.",
                                     formatter_class=HelpFormatter)
    parser.add_argument("--players", nargs="+", default=["greedy", "greedy"], metavar="AGENT",
                        help=f"one agent per seat, 2-6 seats: a name ({', '.join(known_agents())}) or an agent "
                             "file (.safetensors) (default: greedy greedy)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deal and the agents (default 0)")
    parser.add_argument("--short", action="store_true", help="short game: stocks of 10 (R26)")
    parser.add_argument("--partner", action="store_true", help="partner game (4 or 6 players, R27)")
    parser.add_argument("--quiet", action="store_true", help="print only the final table")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    try:
        config = GameConfig(num_players=len(args.players), short_game=args.short, partner_game=args.partner)
    except ConfigError as exc:
        parser.error(f"--players/--partner: {exc}")
    agents = []
    for seat, spec in enumerate(args.players):
        try:
            agents.append(load_agent(spec, config, derive_seed(args.seed, seat, bits=32)))
        except (OSError, ValueError) as exc:
            parser.error(f"--players: cannot load {spec!r}: {exc}")
    labels = [agent_label(spec) for spec in args.players]
    state = new_game(config, seed=args.seed)
    print(f"Skip-Bo: {', '.join(f'player_{i}={p}' for i, p in enumerate(labels))}, seed {args.seed}")
    print(render_state(state))
    turn_moves: list[str] = []
    loop = GameLoop(state, agents, labels)
    while not loop.over:
        decision = loop.decide()
        seat, turn = decision.seat, state.turn
        turn_moves.append(describe_move(decision.move, state.view(seat), seat))
        loop.apply(decision)
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
