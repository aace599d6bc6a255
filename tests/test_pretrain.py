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
