"""benchmarks/heuristic_weights_table.py: our agent against copies of the heuristic with chosen weights."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

from skipbo_env.agents.tournament import run_tournament  # noqa: E402
from skipbo_env.bots import BOTS  # noqa: E402
from skipbo_env.bots.heuristic import DEFAULT_WEIGHTS, MULTI_PLAYER_WEIGHTS  # noqa: E402
from skipbo_env.rules import GameConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "heuristic_weights_table.py"


def _module():
    spec = importlib.util.spec_from_file_location("heuristic_weights_table", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_weights_play_the_same_games_as_the_registered_heuristic():
    table = _module()
    config = GameConfig(num_players=3, short_game=True)
    with table.heuristic_named("weighted", table.WEIGHTS["table"](3)):
        weighted = run_tournament(["greedy", "weighted", "weighted"], config, games=12, seed=4, workers=1)
    plain = run_tournament(["greedy", "heuristic", "heuristic"], config, games=12, seed=4, workers=1)
    assert table.WEIGHTS["table"](3) == MULTI_PLAYER_WEIGHTS
    assert weighted.games == plain.games  # every game: the same winners, turns and stocks left
    assert "weighted" not in BOTS  # the name is gone after the block


def test_two_player_weights_are_another_field():
    table = _module()
    assert table.WEIGHTS["two-player"](4) == DEFAULT_WEIGHTS != MULTI_PLAYER_WEIGHTS
    with pytest.raises(ValueError, match="already a scripted agent"):
        with table.heuristic_named("heuristic", DEFAULT_WEIGHTS):
            pass
    assert "heuristic" in BOTS


def test_script_prints_the_row_and_rejects_a_game_count_off_the_rotations():
    done = subprocess.run([sys.executable, str(SCRIPT), "--ours", "greedy", "--players", "3", "--games", "6",
                           "--weights", "two-player"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "| `greedy` | heuristic (two-player weights) ×2 | 3 | 6 |" in done.stdout
    bad = subprocess.run([sys.executable, str(SCRIPT), "--players", "4", "--games", "6"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "multiple of --players (4)" in bad.stderr
