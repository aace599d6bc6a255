"""``skipbo``: the command line installed with the package.

    skipbo train --config my.yaml          train a MaskablePPO agent (train extra)
    skipbo evaluate --agents ppo-2p greedy tournaments between agents (train extra)
    skipbo play --opponents heuristic      play in the terminal
    skipbo replay game.json                step through a recorded game
    skipbo demo                            watch scripted players play one game
    skipbo bench                           throughput figures of this machine
    skipbo --version

Each command takes ``--help``. A command whose optional extra is missing says
which one to install. In the repository, ``train.py`` and ``evaluate.py`` are
the same commands as scripts.
"""

from __future__ import annotations

import importlib
import sys

from . import __version__
from .extras import MissingExtraError

COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("skipbo_env.training.commands", "train a MaskablePPO agent against scripted opponents"),
    "evaluate": ("skipbo_env.evaluation", "seat-balanced, deal-paired tournaments between agents"),
    "play": ("skipbo_env.play", "play against agents in the terminal"),
    "replay": ("skipbo_env.play", "step through a recorded game (a file from evaluate or play)"),
    "demo": ("skipbo_env.demo", "watch scripted players play one game"),
    "bench": ("skipbo_env.bench", "throughput figures of this machine"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: skipbo COMMAND [options]   (skipbo COMMAND --help for a command's options)", "",
             "Skip-Bo as a reinforcement-learning environment.", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "  --version  the installed version"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a command's own ``main``; returns the exit code."""
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
    try:
        module = importlib.import_module(COMMANDS[command][0])
        if command == "replay":
            return module.main(["--replay", *rest] if rest and not rest[0].startswith("-") else rest)
        if command in ("train", "evaluate"):
            return module.main(rest, prog=f"skipbo {command}")
        return module.main(rest)
    except MissingExtraError as exc:
        print(f"skipbo {command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
