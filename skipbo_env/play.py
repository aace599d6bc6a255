"""Play Skip-Bo against agents in the terminal, or step through a recorded game.

``skipbo play --opponents heuristic`` plays you against an agent; ``skipbo replay game.json``
replays a record (``skipbo-play`` and ``python -m skipbo_env.play`` are the same program). The
person's seat sees only its seat view; opponents are any spec
:func:`skipbo_env.agents.load_agent` accepts, and the game runs through
:class:`skipbo_env.episode.GameLoop`, whose person's seat has no agent. Games are saved as
:class:`~skipbo_env.records.GameRecord` JSON files. See docs/play.md.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .agents import agent_label, derive_seed, known_agents, load_agent
from .encoding import encode_action
from .episode import AgentError, GameLoop
from .extras import HelpFormatter, docs_url
from .human import (
    HumanPlayer,
    QuitGame,
    Terminal,
    describe_move,
    isatty,
    seat_name,
    seating_text,
    table_lines,
    table_of_state,
)
from .records import GameRecord, GameRecorder
from .rules import GameConfig, GameState, SkipBoError, game_points, new_game

DEFAULT_DELAY = 0.6
"""Seconds between the opponents' moves (``--delay``)."""
HUMAN_LABEL = "human"


# ====================================================================== agents
def default_opponent() -> str:
    """The strongest scripted agent: ``heuristic``."""
    return "heuristic"


def agent_seed(game_seed: int, seat: int) -> int:
    """Each opponent's own seed, derived from the game seed and its seat."""
    return derive_seed(game_seed, seat, bits=32)


# ====================================================================== a game
def run_game(
    state: GameState,
    human_seat: int,
    opponents: dict[int, Any],
    labels: Sequence[str],
    terminal: Terminal,
    delay: float = DEFAULT_DELAY,
    recorder: GameRecorder | None = None,
) -> str:
    """Play ``state`` until it ends or the person leaves; returns how it stopped.

    The person's moves come from a :class:`~skipbo_env.human.HumanPlayer` on
    ``human_seat`` (a seat without an agent in the game loop); every other seat's agent is
    asked by the loop. Each opponent move is printed after a pause of ``delay`` seconds. Returns
    ``"finished"``, ``"quit"``, ``"end of input"`` or ``"interrupted"`` (Ctrl-C).
    Raises :class:`AgentError` when an agent picks an illegal action.
    """
    seats = [None if s == human_seat else opponents[s] for s in range(state.config.num_players)]
    loop = GameLoop(state, seats, labels)
    person = HumanPlayer(terminal, labels)
    try:
        while not loop.over:
            if loop.waiting:
                decision = loop.take(encode_action(person(state.view(human_seat)), state.config))
            else:
                decision = loop.decide()
                terminal.pause(delay)
            seat, move = decision.seat, decision.move
            text = describe_move(move, state.view(human_seat), seat)
            if recorder is not None:
                recorder.add(move)
            terminal.line((seat_name(seat, labels, human_seat), "bold cyan" if seat == human_seat else "bold"),
                          ": " + text)
            loop.apply(decision)
    except QuitGame as exc:
        return exc.reason
    except KeyboardInterrupt:
        terminal.line("")
        return "interrupted"
    return "finished"


def show_result(state: GameState, labels: Sequence[str], terminal: Terminal, me: int | None = None) -> None:
    """The full-information table of a finished (or stopped) game, and the points (R24, R27)."""
    terminal.line("")
    terminal.lines(table_lines(table_of_state(state, labels, me)))
    if state.winner is None:
        return
    cfg = state.config
    points = game_points(state)
    sides = [
        " and ".join(seat_name(s, labels, me) for s in cfg.team_seats(t)) + f" {points[t]}"
        for t in range(cfg.num_teams)
    ]
    terminal.line("points: " + ", ".join(sides))


# ====================================================================== replay
_STEP_PROMPT = "[Enter] next move, t rest of the turn, a to the end, q quit> "


def replay_game(record: GameRecord, terminal: Terminal, auto: bool = False, delay: float = 0.0) -> GameState:
    """Step through a record with full information; returns the last state reached.

    Without ``auto`` the person presses Enter for each move (``t`` runs to the
    end of the turn, ``a`` to the end of the game, ``q`` or end of input stops);
    the table is shown after every step. With ``auto`` every move is printed
    and the table after every turn, pausing ``delay`` seconds between turns.
    """
    labels = list(record.players)
    state = GameState.from_dict(record.initial_state)
    cfg = state.config
    players = ", ".join(f"player_{s} ({label})" for s, label in enumerate(labels))
    terminal.line(f"replay: {cfg.num_players} players: {players}; {_moves(len(record.moves))}")
    terminal.lines(table_lines(table_of_state(state, labels)))
    mode = "auto" if auto else "move"
    for i, move in enumerate(record.moves):
        seat, turn = state.current, state.turn
        if mode == "move":
            choice = _ask_step(terminal)
            if choice is None:
                return state
            mode = {"": "move", "t": "turn", "a": "auto"}[choice]
        text = describe_move(move, state.view(seat), seat)
        state.apply(move)
        terminal.line(f"move {i + 1}: ", (seat_name(seat, labels), "bold"), ": " + text)
        turn_over = state.turn != turn or state.is_over
        if mode == "move" or turn_over:
            terminal.lines(table_lines(table_of_state(state, labels)))
        if turn_over and mode == "turn":
            mode = "move"
        elif turn_over and mode == "auto" and i + 1 < len(record.moves):
            terminal.pause(delay)
    ended = "the game is over" if state.is_over else "the game was not finished"
    terminal.line(f"end of the record after {_moves(len(record.moves))}: {ended}")
    show_result(state, labels, terminal)
    return state


def _moves(count: int) -> str:
    return f"{count} move" if count == 1 else f"{count} moves"


def _ask_step(terminal: Terminal) -> str | None:
    """``""``, ``"t"`` or ``"a"``; ``None`` to stop (``q`` or end of input)."""
    while True:
        text = terminal.ask(_STEP_PROMPT)
        if text is None:
            return None
        choice = text.strip().lower()
        if choice in ("q", "quit", "exit"):
            return None
        if choice in ("", "t", "a"):
            return choice
        terminal.error(f"{choice!r}: press Enter for the next move, or type t, a or q")


# ====================================================================== program
def build_parser(prog: str = "skipbo play") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, formatter_class=HelpFormatter,
        description="Play Skip-Bo against agents in the terminal, or replay a recorded game "
                    "(key syntax: type ? in a game).",
        epilog=f"Agents: {', '.join(known_agents())} (search:W:C: W sampled worlds, C candidate turns), "
               f"or an agent file. Keys and the table: {docs_url('play')}",
    )
    game = parser.add_argument_group("a game")
    game.add_argument("--opponents", nargs="+", metavar="AGENT",
                      help="one agent for all opponents, or one per opponent in seat order from your left: "
                           f"a name ({', '.join(known_agents())}) or an agent file (.safetensors) "
                           f"(default: {default_opponent()})")
    game.add_argument("--allow-pickle", action="store_true",
                      help="also load pickled model files as opponents: MaskablePPO checkpoints (.zip) and RLlib "
                           "checkpoint folders. A pickled model file can run arbitrary code when loaded; only use "
                           "it for files you made or trust")
    game.add_argument("--players", type=int,
                      help="number of players, 2-6 (default: 1 + opponents; 4 with --partner)")
    game.add_argument("--seat", type=int, help="your seat, 0-based (default 0)")
    game.add_argument("--partner", action="store_true", help="partner game, 4 or 6 players (R27)")
    game.add_argument("--short", action="store_true", help="short game: stocks of 10 (R26)")
    game.add_argument("--seed", type=int, help="seed of the deal and the agents (default: random, printed)")
    game.add_argument("--save", metavar="FILE",
                      help="save the game as a JSON record when it ends or you leave")
    replay = parser.add_argument_group("replay")
    replay.add_argument("--replay", metavar="FILE", help="step through a recorded game with every card shown")
    replay.add_argument("--auto", action="store_true", help="replay without waiting for Enter")
    parser.add_argument("--delay", type=float, metavar="SECONDS",
                        help="pause between opponents' moves, or turns in --auto replay "
                             f"(default {DEFAULT_DELAY})")
    parser.add_argument("--no-color", action="store_true", help="plain text even on a colour terminal")
    return parser


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    prog: str = "skipbo play",
) -> int:
    """Run the program (named ``prog`` in its usage and errors); returns the exit code (0 also
    when the person quits or input ends).

    Bad options exit with code 2 (argparse); an unreadable record, a failed
    save or a misbehaving agent print an error and return 1.
    """
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    delay = DEFAULT_DELAY if args.delay is None else args.delay
    if not delay >= 0:
        parser.error(f"--delay must be >= 0 seconds, got {args.delay}")
    terminal = Terminal(stdin, stdout, color=not args.no_color and isatty(stdout))
    try:
        if args.replay is not None:
            valued = ("opponents", "players", "seat", "seed", "save")
            given = [f"--{k}" for k in valued if getattr(args, k) is not None]
            given += [f"--{k.replace('_', '-')}" for k in ("partner", "short", "allow_pickle") if getattr(args, k)]
            if given:
                parser.error(f"--replay plays back a recorded game; {', '.join(given)} do(es) not apply")
            return _replay(args.replay, terminal, args.auto, delay, stderr, prog)
        if args.auto:
            parser.error("--auto only applies to --replay")
        return _play(parser, args, terminal, delay, stderr)
    except KeyboardInterrupt:
        terminal.line("")
        terminal.line("interrupted")
        return 0


def replay_main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    prog: str = "skipbo replay",
) -> int:
    """``skipbo replay FILE [--auto] [--delay SECONDS] [--no-color]``: :func:`main`'s ``--replay FILE``,
    with the record file required (a missing one is an ``error:`` line, exit 2)."""
    parser = argparse.ArgumentParser(prog=prog, description="Step through a recorded game with every card shown.",
                                     formatter_class=HelpFormatter,
                                     epilog=f"Keys and the table: {docs_url('play')}")
    parser.add_argument("file", metavar="FILE", help="a game record (.json) written by evaluate --save-records "
                                                     "or by play --save")
    parser.add_argument("--auto", action="store_true", help="replay without waiting for Enter")
    parser.add_argument("--delay", type=float, metavar="SECONDS",
                        help=f"pause between turns in --auto replay (default {DEFAULT_DELAY})")
    parser.add_argument("--no-color", action="store_true", help="plain text even on a colour terminal")
    args = parser.parse_args(argv)
    rest = ["--auto"] * args.auto + ["--no-color"] * args.no_color
    rest += [] if args.delay is None else [f"--delay={args.delay!r}"]
    return main([f"--replay={args.file}", *rest], stdin, stdout, stderr, prog)


def _replay(path: str, terminal: Terminal, auto: bool, delay: float, stderr: TextIO, prog: str) -> int:
    try:
        record = GameRecord.load(path)
    except (OSError, ValueError) as exc:
        print(f"{prog}: cannot replay {path}: {exc}", file=stderr)
        return 1
    try:
        replay_game(record, terminal, auto=auto, delay=delay)
    except KeyboardInterrupt:
        terminal.line("")
        terminal.line("interrupted")
    return 0


def _setup(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[GameConfig, int, list[str]]:
    """The configuration, the person's seat and one agent spec per seat (``None`` for the person)."""
    specs = args.opponents or [default_opponent()]
    players = args.players
    if players is None:
        players = 4 if args.partner and len(specs) == 1 else len(specs) + 1
    try:
        config = GameConfig(num_players=players, short_game=args.short, partner_game=args.partner)
    except SkipBoError as exc:
        parser.error(str(exc))
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        parser.error(f"--opponents: {players} players need 1 or {players - 1} opponents, got {len(specs)}")
    seat = 0 if args.seat is None else args.seat
    if not 0 <= seat < players:
        parser.error(f"--seat must be in 0..{players - 1} for {players} players, got {seat}")
    per_seat: list[str] = [""] * players
    for k, spec in enumerate(specs):
        per_seat[(seat + 1 + k) % players] = spec
    return config, seat, per_seat


def _play(parser: argparse.ArgumentParser, args: argparse.Namespace, terminal: Terminal, delay: float,
          stderr: TextIO) -> int:
    config, me, specs = _setup(parser, args)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    if seed < 0:
        parser.error(f"--seed must be >= 0, got {seed}")
    opponents: dict[int, Any] = {}
    for seat, spec in enumerate(specs):
        if seat != me:
            try:
                opponents[seat] = load_agent(spec, config, agent_seed(seed, seat), allow_pickle=args.allow_pickle)
            except (OSError, ValueError) as exc:
                parser.error(f"--opponents: cannot load {spec!r}: {exc}")
    labels = [HUMAN_LABEL if seat == me else agent_label(spec) for seat, spec in enumerate(specs)]
    state = new_game(config, seed=seed)
    recorder = GameRecord.start(state, labels)
    variant = " partner game," if config.partner_game else ""
    terminal.line(
        f"Skip-Bo,{variant} {config.num_players} players, stocks of {config.stock_size}, seed {seed}."
    )
    terminal.line(f"{seating_text(config, me, labels)} Type ? for help, q to quit.")
    try:
        outcome = run_game(state, me, opponents, labels, terminal, delay, recorder)
    except AgentError as exc:
        print(f"{parser.prog}: {exc}", file=stderr)
        return _save(args.save, recorder, terminal, stderr, parser.prog) or 1
    if outcome == "finished":
        show_result(state, labels, terminal, me)
    else:
        terminal.line(f"{outcome}: the game was left unfinished after {_moves(len(recorder.moves))}")
    return _save(args.save, recorder, terminal, stderr, parser.prog)


def _save(path: str | None, recorder: GameRecorder, terminal: Terminal, stderr: TextIO, prog: str) -> int:
    if path is None:
        return 0
    try:
        saved = recorder.record().save(path)
    except OSError as exc:
        print(f"{prog}: cannot save the game to {path}: {exc}", file=stderr)
        return 1
    count = _moves(len(recorder.moves))
    terminal.line(f"game saved to {saved} ({count}); replay: skipbo replay {saved}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(prog="python -m skipbo_env.play"))
