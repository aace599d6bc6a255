"""Agents: the protocol, no peeking, legal play in every configuration,
the scripted decision rules on hand-built positions, and PPO checkpoints."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from agents.heuristic import HeuristicAgent, placement_score, reach_chance
from conftest import W, make_state
from support import TinyEnv

from agents import AGENTS, Agent, AgentBase, CheckpointError, PPOAgent, load_agent, make_agent
from skipbo_env.encoding import (
    decode_action,
    encode_action,
    observe,
)
from skipbo_env.rules import Discard, GameConfig, GameState, Play, Source, new_game

SCRIPTED = sorted(AGENTS)


def _first_obs(config: GameConfig, seed: int = 0):
    state = new_game(config, seed)
    return state, observe(state, state.current)


def _moves(agent, state: GameState, count: int) -> list:
    """Let ``agent`` play ``count`` moves of the seat to move (the game must stay on that seat)."""
    out = []
    for _ in range(count):
        move = decode_action(agent.act(observe(state, state.current)), state.config)
        out.append(move)
        state.apply(move)
    return out


# ==================================================================== protocol
@pytest.mark.parametrize("name", SCRIPTED)
def test_scripted_agents_follow_the_protocol(name):
    config = GameConfig()
    state, obs = _first_obs(config)
    agent = make_agent(name, config, seed=7)
    assert isinstance(agent, Agent)
    action = agent.act(obs)
    assert type(action) is int and obs["action_mask"][action] == 1
    agent.seed(7)
    again = agent.act(obs)
    agent.seed(7)
    assert agent.act(obs) == again  # same seed, same choice
    waiting = observe(state, (state.current + 1) % 2)
    with pytest.raises(ValueError, match="not to move"):
        agent.act(waiting)
    with pytest.raises(ValueError, match="action_mask"):
        agent.act({"observation": obs["observation"]})


@pytest.mark.parametrize("spec, batched, reads_view", [
    ("random", False, True), ("greedy", False, True), ("heuristic", False, True),
    ("ppo-2p", True, False), ("ppo-2p-plus", True, False), ("turn-2p", False, True), ("turn-2p-plus", False, True),
    ("search", False, True),
])
def test_every_shipped_agent_declares_how_the_game_loops_ask_it(spec, batched, reads_view):
    """Each agent derives from AgentBase; a flag is set exactly when the agent has its own method
    for it (``act_batch`` for ``batched``, ``act_view`` for ``reads_view``), not the default."""
    agent = load_agent(spec, GameConfig(num_players=2), seed=0)
    assert isinstance(agent, AgentBase)
    assert (agent.batched, agent.reads_view) == (batched, reads_view)
    assert (type(agent).act_batch is not AgentBase.act_batch) == batched
    assert (type(agent).act_view is not AgentBase.act_view) == reads_view


def test_agent_registry_and_errors():
    config = GameConfig()
    assert set(AGENTS) == {"random", "greedy", "heuristic", "stock-chaser", "hand-emptier", "blocker", "high-first"}
    assert isinstance(load_agent("heuristic", config, 0), HeuristicAgent)
    with pytest.raises(ValueError, match=r"unknown agent 'nope'; known agents: random, greedy, heuristic, "
                       r"stock-chaser, hand-emptier, blocker, high-first, ppo-2p, "
                       r"turn-2p, ppo-2p-plus, ppo-3p, ppo-4p, ppo-6p, turn-2p-plus, search, or the path"):
        load_agent("nope", config)
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        make_agent("nope", config)
    with pytest.raises(CheckpointError, match=r"missing\.zip: no such checkpoint file"):
        load_agent("missing.zip", config)


def test_random_agent_uses_every_legal_action():
    config = GameConfig()
    _, obs = _first_obs(config, seed=3)
    legal = set(np.flatnonzero(obs["action_mask"]).tolist())
    agent = make_agent("random", config, seed=0)
    seen = {agent.act(obs) for _ in range(40 * len(legal))}
    assert seen == legal


# ==================================================================== no peeking
def hidden_permutation(state: GameState, seat: int, rng: np.random.Generator) -> GameState:
    """The state with every card ``seat`` cannot see reshuffled, built through the state dict:
    draw pile order, other hands, stock cards below the tops and the completed pile share one
    shuffled pool and keep their sizes."""
    data = state.to_dict()
    n = state.config.num_players
    others = [s for s in range(n) if s != seat]
    pool = list(data["draw_pile"]) + list(data["completed"])
    for s in others:
        pool += data["hands"][s]
    for stock in data["stocks"]:
        pool += stock[:-1]
    rng.shuffle(pool)
    pos = 0

    def take(count: int) -> list[int]:
        nonlocal pos
        pos += count
        return [int(c) for c in pool[pos - count : pos]]

    data["draw_pile"] = take(len(data["draw_pile"]))
    data["completed"] = take(len(data["completed"]))
    for s in others:
        data["hands"][s] = sorted(take(len(data["hands"][s])))
    data["stocks"] = [take(len(stock) - 1) + stock[-1:] if stock else [] for stock in data["stocks"]]
    assert pos == len(pool)
    return GameState.from_dict(data)


def _peeking_differences(make_probe, config: GameConfig, game_seed: int, probes: int = 40) -> tuple[int, int]:
    """Play a mixed game; at decisions along it, ask a fresh probe agent on the real and on a
    hidden-permuted state with the same seed. Returns (differing choices, changed hidden cards)."""
    state = new_game(config, game_seed)
    players = [make_agent(["heuristic", "greedy", "random"][s % 3], config, seed=s) for s in range(config.num_players)]
    rng = np.random.default_rng(game_seed)
    differ = changed = asked = 0
    while not state.is_over and asked < probes:
        seat = state.current
        permuted = hidden_permutation(state, seat, rng)
        real_obs, perm_obs = observe(state, seat), observe(permuted, seat)
        np.testing.assert_array_equal(real_obs["observation"], perm_obs["observation"])
        np.testing.assert_array_equal(real_obs["action_mask"], perm_obs["action_mask"])
        changed += permuted.to_dict() != state.to_dict()
        seed = 1000 + asked
        a = make_probe(state, seed).act(real_obs)
        b = make_probe(permuted, seed).act(perm_obs)
        differ += a != b
        asked += 1
        state.apply(decode_action(players[seat].act(real_obs), config))
    return differ, changed


NO_PEEK_CONFIGS = [
    GameConfig(),
    GameConfig(num_players=3, short_game=True),
    GameConfig(num_players=4, partner_game=True, short_game=True),
]


@pytest.mark.parametrize("name", SCRIPTED)
@pytest.mark.parametrize("config", NO_PEEK_CONFIGS, ids=["2p", "3p-short", "4p-partner"])
def test_scripted_agents_do_not_peek(name, config):
    """Their choice is unchanged when the cards they cannot see are reshuffled (R3, R28)."""
    differ, changed = _peeking_differences(lambda state, seed: make_agent(name, config, seed), config, 5)
    assert changed > 30  # the hidden cards really moved
    assert differ == 0


class _Peeker:
    """A cheating agent: it picks its action by the hidden top card of the draw pile."""

    def __init__(self, state: GameState) -> None:
        self.state = state

    def act(self, observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.state.draw_pile[-1] % len(legal)]) if self.state.draw_pile else int(legal[0])


def test_the_no_peeking_check_catches_a_cheat():
    differ, _ = _peeking_differences(lambda state, seed: _Peeker(state), GameConfig(), 5)
    assert differ > 0


# ========================================================= legal play everywhere
LEGAL_CONFIGS = {
    "2p": GameConfig(turn_limit=400),
    "2p-short": GameConfig(short_game=True, turn_limit=300),
    "3p-short": GameConfig(num_players=3, short_game=True, turn_limit=300),
    "4p-short": GameConfig(num_players=4, short_game=True, turn_limit=300),
    "5p-short": GameConfig(num_players=5, short_game=True, turn_limit=300),
    "6p-short": GameConfig(num_players=6, short_game=True, turn_limit=300),
    "4p-partner": GameConfig(num_players=4, partner_game=True, short_game=True, turn_limit=300),
    "6p-partner": GameConfig(num_players=6, partner_game=True, short_game=True, turn_limit=300),
    "no-wild-discard": GameConfig(short_game=True, allow_wild_discard=False, turn_limit=300),
    "must-play-stock": GameConfig(num_players=3, short_game=True, must_play_stock=True, turn_limit=300),
}


@pytest.mark.parametrize("key", list(LEGAL_CONFIGS))
def test_agents_only_play_legal_actions_in_every_configuration(key):
    config = LEGAL_CONFIGS[key]
    names = ["heuristic", "greedy", "random"]
    for rotation in range(3):
        state = new_game(config, 100 + rotation)
        seats = [make_agent(names[(s + rotation) % 3], config, seed=s) for s in range(config.num_players)]
        while not state.is_over:
            seat = state.current
            obs = observe(state, seat)
            action = seats[seat].act(obs)
            assert obs["action_mask"][action] == 1, f"{seats[seat]} chose masked action {action}"
            move = decode_action(action, config)
            if seats[seat].name == "greedy":
                only_wild_plays = all(
                    isinstance(m, Play) and m.source is Source.HAND and m.card == W for m in state.legal_moves()
                )
                assert only_wild_plays or not (
                    isinstance(move, Play) and move.source is Source.HAND and move.card == W
                ), "greedy played a hand wild"
            state.apply(move)


def test_heuristic_wins_short_games_against_random_in_every_player_count():
    """A sanity figure, not a benchmark: the planner must actually make progress everywhere."""
    for n in (3, 4, 6):
        config = GameConfig(num_players=n, short_game=True)
        wins = 0
        for g in range(3):
            state = new_game(config, 200 + g)
            seats = [make_agent("heuristic" if s == 0 else "random", config, seed=s) for s in range(n)]
            while not state.is_over:
                state.apply(decode_action(seats[state.current].act(observe(state, state.current)), config))
            wins += state.winner == 0
        assert wins == 3, f"{n} players: heuristic won {wins}/3 short games against random"


# ====================================================== decisions on positions
def test_greedy_plays_the_stock_first_and_discards_a_wild():
    state = make_state(hands={0: [4, 9, 10, 11, W]}, stocks={0: [12, 5]}, building=[3, 4, 0, 0])
    greedy = make_agent("greedy", state.config, seed=0)
    assert _moves(greedy, state, 1) == [Play(Source.STOCK, 1)]  # not the hand 4 first
    # then the 4 (any play but a hand wild), then nothing fits: the wild is discarded first
    assert _moves(greedy, state, 1) == [Play(Source.HAND, 0, card=4)]
    move = _moves(greedy, state, 1)[0]
    assert isinstance(move, Discard) and move.card == W


def test_heuristic_plays_example_e2():
    """E2: stock 5, a pile shows 3, hand 4 8 9 11 wild: hand 4, stock 5; stock 7 turns up:
    the wild as 6, then stock 7 (two stock cards with cards still in hand)."""
    state = make_state(hands={0: [4, 8, 9, 11, W]}, stocks={0: [12, 7, 5]}, building=[3, 0, 0, 0])
    agent = make_agent("heuristic", state.config, seed=0)
    assert _moves(agent, state, 4) == [
        Play(Source.HAND, 0, card=4),
        Play(Source.STOCK, 0),
        Play(Source.HAND, 0, card=W),
        Play(Source.STOCK, 0),
    ]
    assert state.hand_cards(0) == [8, 9, 11] and len(state.stocks[0]) == 1


def test_heuristic_spares_its_wild_when_it_cannot_reach_the_stock():
    state = make_state(hands={0: [W, 10, 11, 12, 12]}, stocks={0: [12, 8]}, building=[0, 0, 0, 0])
    agent = make_agent("heuristic", state.config, seed=0)
    move = _moves(agent, state, 1)[0]
    assert isinstance(move, Discard) and move.card != W


def test_heuristic_does_not_set_up_the_opponents_stock():
    """Playing the hand 5 on the 4 would let the opponent play its stock 6; greedy does it."""
    state = make_state(
        hands={0: [5, 9, 10, 11, 12]}, stocks={0: [12, 12], 1: [12, 6]}, building=[4, 0, 0, 0]
    )
    heuristic = make_agent("heuristic", state.config, seed=0)
    assert isinstance(_moves(heuristic, state.copy(), 1)[0], Discard)
    greedy = make_agent("greedy", state.config, seed=0)
    assert _moves(greedy, state, 1)[0] == Play(Source.HAND, 0, card=5)


def test_heuristic_empties_its_hand_for_a_refill():
    state = make_state(hands={0: [1, 2, 3, 4, 5]}, stocks={0: [12, 12], 1: [12, 12]})
    agent = make_agent("heuristic", state.config, seed=0)
    moves = _moves(agent, state, 5)
    assert all(isinstance(m, Play) and m.source is Source.HAND for m in moves)
    assert state.hand_size(0) == 5 and state.current == 0  # R15: refilled, same turn


def test_heuristic_builds_descending_runs():
    state = make_state(
        hands={0: [8, 8, 8, 8, 8]}, stocks={0: [12, 12], 1: [12, 12]},
        discards={0: [[7], [9], [], []]}, building=[0, 0, 0, 0],
    )
    agent = make_agent("heuristic", state.config, seed=0)
    assert _moves(agent, state, 1) == [Discard(8, 1)]


def test_heuristic_plays_the_partners_stock():
    """R27: in the partner game the partner's stock top is playable and worth playing."""
    state = make_state(
        4, partner_game=True, hands={0: [9, 10, 11, 12, 12]},
        stocks={0: [12, 12], 1: [12, 12], 2: [12, 3], 3: [12, 12]}, building=[2, 0, 0, 0],
    )
    agent = make_agent("heuristic", state.config, seed=0)
    assert _moves(agent, state, 1) == [Play(Source.PARTNER_STOCK, 0)]


def test_heuristic_scores():
    assert placement_score(8, 9) > placement_score(8, 8) > placement_score(8, None) > placement_score(8, 5)
    assert placement_score(8, W) < placement_score(8, 5)
    assert reach_chance(None, (0, 0, 0, 0), frozenset(), 0, 0.5) == 0.0
    assert reach_chance(W, (0, 0, 0, 0), frozenset(), 0, 0.5) == 1.0
    assert reach_chance(6, (5, 0, 0, 0), frozenset(), 0, 0.5) == 1.0  # fits now
    assert reach_chance(6, (4, 11, 11, 11), frozenset({5}), 0, 0.5) == 1.0  # with a known 5
    assert reach_chance(6, (3, 6, 6, 6), frozenset(), 1, 0.5) == pytest.approx(0.5)  # wild + 1 unseen card
    both = 1 - (1 - 0.5) * (1 - 0.5**2)  # two piles: one card or two cards missing
    assert reach_chance(6, (4, 3, 6, 6), frozenset(), 0, 0.5) == pytest.approx(both)


# ============================================================================ PPO



def _save_tiny_model(config: GameConfig, path):
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", TinyEnv(config), n_steps=8, batch_size=8,
                        policy_kwargs={"net_arch": [8]}, seed=0, device="cpu")
    model.save(path)
    return path


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    """An untrained MaskablePPO checkpoint for the 2-player game (435 floats, 125 actions)."""
    return _save_tiny_model(GameConfig(), tmp_path_factory.mktemp("ppo") / "tiny.zip")


def test_ppo_agent_plays_legal_deterministic_actions(tiny_checkpoint):
    config = GameConfig(short_game=True)  # same sizes as the default game
    agent = load_agent(str(tiny_checkpoint), config, seed=0, allow_pickle=True)
    assert isinstance(agent, PPOAgent) and isinstance(agent, Agent)
    state = new_game(config, 4)
    for _ in range(30):
        obs = observe(state, state.current)
        action = agent.act(obs)
        assert obs["action_mask"][action] == 1 and agent.act(obs) == action
        state.apply(decode_action(action, config))
        if state.is_over:
            break


@pytest.mark.parametrize("policy", ["mlp", "scorer"])
def test_ppo_agent_acts_as_model_predict(tmp_path, policy):
    """act() computes the logits directly; it must pick what sb3's deterministic predict picks."""
    import torch
    from sb3_contrib import MaskablePPO

    from skipbo_env.agents.scorer import ScorerPolicy

    config = GameConfig()
    kwargs = {"net_arch": [16]} if policy == "mlp" else {"context_arch": [16], "value_arch": [16], "scorer_arch": [8]}
    model = MaskablePPO("MlpPolicy" if policy == "mlp" else ScorerPolicy, TinyEnv(config), n_steps=8,
                        batch_size=8, policy_kwargs=kwargs, seed=1, device="cpu")
    with torch.no_grad():
        for p in model.policy.parameters():  # an untrained head is nearly flat: make the choice matter
            p.add_(torch.randn_like(p))
    model.save(tmp_path / "m.zip")
    agent = PPOAgent(tmp_path / "m.zip", config, allow_pickle=True)
    rng = np.random.default_rng(0)
    state = new_game(config, 9)
    for _ in range(150):
        if state.is_over:
            break
        obs = observe(state, state.current)
        want, _ = agent.model.predict(obs["observation"], action_masks=obs["action_mask"].astype(bool),
                                      deterministic=True)
        assert agent.act(obs) == int(want)
        moves = state.legal_moves()
        state.apply(moves[rng.integers(len(moves))])


def test_ppo_checkpoint_for_other_sizes_is_refused(tiny_checkpoint, tmp_path):
    with pytest.raises(
        CheckpointError, match=r"tiny\.zip: observation shape \(435,\) does not match this game's \(805,\)"
    ):
        load_agent(tiny_checkpoint, GameConfig(num_players=4), allow_pickle=True)
    four = _save_tiny_model(GameConfig(num_players=4), tmp_path / "four.zip")
    with pytest.raises(
        CheckpointError, match=r"four\.zip: action space Discrete\(125\) does not match this game's Discrete\(145\)"
    ):
        load_agent(four, GameConfig(num_players=4, partner_game=True), allow_pickle=True)


def test_ppo_checkpoint_plays_in_a_tournament(tiny_checkpoint):
    from agents.tournament import run_tournament

    config = GameConfig(short_game=True, turn_limit=20)
    result = run_tournament([str(tiny_checkpoint), "greedy"], config, games=2, seed=0, workers=1, allow_pickle=True)
    assert result.labels == ("tiny", "greedy") and len(result.games) == 2
    assert [a.seat_counts for a in result.agents] == [(1, 1), (1, 1)]


def test_non_checkpoint_file_is_refused(tmp_path):
    bad = tmp_path / "notes.zip"
    bad.write_text("not a model")
    with pytest.raises(CheckpointError, match=r"notes\.zip: not an agent file \(\.safetensors\) nor a MaskablePPO"):
        load_agent(bad, GameConfig())  # not a zip: read as an agent file, which it is not either


def test_scripted_agents_do_not_import_torch():
    code = "import sys, agents, agents.tournament; print('torch' in sys.modules, 'stable_baselines3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_encode_action_round_trip_for_agent_choices():
    """Agents return action ids; the id of the decoded move is the id itself."""
    config = GameConfig()
    _, obs = _first_obs(config)
    action = make_agent("heuristic", config, seed=0).act(obs)
    assert encode_action(decode_action(action, config), config) == action
