"""The turn network (skipbo_env.agents.turnnet) and its recipe (skipbo_env.training.turn_recipe):
features read only the seat's view, legal and deterministic play, safe agent files that refuse
bad input by name, and a tiny end-to-end run of the recipe's config."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support import TINY_TURN_RECIPE, check_recipe_resumes, choice_positions, rewrite_net_file

from skipbo_env.agents import CheckpointError, load_agent
from skipbo_env.agents.turnnet import (
    FEATURE_SIZE,
    METADATA_KEY,
    TurnNet,
    TurnNetAgent,
    candidate_features,
    is_turn_agent_file,
    load_turn_net,
    turn_features,
    write_turn_net,
)
from skipbo_env.agents.turns import TopK
from skipbo_env.bots.heuristic import DEFAULT_WEIGHTS
from skipbo_env.encoding import decode_action, fields_from_view, num_actions
from skipbo_env.episode import decisions
from skipbo_env.rules import Discard, GameConfig, Play, Source, new_game, sample_state

pytest.importorskip("safetensors")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]


def _random_net(seed: int = 0, hidden: tuple[int, ...] = (16, 8)) -> TurnNet:
    rng = np.random.default_rng(seed)
    sizes = [FEATURE_SIZE, *hidden, 1]
    layers = [(rng.normal(0, 1 / np.sqrt(a), (b, a)).astype(np.float32), rng.normal(0, 0.1, b).astype(np.float32))
              for a, b in zip(sizes, sizes[1:], strict=False)]
    return TurnNet(rng.normal(0, 0.1, FEATURE_SIZE), np.full(FEATURE_SIZE, 0.5), layers)


@pytest.fixture
def net_file(tmp_path: Path) -> Path:
    return write_turn_net(tmp_path / "net.safetensors", _random_net(), GameConfig(), {"test": True})


def _positions(count: int):
    """Positions with a real choice from 2-player heuristic games (the mover to play)."""
    return choice_positions(GameConfig(), count, first_seed=300, games=60, max_stop=250)


def _candidates(view):
    return TopK(fields_from_view(view), view.config, DEFAULT_WEIGHTS, 12, 4).top()


def test_features_read_only_the_view():
    """Redrawing every card the seat cannot see (other hand, stocks below their tops, draw pile,
    the order of the completed pile) leaves the features of every candidate unchanged (R3, R4)."""
    rng = np.random.default_rng(1)
    changed = 0
    for state in _positions(12):
        seat = state.current
        view = state.view(seat)
        found = _candidates(view)
        first = candidate_features(view, found, 12)
        assert first.shape == (len(found), FEATURE_SIZE) and np.isfinite(first).all()
        for _ in range(2):
            world = sample_state(view, rng)
            changed += world.hand_cards(1 - seat) != state.hand_cards(1 - seat)
            other = world.view(seat)
            assert np.array_equal(candidate_features(other, _candidates(other), 12), first)
    assert changed > 12  # the hidden cards really were redrawn


def test_feature_layout_marks_how_the_turn_ends():
    """The end-of-turn flags (a stock play, an emptied hand, a discard, an end of turn) and the
    stock flags follow the candidate's last move (docs/agents.md, "turn-2p")."""
    ends = slice(271, 275)  # see the layout table in docs/agents.md
    seen = set()
    for state in _positions(30):
        view = state.view(state.current)
        for value, path in _candidates(view):
            row = turn_features(view, path, value, 0, False)
            flags = row[ends]
            assert flags.sum() == 1.0
            last = path[-1]
            if isinstance(last, Discard):
                assert flags[2] == 1.0
                seen.add("discard")
            elif isinstance(last, Play) and last.source is Source.STOCK:
                assert flags[0] == 1.0 and row[48 + 14 + 13] == 1.0  # stock played: its next card is unknown
                assert not row[48 + 14:48 + 14 + 13].any()
                seen.add("stock")
    assert {"discard", "stock"} <= seen


def test_agent_plays_legal_deterministic_games(net_file):
    """Every action is legal (decisions() raises on an illegal one) and the same seed gives the
    same game."""
    config = GameConfig()

    def play(seed: int) -> list[int]:
        agent = TurnNetAgent(net_file, config, seed=seed)
        other = load_agent("heuristic", config, seed=seed)
        state = new_game(config, seed=seed)
        return [d.action for d in decisions(state, [agent, other])]

    first = play(4)
    assert first == play(4) and len(first) > 20


def test_decision_ignores_hidden_cards(net_file):
    config = GameConfig()
    rng = np.random.default_rng(2)
    for state in _positions(8):
        seat = state.current
        a = TurnNetAgent(net_file, config).act_view(state.view(seat))
        b = TurnNetAgent(net_file, config).act_view(sample_state(state.view(seat), rng).view(seat))
        assert a == b


def test_agent_file_round_trip_and_dispatch(net_file):
    net, desc = load_turn_net(net_file, GameConfig())
    x = np.random.default_rng(0).normal(size=(5, FEATURE_SIZE)).astype(np.float32)
    assert np.allclose(net.scores(x), _random_net().scores(x))
    assert desc["hidden"] == [16, 8] and desc["provenance"] == {"test": True}
    assert is_turn_agent_file(net_file)
    assert isinstance(load_agent(str(net_file), GameConfig()), TurnNetAgent)  # told by its header
    assert not is_turn_agent_file(ROOT / "skipbo_env" / "models" / "ppo_2p_default.safetensors")


def test_shipped_turn_agent_loads_by_name():
    agent = load_agent("turn-2p", GameConfig())
    assert isinstance(agent, TurnNetAgent)
    assert agent.description["provenance"]["recipe"] == "turnnet"
    state = new_game(GameConfig(), seed=1)
    assert state.is_legal(decode_action(agent.act_view(state.view(state.current)), GameConfig()))
    with pytest.raises(ValueError, match="2-player"):
        load_agent("turn-2p", GameConfig(num_players=3))


@pytest.mark.parametrize(("change", "message"), [
    ({"desc": lambda d: {**d, "features_version": 99}}, "features_version 99"),
    ({"desc": lambda d: {**d, "format": "other"}}, "format 'other'"),
    ({"desc": lambda d: {k: v for k, v in d.items() if k != "hidden"}}, "misses"),
    ({"desc": lambda d: {**d, "extra": 1}}, "unknown keys"),
    ({"desc": lambda d: {**d, "hidden": [16, -1]}}, "hidden must be"),
    ({"desc": lambda d: {**d, "hidden": [16, 9]}}, "tensor layers.1.weight"),
    ({"desc": lambda d: {**d, "game": {**d["game"], "num_players": 3}}}, "made for"),
    ({"tensors": lambda t: {**t, "std": np.zeros(FEATURE_SIZE, np.float32)}}, "std must be positive"),
    ({"tensors": lambda t: {**t, "mean": np.full(FEATURE_SIZE, np.nan, np.float32)}}, "NaN"),
    ({"tensors": lambda t: {k: v for k, v in t.items() if k != "layers.2.bias"}}, "tensors"),
    ({"tensors": lambda t: {**t, "mean": t["mean"].astype(np.float64)}}, "float32"),
])
def test_bad_agent_files_are_refused_by_name(net_file, tmp_path, change, message):
    bad = rewrite_net_file(net_file, tmp_path / "bad.safetensors", METADATA_KEY, **change)
    with pytest.raises(CheckpointError, match=message) as info:
        load_turn_net(bad, GameConfig())
    assert "bad.safetensors" in str(info.value)


def test_unreadable_and_missing_files(tmp_path):
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(CheckpointError, match="unreadable header"):
        load_turn_net(garbage)
    with pytest.raises(CheckpointError, match="no such"):
        load_turn_net(tmp_path / "missing.safetensors")
    with pytest.raises(CheckpointError, match="without the"):
        load_turn_net(ROOT / "skipbo_env" / "models" / "ppo_2p_default.safetensors")
    with pytest.raises(CheckpointError, match="must end in"):
        write_turn_net(tmp_path / "net.bin", _random_net(), GameConfig(), {})


def test_agent_refuses_other_tables(net_file):
    with pytest.raises(ValueError, match="2-player"):
        TurnNetAgent(net_file, GameConfig(num_players=4, partner_game=True))
    with pytest.raises(ValueError, match="act_view"):
        TurnNetAgent(net_file, GameConfig()).act({"observation": None})


def test_views_of_other_rules_are_refused_but_who_deals_first_is_not(net_file):
    """A match rotates the first player (the browser table does): the same agent plays every game
    of it; a view of other rules (here stocks of 20) is refused by name."""
    agent = TurnNetAgent(net_file, GameConfig())
    state = new_game(GameConfig(first_player=1), seed=4)
    assert 0 <= agent.act_view(state.view(state.current)) < num_actions(GameConfig())
    other = new_game(GameConfig(stock_size=20), seed=4)
    with pytest.raises(ValueError, match="differs from the agent's"):
        agent.act_view(other.view(other.current))


# ---------------------------------------------------------------------------- the recipe


def test_recipe_config_runs_end_to_end_and_resumes(tmp_path, capsys):
    """A tiny version of configs/turnnet_2p.yaml, through train.py's command line: labels, fit,
    export, check; the same command again reuses the finished label shards; a changed setting
    under the same run name is refused; the shipped config loads."""
    pytest.importorskip("numba")
    from skipbo_env.training import commands
    from skipbo_env.training.recipe_settings import TurnNetConfig

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_TURN_RECIPE.format(runs=tmp_path / "runs"))
    assert commands.main(["--config", str(config), "--no-progress"]) == 0
    run = tmp_path / "runs" / "tiny"
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["checks"]["heuristic"]["games"] == 2 and metrics["fit"]["positions"] > 10
    assert (run / "fit.csv").read_text().count("\n") == 3
    agent = load_agent(str(run / "turnnet.safetensors"), GameConfig())
    assert isinstance(agent, TurnNetAgent)
    check_recipe_resumes(commands.main, config, run, "turnnet.safetensors", "labels", "not a label shard", capsys)
    shipped = TurnNetConfig.from_yaml(ROOT / "configs" / "turnnet_2p.yaml")
    assert shipped.labels.teacher.startswith("search")


def test_recipe_fine_tunes_from_the_shipped_turn_network(tmp_path, capsys):
    """``fit.init: turn-2p``: the fit starts from the shipped weights and keeps their input
    standardization; fit.csv's epoch 0 measures the shipped network itself, and at a step size of
    almost nothing the exported network scores candidates as ``turn-2p`` does."""
    pytest.importorskip("numba")
    from skipbo_env.agents.shipped import shipped_agent_path
    from skipbo_env.agents.turnnet import candidate_features, load_turn_net
    from skipbo_env.training import commands

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_TURN_RECIPE.format(runs=tmp_path / "runs").replace(
        "  hidden: [8]\n", "  hidden: [128, 64]\n  init: turn-2p\n  learning_rate: 1.0e-9\n"))
    assert commands.main(["--config", str(config), "--no-progress"]) == 0
    run = tmp_path / "runs" / "tiny"
    fit_rows = (run / "fit.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in fit_rows[1:]] == ["0", "1", "2"]
    shipped, _ = load_turn_net(shipped_agent_path("turn-2p"), GameConfig())
    tuned, description = load_turn_net(run / "turnnet.safetensors", GameConfig())
    assert np.array_equal(tuned.mean, shipped.mean) and np.array_equal(tuned.std, shipped.std)
    assert description["provenance"]["config"]["fit"]["init"] == "turn-2p"
    state = next(iter(_positions(1)))
    view = state.view(state.current)
    rows = candidate_features(view, _candidates(view), 12)
    np.testing.assert_allclose(tuned.scores(rows), shipped.scores(rows), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("init", "message"), [
    ("ppo-2p", "'ppo-2p' is not a turn-agent file or a shipped turn agent"),
    ("no/such/file.safetensors", "not a turn-agent file"),
    ("turn-2p", "set fit.hidden to its hidden sizes"),  # the tiny recipe's fit.hidden is [8]
])
def test_recipe_refuses_a_starting_network_it_cannot_fine_tune_before_labelling(tmp_path, capsys, init, message):
    from skipbo_env.training import commands

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_TURN_RECIPE.format(runs=tmp_path / "runs").replace("  hidden: [8]\n",
                                                                             f"  hidden: [8]\n  init: {init}\n"))
    assert commands.main(["--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "fit.init" in err and message in err
    assert not (tmp_path / "runs").exists()  # nothing was played or written


@pytest.mark.parametrize(("override", "message"), [
    ({"labels.teacher": "heuristic"}, "labels.teacher"),
    ({"game.num_players": 3}, "2-player"),
    ({"labels.lineups": [["heuristic", "nobody"]]}, "unknown agent"),
    ({"fit.holdout": 1.5}, "fit.holdout"),
    ({"fit.dropout": 1.0}, "fit.dropout"),
    ({"eval.games": 3}, "eval.games"),
    ({"bogus": 1}, "unknown key"),
])
def test_recipe_config_errors_name_the_key(tmp_path, override, message):
    from skipbo_env.rules import ConfigError
    from skipbo_env.training.recipe_settings import TurnNetConfig

    with pytest.raises(ConfigError, match=message):
        TurnNetConfig.from_yaml(ROOT / "configs" / "turnnet_2p.yaml", override)


def test_two_networks_add_the_policy_log_probability_to_the_turn_scores(net_file):
    """With a policy network: the turn network's log-softmax over the candidates plus ``policy`` times the
    policy network's log-probability of each candidate; its own turn joins the candidates."""
    from skipbo_env.agents.turns import path_log_probs, policy_turn

    config = GameConfig()
    ppo = load_agent("ppo-2p-plus", config)
    alone = TurnNetAgent(net_file, config)
    pair = TurnNetAgent(net_file, config, policy=0.5, policy_net=ppo)
    joined = 0
    for state in _positions(12):
        view = state.view(state.current)
        found = pair._candidates(view, view.legal_moves())
        base = alone._candidates(view, view.legal_moves())
        own = policy_turn(ppo, view)
        assert found[:len(base)] == base and own in [path for _, path in found]
        joined += len(found) - len(base)
        turn = alone._scores(view, found).astype(np.float64)
        turn = turn - turn.max() - np.log(np.exp(turn - turn.max()).sum())
        want = turn + 0.5 * path_log_probs(ppo, view, [path for _, path in found])
        np.testing.assert_allclose(pair._scores(view, found), want, atol=1e-9)
    assert joined > 0


def test_two_networks_options_are_checked():
    config = GameConfig()
    path = load_agent("turn-2p", config).path
    for bad in (-1.0, float("nan"), float("inf"), True, "1"):
        with pytest.raises(ValueError, match="policy must be a finite weight >= 0"):
            TurnNetAgent(path, config, policy=bad, policy_net=load_agent("ppo-2p-plus", config))
    with pytest.raises(ValueError, match="policy > 0 needs a policy_net"):
        TurnNetAgent(path, config, policy=0.5)
    plain = TurnNetAgent(path, config, policy=0.0, policy_net=load_agent("ppo-2p-plus", config))
    assert plain.policy_net is None  # weight 0: the turn network alone
