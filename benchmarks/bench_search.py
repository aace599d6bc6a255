"""Strength and speed of the search agent (``skipbo_env.agents.search``) at one budget.

Plays ``--games`` paired games (each deal once with the search agent on every side: with
two players each deal twice, the agents swapping seats) of the search agent against
``--opponent`` (any ``load_agent`` spec: heuristic, ppo-2p, ...) in every other seat, in one
process on one core, driving the games itself: ``act_view(state.view(seat))`` for agents that
read the view (``reads_view``), else ``act(observe(state, seat))``. ``--players N`` (and ``--partner``: the search
agent plays both seats of one team) for the other tables. Prints the search agent's win rate
(draws count half) and its fair share, the ms per decision of the search agent (mean over all
its decisions, plan continuations included) and of its searches, and games/s.

    OMP_NUM_THREADS=1 python benchmarks/bench_search.py --opponent heuristic --games 200 \
        --worlds 32 --candidates 12 [--rollout heuristic|greedy] [--seed 0] [--prior 2.0] [--horizon 1]
    OMP_NUM_THREADS=1 python benchmarks/bench_search.py --games 100 --budgets 1:1 4:6 8:12 32:12 \
        --plot docs/img/search_budget.png        # strength against budget, a table and a plot
    OMP_NUM_THREADS=1 python benchmarks/bench_search.py --players 6 --games 12   # speed at another table
    (--save FILE keeps a run's figures, --include FILE ... adds saved runs to the table and plot)
    OMP_NUM_THREADS=1 python benchmarks/bench_search.py --players 4 --opponent hand-emptier --games 120 \
        --weights refill=50 --opponent-weights - refill=90,hand_play=3   # other planner weights, opponent models

Deal ``d`` is ``new_game(config, seed=derive_seed(seed, d))``; agents are seeded per game
(the search agent on side ``t`` with ``derive_seed(seed, d, t)``, the opponents with that plus
1, 2, ...).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import fields, replace

from tqdm import tqdm

os.environ.setdefault("OMP_NUM_THREADS", "1")

from skipbo_env.agents.registry import derive_seed, load_agent  # noqa: E402
from skipbo_env.agents.search import (  # noqa: E402
    DEFAULT_DEPTHS,
    DEFAULT_PRIOR,
    DEFAULT_WIN,
    DEFAULT_WORLDS,
    DEFAULT_WORLDS_BY_PLAYERS,
    SearchAgent,
    SearchSettings,
    search_weights,
)
from skipbo_env.bots.heuristic import HeuristicWeights  # noqa: E402
from skipbo_env.encoding import decode_action, observe  # noqa: E402
from skipbo_env.rules import ConfigError, GameConfig, new_game  # noqa: E402


def play(state, agents, decisions: dict[int, int] | None = None) -> tuple[int | None, dict[int, float]]:
    """Play ``state`` out; returns the winner and each seat's seconds spent deciding (and adds
    each seat's decisions to ``decisions`` when given)."""
    spent = {s: 0.0 for s in range(len(agents))}
    while not state.is_over:
        seat = state.current
        agent = agents[seat]
        t = time.perf_counter()
        if agent.reads_view:
            action = agent.act_view(state.view(seat))
        else:
            action = agent.act(observe(state, seat))
        spent[seat] += time.perf_counter() - t
        if decisions is not None:
            decisions[seat] = decisions.get(seat, 0) + 1
        state.apply(decode_action(action, state.config))
    return state.winner, spent


def weight_changes(base: HeuristicWeights, changes: list[str]) -> HeuristicWeights:
    """``base`` with each ``KEY=VALUE`` of ``changes`` set (a ValueError names a bad one)."""
    names = [f.name for f in fields(HeuristicWeights)]
    values: dict[str, float | int] = {}
    for change in changes:
        key, sep, text = change.partition("=")
        if not sep or key not in names:
            raise ValueError(f"a weight change is KEY=VALUE with KEY one of {', '.join(names)}, got {change!r}")
        try:
            values[key] = int(text) if key == "max_nodes" else float(text)
        except ValueError:
            raise ValueError(f"weight {key}: {text!r} is not a number") from None
    return replace(base, **values)


def measure(args: argparse.Namespace, worlds: int | None, candidates: int) -> dict:
    """Play ``args.games`` paired games of the search agent at one budget; its figures."""
    config = GameConfig(num_players=args.players, partner_game=args.partner)
    sides = config.num_teams
    extra = {key: getattr(args, key)
             for key in ("reach", "reach_q", "discards", "depth", "horizon", "value", "value_net", "net_opponents",
                         "opponent_net", "policy", "policy_net")
             if getattr(args, key) is not None}
    base = search_weights(config.num_players)
    if args.weights:
        extra["weights"] = weight_changes(base, args.weights)
    if args.opponent_weights:
        extra["opponent_weights"] = tuple(weight_changes(base, [] if group == "-" else group.split(","))
                                          for group in args.opponent_weights)
    settings = SearchSettings(worlds=worlds, candidates=candidates, prior=args.prior, win=args.win,
                              rollout=args.rollout, **extra)
    mine = len(config.team_seats(0))  # the search agent's seats per game (one agent each: plans are per seat)
    searches = [SearchAgent(config, settings=settings) for _ in range(mine)]
    worlds = searches[0].worlds  # None above: the agent's default for the table
    opponents = [load_agent(args.opponent, config) for _ in range(config.num_players - mine)]
    outcomes: list[float] = []  # per game in play order: 1 won, 0.5 drawn (no winner), 0 lost
    decided = 0.0
    games = 0
    start = time.perf_counter()
    bar = tqdm(total=args.games, desc=f"search W{worlds} C{candidates} vs {args.opponent}", unit="game",
               disable=args.no_progress)

    def decisions() -> int:
        return sum(s.decisions for s in searches)

    for deal in range(args.games // sides):
        for side in range(sides):
            game_seed = derive_seed(args.seed, deal, side)
            seats = config.team_seats(side)
            agents: list = [None] * config.num_players
            for k, (seat, search) in enumerate(zip(seats, searches, strict=True)):
                search.seed(game_seed + 1000 * k)
                agents[seat] = search
            others = [s for s in range(config.num_players) if s not in seats]
            for k, (seat, opponent) in enumerate(zip(others, opponents, strict=True)):
                opponent.seed(game_seed + 1 + k)
                agents[seat] = opponent
            winner, spent = play(new_game(config, seed=derive_seed(args.seed, deal)), agents)
            outcomes.append(1.0 if winner in seats else 0.5 if winner is None else 0.0)
            decided += sum(spent[s] for s in seats)
            games += 1
            bar.update()
            bar.set_postfix(win=f"{sum(outcomes) / games:.1%}", ms=f"{decided / max(1, decisions()) * 1e3:.1f}")
    bar.close()
    elapsed = time.perf_counter() - start
    rate = sum(outcomes) / games
    return {
        "worlds": worlds, "candidates": candidates, "rollout": args.rollout, "horizon": searches[0].settings.horizon,
        "depth": searches[0].settings.depth, "value": searches[0].settings.value,
        "net_opponents": searches[0].settings.net_opponents, "opponent": args.opponent, "players": config.num_players,
        "partner": config.partner_game, "fair_share": 1 / sides, "weights": args.weights,
        "opponent_weights": args.opponent_weights,
        "games": games, "wins": outcomes.count(1.0), "draws": outcomes.count(0.5), "outcomes": outcomes,
        "win_rate": rate, "stderr": math.sqrt(rate * (1 - rate) / games),
        "ms_per_decision": decided / max(1, decisions()) * 1e3,
        "ms_per_search": decided / max(1, sum(s.searches for s in searches)) * 1e3, "games_per_s": games / elapsed,
        "search": searches[0],
    }


def plot(rows: list[dict], path: str, opponent: str) -> None:
    """Win rate (with 95% intervals) against ms per decision, one point per budget."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for rollout in sorted({r["rollout"] for r in rows}):
        pts = sorted((r for r in rows if r["rollout"] == rollout), key=lambda r: r["ms_per_decision"])
        ax.errorbar([r["ms_per_decision"] for r in pts], [100 * r["win_rate"] for r in pts],
                    yerr=[196 * r["stderr"] for r in pts], marker="o", capsize=3, label=f"{rollout} rollouts")
        for r in pts:
            ax.annotate(f"W{r['worlds']} C{r['candidates']}", (r["ms_per_decision"], 100 * r["win_rate"]),
                        textcoords="offset points", xytext=(4, -12), fontsize=8)
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    spent = [r["ms_per_decision"] for r in rows]
    ax.set_xticks([t for t in (0.5, 1, 2, 5, 10, 20, 50, 100, 200) if min(spent) / 2 <= t <= max(spent) * 2])
    ax.set_xlabel("ms per decision (one core)")
    ax.set_ylabel(f"win rate vs {opponent} (%)")
    counts = sorted({r["games"] for r in rows})
    ax.set_title(f"search agent: strength against budget ({'/'.join(map(str, counts))} games per point)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opponent", default="heuristic")
    parser.add_argument("--games", type=int, default=100,
                        help="games, a multiple of the sides (players; teams with --partner): paired deals")
    parser.add_argument("--players", type=int, default=2, help="players at the table (2..6)")
    parser.add_argument("--partner", action="store_true", help="the partner game (4 or 6 players)")
    parser.add_argument("--worlds", type=int, default=None,
                        help=f"sampled worlds per search (default: the agent's, by players outside the partner "
                             f"game {DEFAULT_WORLDS_BY_PLAYERS}, else {DEFAULT_WORLDS})")
    parser.add_argument("--candidates", type=int, default=12)
    parser.add_argument("--budgets", nargs="*", default=None, metavar="W:C",
                        help="several budgets (worlds:candidates) in one run, instead of --worlds/--candidates")
    parser.add_argument("--plot", default=None, metavar="PNG", help="win rate against ms/decision of the budgets")
    parser.add_argument("--save", default=None, metavar="JSON", help="write this run's figures (one row per budget)")
    parser.add_argument("--include", nargs="*", default=[], metavar="JSON",
                        help="figures saved by earlier runs (--save), added to the table and the plot")
    parser.add_argument("--rollout", default="heuristic", choices=["heuristic", "greedy"])
    parser.add_argument("--prior", type=float, default=DEFAULT_PRIOR)
    parser.add_argument("--win", type=float, default=DEFAULT_WIN)
    parser.add_argument("--horizon", type=int, default=None, help="extra rounds (default: the agent's, 0)")
    parser.add_argument("--depth", type=int, default=None,
                        help="other seats' turns simulated after the seat's own (default: the agent's, "
                             f"by players outside the partner game {DEFAULT_DEPTHS}, else all of them)")
    parser.add_argument("--reach", type=float, default=None, help="own reach weight at the horizon")
    parser.add_argument("--reach-q", type=float, default=None)
    parser.add_argument("--discards", type=int, default=None, help="extra alternative-discard candidates")
    parser.add_argument("--value", type=float, default=None,
                        help="weight of the learned value at the horizon (default: the agent's, 12 with "
                        "the shipped ppo-2p network in the 2-player game, 0 elsewhere)")
    parser.add_argument(
        "--value-net",
        default=None,
        help="value file, or agent file with a value head, for --value (default: the table's shipped one)",
    )
    parser.add_argument("--net-opponents", type=float, default=None,
                        help="share of the sampled worlds whose opponents a network plays (default: the agent's)")
    parser.add_argument("--opponent-net", default=None,
                        help="agent file for --net-opponents (default: the table's shipped one)")
    parser.add_argument("--policy", type=float, default=None,
                        help="weight (stock cards per nat) of the policy network's log-probability of each "
                             "candidate (default: the agent's)")
    parser.add_argument("--policy-net", default=None,
                        help="agent file for --policy (default: the table's shipped one)")
    parser.add_argument("--weights", nargs="*", default=[], metavar="KEY=VALUE",
                        help="changes to the search's planner weights at the table (candidates, "
                             "its rollouts), e.g. refill=50")
    parser.add_argument("--opponent-weights", nargs="*", default=[], metavar="KEY=VALUE,...",
                        help="models of the other sides in the rollouts, one set per world in turn: each set is "
                             "comma-separated changes to the search's weights ('-' for none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args()
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    try:
        config = GameConfig(num_players=args.players, partner_game=args.partner)
    except ConfigError as exc:
        parser.error(str(exc))
    if args.games < config.num_teams or args.games % config.num_teams:
        parser.error(f"--games must be a positive multiple of {config.num_teams} (the sides), got {args.games}")
    budgets: list[tuple[int | None, int]] = [(args.worlds, args.candidates)]
    if args.budgets:
        pairs = [b.split(":") for b in args.budgets]
        if any(len(p) != 2 or not all(x.isascii() and x.isdigit() for x in p) for p in pairs):
            parser.error(f"--budgets takes W:C pairs of ints, got {args.budgets}")
        budgets = [(int(w), int(c)) for w, c in pairs]
    rows: list[dict] = []
    for path in args.include:
        with open(path) as f:
            rows += json.load(f)
    if args.include and not args.budgets:
        budgets = []
    for worlds, candidates in budgets:
        try:
            r = measure(args, worlds, candidates)
        except ValueError as exc:  # a setting out of range, named
            parser.error(str(exc))
        search = r.pop("search")
        rows.append(r)
        used = search.settings
        print(
            f"search W={r['worlds']} C={candidates} rollout={args.rollout} prior={args.prior} H={used.horizon} "
            f"depth={used.depth} reach={used.reach} rq={used.reach_q} D={search.discards} value={used.value} "
            f"net_opp={used.net_opponents} policy={used.policy}"
            f"{' weights ' + ' '.join(args.weights) if args.weights else ''}"
            f"{' opponent weights ' + ' | '.join(args.opponent_weights) if args.opponent_weights else ''}"
            f" vs {args.opponent}, "
            f"{r['players']} players{' partner' if r['partner'] else ''}: "
            f"{r['win_rate']:.3f} +- {r['stderr']:.3f} over {r['games']} games ({r['wins']} won, {r['draws']} drawn; "
            f"seed {args.seed}, "
            f"fair share {r['fair_share']:.3f}); "
            f"{r['ms_per_decision']:.2f} ms/decision ({search.decisions} decisions, {search.searches} searches, "
            f"{r['ms_per_search']:.2f} ms/search); {r['games_per_s']:.2f} games/s",
            flush=True,
        )
    if args.save:
        with open(args.save, "w") as f:
            json.dump(rows, f, indent=1)
    if len(rows) > 1:
        print("\n| W | C | rollout | vs | games | win rate | ms/decision | ms/search | games/s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            print(f"| {r['worlds']} | {r['candidates']} | {r['rollout']} | {r['opponent']} | {r['games']} | "
                  f"{r['win_rate']:.3f} ± {r['stderr']:.3f} | {r['ms_per_decision']:.2f} | {r['ms_per_search']:.2f} | "
                  f"{r['games_per_s']:.2f} |")
    if args.plot:
        plot(rows, args.plot, args.opponent)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
