"""Our agent against fields of other scripted players, at 2, 3, 4 and 6 players.

Three kinds of table, each a seat-balanced, deal-paired tournament
(:func:`skipbo_env.agents.tournament.run_tournament`: every deal is played in every cyclic
rotation of the seats, so our agent holds each seat equally often):

* ``field``: our agent (``--ours``, default ``heuristic``; any agent spec ``evaluate.py`` takes,
  e.g. ``search``) in one seat, copies of one style in every other;
* ``mixed``: our agent against fields drawn from the scripted pool (``--pool``): each of
  ``--fields`` fields is ``players - 1`` agents drawn with replacement from a generator seeded
  by ``--seed`` and the table, and plays an equal share of the table's games;
* ``reverse``: one copy of each style against copies of our agent (at 2 players this is the
  ``field`` table seen from the other seat, so it is left out there).

Every row gives our (or, for ``reverse``, the style's) wins, the win rate with its Wilson 95%
interval and the fair-share ratio (win rate × players: 1.0× is what an equally strong seat
wins). A truncated game (R23) is not won by anyone. The tables are printed as markdown, and
every finished table is appended to ``--log`` as one JSON line, so a long run can be followed
and resumed (a table already in the log with the same settings is not played again);
``--report`` prints the tables of a log. ``--kinds`` picks the kinds of table to play.

Example (about 40 minutes of one core; see docs/opponents.md)::

    OMP_NUM_THREADS=1 python benchmarks/field_tables.py --games 360 --reverse-games 120 --seed 0 \\
        --log runs/field_tables.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skipbo_env.agents.tournament import run_tournament, wilson_interval  # noqa: E402
from skipbo_env.bots import BOTS  # noqa: E402
from skipbo_env.bots.styles import STYLES  # noqa: E402
from skipbo_env.rules import GameConfig  # noqa: E402

PLAYERS = (2, 3, 4, 6)
KINDS = ("field", "mixed", "reverse")
POOL = ("greedy", "heuristic", *STYLES)
"""The scripted agents mixed fields are drawn from (random is left out: it barely plays)."""


def _round_games(games: int, players: int) -> int:
    """``games`` rounded up to a multiple of the seat rotations (the number of players)."""
    return -(-games // players) * players


def play_table(kind: str, ours: str, field: Sequence[Sequence[str]], players: int, games: int, seed: int) -> dict:
    """One table: ``ours`` in seat order 0 against each field in turn (``games`` split evenly);
    returns the row as a JSON-safe dict. For ``reverse`` the scored agent is ``ours`` too (the
    caller passes the style as ``ours``)."""
    config = GameConfig(num_players=players)
    per_field = _round_games(max(1, games // len(field)), players)
    wins = played = truncated = 0
    turns = 0.0
    for k, opponents in enumerate(field):
        result = run_tournament([ours, *opponents], config, games=per_field, seed=seed + 1000 * k, workers=1)
        wins += result.agents[0].wins
        played += len(result.games)
        truncated += sum(g.truncated for g in result.games)
        turns += result.mean_turns * len(result.games)
    low, high = wilson_interval(wins, played)
    return {
        "kind": kind, "ours": ours, "field": [list(f) for f in field], "players": players, "games": played,
        "wins": wins, "win_rate": wins / played, "ci_low": low, "ci_high": high,
        "fair_share": wins / played * players, "truncated": truncated / played, "mean_turns": turns / played,
        "seed": seed,
    }


def mixed_fields(players: int, count: int, seed: int, pool: Sequence[str]) -> list[tuple[str, ...]]:
    """``count`` fields of ``players - 1`` agents drawn with replacement from ``pool``."""
    rng = np.random.default_rng([seed, players])
    return [tuple(str(pool[i]) for i in rng.integers(len(pool), size=players - 1)) for _ in range(count)]


def table_plan(args: argparse.Namespace) -> list[tuple[str, str, list[tuple[str, ...]], int, int]]:
    """Every table to play, in order: (kind, scored agent, fields, players, games)."""
    plan = []
    for n in args.players:
        for style in args.styles:
            plan.append(("field", args.ours, [(style,) * (n - 1)], n, args.games))
        if n > 2:
            plan.append(("mixed", args.ours, mixed_fields(n, args.fields, args.seed, args.pool), n, args.games))
    for n in args.players:
        if n > 2:
            for style in args.styles:
                plan.append(("reverse", style, [(args.ours,) * (n - 1)], n, args.reverse_games))
    return plan


def _key(kind: str, ours: str, fields: Sequence[Sequence[str]], players: int, games: int, seed: int) -> str:
    return json.dumps([kind, ours, [list(f) for f in fields], players, games, seed])


def markdown(rows: Sequence[dict]) -> str:
    """The rows as markdown tables, one per kind."""
    titles = {
        "field": "Our agent against copies of one style",
        "mixed": "Our agent against mixed fields",
        "reverse": "One style against copies of our agent",
    }
    out = []
    for kind, title in titles.items():
        chosen = [r for r in rows if r["kind"] == kind]
        if not chosen:
            continue
        out += [f"### {title}", "", "| agent | field | players | games | wins | win rate (95% CI) | × fair share "
                "| truncated |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in chosen:
            field = r["field"][0][0] + " ×" + str(r["players"] - 1) if len(r["field"]) == 1 else (
                f"{len(r['field'])} mixed fields")
            out.append(
                f"| `{r['ours']}` | {field} | {r['players']} | {r['games']} | {r['wins']} | "
                f"{100 * r['win_rate']:.1f}% ({100 * r['ci_low']:.1f}–{100 * r['ci_high']:.1f}) | "
                f"{r['fair_share']:.2f}× | {100 * r['truncated']:.1f}% |"
            )
        out.append("")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", default="heuristic",
                        help="the scored agent: any agent spec evaluate.py takes (a name or a file)")
    parser.add_argument("--styles", nargs="+", default=list(STYLES), choices=sorted(BOTS))
    parser.add_argument("--pool", nargs="+", default=list(POOL), choices=sorted(BOTS),
                        help="agents mixed fields are drawn from")
    parser.add_argument("--players", nargs="+", type=int, default=list(PLAYERS), choices=range(2, 7))
    parser.add_argument("--games", type=int, default=360, help="games per field and mixed table")
    parser.add_argument("--reverse-games", type=int, default=120, help="games per reverse table")
    parser.add_argument("--fields", type=int, default=6, help="mixed fields per mixed table")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS, help="which tables to play")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", type=Path, default=None, help="append each finished table here (JSON lines)")
    parser.add_argument("--report", action="store_true", help="print the tables of --log and play nothing")
    args = parser.parse_args(argv)
    for name in ("games", "reverse_games", "fields"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    logged = [json.loads(line) for line in args.log.read_text().splitlines()] if (
        args.log is not None and args.log.exists()) else []
    if args.report:
        if args.log is None:
            parser.error("--report needs --log")
        print(markdown(logged))
        return
    done = {_key(r["kind"], r["ours"], r["field"], r["players"], r.get("requested", r["games"]), r["seed"]): r
            for r in logged}
    rows = []
    for kind, ours, fields, n, games in table_plan(args):
        if kind not in args.kinds:
            continue
        key = _key(kind, ours, fields, n, games, args.seed)
        if key in done:
            rows.append(done[key])
            continue
        start = time.process_time()
        row = play_table(kind, ours, fields, n, games, args.seed)
        row["requested"] = games
        row["cpu_s"] = time.process_time() - start
        rows.append(row)
        print(f"[{time.strftime('%H:%M:%S')}] {kind} {ours} vs {fields[0]}{'...' if len(fields) > 1 else ''} "
              f"{n}p: {row['wins']}/{row['games']} ({row['fair_share']:.2f}x), {row['cpu_s']:.0f} s CPU",
              file=sys.stderr, flush=True)
        if args.log is not None:
            args.log.parent.mkdir(parents=True, exist_ok=True)
            with args.log.open("a") as f:
                f.write(json.dumps(row) + "\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
