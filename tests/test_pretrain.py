"""Behaviour cloning's teachers (skipbo_env/training/pretrain.py): which agents may teach, and the
shipped turn network (turn-2p) labelling its own games and the positions another player reached."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_same_legal_demonstrations

from skipbo_env.rules import ConfigError, GameConfig
from skipbo_env.training.pretrain import collect
from skipbo_env.training.settings import TrainConfig

GAME = GameConfig(num_players=2)  # turn-2p plays the standard 2-player game only


def test_turn_network_may_be_the_teacher_of_a_config():
    assert TrainConfig.from_dict({"pretrain": {"teacher": "turn-2p"}}).pretrain.teacher == "turn-2p"


def test_a_shipped_network_that_does_not_read_views_is_refused_as_teacher():
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_dict({"pretrain": {"teacher": "ppo-2p"}})
    assert err.value.field == "pretrain.teacher" and "cannot teach" in str(err.value)
    with pytest.raises(ConfigError) as err:  # collect itself, called without a config
        collect(GAME, "ppo-2p", {"greedy": 1}, 1, seed=0, gamma=0.99, shaping=False, progress=False)
    assert err.value.field == "pretrain.teacher"


def test_turn_network_teaches_its_own_decisions_seeded_and_legal():
    one = collect(GAME, "turn-2p", {"greedy": 1}, 2, seed=4, gamma=0.99, shaping=True, progress=False)
    two = collect(GAME, "turn-2p", {"greedy": 1}, 2, seed=4, gamma=0.99, shaping=True, progress=False)
    assert one.games == 2
    planner = collect(GAME, "heuristic", {"greedy": 1}, 2, seed=4, gamma=0.99, shaping=True, progress=False)
    assert_same_legal_demonstrations(one, two, planner)


def test_turn_network_labels_the_positions_another_player_reached():
    """DAgger's labelling: the student (here greedy) moves, turn-2p labels each position from its view."""
    demos = collect(GAME, "turn-2p", {"greedy": 1}, 2, seed=4, gamma=0.99, shaping=False, progress=False,
                    student="greedy")
    assert demos.games == 2 and len(demos.actions) > 0
    assert demos.masks[np.arange(len(demos.actions)), demos.actions].all()
    assert 0 < demos.agreed < len(demos.actions)  # greedy and the turn network part ways somewhere


@pytest.mark.parametrize("name", ["quick", "fast_2p"])
def test_the_turn_network_recipes_run_at_small_scale(tmp_path, name):
    """configs/quick.yaml and configs/fast_2p.yaml (turn-2p cloned with a DAgger round, then PPO), in one
    call with a few games and steps: the recipe's teacher, opponents and evaluation opponent kept."""
    import csv
    import json
    from pathlib import Path

    from skipbo_env.training.run import train as run_training

    recipe = TrainConfig.from_yaml(Path(__file__).resolve().parents[1] / "configs" / f"{name}.yaml")
    assert recipe.pretrain.teacher == "turn-2p" and recipe.pretrain.dagger_rounds == 1
    data = recipe.to_dict()
    data.update(runs_dir=str(tmp_path), total_timesteps=128, n_envs=2, checkpoint_every=128, threads=1)
    data["ppo"].update(n_steps=64, batch_size=64, n_epochs=1)
    data["eval"].update(every=128, games=2, workers=1)
    data["pretrain"].update(games=2, epochs=1, dagger_games=1, workers=1, batch_size=64)
    assert run_training(TrainConfig.from_dict(data), progress=False)["timesteps"] == 128
    stats = json.loads((tmp_path / name / "pretrain.json").read_text())
    assert [r["round"] for r in stats["rounds"]] == [0, 1]
    assert stats["rounds"][1]["samples"] > stats["rounds"][0]["samples"] > 0
    with open(tmp_path / name / "metrics.csv", newline="") as fh:
        against = {(int(r["timesteps"]), r["opponent"]) for r in csv.DictReader(fh)}
    assert against == {(t, who) for t in (0, 128) for who in recipe.eval.agents}
