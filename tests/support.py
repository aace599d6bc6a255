"""Helpers shared by several test files (not a test module itself)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from skipbo_env.encoding import num_actions, observation_layout
from skipbo_env.rules import GameConfig


class TinyEnv(gymnasium.Env):
    """An env with the spaces of a Skip-Bo config, just to build and save an untrained model."""

    def __init__(self, config: GameConfig) -> None:
        layout = observation_layout(config)
        self.observation_space = gymnasium.spaces.Box(layout.low, layout.high, dtype=np.float32)
        self.action_space = gymnasium.spaces.Discrete(num_actions(config))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.low.copy(), {}

    def step(self, action):
        return self.observation_space.low.copy(), 0.0, True, False, {}

    def action_masks(self):
        return np.ones(self.action_space.n, dtype=bool)


def metric_rows(run_dir: Path) -> list[dict]:
    """A training run's ``metrics.csv`` rows without ``wall_seconds`` (the one column a repeat changes)."""
    with open(run_dir / "metrics.csv", newline="") as fh:
        return [{k: v for k, v in row.items() if k != "wall_seconds"} for row in csv.DictReader(fh)]


def policy_weights(path: Path) -> list[bytes]:
    """The raw bytes of every tensor of a MaskablePPO checkpoint's policy (equal runs, equal bytes)."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(path, device="cpu")
    return [t.numpy().tobytes() for t in model.policy.state_dict().values()]


def tiny_config(tmp_path: Path, **changes) -> dict:
    """A training configuration dict that trains in seconds: short games, small rollouts; top-level
    keys in ``changes`` replace the defaults."""
    data = {
        "name": "tiny",
        "runs_dir": str(tmp_path),
        "seed": 3,
        "total_timesteps": 256,
        "n_envs": 2,
        "vec_env": "dummy",
        "checkpoint_every": 128,
        "game": {"num_players": 2, "stock_size": 5, "turn_limit": 120},
        "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [32]},
        "opponents": {"mix": {"random": 1, "greedy": 1}},
        "eval": {"every": 128, "games": 4, "agents": ["random", "greedy"], "best_against": "greedy", "workers": 1},
    }
    data.update(changes)
    return data


def choice_positions(config: GameConfig, count: int, *, first_seed: int, games: int, max_stop: int):
    """Positions where the mover has a real choice (more than three legal moves), from
    heuristic-vs-heuristic games: game ``g`` is dealt with seed ``first_seed + g`` and stopped
    after a random number of moves below ``max_stop``; at most ``count`` positions."""
    from skipbo_env.agents import load_agent
    from skipbo_env.encoding import decode_action, observe
    from skipbo_env.rules import new_game

    rng = np.random.default_rng(0)
    bots = [load_agent("heuristic", config, seed=s) for s in range(config.num_players)]
    found = 0
    for g in range(games):
        state = new_game(config, seed=first_seed + g)
        stop = int(rng.integers(10, max_stop))
        while not state.is_over and state.moves < stop:
            state.apply(decode_action(bots[state.current].act(observe(state, state.current)), config))
        if not state.is_over and len(state.legal_moves()) > 3:
            yield state
            found += 1
            if found == count:
                return


def rewrite_net_file(path: Path, out: Path, key: str, *, desc=None, tensors=None) -> Path:
    """Copy the network file ``path`` (turn-agent or value file) to ``out`` with its description
    under header ``key`` passed through ``desc`` and its tensors through ``tensors``: bad files
    for the loaders' refusal tests."""
    import json

    import safetensors.numpy as st
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as f:
        meta = f.metadata()
    data = st.load_file(str(path))
    d = json.loads(meta[key])
    if desc:
        d = desc(d)
    if tensors:
        data = tensors(data)
    out.write_bytes(st.save(data, metadata={key: json.dumps(d)}))
    return out


def check_recipe_resumes(main, config: Path, run: Path, output: str, shard_dir: str, bad_shard: str, capsys) -> None:
    """After a first run of recipe file ``config`` (command line ``main``) into ``run``: the same
    command again reuses the two finished shards in ``run/shard_dir`` and writes the same ``output``
    file; a changed setting under the same run name is refused; a corrupt shard is refused with a
    message holding ``bad_shard``."""
    import shutil

    first = (run / output).read_bytes()
    shards = sorted((run / shard_dir).glob("shard_*.npz"))
    assert len(shards) == 2
    stamp = [p.stat().st_mtime_ns for p in shards]
    (run / output).unlink()
    assert main(["--config", str(config), "--no-progress"]) == 0  # same settings: shards reused
    assert [p.stat().st_mtime_ns for p in shards] == stamp
    assert (run / output).read_bytes() == first  # same data and seed: same network
    assert main(["--config", str(config), "--no-progress", "--fit.epochs", "3"]) == 2
    assert "another configuration" in capsys.readouterr().err
    shutil.copy(shards[0], run.parent / "keep.npz")
    shards[0].write_bytes(b"not a shard")
    (run / "config.yaml").unlink()
    assert main(["--config", str(config), "--no-progress"]) == 2
    assert bad_shard in capsys.readouterr().err


TINY_VALUE_RECIPE = """\
recipe: value
name: tiny
runs_dir: {runs}
seed: 3
game:
  num_players: 6
  short_game: true
positions:
  shards: 2
  games: {games}
  share: 0.3
  workers: {workers}
fit:
  hidden: [16]
  epochs: 2
  batch_size: 64
  holdout: 0.2
"""
"""A value recipe of seconds (format it with runs, games and workers)."""

TINY_TURN_RECIPE = """\
recipe: turnnet
name: tiny
runs_dir: {runs}
seed: 3
labels:
  teacher: search:4
  lineups: [[heuristic, heuristic], [search:4, heuristic]]
  shards: 2
  games: 1
  label_share: 0.3
  workers: 1
fit:
  hidden: [8]
  epochs: 2
  holdout: 0.5
eval:
  games: 2
  workers: 1
"""
"""A turnnet recipe of seconds (format it with runs)."""


def assert_same_legal_demonstrations(one, two, other) -> None:
    """Two collections of a teacher's demonstrations (``pretrain.collect``) are the same array by
    array, every label is a legal move, and ``other`` (another teacher's, same games asked) differs."""
    assert one.games == two.games and len(one.actions) > 0
    for name in ("obs", "masks", "actions", "returns"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    assert one.masks[np.arange(len(one.actions)), one.actions].all()  # every label is a legal move
    assert len(other.actions) != len(one.actions) or not np.array_equal(other.actions, one.actions)


def descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (scanning /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def kill_when_workers_run(proc: subprocess.Popen, workers: int, busy: float, what: str) -> None:
    """SIGKILL ``proc`` once ``workers`` spawned worker processes run below it (and ``busy`` seconds
    more), then fail unless every process below it ends within 20 s; ``what`` names the run."""
    import pytest

    below: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            below = descendants(proc.pid)
            running = [p for p in below if alive(p) and b"spawn_main" in _cmdline(p)]
            if len(running) >= workers:
                break
            assert proc.poll() is None, f"the {what} ended before its workers started"
            time.sleep(0.1)
        else:
            pytest.fail(f"no workers of the {what} in time")
        time.sleep(busy)
        below = descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(alive(p) for p in below):
            time.sleep(0.1)
        assert not [p for p in below if alive(p)], f"processes of the killed {what} live on"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in below:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def record_opponent_draws(monkeypatch) -> list:
    """Every opponent the training runs of this test draw in this process (names for scripted agents,
    agent objects for the others), appended to the returned list as they are drawn."""
    from skipbo_env.training import opponents

    drawn: list = []
    draw = opponents.OpponentDraws.draw

    def record(self, rng):
        picks = draw(self, rng)
        drawn.extend(picks)
        return picks

    monkeypatch.setattr(opponents.OpponentDraws, "draw", record)
    return drawn


def check_sent_actions(monkeypatch, env_class) -> list[int]:
    """Patch ``env_class.step`` (``SkipBoSingleEnv``, ``SkipBoVectorEnv``) so that every action sent is
    checked against the env's own masks before it steps; returns the list that counts the actions sent."""
    sent: list[int] = []
    step = env_class.step

    def checking(self, actions):
        acts = np.atleast_1d(np.asarray(actions))
        masks = np.atleast_2d(self.action_masks())
        assert masks[np.arange(len(acts)), acts].all(), "an illegal action was sent to the env"
        sent.append(len(acts))
        return step(self, actions)

    monkeypatch.setattr(env_class, "step", checking)
    return sent


def assert_plays_legal_moves(path: Path, moves: int = 40, seed: int = 3) -> None:
    """``load_agent`` loads the agent file at ``path`` and plays ``moves`` legal moves of a 2-player game
    (for every seat; the rules raise IllegalMoveError on an illegal one)."""
    from skipbo_env.agents import load_agent
    from skipbo_env.encoding import decode_action, observe
    from skipbo_env.rules import new_game

    config = GameConfig()
    agent = load_agent(str(path), config)
    state = new_game(config, seed=seed)
    for _ in range(moves):
        if state.is_over:
            break
        seat = state.current
        move_id = agent.act_view(state.view(seat))
        assert observe(state, seat)["action_mask"][move_id]
        state.apply(decode_action(move_id, config))


TINY_ENV_RUN = ["--total-timesteps", "2048", "--num-envs", "8", "--num-steps", "128", "--num-minibatches", "4",
                "--context-arch", "32", "--scorer-arch", "16", "--value-arch", "32", "--log-every", "1"]
"""Settings of a tiny run of a recipe on ``SkipBo-v0`` envs: two rollouts of 1,024 steps, a small network."""


def check_env_recipe_run(recipe, tiny: list[str], tmp_path: Path, monkeypatch) -> None:
    """A tiny run of a recipe on ``SkipBo-v0`` envs (``recipe``: its module, ``tiny``: its small settings
    of 2,048 steps in two rollouts) sends only legal actions (each checked against the env's mask),
    writes a progress line per rollout, the evaluated snapshots and an agent file that plays legal moves."""
    from skipbo_env.single import SkipBoSingleEnv

    sent = check_sent_actions(monkeypatch, SkipBoSingleEnv)
    path = recipe.train(recipe.parse_args([*tiny, "--runs-dir", str(tmp_path), "--name", "tiny", "--opponents",
                                           "greedy", "random", "--eval-every", "1024", "--eval-games", "4",
                                           "--eval-agents", "greedy"]))
    assert sum(sent) >= 2048
    assert_plays_legal_moves(path)
    assert (tmp_path / "tiny" / "progress.csv").read_text().count("\n") == 3  # the header and two rollouts
    assert sorted(p.name for p in (tmp_path / "tiny" / "snapshots").iterdir()) == [
        "agent_0000001024.safetensors", "agent_0000002048.safetensors"]


def check_recipe_command(recipe, tiny: list[str], tmp_path: Path, capsys) -> None:
    """A recipe's command refuses an existing run folder in one line (exit status 2) and its ``--help``
    lists every field of its ``Args``."""
    import sys

    (tmp_path / "taken").mkdir()
    assert recipe.main([*tiny, "--runs-dir", str(tmp_path), "--name", "taken"]) == 2
    assert "name: " in capsys.readouterr().err
    out = subprocess.run([sys.executable, "-m", recipe.__name__, "--help"], capture_output=True, text=True,
                         check=True).stdout
    for name in recipe.Args.__dataclass_fields__:
        assert "--" + name.replace("_", "-") in out


def check_same_seed_same_run(recipe, tiny: list[str], tmp_path: Path) -> None:
    """Two runs of a recipe with the same settings and seed write the same agent file, byte for byte, the
    second with evaluations between its rollouts (they draw nothing from the training's generators)."""
    evaluations = [[], ["--eval-every", "1024", "--eval-games", "4", "--eval-agents", "greedy"]]
    paths = [recipe.train(recipe.parse_args([*tiny, *extra, "--runs-dir", str(tmp_path / str(i))]))
             for i, extra in enumerate(evaluations)]
    assert paths[0].read_bytes() == paths[1].read_bytes()


def assert_refused(settings_class, changes: dict, field: str) -> None:
    """Building ``settings_class`` with ``changes`` raises ConfigError naming ``field``."""
    import pytest

    from skipbo_env.rules import ConfigError

    with pytest.raises(ConfigError) as info:
        settings_class(**changes)
    assert info.value.field == field


class EnvRecipeChecks:
    """The checks every recipe on ``SkipBo-v0`` envs passes; a test module subclasses it as ``Test...``
    with ``recipe`` (the recipe's module) and ``bad_settings`` (``(changes, field)`` pairs it refuses)."""

    recipe: Any
    bad_settings: list[tuple[dict, str]]

    def test_a_tiny_run_sends_legal_actions_only_and_writes_an_agent_file_that_plays(self, tmp_path, monkeypatch):
        check_env_recipe_run(self.recipe, TINY_ENV_RUN, tmp_path, monkeypatch)

    def test_the_same_seed_gives_the_same_run(self, tmp_path):
        check_same_seed_same_run(self.recipe, TINY_ENV_RUN, tmp_path)

    def test_bad_settings_are_refused_naming_the_field(self):
        for changes, field in self.bad_settings:
            assert_refused(self.recipe.Args, changes, field)

    def test_the_command_refuses_an_existing_run_folder_and_lists_every_field(self, tmp_path, capsys):
        check_recipe_command(self.recipe, TINY_ENV_RUN, tmp_path, capsys)
