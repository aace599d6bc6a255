"""Ray RLlib glue: env wrapper, seat mapping, a short local training run,
legality of the trained policy, its evaluation through evaluate.py, and
``train_rllib.py --address`` on a two-node Ray cluster.

Skipped unless the ``rllib`` extra is installed. The training test starts a
local Ray instance with 2 env runners on a tiny game (3-card stocks, 60-turn
limit, 300-step batches); the cluster test starts a head and a second Ray
node on this machine (``ray.cluster_utils.Cluster``, 1 CPU each) and runs
``train_rllib.py --address`` against it in its own process, one iteration
with a runner on each node. The module takes about two minutes on 2 cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402
import torch  # noqa: E402
from agents.tournament import run_tournament  # noqa: E402

import evaluate  # noqa: E402
import skipbo_env  # noqa: E402
from agents import load_agent  # noqa: E402
from skipbo_env.encoding import observe  # noqa: E402
from skipbo_env.rllib import (  # noqa: E402
    LEARNER,
    META_FILE,
    CheckpointError,
    RLlibAgent,
    SkipBoRLlibEnv,
    build_ppo_config,
    env_runner_nodes,
    make_mapping_fn,
    save,
)
from skipbo_env.rules import GameConfig, IllegalMoveError, new_game  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = {"num_players": 3, "stock_size": 3, "turn_limit": 60}


def iteration_lines(out: str) -> list[dict]:
    """The per-iteration JSON lines ``train_rllib.py`` printed (Ray's own log lines skipped)."""
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"iteration"')]


# ------------------------------------------------------------ no Ray needed
def test_env_wrapper_gives_rllib_keys_and_plays_a_game():
    env = SkipBoRLlibEnv({"num_players": 4, "partner_game": True, "stock_size": 2, "turn_limit": 40})
    assert env.possible_agents == [f"player_{i}" for i in range(4)]
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    steps, done = 0, False
    while not done:
        ((agent, o),) = obs.items()  # one agent acts per step
        assert set(o) == {"observations", "action_mask"}
        assert o["action_mask"].dtype == np.float32 and o["observations"].dtype == np.float32
        assert env.observation_spaces[agent].contains(o)
        legal = np.flatnonzero(o["action_mask"])
        obs, rewards, terms, truncs, _ = env.step({agent: int(rng.choice(legal))})
        done = terms["__all__"] or truncs["__all__"]
        steps += 1
        if not done:
            assert len(obs) == 1
    assert steps > 10
    if terms["__all__"]:  # partner game: +1 to both partners of one team, -1 to the others
        assert sorted(rewards.values()) == [-1, -1, 1, 1]


def test_env_wrapper_is_seeded():
    a, b = SkipBoRLlibEnv(TINY), SkipBoRLlibEnv(TINY)
    obs_a, _ = a.reset(seed=5)
    obs_b, _ = b.reset(seed=5)
    for _ in range(30):
        assert obs_a.keys() == obs_b.keys()
        ((agent, o),) = obs_a.items()
        assert np.array_equal(o["observations"], obs_b[agent]["observations"])
        action = {agent: int(np.flatnonzero(o["action_mask"])[-1])}
        obs_a, obs_b = a.step(action)[0], b.step(action)[0]


def test_bad_env_config_fails_with_the_envs_error():
    with pytest.raises(ValueError, match="max_cycles"):
        SkipBoRLlibEnv({"max_cycles": 10})


def test_mapping_self_play_and_vs_scripted():
    config = GameConfig(num_players=4, partner_game=True)
    selfplay = make_mapping_fn(config, ())
    assert {selfplay(f"player_{i}") for i in range(4)} == {LEARNER}
    vs = make_mapping_fn(config, ("greedy", "random"))
    sides = set()
    for k in range(20):
        episode = type("Ep", (), {"id_": f"episode-{k}"})()
        mods = [vs(f"player_{i}", episode) for i in range(4)]
        learner = tuple(i for i, m in enumerate(mods) if m == LEARNER)
        assert learner in ((0, 2), (1, 3))  # partners together
        others = [m for m in mods if m != LEARNER]
        assert others == ["scripted_greedy", "scripted_random"]
        sides.add(learner)
        assert [vs(f"player_{i}", episode) for i in range(4)] == mods  # stable within an episode
    assert len(sides) == 2  # the learner plays both sides across episodes


def test_config_rejects_bad_opponents_and_sizes():
    with pytest.raises(ValueError, match="unknown opponent"):
        build_ppo_config(TINY, opponents=("alphago",))
    with pytest.raises(ValueError, match="train_batch_size"):
        build_ppo_config(TINY, train_batch_size=0)
    for cpus in (0, -1.0, True, "1"):
        with pytest.raises(ValueError, match="cpus_per_runner"):
            build_ppo_config(TINY, cpus_per_runner=cpus)
    assert build_ppo_config(TINY, cpus_per_runner=0.5).num_cpus_per_env_runner == 0.5


def test_rllib_agent_rejects_a_non_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="not a directory holding an RLlib checkpoint"):
        RLlibAgent(tmp_path, GameConfig())


# ---------------------------------------------------------- local training
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """Self-play PPO trained for 2 iterations with 2 env runners on a local Ray instance."""
    ray.init(address="local", num_cpus=3, include_dashboard=False, log_to_driver=False)
    algo = None
    try:
        algo = build_ppo_config(
            TINY,
            num_env_runners=2,
            train_batch_size=300,
            minibatch_size=100,
            num_epochs=2,
            hidden=(64,),
            seed=0,
        ).build_algo()
        results = [algo.train() for _ in range(2)]
        placement = env_runner_nodes(algo)
        path = save(algo, tmp_path_factory.mktemp("rllib") / "ckpt", TINY, ())
    finally:
        if algo is not None:
            algo.stop()
        ray.shutdown()
    return path, results, placement


def test_training_samples_with_two_runners_and_saves(checkpoint):
    path, results, placement = checkpoint
    assert list(placement.values()) == [2]  # a local instance: one node runs both runners
    runners = results[-1]["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 600
    assert runners["num_episodes_lifetime"] >= 1
    assert results[-1]["learners"][LEARNER]["num_module_steps_trained"] > 0
    meta = json.loads((path / META_FILE).read_text())
    assert meta == {"env_config": TINY, "module_id": LEARNER, "opponents": []}


def test_trained_policy_only_takes_legal_actions(checkpoint):
    path, _, _ = checkpoint
    config = GameConfig.from_dict(TINY)
    agent = RLlibAgent(path, config, allow_pickle=True)
    # greedy actions: 5 full games on the raw env, which raises on an illegal move
    for seed in range(5):
        env = skipbo_env.raw_env(**TINY)
        env.reset(seed=seed)
        for _name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = agent.act(obs)
            assert obs["action_mask"][action] == 1
            env.step(action)  # IllegalMoveError would fail the test
    # sampled (exploration) actions of the masked module: never an illegal one
    state = new_game(config, seed=11)
    vecs, masks = [], []
    rng = np.random.default_rng(0)
    while not state.is_over and len(vecs) < 200:
        o = observe(state, state.current)
        vecs.append(o["observation"])
        masks.append(o["action_mask"].astype(np.float32))
        state.apply(state.legal_moves()[rng.integers(len(state.legal_moves()))])
    mask_t = torch.as_tensor(np.array(masks))
    batch = {"obs": {"observations": torch.as_tensor(np.array(vecs)), "action_mask": mask_t.clone()}}
    with torch.no_grad():
        logits = agent.module.forward_exploration(batch)["action_dist_inputs"]
    samples = torch.distributions.Categorical(logits=logits).sample((50,))  # 50 draws per row
    assert bool(torch.gather(mask_t.expand(50, -1, -1), 2, samples[..., None]).all())


def test_rllib_agent_protocol_and_errors(checkpoint):
    path, _, _ = checkpoint
    config = GameConfig.from_dict(TINY)
    agent = load_agent(str(path), config, allow_pickle=True)  # a checkpoint directory -> RLlibAgent
    assert isinstance(agent, RLlibAgent)
    state = new_game(config, seed=0)
    obs = observe(state, state.current)
    assert agent.act(obs) == agent.act(obs)  # deterministic
    idle = observe(state, (state.current + 1) % config.num_players)
    with pytest.raises(ValueError, match="all zeros"):
        agent.act(idle)
    with pytest.raises(CheckpointError, match="do not match"):
        RLlibAgent(path, GameConfig(num_players=2, stock_size=3), allow_pickle=True)
    with pytest.raises(IllegalMoveError):  # sanity: the raw env does raise on illegal moves
        env = skipbo_env.raw_env(**TINY)
        env.reset(seed=0)
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0]))


def test_evaluated_against_random_through_evaluate_py(checkpoint, tmp_path, capsys):
    path, _, _ = checkpoint
    config = GameConfig.from_dict(TINY)
    result = run_tournament([str(path), "random"], config, games=12, seed=0, workers=1, allow_pickle=True)
    assert len(result.games) == 12 and [a.games for a in result.agents] == [12, 12]
    assert result.labels[1] == "random"
    rc = evaluate.main(
        [
            "--agents",
            str(path),
            "random",
            "--games",
            "12",
            "--players",
            "3",
            "--stock-size",
            "3",
            "--turn-limit",
            "60",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "eval"),
            "--no-progress",
            "--allow-pickle",
        ]
    )
    assert rc == 0
    out = capsys.readouterr().out
    assert "random" in out and path.name in out


def test_train_rllib_script_partner_game_vs_scripted(tmp_path, capsys):
    """The script end to end: partner game, learner team vs scripted greedy, sampling in the driver."""
    from skipbo_env.rllib import trainer as train_rllib

    out = tmp_path / "teams"
    argv = ["--env", "num_players=4", "--env", "partner_game=true", "--env", "stock_size=2"]
    argv += ["--env", "turn_limit=40", "--opponents", "greedy", "--no-vector", "--iterations", "1"]
    argv += ["--num-env-runners", "0", "--train-batch-size", "200", "--minibatch-size", "100", "--num-epochs", "1"]
    assert train_rllib.main([*argv, "--out", str(out)]) == 0
    (line,) = iteration_lines(capsys.readouterr().out)
    assert line["iteration"] == 1 and line["env_steps"] >= 200
    assert line["runners_per_node"] == {}  # the driver samples alone
    assert set(line["return_mean"]) == {LEARNER, "scripted_greedy"}
    config = GameConfig(num_players=4, partner_game=True, stock_size=2, turn_limit=40)
    result = run_tournament([str(out), "greedy"], config, games=4, seed=1, workers=1, allow_pickle=True)
    assert len(result.games) == 4


def test_train_rllib_eval_every_writes_the_learning_curve_in_train_py_columns(tmp_path, capsys):
    """``--eval-every``: before training and after iterations 2 and 3 (the last) a tournament row per opponent lands in
    ``<out>/metrics.csv``, counted in the learner's own decisions; a second run into the same folder
    is refused before it trains, and the rows are kept."""
    from skipbo_env.rllib import trainer as train_rllib
    from skipbo_env.training.metrics import METRIC_FIELDS, read_rows

    out = tmp_path / "curve"
    argv = ["--env", "stock_size=3", "--env", "turn_limit=60", "--opponents", "greedy", "--no-vector", "--iterations",
            "3", "--num-env-runners", "0", "--train-batch-size", "200", "--minibatch-size", "100", "--num-epochs", "1",
            "--module", "mlp", "--hidden", "32", "--eval-every", "2", "--eval-games", "6",
            "--eval-against", "random", "greedy", "--out", str(out)]
    assert train_rllib.main(argv) == 0
    printed = capsys.readouterr().out
    lines = iteration_lines(printed)
    rows = read_rows(out / "metrics.csv")
    assert (out / "metrics.csv").read_text().splitlines()[0].split(",") == list(METRIC_FIELDS)
    assert [(int(r["timesteps"]), r["opponent"]) for r in rows] == [
        (0, "random"), (0, "greedy"),
        (lines[1]["learner_steps"], "random"), (lines[1]["learner_steps"], "greedy"),
        (lines[2]["learner_steps"], "random"), (lines[2]["learner_steps"], "greedy")]
    assert 0 < lines[1]["learner_steps"] < lines[1]["env_steps"]  # the greedy seat's moves are not the learner's
    assert all(int(r["games"]) == 6 and 0.0 <= float(r["win_rate"]) <= 1.0 for r in rows)
    assert printed.count('{"evaluation"') == 6
    assert not any((out / "evaluations").iterdir())  # each evaluation's snapshot is removed after it
    before = (out / "metrics.csv").read_bytes()
    assert train_rllib.main(argv) == 2
    assert "metrics.csv exists" in capsys.readouterr().err
    assert (out / "metrics.csv").read_bytes() == before


def test_scorer_on_the_vector_env_writes_agent_files_that_load_without_pickle(tmp_path, capsys):
    """The default module against greedy: the vector env (every sampled step the learner's), kept
    snapshots at each evaluation, and ``agent.safetensors`` that ``load_agent`` plays unpickled."""
    from skipbo_env.rllib import trainer

    out = tmp_path / "scorer"
    argv = ["--env", "stock_size=3", "--env", "turn_limit=60", "--env", "reward_shaping=true", "--opponents", "greedy",
            "--iterations", "2", "--num-env-runners", "0", "--envs-per-runner", "8", "--train-batch-size", "256",
            "--minibatch-size", "128", "--num-epochs", "1", "--eval-every", "2", "--eval-games", "6",
            "--eval-against", "random", "--out", str(out)]
    assert trainer.main(argv) == 0
    lines = iteration_lines(capsys.readouterr().out)
    assert lines[-1]["learner_steps"] == lines[-1]["env_steps"] >= 512
    assert set(lines[-1]["return_mean"]) == {"default_policy"}
    snapshots = sorted(p.name for p in (out / "snapshots").iterdir())
    assert snapshots == ["agent_000000000000.safetensors", f"agent_{lines[-1]['learner_steps']:012d}.safetensors"]
    config = GameConfig(num_players=2, stock_size=3, turn_limit=60)
    agent = load_agent(str(out / "agent.safetensors"), config)  # no allow_pickle: a safetensors agent file
    assert type(agent).__name__ != "RLlibAgent"
    result = run_tournament([str(out / "agent.safetensors"), "greedy"], config, games=4, seed=0, workers=1)
    assert len(result.games) == 4


def test_scorer_weights_go_into_the_learner_and_come_back_out():
    """``--init-from``'s path: a network's weights loaded into a built algorithm are what the learner
    and the env runner's module hold, and what :func:`scorer_net_of` returns."""
    from skipbo_env.nets import ScorerNet
    from skipbo_env.rllib.ppo_config import learner_id, load_scorer_weights, scorer_net_of

    config = GameConfig(num_players=2, stock_size=3, turn_limit=60)
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        algo = build_ppo_config(config.to_dict(), opponents=("greedy",), vector=True, num_env_runners=0,
                                envs_per_runner=2, train_batch_size=64, minibatch_size=32, num_epochs=1,
                                scorer_sizes={"context_arch": [32], "scorer_arch": [8], "value_arch": [16]},
                                ).build_algo()
        torch.manual_seed(7)
        net = ScorerNet.for_game(config, context_arch=(32,), scorer_arch=(8,), value_arch=(16,))
        mid = learner_id(vector=True)
        load_scorer_weights(algo, mid, net)
        back = scorer_net_of(algo, mid)
        for (name, a), b in zip(net.state_dict().items(), back.state_dict().values(), strict=True):
            assert torch.equal(a, b), name
        runner_net = algo.get_module(mid).net
        pairs = zip(net.state_dict().values(), runner_net.state_dict().values(), strict=True)
        assert all(torch.equal(a, b) for a, b in pairs)
        algo.stop()
    finally:
        ray.shutdown()


def test_scorer_module_masks_illegal_actions_and_scores_rows_without_any():
    """Illegal actions get the masked logit; a row with no legal action (an ended game's last
    observation, never acted on) is scored in full instead of raising; values come from the same pass."""
    from gymnasium import spaces

    from skipbo_env.nets.scorer_net import MASKED_LOGIT
    from skipbo_env.rllib.env import SkipBoRLlibVectorEnv
    from skipbo_env.rllib.modules import ScorerRLModule

    env = SkipBoRLlibVectorEnv({"num_envs": 3, "opponents": "greedy", "seed": 0})
    obs, _ = env.reset(seed=0)
    assert obs in env.observation_space and isinstance(env.single_observation_space, spaces.Dict)
    module = ScorerRLModule(observation_space=env.single_observation_space, action_space=env.single_action_space,
                            model_config={"vf_share_layers": True})  # RLlib's own keys are ignored
    mask = torch.as_tensor(obs["action_mask"])
    mask[2] = 0
    batch = {"obs": {"observations": torch.as_tensor(obs["observations"]), "action_mask": mask}}
    with torch.no_grad():
        out = module.forward_inference(batch)
        values = module.compute_values(batch)
    logits = out["action_dist_inputs"]
    assert bool((logits[:2][mask[:2] == 0] == MASKED_LOGIT).all())
    assert bool((logits[:2][mask[:2] == 1] > MASKED_LOGIT).all())
    assert bool((logits[2] > MASKED_LOGIT).all())
    assert torch.allclose(out["embeddings"], values)


def test_train_rllib_rejects_bad_module_settings(capsys):
    from skipbo_env.rllib import trainer

    assert trainer.main(["--module", "mlp", "--init-from", "ppo-2p-plus"]) == 2
    assert "--init-from starts the scorer" in capsys.readouterr().err
    assert trainer.main(["--init-from", "no/such/file.safetensors", "--num-env-runners", "0"]) == 2
    assert "no/such/file.safetensors" in capsys.readouterr().err
    assert trainer.main(["--vector", "--num-env-runners", "0"]) == 2
    assert "the vector env plays scripted opponents" in capsys.readouterr().err
    assert trainer.main(["--max-minutes", "-1"]) == 2
    assert "--max-minutes must be 0 or more" in capsys.readouterr().err


def test_train_rllib_rejects_bad_evaluation_settings(capsys):
    from skipbo_env.rllib import trainer as train_rllib

    assert train_rllib.main(["--eval-every", "-1"]) == 2
    assert "--eval-every must be 0 or more" in capsys.readouterr().err
    assert train_rllib.main(["--eval-every", "5", "--eval-games", "7"]) == 2  # 2 seatings per deal
    assert "--eval-games must be a positive multiple of 2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train_rllib.main(["--eval-every", "5", "--eval-against", "search"])  # argparse's choices
    assert "invalid choice" in capsys.readouterr().err


def test_train_rllib_script_rejects_bad_input(capsys):
    from skipbo_env.rllib import trainer as train_rllib

    assert train_rllib.main(["--env", "num_players"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err
    assert train_rllib.main(["--env", "num_players=9", "--num-env-runners", "0"]) == 2
    assert "num_players" in capsys.readouterr().err
    assert train_rllib.main(["--address", "auto", "--num-cpus", "4"]) == 2  # before connecting
    assert "--num-cpus sizes a local Ray instance" in capsys.readouterr().err
    assert train_rllib.main(["--cpus-per-runner", "0"]) == 2
    assert "cpus_per_runner must be a positive number" in capsys.readouterr().err


def test_train_rllib_notes_runners_crowded_on_one_node(capsys):
    from skipbo_env.rllib import trainer as train_rllib

    train_rllib.warn_one_node({"a" * 56: 2}, alive_nodes=1)  # a one-node instance: nothing to say
    train_rllib.warn_one_node({"a" * 56: 1, "b" * 56: 1}, alive_nodes=2)
    train_rllib.warn_one_node({"a" * 56: 1}, alive_nodes=2)  # one runner: one node is all it can use
    assert capsys.readouterr().err == ""
    train_rllib.warn_one_node({"a" * 56: 3}, alive_nodes=2)
    assert "all 3 env runners run on one of the cluster's 2 nodes" in capsys.readouterr().err


# ---------------------------------------------------------- two-node cluster
@pytest.fixture
def two_nodes():
    """A Ray head and a second Ray node on this machine, 1 CPU each, as a two-machine cluster."""
    from ray.cluster_utils import Cluster

    small = {"num_cpus": 1, "object_store_memory": 80 * 2**20}
    cluster = Cluster(initialize_head=True, head_node_args={**small, "include_dashboard": False})
    try:
        cluster.add_node(**small)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


def test_train_rllib_address_puts_runners_on_both_nodes(two_nodes, tmp_path):
    """``train_rllib.py --address`` as a user runs it (its own process, the driver): 2 env runners
    of 1 CPU each on two 1-CPU nodes, one per node, each stepping the vector env against greedy; the
    driver writes the checkpoint and the agent file, which play in tournaments (the file unpickled)."""
    out = tmp_path / "cluster"
    argv = [sys.executable, str(ROOT / "train_rllib.py"), *(f"--env={k}={v}" for k, v in TINY.items())]
    argv += ["--address", two_nodes.address, "--num-env-runners", "2", "--iterations", "1", "--opponents", "greedy"]
    argv += ["--train-batch-size", "128", "--minibatch-size", "64", "--num-epochs", "1", "--envs-per-runner", "8"]
    run = subprocess.run([*argv, "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    (line,) = iteration_lines(run.stdout)
    assert line["env_steps"] >= 100
    node_ids = [node.node_id for node in two_nodes.list_all_nodes()]
    assert len(set(node_ids)) == 2
    assert line["runners_per_node"] == {node_id[:8]: 1 for node_id in node_ids}
    assert "env runners run on one of" not in run.stderr
    config = GameConfig.from_dict(TINY)
    result = run_tournament([str(out), "random"], config, games=3, seed=0, workers=1, allow_pickle=True)
    assert len(result.games) == 3
    result = run_tournament([str(out / "agent.safetensors"), "random"], config, games=3, seed=0, workers=1)
    assert len(result.games) == 3
