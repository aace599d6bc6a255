"""Record the decisions of every shipped agent: ``tests/golden/decisions.json``.

For each case below (agents, table, games, seed) a seeded tournament is played twice
with one worker:

* without records, so that it takes the path a plain ``evaluate.py`` run takes (the
  batched engine where every agent allows it): each game's winner, turns and stock left;
* with records (the rules-layer game loop, every decision through the agent): the
  SHA-256 of each game's move list.

``tests/test_decisions_golden.py`` replays every case and compares. Regenerate only when a
change of an agent's play is intended and documented (say so in the commit message):

    python tests/golden/make_decisions.py            # rewrites tests/golden/decisions.json
    python tests/golden/make_decisions.py --out F    # writes elsewhere, e.g. to diff
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

from skipbo_env.agents.tournament import run_tournament  # noqa: E402
from skipbo_env.records import GameRecord  # noqa: E402
from skipbo_env.rules import GameConfig, move_to_dict  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "decisions.json"

CASES: tuple[dict[str, Any], ...] = (
    {"name": "heuristic-greedy-2p", "agents": ["heuristic", "greedy"], "config": {}, "games": 8},
    {"name": "random-heuristic-3p", "agents": ["random", "heuristic"], "config": {"num_players": 3}, "games": 6},
    {"name": "heuristic-greedy-partner-4p", "agents": ["heuristic", "greedy"],
     "config": {"num_players": 4, "partner_game": True}, "games": 4},
    {"name": "ppo-2p-heuristic", "agents": ["ppo-2p", "heuristic"], "config": {}, "games": 6},
    {"name": "turn-2p-ppo-2p", "agents": ["turn-2p", "ppo-2p"], "config": {}, "games": 4},
    {"name": "search-heuristic-2p", "agents": ["search", "heuristic"], "config": {}, "games": 2},
    {"name": "search-heuristic-3p", "agents": ["search:8", "heuristic"], "config": {"num_players": 3}, "games": 3},
    {"name": "search-heuristic-4p", "agents": ["search:8", "heuristic"], "config": {"num_players": 4}, "games": 2},
    {"name": "search-value-6p", "agents": ["search:4:2", "heuristic"], "config": {"num_players": 6}, "games": 2},
    {"name": "search-short-game-2p", "agents": ["search:8", "greedy"],
     "config": {"stock_size": 10}, "games": 2},
)


def moves_hash(record: dict[str, Any]) -> str:
    text = json.dumps(record["moves"], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def play_case(case: dict[str, Any]) -> dict[str, Any]:
    """The pinned facts of one case (see the module docstring)."""
    config = GameConfig(**case["config"])
    plain = run_tournament(case["agents"], config, games=case["games"], seed=0, workers=1)
    results = [[g.winner, g.turns, list(g.stock_left)] for g in plain.games]
    with tempfile.TemporaryDirectory() as folder:
        run_tournament(case["agents"], config, games=case["games"], seed=0, workers=1, records_dir=folder)
        hashes = []
        for path in sorted(Path(folder).glob("game_*.json")):
            record = GameRecord.from_dict(json.loads(path.read_text()))
            hashes.append(moves_hash({"moves": [move_to_dict(m) for m in record.moves]}))
    return {**case, "results": results, "moves_sha256": hashes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    cases = []
    for case in CASES:
        cases.append(play_case(case))
        print(f"{case['name']}: {len(cases[-1]['results'])} games", file=sys.stderr)
    args.out.write_text(json.dumps({"cases": cases}, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
