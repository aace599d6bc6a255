"""Chunks as Ray tasks on a two-node cluster (skipbo_env/agents/executors.py).

One Ray cluster for the module (``ray.cluster_utils.Cluster``: a head and a second node, one CPU
each, small object stores), this process connected to it as the driver. A tournament, the
evaluate command, and a recipe's data step spread over both nodes and give the same games as
this process alone; a node killed in the middle of a tournament costs only its chunks' retry;
leaving a run early cancels the cluster's queued chunks. Skipped without the ``ray`` extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from ray.cluster_utils import Cluster  # noqa: E402

from skipbo_env.agents.executors import RayTasks, _check_listening, _import_ray, open_runner  # noqa: E402
from skipbo_env.agents.tournament import run_tournament  # noqa: E402
from skipbo_env.extras import MissingExtraError  # noqa: E402
from tests.support import TINY_VALUE_RECIPE  # noqa: E402

STORE = 80 * 2**20
"""Object store bytes per node: the chunks' arguments and results are small."""


@pytest.fixture(scope="module")
def cluster():
    """A head node and a second node (1 CPU each), this process its driver."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the test's own chunk functions
    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": STORE})
    made.add_node(num_cpus=1, object_store_memory=STORE)
    made.wait_for_nodes()
    ray.init(address=made.address, log_to_driver=False)
    try:
        yield made
    finally:
        ray.shutdown()
        made.shutdown()


def node_ids() -> set[str]:
    return {n["NodeID"] for n in ray.nodes() if n["Alive"]}


def test_a_tournament_over_both_nodes_plays_the_local_games(cluster):
    local = run_tournament(["heuristic", "greedy"], games=48, seed=5, workers=1, batch_size=6)
    with RayTasks(cluster.address) as runner:
        assert runner.width == 2
        spread = run_tournament(["heuristic", "greedy"], games=48, seed=5, batch_size=6, pool=runner)
        assert set(runner.nodes) == set(range(8))  # every chunk came back once
        assert set(runner.nodes.values()) == node_ids()  # and both nodes ran some
    assert spread.games == local.games
    assert spread.summary() == local.summary()


def test_evaluate_with_ray_writes_the_local_results(cluster, tmp_path):
    from skipbo_env import evaluation

    outs = {}
    for name, extra in (("local", ["--workers", "1"]), ("ray", ["--ray", cluster.address])):
        outs[name] = tmp_path / name
        argv = ["--agents", "heuristic", "random", "--games", "16", "--batch-size", "4", "--no-progress",
                "--out", str(outs[name]), *extra]
        assert evaluation.main(argv) == 0
    local, spread = (json.loads((outs[n] / "results.json").read_text()) for n in ("local", "ray"))
    assert spread.pop("ray") == cluster.address and local.pop("ray") is None
    for run in (local, spread):
        del run["wall_seconds"], run["workers"], run["argv"]
    assert spread == local
    assert (outs["ray"] / "games.csv").read_bytes() == (outs["local"] / "games.csv").read_bytes()
    assert ray.is_initialized()  # the command used this process's connection and left it open


def test_a_recipe_data_step_over_both_nodes_makes_the_local_shards(cluster, tmp_path):
    pytest.importorskip("numba")
    from skipbo_env.training.recipe_settings import ValueNetConfig
    from skipbo_env.training.value_recipe import collect_positions

    (tmp_path / "tiny.yaml").write_text(TINY_VALUE_RECIPE.format(runs=tmp_path, games=12, workers=1))
    cfg = ValueNetConfig.from_yaml(tmp_path / "tiny.yaml", {"positions.shards": 4})
    local = collect_positions(cfg, tmp_path / "local", progress=False)
    with RayTasks(cluster.address) as runner:
        spread = collect_positions(cfg, tmp_path / "ray", progress=False, runner=runner)
        assert set(runner.nodes.values()) == node_ids()
    assert len(spread) == len(local) == 4
    for a, b in zip(local, spread, strict=True):
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_a_ladder_and_pretraining_games_on_the_cluster_are_the_local_ones(cluster):
    pytest.importorskip("torch")
    from skipbo_env.agents.ladder import run_ladder
    from skipbo_env.rules import GameConfig
    from skipbo_env.training.pretrain import collect

    agents = ["heuristic", "greedy", "random"]
    local = run_ladder(agents, games=8, seed=2, workers=1)
    spread = run_ladder(agents, games=8, seed=2, ray=cluster.address)
    assert spread.pairs == local.pairs and spread.ratings == local.ratings
    game = GameConfig(stock_size=5)
    args = (game, "heuristic", {"greedy": 1.0, "random": 1.0}, 20, 4, 0.99, False)
    mine, theirs = collect(*args, progress=False), collect(*args, progress=False, ray=cluster.address)
    assert mine.games == theirs.games == 20 and mine.wins == theirs.wins
    for field in ("obs", "masks", "actions", "returns"):
        assert np.array_equal(getattr(mine, field), getattr(theirs, field))


def test_a_recipe_run_with_the_ray_setting_resumes_a_local_run(cluster, tmp_path, capsys):
    """``--ray`` on train.py's command line (the recipes' ``ray`` setting): a run made locally
    resumes on the cluster (its shards reused, the same figures)."""
    pytest.importorskip("torch")
    from skipbo_env.training import commands

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_VALUE_RECIPE.format(runs=tmp_path / "runs", games=12, workers=1))
    assert commands.main(["--config", str(config), "--no-progress"]) == 0
    run = tmp_path / "runs" / "tiny"
    first = json.loads((run / "metrics.json").read_text())
    (run / "positions" / "shard_001.npz").unlink()
    assert commands.main(["--config", str(config), "--no-progress", "--ray", cluster.address]) == 0
    again = json.loads((run / "metrics.json").read_text())
    assert again["fit"] == first["fit"]


def test_a_node_killed_mid_tournament_costs_only_its_chunks_retry(cluster, tmp_path):
    """The second node is killed while the tournament runs, right after it finished a chunk (so
    while it plays its next one): Ray runs its lost chunk again on the head, and the tally is exact
    (every game once, the local games). Saving records plays on the rules layer, slow enough to
    leave chunks for after the kill. The tests below run on the head alone."""
    (second,) = cluster.worker_nodes
    local = run_tournament(["heuristic", "greedy"], games=64, seed=9, workers=1)
    killed_after: list[int] = []
    finished = 0
    with RayTasks(cluster.address) as runner:

        def progress(done: int) -> None:
            nonlocal finished
            finished += done
            if not killed_after and second.node_id in runner.nodes.values():
                cluster.remove_node(second, allow_graceful=False)
                killed_after.append(finished)

        spread = run_tournament(["heuristic", "greedy"], games=64, seed=9, batch_size=4, pool=runner,
                                progress=progress, records_dir=tmp_path)
        assert killed_after and killed_after[0] <= 32, "the second node was killed late or not at all"
        assert len(runner.nodes) == 16 and finished == 64
    deadline = time.monotonic() + 60
    while second.node_id in node_ids() and time.monotonic() < deadline:  # the cluster marks it dead in time
        time.sleep(0.5)
    assert second.node_id not in node_ids()
    assert spread.games == local.games
    assert len(list(tmp_path.glob("game_*.json"))) == 64


def _slow_chunk(args: tuple[str, int]) -> int:
    folder, i = args
    time.sleep(1.5)
    Path(folder, f"chunk_{i}").write_text("done")
    return i


def test_leaving_a_run_early_cancels_the_cluster_s_chunks(cluster, tmp_path):
    with RayTasks(cluster.address) as runner:
        chunks = runner.run(_slow_chunk, [(str(tmp_path), i) for i in range(8)])
        next(chunks)
        chunks.close()  # what an error or Ctrl-C in the consumer does: the generator's finally
        time.sleep(3.0)
    assert 1 <= len(list(tmp_path.glob("chunk_*"))) <= 4  # those running when it left, at most


def _failing_chunk(i: int) -> int:
    if i == 2:
        raise ValueError(f"chunk {i} is bad")
    return i


def test_a_chunk_s_own_error_is_raised_as_its_type(cluster):
    with RayTasks(cluster.address) as runner, pytest.raises(ValueError, match="chunk 2 is bad"):
        list(runner.run(_failing_chunk, range(4)))


def test_a_bad_address_and_a_missing_extra_are_named(monkeypatch):
    with pytest.raises(ValueError, match="Ray address is auto, HOST:PORT"):
        open_runner(2, "not an address")
    with pytest.raises(ValueError, match="Ray address"):
        run_tournament(["heuristic", "greedy"], games=2, ray="host:port")
    with pytest.raises(ConnectionError, match="no Ray cluster at '127.0.0.1:1'"):
        _check_listening("127.0.0.1:1")  # what RayTasks asks before ray.init, which would retry for minutes
    from skipbo_env.rules import ConfigError
    from skipbo_env.training.recipe_settings import TurnNetConfig, ValueNetConfig
    from skipbo_env.training.settings import TrainConfig

    for config in (TrainConfig, TurnNetConfig, ValueNetConfig):
        assert config.from_dict({"ray": "10.0.0.1:6379"}).ray == "10.0.0.1:6379"
        with pytest.raises(ConfigError, match="ray: a Ray address"):
            config.from_dict({"ray": "head node"})
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingExtraError, match=r"the 'ray' extra .*skipbo-env\[ray\]"):
        _import_ray()


def test_a_real_cluster_passes_the_address_check(cluster):
    _check_listening(cluster.address)


@pytest.fixture
def http_port():
    """A plain HTTP server on a free port: something listens there, but not Ray."""
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


def test_a_port_that_is_not_ray_is_named(http_port, monkeypatch):
    with pytest.raises(ConnectionError, match=f"no Ray cluster at '127.0.0.1:{http_port}'.*does not speak"):
        _check_listening(f"127.0.0.1:{http_port}")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    with pytest.raises(ConnectionError, match="'127.0.0.1:1' \\(from RAY_ADDRESS\\)"):
        _check_listening("auto")


@pytest.mark.parametrize("case", ["http", "stale-env", "closed"])
def test_evaluate_with_a_wrong_ray_address_ends_within_30_s_with_one_line(http_port, case, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    if case == "stale-env":
        env["RAY_ADDRESS"] = "127.0.0.1:1"
    address = {"http": f"127.0.0.1:{http_port}", "stale-env": "auto", "closed": "127.0.0.1:1"}[case]
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "skipbo_env.cli", "evaluate", "--agents", "greedy", "random",
                           "--games", "2", "--no-progress", "--ray", address],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert time.monotonic() - start < 30
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Ray cluster at '127.0.0.1:" in lines[0], done.stderr
