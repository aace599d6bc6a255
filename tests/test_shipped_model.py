"""The shipped 2-player PPO agent (models/ppo_2p_default.zip) loads and plays legal moves (issue 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from agents.ppo import CheckpointError

from agents import load_agent
from skipbo_env.encoding import decode_action, observe
from skipbo_env.rules import GameConfig, new_game

MODEL = Path(__file__).resolve().parents[1] / "models" / "ppo_2p_default.zip"


def test_shipped_model_plays_full_games_with_legal_moves():
    config = GameConfig(num_players=2)
    ppo = load_agent(str(MODEL), config)
    greedy = load_agent("greedy", config, seed=1)
    for seed in range(3):
        state = new_game(config, seed=seed)
        ppo_moves = 0
        while not state.is_over:
            seat = state.current
            obs = observe(state, seat)
            action = (ppo if seat == seed % 2 else greedy).act(obs)
            assert obs["action_mask"][action] == 1
            state.apply(decode_action(action, config))  # raises on an illegal move
            ppo_moves += seat == seed % 2
        assert ppo_moves > 10


def test_shipped_model_refuses_another_game_size():
    with pytest.raises(CheckpointError, match="observation shape"):
        load_agent(str(MODEL), GameConfig(num_players=4))
