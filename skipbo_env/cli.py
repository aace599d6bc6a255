"""``skipbo``: the command line installed with the package.

Subcommands: ``train``, ``train-rllib``, ``evaluate``, ``curves``, ``play``, ``replay``, ``demo``,
``bench`` and ``--version``; each takes ``--help``. A command whose optional extra is missing
says, in one line, which one to install (:func:`skipbo_env.extras.missing_extra_line`).
``skipbo-play`` is ``skipbo play`` under its own name; in the repository, ``train.py`` and
``evaluate.py`` are the same commands as scripts.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from . import __version__
from .extras import docs_url, missing_extra_line


def _train(argv: list[str]) -> int:
    from .training.commands import main  # the train extra (torch, stable-baselines3) once a run starts

    return main(argv, prog="skipbo train")


def _train_rllib(argv: list[str]) -> int:
    from .rllib.trainer import main  # the rllib extra (ray[rllib], torch)

    return main(argv, prog="skipbo train-rllib")


def _curves(argv: list[str]) -> int:
    from .training.curves import main  # the train extra (matplotlib) once a plot is drawn

    return main(argv, prog="skipbo curves")


def _evaluate(argv: list[str]) -> int:
    from .evaluation import main  # the train extra when a trained agent plays (torch)

    return main(argv, prog="skipbo evaluate")


def _play(argv: list[str]) -> int:
    from .play import main  # the train extra when a trained agent is an opponent (torch)

    return main(argv, prog="skipbo play")


def _replay(argv: list[str]) -> int:
    from .play import replay_main  # no extra: a record replays on the rules core

    return replay_main(argv, prog="skipbo replay")


def _demo(argv: list[str]) -> int:
    from .demo import main  # no extra: scripted players on the rules core

    return main(argv)


def _bench(argv: list[str]) -> int:
    from .bench import main  # the AEC env's gymnasium and pettingzoo; the fast extra (numba) when installed

    return main(argv)


@dataclass(frozen=True)
class Command:
    """A ``skipbo`` subcommand: the function that runs it on the rest of the command line."""

    run: Callable[[list[str]], int]
    """``run(argv) -> exit code``; it imports its module (and so its extra) only when called."""
    help: str
    """One line for ``skipbo --help``."""


COMMANDS: dict[str, Command] = {
    "train": Command(_train, "train a MaskablePPO agent against scripted opponents"),
    "train-rllib": Command(_train_rllib, "train the action-scoring network with Ray RLlib (one machine or a cluster)"),
    "evaluate": Command(_evaluate, "seat-balanced, deal-paired tournaments between agents"),
    "curves": Command(_curves, "learning curves of training runs (metrics.csv) as a table and a plot"),
    "play": Command(_play, "play against agents in the terminal"),
    "replay": Command(_replay, "step through a recorded game (a file from evaluate or play)"),
    "demo": Command(_demo, "watch scripted players play one game"),
    "bench": Command(_bench, "throughput figures of this machine"),
}
"""``skipbo COMMAND`` -> the command."""


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: skipbo COMMAND [options]   (skipbo COMMAND --help for a command's options)", "",
             "Skip-Bo as a reinforcement-learning environment.", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {command.help}" for name, command in COMMANDS.items()]
    lines += ["", "  --version  the installed version", "", f"Documentation: {docs_url()}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run a command on the rest of the command line; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    if args[0] == "--version":
        print(f"skipbo-env {__version__}")
        return 0
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"skipbo: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return 2
    return run(COMMANDS[command].run, rest, f"skipbo {command}")


def run(command: Callable[[list[str]], int], argv: list[str], program: str) -> int:
    """``command(argv)``; a missing extra is one line on stderr naming it and ``program`` (exit 1)."""
    try:
        return command(argv)
    except ImportError as exc:
        line = missing_extra_line(exc, program)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 1


def play_main(argv: list[str] | None = None) -> int:
    """``skipbo-play``: ``skipbo play`` under the name of its own script."""

    def play(rest: list[str]) -> int:
        from .play import main  # the train extra when a trained agent is an opponent (torch)

        return main(rest, prog="skipbo-play")

    return run(play, list(sys.argv[1:] if argv is None else argv), "skipbo-play")


if __name__ == "__main__":
    raise SystemExit(main())
