"""The shipped 2-player PPO agent (ppo-2p, skipbo_env/models/ppo_2p_default.safetensors) loads, plays legal
moves and plays exactly like the checkpoint it was converted from."""

from __future__ import annotations

import hashlib

import pytest

from agents import CheckpointError, load_agent, make_agent, shipped_agent_path
from skipbo_env.encoding import decode_action, observe
from skipbo_env.episode import decisions
from skipbo_env.rules import GameConfig, new_game

MODEL = shipped_agent_path("ppo-2p")

SOURCE_SHA256 = "d2fbbeb4904f48869d72f585bbc2bb4a82c22394be0c9f87d613b69f26c6c0fe"
"""sha256 of models/ppo_2p_default.zip, the pickled checkpoint the agent file was exported from
(``train.py --export ... --allow-pickle``); the zip is no longer shipped and stays in git history."""
PINNED_GAMES = 8
PINNED_POSITIONS = 2611
PINNED_ACTIONS = "b635767c5b5125b4c91b989ea2ce538f4d5ee59657888d203190c9c6b88e55d3"
"""sha256 of the actions the zip chose at every position (both seats) of :func:`_actions`' games. The
agent file gave the same logits, bit for bit, at all of them (and at 1,422 more) when it was made; to
recompute, run ``_actions`` with ``PPOAgent(zip, GameConfig(), allow_pickle=True)`` on the zip from
git history."""


def _actions(agent, games: int = PINNED_GAMES) -> tuple[int, str]:
    """Positions and the sha256 of ``agent``'s actions at every position of ``games`` games
    against the heuristic (``agent`` moves in seat 0 of even games and seat 1 of odd ones)."""
    config = GameConfig(num_players=2)
    digest, positions = hashlib.sha256(), 0
    for game in range(games):
        seats = [agent, make_agent("heuristic", config, seed=game)]
        for decision in decisions(new_game(config, seed=game), seats if game % 2 == 0 else seats[::-1]):
            digest.update(agent.act(decision.observation).to_bytes(2, "little"))
            positions += 1
    return positions, digest.hexdigest()


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


def test_shipped_model_is_a_safe_agent_file_with_its_provenance():
    agent = load_agent(str(MODEL), GameConfig())
    desc = agent.description
    assert agent.model is None and desc["policy"]["kind"] == "scorer"
    assert desc["provenance"] == {"source": "ppo_2p_default.zip", "source_sha256": SOURCE_SHA256,
                                  "timesteps": 4_400_000}
    assert GameConfig.from_dict(desc["game"]) == GameConfig(num_players=2)


def test_shipped_model_plays_move_for_move_like_the_checkpoint_it_came_from():
    assert _actions(load_agent(str(MODEL), GameConfig())) == (PINNED_POSITIONS, PINNED_ACTIONS)


def test_shipped_model_refuses_another_game_size():
    with pytest.raises(CheckpointError, match="observation shape"):
        load_agent(str(MODEL), GameConfig(num_players=4))
