"""Tournaments between agents: ``skipbo evaluate`` (in the repository also ``python evaluate.py``).

Agents are scripted or shipped names, or agent files (``--allow-pickle`` also takes MaskablePPO
and RLlib checkpoints, which can run code). Seats rotate and deals are paired; the command prints
markdown tables and writes ``results.json``, ``agents.csv``, ``games.csv`` and ``win_rates.png``
(:func:`skipbo_env.agents.tournament.run_tournament`). ``--ladder A B C ...`` plays a round robin
with OpenSkill ratings (:func:`skipbo_env.agents.ladder.run_ladder`; ``--pair-games``,
``--reuse``). Needs the ``train`` extra. See docs/baselines.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

from .agents import known_agents
from .agents.ladder import parse_pair_games, run_ladder, write_ladder_outputs
from .agents.report import markdown, write_outputs
from .agents.tournament import DEFAULT_BATCH, participant_labels, run_tournament
from .extras import HelpFormatter, docs_url, require
from .rules import ConfigError, GameConfig


def build_parser(prog: str = "skipbo evaluate") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Seat-balanced, deal-paired tournaments between Skip-Bo agents.",
        prog=prog, formatter_class=HelpFormatter,
        epilog=f"Agents: {', '.join(known_agents())} (search:W:C: W sampled worlds, C candidate turns), or an "
        f"agent file. Examples: {prog} --agents heuristic greedy --games 2000 --seed 0; "
        f"{prog} --ladder random greedy heuristic --games 1000 --seed 0. Results of the shipped agents: "
        f"{docs_url('baselines')}",
    )
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--agents", nargs="+", metavar="AGENT",
        help=f"agent names ({', '.join(known_agents())}) or agent file paths (.safetensors); at most one per "
        "seat (per team in the partner game), cycled over the seats when fewer",
    )
    who.add_argument(
        "--ladder", nargs="+", metavar="AGENT",
        help="round robin instead of one tournament: every pair of these agents (names or files, as "
        "--agents) plays its own tournament of --games games; pairwise win rates and pooled OpenSkill ratings",
    )
    parser.add_argument(
        "--pair-games", action="append", default=[], metavar="SPEC1:SPEC2=N",
        help="with --ladder: N games for this pair instead of --games (repeatable)",
    )
    parser.add_argument(
        "--reuse", action="append", default=[], metavar="DIR",
        help="with --ladder: take the pairs that the ladder in DIR (an earlier --out) already played, "
        "where the game, the two agents, the pair's seed and its game count match, instead of playing "
        "them again; each one's first deal is replayed as a check (repeatable)",
    )
    parser.add_argument(
        "--allow-pickle", action="store_true",
        help="also load pickled model files: MaskablePPO checkpoints (.zip) and RLlib checkpoint folders. "
        "A pickled model file can run arbitrary code when loaded; only use it for files you made or trust",
    )
    parser.add_argument("--games", type=int, default=2000,
                        help="total games (per pair with --ladder), a multiple of the seatings per deal "
                             "(default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    parser.add_argument("--players", type=int, default=2, help="players per game, 2-6 (default 2)")
    parser.add_argument("--partner", action="store_true", help="partner game (4 or 6 players, R27)")
    parser.add_argument("--short", action="store_true", help="short game: stocks of 10 (R26)")
    parser.add_argument("--stock-size", type=int, default=None, help="cards per stock (default by R6)")
    parser.add_argument("--turn-limit", type=int, default=1000,
                        help="turns before a game is truncated with no winner (R23, default 1000)")
    parser.add_argument("--no-wild-discard", action="store_true",
                        help="variant: wilds may not be discarded (§9)")
    parser.add_argument("--must-play-stock", action="store_true",
                        help="variant: no discard while the stock top can be played (§9)")
    parser.add_argument("--workers", type=int, default=None,
                        help="processes (default: every core); results do not depend on it")
    parser.add_argument("--ray", metavar="ADDRESS", default=None,
                        help="play the games as Ray tasks on the cluster at ADDRESS (auto: the one `ray start` "
                             "made on this machine; or HOST:PORT) instead of local processes; needs the ray "
                             f"extra; results do not depend on it ({docs_url('scaling')})")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH,
                        help=f"games each worker plays at once; a network agent decides them in one "
                             f"forward pass per step; results do not depend on it (default {DEFAULT_BATCH})")
    parser.add_argument("--out", default=None,
                        help="output folder (default runs/evaluate/<agents>-<players>p-seed<seed>)")
    parser.add_argument("--save-records", metavar="DIR", default=None,
                        help="also write one game record JSON per game to DIR (for replay)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def default_run_name(labels: tuple[str, ...], config: GameConfig, seed: int) -> str:
    """``<agents>-<players>p[-partner][-short|-stockN][-nowilddiscard][-muststock][-limitN]-seed<seed>``."""
    parts = ["-".join(labels), f"{config.num_players}p"]
    if config.partner_game:
        parts.append("partner")
    if config.short_game:
        parts.append("short")
    elif config.stock_size != GameConfig(num_players=config.num_players).stock_size:
        parts.append(f"stock{config.stock_size}")
    if not config.allow_wild_discard:
        parts.append("nowilddiscard")
    if config.must_play_stock:
        parts.append("muststock")
    if config.turn_limit != GameConfig().turn_limit:
        parts.append(f"limit{config.turn_limit}")
    parts.append(f"seed{seed}")
    return "-".join(parts)


def make_output_folders(parser: argparse.ArgumentParser, folders: tuple[tuple[str, str | None], ...]) -> list[str]:
    """Make each output folder (``(flag, folder)``, ``None``: not asked for) before any game is
    played; one that exists as a file or cannot be made is the parser's error naming its flag.
    Returns the topmost folders made (for :func:`remove_empty_folders` when the run fails)."""
    wanted = [(flag, folder) for flag, folder in folders if folder is not None]
    for flag, folder in wanted:  # every path checked before any folder is made
        if os.path.exists(folder) and not os.path.isdir(folder):
            parser.error(f"{flag} {folder}: exists and is not a folder")
    made: list[str] = []
    for flag, folder in wanted:
        top = os.path.abspath(folder)  # the topmost folder that makedirs makes, if it is new
        while not os.path.exists(os.path.dirname(top)) and os.path.dirname(top) != top:
            top = os.path.dirname(top)
        new = not os.path.exists(top)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            remove_empty_folders(made)
            parser.error(f"{flag} {folder}: cannot make the folder ({exc.strerror or exc})")
        if new:
            made.append(top)
    return made


def remove_empty_folders(made: list[str]) -> None:
    """Remove the folders ``made`` (and the folders in them) that a failed run left empty."""
    for top in made:
        for folder, _, _ in sorted(os.walk(top, topdown=False), reverse=True):
            with contextlib.suppress(OSError):  # not empty: it holds what the run wrote
                os.rmdir(folder)


def main(argv: list[str] | None = None, prog: str = "skipbo evaluate") -> int:
    """Run a tournament from the command line; returns the exit code."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    require("train", "a tournament", "tqdm", "matplotlib", "openskill")  # before any folder is made
    try:
        config = GameConfig(
            num_players=args.players,
            stock_size=args.stock_size,
            short_game=args.short,
            partner_game=args.partner,
            allow_wild_discard=not args.no_wild_discard,
            must_play_stock=args.must_play_stock,
            turn_limit=args.turn_limit,
        )
    except ConfigError as exc:
        parser.error(str(exc))
    if args.ladder is not None:
        return ladder_main(parser, args, config)
    if args.pair_games:
        parser.error("--pair-games needs --ladder")
    if args.reuse:
        parser.error("--reuse needs --ladder")
    specs = tuple(os.fspath(a) for a in args.agents)
    out = args.out or os.path.join("runs", "evaluate", default_run_name(participant_labels(specs), config, args.seed))
    made = make_output_folders(parser, (("--out", out), ("--save-records", args.save_records)))
    bar = None

    def progress(done: int) -> None:
        nonlocal bar
        if bar is None:  # opened once the tournament's arguments are checked
            from tqdm import tqdm  # the train extra (checked by main)

            bar = tqdm(total=args.games, unit="game", file=sys.stderr, smoothing=0.1)
        bar.update(done)

    start = time.perf_counter()
    try:
        result = run_tournament(
            args.agents, config, games=args.games, seed=args.seed, workers=args.workers,
            batch_size=args.batch_size, ray=args.ray,
            records_dir=args.save_records, progress=None if args.no_progress else progress,
            allow_pickle=args.allow_pickle,
        )
    except BaseException as exc:
        remove_empty_folders(made)
        _refuse_bad_settings(parser, exc)
        raise
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - start
    extra = {"wall_seconds": wall, "workers": args.workers or os.cpu_count(), "ray": args.ray, "argv": sys.argv[1:]}
    paths = write_outputs(result, out, extra)
    print(markdown(result))
    print()
    print(f"Wall time {wall:.1f} s. Wrote {', '.join(str(p) for p in paths)}.")
    if args.save_records:
        print(f"Game records in {args.save_records}.")
    return 0


def _refuse_bad_settings(parser: argparse.ArgumentParser, exc: BaseException) -> None:
    """Exit with one line for a setting the games refused (a ValueError) or no Ray cluster at --ray
    (a ConnectionError, without the usage block); anything else returns to be raised."""
    if isinstance(exc, ConnectionError):
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    if isinstance(exc, ValueError):
        parser.error(str(exc))


def ladder_main(parser: argparse.ArgumentParser, args: argparse.Namespace, config: GameConfig) -> int:
    """``--ladder``: play the round robin, print its tables, write ``ladder.{json,md,png}`` and ``games.csv``."""
    specs = tuple(os.fspath(a) for a in args.ladder)
    pair_games: dict[tuple[str, str], int] = {}
    for text in args.pair_games:
        try:
            pair, n = parse_pair_games(text, specs)
        except ValueError as exc:
            parser.error(str(exc))
        if pair_games.get(pair, n) != n or pair_games.get(pair[::-1], n) != n:
            parser.error(f"--pair-games gives {pair[0]}:{pair[1]} twice with different counts")
        pair_games[pair] = n
    labels = participant_labels(specs)
    out = args.out or os.path.join("runs", "evaluate", default_run_name(("ladder", *labels), config, args.seed))
    made = make_output_folders(parser, (("--out", out), ("--save-records", args.save_records)))

    def progress(line: str) -> None:
        print(f"[ladder {time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)

    try:
        result = run_ladder(
            specs, config, games=args.games, seed=args.seed, pair_games=pair_games, workers=args.workers,
            progress=None if args.no_progress else progress, records_dir=args.save_records,
            allow_pickle=args.allow_pickle, batch_size=args.batch_size, reuse=args.reuse, ray=args.ray,
        )
    except BaseException as exc:
        remove_empty_folders(made)
        _refuse_bad_settings(parser, exc)
        raise
    extra = {"workers": args.workers or os.cpu_count(), "ray": args.ray, "argv": sys.argv[1:]}
    paths = write_ladder_outputs(result, out, extra)
    print(result.to_markdown())
    print()
    print(f"Wall time {result.wall_seconds:.1f} s. Wrote {', '.join(str(p) for p in paths)}.")
    if args.save_records:
        print(f"Game records in {args.save_records} (one folder per pair).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
