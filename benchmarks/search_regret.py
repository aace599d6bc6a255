"""Decision quality of the search agent against its budget: regret with respect to a large search.

Win rates need thousands of games to separate two budgets by a point or two; this measures the
budget's effect on each decision directly, on positions from real games:

1. **Positions.** ``--games`` 2-player games of the default ``search`` agent against the heuristic
   (deal ``g`` is ``new_game(config, seed=derive_seed(seed, 0, g))``, the search agent on seat
   ``g % 2``); every decision at which the search agent searched is kept.
2. **Oracle.** A search agent with ``--oracle-worlds`` sampled worlds scores the candidate turns of
   each position (:meth:`SearchAgent.score_candidates`); positions with a single candidate are
   dropped.
3. **Budgets.** For each ``W`` in ``--worlds``, a search agent with ``W`` worlds (its own seeded
   generator, kept across positions) picks a candidate ``--reps`` times per position. The
   **regret** of a pick is the oracle's best score minus the oracle's score of the pick, in the
   score's unit (stock cards); **agreement** is the share of picks that are the oracle's. The row
   ``heuristic`` is the heuristic planner's own choice (the best-scored candidate, no simulation).

The oracle's scores have noise too (about ``1/sqrt(oracle_worlds)`` of a world's spread), so
regrets of budgets near the oracle's are biased upwards; the oracle measures noise of the
search's estimate only, not how good its value is (a better value or opponent model is not seen
here: that needs games). Speed at each budget is ``bench_search.py``'s job.

    OMP_NUM_THREADS=1 python benchmarks/search_regret.py --games 4 --worlds 8 16 32 64 128 \
        --oracle-worlds 1024 --reps 3 --seed 0 --plot docs/img/search_regret.png --save regret.json
"""

from __future__ import annotations

import argparse
import json
import math
import os

import numpy as np
from tqdm import tqdm

os.environ.setdefault("OMP_NUM_THREADS", "1")

from skipbo_env.agents.registry import derive_seed, load_agent  # noqa: E402
from skipbo_env.agents.search import MAX_WORLDS, SearchAgent, SearchSettings  # noqa: E402
from skipbo_env.episode import decisions  # noqa: E402
from skipbo_env.rules import GameConfig, SeatView, new_game  # noqa: E402


def positions(config: GameConfig, games: int, seed: int) -> list[SeatView]:
    """The views at which the default search agent searched, over ``games`` games against the heuristic."""
    agent = SearchAgent(config, seed=derive_seed(seed, 1))
    out: list[SeatView] = []
    for g in tqdm(range(games), desc="positions", unit="game"):
        state = new_game(config, seed=derive_seed(seed, 0, g))
        opponent = load_agent("heuristic", config, seed=derive_seed(seed, 2, g))
        searched = agent.searches
        for decision in decisions(state, [agent, opponent] if g % 2 == 0 else [opponent, agent]):
            if agent.searches > searched:  # the state still shows the position the agent searched
                out.append(state.view(decision.seat))
                searched = agent.searches
    return out


def study(args: argparse.Namespace) -> dict:
    config = GameConfig()
    views = positions(config, args.games, args.seed)
    oracle = SearchAgent(config, derive_seed(args.seed, 3), SearchSettings(worlds=args.oracle_worlds))
    budgets = {w: SearchAgent(config, derive_seed(args.seed, 4, w), SearchSettings(worlds=w)) for w in args.worlds}
    regret: dict[str, list[float]] = {"heuristic": [], **{str(w): [] for w in args.worlds}}
    agree: dict[str, list[bool]] = {key: [] for key in regret}
    kept = 0
    for view in tqdm(views, desc="oracle and budgets", unit="position"):
        paths, truth = oracle.score_candidates(view)
        if len(paths) < 2:
            continue
        kept += 1
        best = float(truth.max())
        picks: dict[str, list[int]] = {"heuristic": [0]}  # candidates come best-first by the heuristic's score
        for w, agent in budgets.items():
            picks[str(w)] = []
            for _ in range(args.reps):
                own, scores = agent.score_candidates(view)
                if own != paths:
                    raise RuntimeError("the candidates of one view differ between two agents")
                picks[str(w)].append(int(np.argmax(scores)))
        for key, chosen in picks.items():
            for c in chosen:
                regret[key].append(best - float(truth[c]))
                agree[key].append(bool(truth[c] == best))
    rows = []
    for key in regret:
        r = np.array(regret[key])
        rows.append({
            "budget": key,
            "worlds": None if key == "heuristic" else int(key),
            "picks": len(r),
            "regret": float(r.mean()),
            "regret_se": float(r.std(ddof=1) / math.sqrt(len(r))) if len(r) > 1 else float("nan"),
            "agreement": float(np.mean(agree[key])),
        })
    return {"games": args.games, "seed": args.seed, "oracle_worlds": args.oracle_worlds, "reps": args.reps,
            "positions": len(views), "positions_compared": kept, "rows": rows}


def table(result: dict) -> str:
    lines = [
        f"{result['positions_compared']} positions with 2+ candidates (of {result['positions']} searches, "
        f"{result['games']} games, seed {result['seed']}); oracle {result['oracle_worlds']} worlds; "
        f"{result['reps']} picks per position and budget",
        "",
        "| budget | regret (stock cards) ± s.e. | agrees with the oracle |",
        "| --- | ---: | ---: |",
    ]
    for row in result["rows"]:
        name = "heuristic (no simulation)" if row["worlds"] is None else f"{row['worlds']} worlds"
        lines.append(f"| {name} | {row['regret']:.4f} ± {row['regret_se']:.4f} | {row['agreement']:.1%} |")
    return "\n".join(lines)


def plot(result: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result["rows"] if r["worlds"] is not None]
    heuristic = next(r for r in result["rows"] if r["worlds"] is None)
    w = [r["worlds"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.errorbar(w, [r["regret"] for r in rows], yerr=[r["regret_se"] for r in rows], marker="o", capsize=3,
                  label="search")
    left.axhline(heuristic["regret"], color="grey", linestyle="--", label="heuristic's choice")
    left.set(xscale="log", yscale="log", xlabel="sampled worlds per search",
             ylabel="regret vs the oracle (stock cards)", title="Regret per decision")
    left.set_xticks(w, [str(x) for x in w])
    left.set_xticks([], minor=True)
    left.legend()
    right.plot(w, [r["agreement"] for r in rows], marker="o", label="search")
    right.axhline(heuristic["agreement"], color="grey", linestyle="--", label="heuristic's choice")
    right.set(xscale="log", xlabel="sampled worlds per search", ylabel="share of picks",
              title=f"Agreement with a {result['oracle_worlds']}-world search", ylim=(0, 1))
    right.set_xticks(w, [str(x) for x in w])
    right.set_xticks([], minor=True)
    right.legend()
    fig.suptitle(f"Search budget, 2 players: {result['positions_compared']} positions of "
                 f"{result['games']} game{'s' * (result['games'] != 1)} against the heuristic")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4, help="games that provide the positions (default 4)")
    parser.add_argument("--worlds", type=int, nargs="+", default=[8, 16, 32, 64, 128], help="budgets to compare")
    parser.add_argument("--oracle-worlds", type=int, default=1024, help="the oracle's worlds (default 1024)")
    parser.add_argument("--reps", type=int, default=3, help="picks per position and budget (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", help="write the two curves to this PNG")
    parser.add_argument("--save", help="write the figures as JSON")
    args = parser.parse_args()
    for key in ("games", "reps"):
        if getattr(args, key) < 1:
            parser.error(f"--{key} must be at least 1")
    for w in [*args.worlds, args.oracle_worlds]:
        if not 1 <= w <= MAX_WORLDS:
            parser.error(f"worlds must be in 1..{MAX_WORLDS}, got {w}")
    result = study(args)
    print(table(result))
    if args.save:
        with open(args.save, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
    if args.plot:
        plot(result, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
