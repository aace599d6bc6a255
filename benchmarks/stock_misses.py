"""How often an opponent ends its turn with a play of its stock top in reach: the figures behind
the search agent's ``infer`` option (``MISS_RATES`` in ``skipbo_env/agents/search.py``).

In ``--games`` 2-player games the heuristic plays seat 0 and ``--opponent`` seat 1 (deal ``g`` is
``new_game(config, seed=derive_seed(seed, g))``, the first player drawn by the deal). At every
start of seat 0's turn after the first turn, the building piles are the ones seat 1 left, and seat
1's hand is the one it ended its turn with. Printed:

* **real**: the share of those turn starts where seat 1's real hand (with its discard tops) could
  have played its stock top on those piles (``_stock_reachable``): a stock play it left;
* **prior**: the mean share of ``--worlds`` worlds sampled from seat 0's view (seat 1's hand drawn
  from the unseen cards) where it could: what the search believes without the inference;
* **miss rate**: real / prior, about the chance that this opponent leaves a stock play it could
  make (the weight ``infer`` gives such worlds);
  each for any chain, a chain without a wild, and one that needs a wild (in hand or on a discard
  top);
* **visible**: the share of turn starts where the play was in reach from seat 1's discard tops
  alone (every seat sees that), and the share of games with at least one such turn: how soon an
  agent could tell such an opponent from one that leaves none.

    OMP_NUM_THREADS=1 python benchmarks/stock_misses.py --opponent ppo-2p --games 60 --seed 0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skipbo_env.agents.registry import derive_seed, load_agent  # noqa: E402
from skipbo_env.agents.search import _stock_reachable  # noqa: E402
from skipbo_env.encoding import action_mask, decode_action, encode_view  # noqa: E402
from skipbo_env.rules import GameConfig, new_game  # noqa: E402
from skipbo_env.rules.sampling import sample_states  # noqa: E402

KINDS = ("any", "plain", "wild")


def _act(agent, view) -> int:
    if hasattr(agent, "act_view"):
        return agent.act_view(view)
    return agent.act({"observation": encode_view(view), "action_mask": action_mask(view.legal_moves(), view.config)})


def measure(opponent: str, games: int, worlds: int, seed: int) -> dict:
    config = GameConfig()
    agents = [load_agent("heuristic", config, seed=seed), load_agent(opponent, config, seed=seed + 1)]
    rng = np.random.default_rng(seed)
    # per turn start, for "any" chain, "plain" (no wild) and "wild" (needs one): real 0/1, prior share
    real: dict[str, list[float]] = {k: [] for k in KINDS}
    prior: dict[str, list[float]] = {k: [] for k in KINDS}
    visible, games_visible = [], 0
    for g in range(games):
        state = new_game(config, seed=derive_seed(seed, g))
        seen = -1
        shown = False
        while not state.is_over:
            seat = state.current
            view = state.view(seat)
            if seat == 0 and state.turn != seen and state.turn >= 1:
                seen = state.turn
                args = (view.discard_tops(1), view.building_values, view.stock_tops[1])
                hands = np.array([state.hands[1]] + [w.hands[1] for w in sample_states(view, rng, worlds)])
                could = _stock_reachable(hands, *args)
                plain = _stock_reachable(hands, *args, wilds=False)
                for kind, flags in zip(KINDS, (could, plain, could & ~plain), strict=True):
                    real[kind].append(float(flags[0]))
                    prior[kind].append(float(flags[1:].mean()))
                visible.append(bool(_stock_reachable(np.zeros((1, 14), np.int64), *args)[0]))
                shown = shown or visible[-1]
            state.apply(decode_action(_act(agents[seat], view), config))
        games_visible += shown
        print(f"game {g + 1}/{games}: {len(visible)} turn starts", file=sys.stderr, flush=True)
    out: dict = {"opponent": opponent, "games": games, "turn_starts": len(visible),
                 "visible": float(np.mean(visible)), "games_visible": games_visible / games}
    for kind in KINDS:
        r, p = float(np.mean(real[kind])), float(np.mean(prior[kind]))
        out[kind] = {"real": r, "prior": p, "miss_rate": r / p if p else float("nan")}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opponent", default="heuristic", help="agent spec on seat 1 (default heuristic)")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--worlds", type=int, default=64, help="worlds sampled per turn start for the prior")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 1 or args.worlds < 1:
        parser.error("--games and --worlds must be >= 1")
    r = measure(args.opponent, args.games, args.worlds, args.seed)
    print(f"{r['opponent']}: {r['turn_starts']} turn starts in {r['games']} games; "
          f"visible {r['visible']:.3f} of turn starts, in {r['games_visible']:.0%} of the games")
    print("| chain to the stock top | real hand | sampled worlds | miss rate |")
    print("| --- | ---: | ---: | ---: |")
    for kind, label in zip(KINDS, ("any", "without a wild", "needs a wild"), strict=True):
        k = r[kind]
        print(f"| {label} | {k['real']:.1%} | {k['prior']:.1%} | {k['miss_rate']:.3f} |")


if __name__ == "__main__":
    main()
