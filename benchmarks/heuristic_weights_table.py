"""Our agent against copies of the heuristic playing a chosen set of its weights.

The heuristic's weights changed over time (``skipbo_env.bots.heuristic``): the 2-player
weights ``DEFAULT_WEIGHTS`` were once played at every table, then ``CHAIN_WEIGHTS``, and today
the 3 to 6 player tables play ``MULTI_PLAYER_WEIGHTS``, a much stronger field. A table measured
against an earlier heuristic can only be compared with a table against the same players, so
this script seats our agent (``--ours``, any agent spec ``evaluate.py`` takes, e.g. ``search``)
against ``players - 1`` copies of the heuristic with the weights named by ``--weights``:

* ``two-player``: ``DEFAULT_WEIGHTS`` (the heuristic of the early multi-player tables);
* ``chain``: ``CHAIN_WEIGHTS``;
* ``table``: the table's weights of today (``default_weights(players)``, what ``heuristic`` plays).

One seat-balanced, deal-paired tournament (:func:`skipbo_env.agents.tournament.run_tournament`,
the compiled planner), in this process: the same deals as
``evaluate.py --agents OURS heuristic ... --players N --games G --seed S`` (only the other seats'
weights differ). Prints our agent's wins, its win rate with the Wilson 95% interval and the
fair-share ratio as a markdown row.

    OMP_NUM_THREADS=1 python benchmarks/heuristic_weights_table.py --ours search --players 4 \\
        --weights two-player --games 300 --seed 0

Needs the ``fast`` extra (numba).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skipbo_env.agents.tournament import run_tournament  # noqa: E402
from skipbo_env.bots import BOTS  # noqa: E402
from skipbo_env.bots.heuristic import CHAIN_WEIGHTS, DEFAULT_WEIGHTS, HeuristicWeights, default_weights  # noqa: E402
from skipbo_env.rules import GameConfig  # noqa: E402
from skipbo_env.vector.compiled_heuristic import compiled_heuristic  # noqa: E402

WEIGHTS: dict[str, Callable[[int], HeuristicWeights]] = {
    "two-player": lambda _players: DEFAULT_WEIGHTS,
    "chain": lambda _players: CHAIN_WEIGHTS,
    "table": default_weights,
}
"""The weight sets ``--weights`` names, by number of players."""


@contextmanager
def heuristic_named(name: str, weights: HeuristicWeights) -> Iterator[None]:
    """The compiled heuristic with ``weights`` registered as scripted agent ``name`` while inside
    (this process only: the tournament must play with ``workers=1``)."""
    if name in BOTS:
        raise ValueError(f"{name!r} is already a scripted agent's name")

    BOTS[name] = partial(compiled_heuristic, weights=weights)  # type: ignore[assignment]  # called as cls(config, seed=)
    try:
        yield
    finally:
        del BOTS[name]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", default="search", help="the scored agent (any agent spec evaluate.py takes)")
    parser.add_argument("--players", type=int, default=3, choices=range(2, 7))
    parser.add_argument("--weights", choices=sorted(WEIGHTS), default="two-player")
    parser.add_argument("--games", type=int, default=300, help="a multiple of --players")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games <= 0 or args.games % args.players:
        parser.error(f"--games must be a positive multiple of --players ({args.players}), got {args.games}")
    name = f"heuristic[{args.weights}]"
    start = time.process_time()
    with heuristic_named(name, WEIGHTS[args.weights](args.players)):
        result = run_tournament([args.ours] + [name] * (args.players - 1), GameConfig(num_players=args.players),
                                games=args.games, seed=args.seed, workers=1)
    ours = result.agents[0]
    ratio = ours.win_rate * args.players
    print(f"| agent | field | players | games | wins | win rate (95% CI) | × fair share (CI) | truncated |\n"
          f"| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
          f"| `{args.ours}` | heuristic ({args.weights} weights) ×{args.players - 1} | {args.players} | {ours.games} "
          f"| {ours.wins} | {ours.win_rate:.1%} ({ours.ci_low * 100:.1f}–{ours.ci_high * 100:.1f}) "
          f"| **{ratio:.2f}×** ({ours.ci_low * args.players:.2f}–{ours.ci_high * args.players:.2f}) "
          f"| {result.truncation_rate:.1%} |")
    print(f"\n{time.process_time() - start:.0f} s of CPU in this process (seed {args.seed}).")


if __name__ == "__main__":
    main()
