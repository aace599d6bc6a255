"""Value networks (skipbo_env.agents.valuenet), their recipe (skipbo_env.training.value_recipe) and the
search agent's use of them: safe files that refuse bad input by name, self-play positions with
their winners, a tiny end-to-end run of the recipe's config, and the 6-player search's default
value (docs/search.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support import TINY_VALUE_RECIPE, check_recipe_resumes, rewrite_net_file

from skipbo_env.agents import CheckpointError, SearchAgent, SearchSettings, load_agent
from skipbo_env.agents.netfile import MLP
from skipbo_env.agents.shipped import SHIPPED_VALUES, shipped_value_path
from skipbo_env.agents.turnnet import write_turn_net
from skipbo_env.agents.valuenet import (
    METADATA_KEY,
    ValueNet,
    is_value_file,
    load_value_net,
    write_value_net,
)
from skipbo_env.encoding import observation_layout, observe
from skipbo_env.rules import GameConfig, new_game

pytest.importorskip("safetensors")
pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[1]
SIX = GameConfig(num_players=6)


def _search(config: GameConfig, seed: int | None = None, **settings) -> SearchAgent:
    return SearchAgent(config, seed, SearchSettings(**settings))


def _random_net(config: GameConfig, seed: int = 0, hidden: tuple[int, ...] = (16,)) -> MLP:
    rng = np.random.default_rng(seed)
    size = observation_layout(config).size
    sizes = [size, *hidden, 1]
    layers = [(rng.normal(0, 1 / np.sqrt(a), (b, a)).astype(np.float32), rng.normal(0, 0.1, b).astype(np.float32))
              for a, b in zip(sizes, sizes[1:], strict=False)]
    return MLP(np.zeros(size), np.full(size, 0.5), layers)


@pytest.fixture
def value_file(tmp_path: Path) -> Path:
    return write_value_net(tmp_path / "value.safetensors", _random_net(SIX), SIX, {"test": True})


def test_value_file_round_trip_and_win_chance(value_file):
    net = load_value_net(value_file, SIX)
    assert isinstance(net, ValueNet) and net.game == SIX and net.description["provenance"] == {"test": True}
    state = new_game(SIX, seed=3)
    obs = np.stack([observe(state, seat)["observation"] for seat in range(6)])
    chance = net.win_chance(obs)
    assert chance.shape == (6,) and np.all((chance > 0) & (chance < 1))
    assert np.ptp(chance) > 0  # the seats' observations differ
    assert is_value_file(value_file) and not is_value_file(ROOT / "skipbo_env" / "models" / "turn_2p.safetensors")


@pytest.mark.parametrize(("change", "message"), [
    ({"desc": lambda d: {**d, "observation_version": 2}}, "observation_version 2"),
    ({"desc": lambda d: {**d, "observation": "v2"}}, "trained on observation 'v2', but this code's value files read "
                                                      "observation 'v1'"),
    ({"desc": lambda d: {**d, "format": "skipbo-turn-agent"}}, "format 'skipbo-turn-agent'"),
    ({"desc": lambda d: {**d, "game": {**d["game"], "num_players": 4}}}, "made for"),
    ({"desc": lambda d: {**d, "hidden": [17]}}, "tensor layers.0.weight"),
    ({"tensors": lambda t: {**t, "std": -t["std"]}}, "std must be positive"),
    ({"tensors": lambda t: {**t, "layers.1.bias": np.full(1, np.inf, np.float32)}}, "NaN or infinite"),
])
def test_bad_value_files_are_refused_by_name(value_file, tmp_path, change, message):
    bad = rewrite_net_file(value_file, tmp_path / "bad.safetensors", METADATA_KEY, **change)
    with pytest.raises(CheckpointError, match=message) as info:
        load_value_net(bad, SIX)
    assert "bad.safetensors" in str(info.value)


def test_a_value_file_records_its_observation_and_one_without_it_is_v1(value_file, tmp_path):
    assert load_value_net(value_file, SIX).description["observation"] == "v1"
    old = rewrite_net_file(value_file, tmp_path / "old.safetensors", METADATA_KEY,
                           desc=lambda d: {k: v for k, v in d.items() if k != "observation"})
    assert load_value_net(old, SIX).description["observation"] == "v1"


def test_value_files_are_not_agents_and_other_files_are_not_value_files(value_file, tmp_path):
    with pytest.raises(CheckpointError, match="a value file .* not an agent file"):
        load_agent(str(value_file), SIX)
    with pytest.raises(ValueError, match="'value-6p' is a shipped value network, not an agent"):
        load_agent("value-6p", SIX)
    turn = write_turn_net(tmp_path / "turn.safetensors",
                          MLP(np.zeros(308), np.ones(308), [(np.zeros((2, 308), np.float32), np.zeros(2, np.float32)),
                                                            (np.zeros((1, 2), np.float32), np.zeros(1, np.float32))]),
                          GameConfig(), {})
    with pytest.raises(CheckpointError, match="without the 'skipbo_value_net' description"):
        load_value_net(turn)
    with pytest.raises(CheckpointError, match="must end in"):
        write_value_net(tmp_path / "value.bin", _random_net(SIX), SIX, {})
    with pytest.raises(CheckpointError, match="do not fit 805 inputs"):
        write_value_net(tmp_path / "value4.safetensors", _random_net(SIX), GameConfig(num_players=4), {})


def test_shipped_value_network_is_the_6_player_search_default():
    from skipbo_env.agents.search import DEFAULT_VALUES

    assert set(SHIPPED_VALUES) == {"value-6p"}
    path = shipped_value_path("value-6p")
    assert path.is_file() and (path.parent / "value-6p.md").is_file()
    net = load_value_net(path, SIX)
    assert net.description["provenance"]["recipe"] == "value"
    agent = _search(SIX, worlds=2, candidates=2)
    assert agent.settings.depth == 1 and agent.settings.value == DEFAULT_VALUES[6] == 36.0 and agent.value_net == path
    assert _search(GameConfig(num_players=4), worlds=2, candidates=2).settings.value == 0.0  # no network for 4 players
    # the shipped network reads the classic game: a variant searches without it unless told
    short = GameConfig(num_players=6, short_game=True)
    assert _search(short, worlds=2, candidates=2).settings.value == 0.0
    with pytest.raises(CheckpointError, match="made for"):
        _search(short, worlds=2, candidates=2, value_net=path)
    assert _search(GameConfig(num_players=6, first_player=2), worlds=2, candidates=2).settings.value == 36.0
    # a value network reads any seat's turn start, so it may score after the next seat's turn alone;
    # an agent's value head may not
    from skipbo_env.agents.registry import shipped_agent_path

    with pytest.raises(ValueError, match="value head cannot read the position"):
        _search(GameConfig(num_players=3), depth=1, value=1.0, value_net=shipped_agent_path("ppo-2p"))


def test_search_scores_add_the_win_chance(value_file):
    state = new_game(SIX, seed=2)
    view = state.view(state.current)
    plain = _search(SIX, seed=3, worlds=4, candidates=4, value=0.0)
    valued = _search(SIX, seed=3, worlds=4, candidates=4, value=33.0, value_net=value_file)
    paths, base = plain.score_candidates(view)
    same_paths, scores = valued.score_candidates(view)
    assert same_paths == paths and len(paths) > 1
    diff = scores - base  # same worlds (same seed): the value term alone, 33 × a chance
    assert np.ptp(diff) > 0 and np.all((diff >= 0) & (diff <= 33.0))
    running = ~valued._engine.done
    chance = valued._learned_value(running, view.seat)
    assert np.all((chance[running] > 0) & (chance[running] < 1)) and np.all(chance[~running] == 0)


def test_self_play_positions_carry_their_seat_and_winner():
    from skipbo_env.training.value_recipe import self_play_positions

    config = GameConfig(num_players=3, short_game=True)
    out = self_play_positions(config, 30, seed=5, share=0.5, draw=np.random.default_rng(1))
    again = self_play_positions(config, 30, seed=5, share=0.5, draw=np.random.default_rng(1))
    assert all(np.array_equal(out[k], again[k]) for k in out)  # same seeds, same positions
    layout = observation_layout(config)
    obs = out["obs"]
    assert obs.dtype == np.float32 and obs.shape[1] == layout.size and len(obs) > 100
    assert np.all(obs >= layout.low) and np.all(obs <= layout.high)
    labelled = {}
    for g, s, y in zip(out["game"].tolist(), out["seat"].tolist(), out["y"].tolist(), strict=True):
        labelled.setdefault(g, {}).setdefault(s, set()).add(y)
    for seats in labelled.values():
        assert all(len(ys) == 1 for ys in seats.values())  # one label per game and seat
        assert sum(1 for ys in seats.values() if 1.0 in ys) <= 1  # at most one winner a game
    # the eventual winner holds fewer stock cards than the others at the same point of the game, on average
    own = layout.view(obs, "seat0.stock_size")[:, 0]
    assert own[out["y"] == 1].mean() < own[out["y"] == 0].mean()




def test_field_positions_seat_the_drawn_agents_and_label_the_winner():
    """Games of a mixed field on the rules layer: reproducible, the engine's observation vector,
    one label per game and seat, at most one winner a game, and seats drawn from the field."""
    from skipbo_env.training.value_recipe import field_positions

    config = GameConfig(num_players=3, short_game=True)
    field = ("stock-chaser", "hand-emptier", "blocker")
    out = field_positions(config, 8, seed=5, share=0.5, field=field, draw=np.random.default_rng(1))
    again = field_positions(config, 8, seed=5, share=0.5, field=field, draw=np.random.default_rng(1))
    assert all(np.array_equal(out[k], again[k]) for k in out)
    layout = observation_layout(config)
    obs = out["obs"]
    assert obs.dtype == np.float32 and obs.shape[1] == layout.size and len(obs) > 20
    assert np.all(obs >= layout.low) and np.all(obs <= layout.high)
    assert set(np.unique(out["game"]).tolist()) <= set(range(8)) and np.all((out["seat"] >= 0) & (out["seat"] < 3))
    for g in np.unique(out["game"]):
        rows = out["game"] == g
        winners = set(out["seat"][rows & (out["y"] == 1)].tolist())
        assert len(winners) <= 1
        for seat in np.unique(out["seat"][rows]):
            assert len(set(out["y"][rows & (out["seat"] == seat)].tolist())) == 1
    # with share 1 every turn start gives a position: the first is game 0's deal, seen by the drawn seat
    from skipbo_env.agents.registry import derive_seed
    from skipbo_env.encoding import encode_view

    every = field_positions(config, 1, seed=5, share=1.0, field=field, draw=np.random.default_rng(1))
    deal = new_game(config, seed=derive_seed(5, 0))
    assert np.array_equal(every["obs"][0], encode_view(deal.view(int(every["seat"][0]))))
    assert len(every["y"]) > 10
    other = field_positions(config, 8, seed=6, share=0.5, field=field, draw=np.random.default_rng(1))
    assert not np.array_equal(other["y"], out["y"]) or len(other["y"]) != len(out["y"])


def test_recipe_config_runs_end_to_end_and_resumes(tmp_path, capsys):
    """A tiny version of configs/value_6p.yaml, through train.py's command line: positions, fit,
    export; the same command again reuses the finished shards and gives the same network; a
    changed setting under the same run name is refused; a corrupt shard is refused by name."""
    pytest.importorskip("torch")
    from skipbo_env.training import commands

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_VALUE_RECIPE.format(runs=tmp_path / "runs", games=30, workers=1))
    assert commands.main(["--config", str(config), "--no-progress"]) == 0
    run = tmp_path / "runs" / "tiny"
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["fit"]["positions"] > 100 and metrics["fit"]["heldout_positions"] > 0
    assert np.isfinite(metrics["checks"]["heldout_loss"]) and np.isfinite(metrics["checks"]["stock_card_gain"])
    assert (run / "fit.csv").read_text().count("\n") == 3
    short = GameConfig(num_players=6, short_game=True)
    assert load_value_net(run / "value.safetensors", short).description["provenance"]["recipe"] == "value"
    check_recipe_resumes(commands.main, config, run, "value.safetensors", "positions", "not a position shard", capsys)


@pytest.mark.parametrize(("override", "message"), [
    ({"positions.share": 0.0}, "positions.share"),
    ({"positions.games": 0}, "positions.games"),
    ({"fit.holdout": 1.0}, "fit.holdout"),
    ({"fit.hidden": []}, "fit.hidden"),
    ({"positions.field": []}, "positions.field"),
    ({"positions.field": ["heuristic", "nobody"]}, "unknown agent 'nobody'"),
    ({"positions.field": "heuristic"}, "positions.field"),
    ({"bogus": 1}, "unknown key"),
])
def test_recipe_config_errors_name_the_key(override, message):
    from skipbo_env.rules import ConfigError
    from skipbo_env.training.recipe_settings import ValueNetConfig

    with pytest.raises(ConfigError, match=message):
        ValueNetConfig.from_yaml(ROOT / "configs" / "value_6p.yaml", override)


def test_an_unknown_recipe_is_refused_by_name(tmp_path, capsys):
    from skipbo_env.training import commands

    config = tmp_path / "odd.yaml"
    config.write_text("recipe: distill\nname: odd\n")
    assert commands.main(["--config", str(config)]) == 2
    assert "unknown recipe 'distill'" in capsys.readouterr().err
