"""Local pools of worker processes: how games are cut into chunks, warm-up, and how workers end."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

from skipbo_env.agents.executors import LocalPool
from skipbo_env.agents.tournament import chunk_ranges, warm_up
from skipbo_env.rules import GameConfig


@pytest.mark.parametrize("games, width, batch", [(200, 2, 64), (2000, 2, 64), (7, 2, 64), (1, 4, 64), (130, 1, 64),
                                                  (128, 2, 64), (10, 3, 1), (999, 7, 50)])
def test_chunks_cover_every_game_once_in_even_sizes_for_the_workers(games, width, batch):
    chunks = chunk_ranges(games, width, batch)
    assert [i for c in chunks for i in c] == list(range(games))
    sizes = [len(c) for c in chunks]
    assert max(sizes) <= batch and max(sizes) - min(sizes) <= 1 and min(sizes) >= 1
    # every worker gets as many chunks (they finish together), unless there are fewer games than that
    assert len(chunks) % width == 0 or len(chunks) == games
    assert chunk_ranges(200, 2, 64) == [range(0, 50), range(50, 100), range(100, 150), range(150, 200)]


def _pid_and_print(tag: str) -> int:
    print(f"worker says {tag}", end="")  # no newline: stays in the buffer unless flushed
    return os.getpid()


def _mark(folder: str) -> None:
    fd, _ = tempfile.mkstemp(dir=folder, prefix=f"warm_{os.getpid()}_")
    os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_closed_pool_s_workers_end_at_once_with_their_output_flushed(capfd):
    pool = LocalPool(2)
    pids = {pid for _, pid in pool.run(_pid_and_print, ["a", "b", "c"])}
    pool.close()
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}"), "a worker outlived its closed pool"
    out = capfd.readouterr().out
    assert all(f"worker says {tag}" in out for tag in "abc")


def test_prepare_runs_the_warm_up_once_per_worker_in_the_workers(tmp_path):
    with LocalPool(2) as pool:
        pool.prepare(_mark, str(tmp_path))
        assert sorted(i for i, _ in pool.run(_pid_and_print, ["x", "y"])) == [0, 1]
    marks = list(tmp_path.glob("warm_*"))  # closing waited for both warm-ups
    assert len(marks) == 2 and all(int(p.name.split("_")[1]) != os.getpid() for p in marks)


@pytest.mark.parametrize(
    "config", [GameConfig(), GameConfig(num_players=4, partner_game=True)], ids=["2p", "4p-partner"]
)
def test_the_evaluation_warm_up_plays_one_deal_of_any_game(config):
    warm_up(config)  # what a training run's evaluation workers run first; it raises on any problem
