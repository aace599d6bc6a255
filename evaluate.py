"""Tournaments between agents: the repository's script for ``skipbo evaluate`` (skipbo_env/evaluation.py).

    python evaluate.py --agents heuristic greedy --games 2000 --seed 0
    python evaluate.py --agents ppo-2p heuristic --games 2000 --seed 0
"""

from __future__ import annotations

import sys

from skipbo_env.cli import run
from skipbo_env.evaluation import build_parser, default_run_name
from skipbo_env.evaluation import main as _main

__all__ = ["build_parser", "default_run_name", "main"]


def main(argv: list[str] | None = None) -> int:
    return _main(argv, prog="evaluate.py")


if __name__ == "__main__":
    raise SystemExit(run(main, sys.argv[1:], "evaluate.py"))
