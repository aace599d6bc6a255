"""Train a MaskablePPO agent: the repository's script for ``skipbo train`` (skipbo_env/training/commands.py).

    python train.py --config quick              # a shipped configuration (configs/quick.yaml)
    python train.py --config configs/quick.yaml  # the same, as a file
    python train.py --resume runs/default
    python train.py --export runs/default/best.zip my_agent.safetensors --allow-pickle
"""

from __future__ import annotations

import sys

from skipbo_env.cli import run
from skipbo_env.training.commands import build_parser, parse_overrides
from skipbo_env.training.commands import main as _main

__all__ = ["build_parser", "main", "parse_overrides"]


def main(argv: list[str] | None = None) -> int:
    return _main(argv, prog="train.py")


if __name__ == "__main__":
    raise SystemExit(run(main, sys.argv[1:], "train.py"))
