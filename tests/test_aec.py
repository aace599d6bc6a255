"""PettingZoo AEC env skipbo_v0 (skipbo_env/aec.py, docs/environments.md)."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

import skipbo_env
from skipbo_env.aec import raw_env
from skipbo_env.bots.greedy import greedy_move
from skipbo_env.encoding import decode_action, fields_from_view, observe
from skipbo_env.episode import STOCK_CARD_REWARD
from skipbo_env.rules import (
    WILD,
    ConfigError,
    Discard,
    EndTurn,
    GameConfig,
    GameState,
    IllegalMoveError,
    Play,
    Source,
    StateError,
    new_game,
)

API_CONFIGS = {
    "2p": dict(num_players=2, turn_limit=40),
    "3p": dict(num_players=3, turn_limit=40),
    "4p": dict(num_players=4, turn_limit=40),
    "5p": dict(num_players=5, turn_limit=40),
    "6p": dict(num_players=6, turn_limit=40),
    "4p-partner": dict(num_players=4, partner_game=True, turn_limit=40),
    "6p-partner": dict(num_players=6, partner_game=True, turn_limit=40),
    "2p-short": dict(num_players=2, short_game=True, turn_limit=60),
    "2p-stock2-ends": dict(num_players=2, stock_size=2),
    "4p-partner-stock2-ends": dict(num_players=4, partner_game=True, stock_size=2),
    "3p-variants": dict(num_players=3, allow_wild_discard=False, must_play_stock=True, turn_limit=40),
    "5p-first4": dict(num_players=5, first_player=4, turn_limit=30),
    "3p-stock3-shaped": dict(num_players=3, stock_size=3, reward_shaping=True),
}


def agent_of(seat: int) -> str:
    return f"player_{seat}"


def action_of(env, predicate) -> int:
    """The first legal action of the agent to move whose move satisfies ``predicate``."""
    obs = env.observe(env.agent_selection)
    for action in np.flatnonzero(obs["action_mask"]):
        if predicate(decode_action(int(action), env.unwrapped.config)):
            return int(action)
    raise AssertionError("no such legal action")


def play_out(env, rng: np.random.Generator, max_steps: int = 100_000) -> list[tuple]:
    """Random legal actions until every agent is done; the (agent, reward, term, trunc) seen by last()."""
    seen = []
    for agent in env.agent_iter(max_steps):
        obs, reward, terminated, truncated, _info = env.last()
        seen.append((agent, reward, terminated, truncated))
        if terminated or truncated:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
    return seen


def winning_state(config: GameConfig, winner: int) -> dict:
    """``winner`` is to move with a single wild in its stock (its partner's stock empty): one play wins."""
    data = new_game(config, seed=1).to_dict()
    first = data["current_player"]
    data["hands"][winner], data["hands"][first] = data["hands"][first], data["hands"][winner]
    data["current_player"] = winner
    emptied = [winner] + ([config.partner(winner)] if config.partner_game else [])
    for seat in emptied:
        data["draw_pile"] = data["stocks"][seat] + data["draw_pile"]
        data["stocks"][seat] = []
    data["draw_pile"].remove(WILD)
    data["stocks"][winner] = [WILD]
    return data


# ------------------------------------------------------------ PettingZoo suites
@pytest.mark.parametrize("name", list(API_CONFIGS))
def test_pettingzoo_api_test(name):
    for make in (skipbo_env.env, raw_env):
        env = make(**API_CONFIGS[name])
        # api_test warns about every dict observation (as for PettingZoo's classic envs): keep them quiet
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            api_test(env, num_cycles=1000)
        assert any("ignoring unknown key(s) 'options'" in str(w.message) for w in caught)


@pytest.mark.parametrize("name", list(API_CONFIGS))
def test_pettingzoo_seed_test(name):
    seed_test(lambda: skipbo_env.env(**API_CONFIGS[name]), num_cycles=500)
    seed_test(lambda: raw_env(**API_CONFIGS[name]), num_cycles=500)


def test_whole_games_end_with_every_agent_done():
    rng = np.random.default_rng(0)
    for config in (dict(num_players=3, stock_size=2), dict(num_players=6, partner_game=True, stock_size=1)):
        env = skipbo_env.env(**config)
        for seed in range(3):
            env.reset(seed=seed)
            seen = play_out(env, rng)
            assert env.agents == []
            done = [s for s in seen if s[2] or s[3]]
            assert sorted(a for a, *_ in done) == sorted(env.possible_agents)
            assert all(term for _, _, term, _ in done), "a game won by a side terminates every agent"
            game = env.unwrapped.game
            expected = {agent_of(s): 1.0 if s in game.winners else -1.0 for s in range(config["num_players"])}
            assert {a: r for a, r, *_ in done} == expected


# ------------------------------------------------------------ construction
def test_metadata_agents_and_spaces():
    env = raw_env(num_players=4, partner_game=True)
    assert env.metadata["name"] == "skipbo_v0"
    assert env.metadata["is_parallelizable"] is False
    assert set(env.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert env.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        assert env.action_space(agent).n == 145
        space = env.observation_space(agent)
        assert space["observation"].shape == (805,) and space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (145,) and space["action_mask"].dtype == np.int8
    assert raw_env(num_players=2).action_space("player_0").n == 125


@pytest.mark.parametrize(
    ("config", "match"),
    [
        (dict(num_players=7), "num_players"),
        (dict(players=3), "players: unknown key"),
        (dict(max_cycles=100), "turn_limit"),
        (dict(render_mode="rgb"), "render_mode"),
        (dict(reward_shaping=1), "reward_shaping"),
        (dict(render_full="yes"), "render_full"),
        (dict(num_players=3, partner_game=True), "partner_game"),
        (dict(turn_limit=0), "turn_limit"),
    ],
)
def test_bad_config_fails_with_the_key(config, match):
    with pytest.raises(ConfigError, match=match):
        raw_env(**config)


def test_registration():
    env = pettingzoo.make("aec", "skipbo_v0", num_players=3)
    assert isinstance(env, OrderEnforcingWrapper)
    assert isinstance(env.unwrapped, raw_env) and env.unwrapped.config.num_players == 3
    from skipbo_env import skipbo_v0

    assert skipbo_v0.env is skipbo_env.env and skipbo_v0.raw_env is raw_env
    assert isinstance(skipbo_v0.env().unwrapped, raw_env)


def test_calls_before_reset_fail_clearly():
    env = raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        env.observe("player_0")
    with pytest.raises(RuntimeError, match="reset"):
        env.seat_view("player_0")
    wrapped = skipbo_env.env()
    with pytest.raises(AttributeError, match="before reset"):
        _ = wrapped.agent_selection


# ------------------------------------------------------------ reset and seeds
def trajectory(env, seed, steps=300, reseed=True):
    """Observations, rewards and actions of the first ``steps`` steps, with actions from a fixed rng."""
    if reseed:
        env.reset(seed=seed)
    else:
        env.reset()
    rng = np.random.default_rng(99)
    out = []
    for agent in env.agent_iter(steps):
        obs, reward, terminated, truncated, info = env.last()
        out.append((agent, obs["observation"].tobytes(), reward, terminated, truncated, info["turn"]))
        if terminated or truncated:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
    return out


def test_same_seed_same_episode_and_unseeded_resets_continue():
    a, b = raw_env(num_players=3), raw_env(num_players=3)
    assert trajectory(a, 5) == trajectory(b, 5)
    assert trajectory(a, 6) != trajectory(b, 5)
    # reset() without a seed continues the generator: the same next game in both
    a.reset(seed=8)
    b.reset(seed=8)
    first = a.game.to_dict()
    a.reset()
    b.reset()
    assert a.game.to_dict() == b.game.to_dict() != first
    # a first unseeded reset draws fresh entropy
    c, d = raw_env(), raw_env()
    c.reset()
    d.reset()
    assert c.game.to_dict() != d.game.to_dict()


def test_bad_seed_fails():
    env = raw_env()
    for seed in (-1, 1.5, "1"):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
    env.reset(seed=np.int64(3))


def test_reset_with_a_deck():
    config = GameConfig(num_players=3, first_player=1)
    deck = list(np.random.default_rng(4).permutation([c for c in range(1, 13) for _ in range(12)] + [WILD] * 18))
    env = raw_env(**config.to_dict())
    env.reset(seed=0, options={"deck": deck})
    dealt = new_game(config, seed=0, deck=deck)
    assert env.game.stocks == dealt.stocks and env.game.draw_pile == dealt.draw_pile
    assert env.game.hands == dealt.hands
    assert env.agent_selection == "player_1"
    with pytest.raises(StateError, match="162"):
        env.reset(options={"deck": deck[:-1]})


def test_reset_with_a_state():
    config = GameConfig(num_players=4, partner_game=True)
    state = new_game(config, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(60):
        legal = state.legal_moves()
        state.apply(legal[rng.integers(len(legal))])
    data = state.to_dict()
    env = raw_env(**config.to_dict())
    env.reset(options={"state": data})
    assert env.game.to_dict() == data
    assert env.agent_selection == agent_of(state.current)
    for seat in range(4):
        got, want = env.observe(agent_of(seat)), observe(state, seat)
        assert np.array_equal(got["observation"], want["observation"])
        assert np.array_equal(got["action_mask"], want["action_mask"])
    data["draw_pile"].append(99)  # the env copied the dict: changing it later does nothing
    assert env.game.draw_pile != data["draw_pile"]


def test_reset_option_errors():
    env = raw_env(num_players=2)
    good = new_game(GameConfig(num_players=2), seed=0).to_dict()
    with pytest.raises(ValueError, match="not both"):
        env.reset(options={"deck": list(range(1, 13)) * 12 + [WILD] * 18, "state": good})
    with pytest.raises(ValueError, match="num_players=3"):
        env.reset(options={"state": new_game(GameConfig(num_players=3), seed=0).to_dict()})
    with pytest.raises(ValueError, match="already over"):
        env.reset(options={"state": _won(0)})
    with pytest.raises(StateError, match="format"):
        env.reset(options={"state": {**good, "format": "chess"}})
    with pytest.raises(TypeError, match="dict"):
        env.reset(options=[("deck", None)])
    with pytest.warns(UserWarning, match="'dek'"):
        env.reset(options={"dek": []})


def _won(winner: int) -> dict:
    """A finished 2-player game: ``winner`` played its last stock card."""
    state = GameState.from_dict(winning_state(GameConfig(), winner))
    state.apply(next(m for m in state.legal_moves() if isinstance(m, Play) and m.source is Source.STOCK))
    assert state.winner == winner
    return state.to_dict()


# ------------------------------------------------------------ turns
def test_agent_selection_stays_until_the_turn_ends():
    rng = np.random.default_rng(1)
    env = raw_env(num_players=3, stock_size=5)
    env.reset(seed=2)
    turns_seen = 0
    while not env.game.is_over:
        agent = env.agent_selection
        for other in env.possible_agents:
            assert env.observe(other)["action_mask"].any() == (other == agent)
        legal = np.flatnonzero(env.observe(agent)["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        move = decode_action(action, env.config)
        env.step(action)
        if env.game.is_over:
            break
        if isinstance(move, Discard | EndTurn):
            turns_seen += 1
            assert env.agent_selection == agent_of((int(agent[-1]) + 1) % 3)
            assert env.infos[env.agent_selection]["turn"] == env.game.turn
        else:
            assert env.agent_selection == agent
    assert turns_seen > 3


# ------------------------------------------------------------ rewards
@pytest.mark.parametrize(
    ("config", "winner", "winners"),
    [
        (dict(num_players=2), 1, {1}),
        (dict(num_players=3), 2, {2}),
        (dict(num_players=5), 0, {0}),
        (dict(num_players=4, partner_game=True), 1, {1, 3}),
        (dict(num_players=6, partner_game=True), 5, {2, 5}),
    ],
)
def test_winner_plus_one_losers_minus_one(config, winner, winners):
    config = GameConfig(**config)
    env = skipbo_env.env(**config.to_dict())
    env.reset(options={"state": winning_state(config, winner)})
    assert env.agent_selection == agent_of(winner)
    env.step(action_of(env, lambda m: isinstance(m, Play) and m.source is Source.STOCK))
    expected = {agent_of(s): 1.0 if s in winners else -1.0 for s in range(config.num_players)}
    assert env.rewards == expected
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.infos[agent_of(winner)]["winners"] == sorted(agent_of(s) for s in winners)
    seen = play_out(env, np.random.default_rng(0))  # every agent collects its reward through last()
    assert {a: r for a, r, *_ in seen} == expected
    assert env.agents == []


def test_truncation_gives_zero_to_all():
    env = skipbo_env.env(num_players=3, turn_limit=1)
    env.reset(seed=0)
    env.step(action_of(env, lambda m: isinstance(m, Discard)))
    assert env.unwrapped.game.truncated
    assert env.rewards == dict.fromkeys(env.possible_agents, 0.0)
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.infos["player_0"]["winners"] == []
    seen = play_out(env, np.random.default_rng(0))
    assert sorted(seen) == sorted((a, 0.0, False, True) for a in env.possible_agents)


def test_reward_shaping_is_off_by_default_and_small_when_on():
    config = GameConfig(num_players=3)
    data = winning_state(config, 0)
    data["draw_pile"] += data["stocks"][0]
    data["draw_pile"].remove(WILD)
    data["draw_pile"].remove(WILD)
    data["stocks"][0] = [WILD, WILD]  # the top wild can be played without winning
    for shaping, bonus in ((False, 0.0), (True, STOCK_CARD_REWARD)):
        env = raw_env(**config.to_dict(), reward_shaping=shaping)
        env.reset(options={"state": data})
        env.step(action_of(env, lambda m: isinstance(m, Play) and m.source is Source.STOCK))
        assert env.rewards == {"player_0": bonus, "player_1": 0.0, "player_2": 0.0}
        assert env._cumulative_rewards["player_0"] == bonus
        env.step(action_of(env, lambda m: not (isinstance(m, Play) and m.source is Source.STOCK)))
        assert env.rewards["player_0"] == 0.0
    # the winning stock card: terminal +1 on top of the shaping bonus
    env = raw_env(**config.to_dict(), reward_shaping=True)
    env.reset(options={"state": winning_state(config, 0)})
    env.step(action_of(env, lambda m: isinstance(m, Play) and m.source is Source.STOCK))
    assert env.rewards == {"player_0": 1.0 + STOCK_CARD_REWARD, "player_1": -1.0, "player_2": -1.0}


def test_partner_stock_play_is_shaped_for_the_mover():
    config = GameConfig(num_players=4, partner_game=True, first_player=0)
    data = new_game(config, seed=2).to_dict()
    data["draw_pile"] = data["stocks"][2][:-1] + data["draw_pile"]
    data["draw_pile"].remove(WILD)
    data["stocks"][2] = [data["stocks"][2][-1], WILD]
    env = raw_env(**config.to_dict(), reward_shaping=True)
    env.reset(options={"state": data})
    env.step(action_of(env, lambda m: isinstance(m, Play) and m.source is Source.PARTNER_STOCK))
    assert env.rewards == {"player_0": STOCK_CARD_REWARD, "player_1": 0.0, "player_2": 0.0, "player_3": 0.0}


# ------------------------------------------------------------ illegal actions, dead steps
def test_raw_env_illegal_action_raises_and_changes_nothing():
    env = raw_env(num_players=2)
    env.reset(seed=3)
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = (env.game.to_dict(), env.agent_selection, dict(env.rewards), copy.deepcopy(env.infos))
    with pytest.raises(IllegalMoveError, match="illegal move"):
        env.step(illegal)
    assert (env.game.to_dict(), env.agent_selection, dict(env.rewards), env.infos) == before
    with pytest.raises(ValueError, match="action must be an int"):
        env.step(125)


def test_wrapped_env_illegal_action_ends_the_game_with_minus_one():
    env = skipbo_env.env(num_players=3)
    env.reset(seed=3)
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert env.rewards == {a: -1.0 if a == offender else 0.0 for a in env.possible_agents}
    assert all(env.terminations.values())
    seen = play_out(env, np.random.default_rng(0))
    assert {a: r for a, r, *_ in seen} == {a: -1.0 if a == offender else 0.0 for a in env.possible_agents}
    env.reset(seed=3)
    with pytest.raises(ValueError, match="action must be an int"):  # an assertion in PettingZoo's wrapper
        env.step(125)


def test_dead_agents_step_with_none_only():
    env = raw_env(num_players=2, turn_limit=1)
    env.reset(seed=0)
    env.step(action_of(env, lambda m: isinstance(m, Discard)))
    with pytest.raises(ValueError, match="None"):
        env.step(0)
    env.step(None)
    env.step(None)
    assert env.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        env.step(None)


# ------------------------------------------------------------ no leak
def hidden_permutation(data: dict, seat: int, rng: np.random.Generator) -> dict:
    """``data`` with every card ``seat`` cannot see shuffled among the places that hide them.

    Hidden from ``seat``: the draw pile, the completed pile, the other hands
    and every stock card below the top (its own included). Sizes stay.
    """
    out = copy.deepcopy(data)
    n = len(out["hands"])
    others = [s for s in range(n) if s != seat]
    pool = out["draw_pile"] + out["completed"]
    pool += [c for s in others for c in out["hands"][s]]
    pool += [c for stock in out["stocks"] for c in stock[:-1]]
    rng.shuffle(pool)
    it = iter(pool)

    def take(count):
        return [next(it) for _ in range(count)]

    out["draw_pile"] = take(len(data["draw_pile"]))
    out["completed"] = take(len(data["completed"]))
    for s in others:
        out["hands"][s] = sorted(take(len(data["hands"][s])))
    for s, stock in enumerate(data["stocks"]):
        if stock:
            out["stocks"][s] = take(len(stock) - 1) + [stock[-1]]
    assert next(it, None) is None
    return out


def leak_test_states():
    """Mid-game states (completed piles included) of several configurations."""
    rng = np.random.default_rng(5)
    for config in (
        GameConfig(num_players=2),
        GameConfig(num_players=3, stock_size=12),
        GameConfig(num_players=4, partner_game=True),
        GameConfig(num_players=6, partner_game=True),
    ):
        state = new_game(config, seed=11)
        for turn_mark in (0, 6, 25, 60):
            while state.turn < turn_mark and not state.is_over:
                view = state.view(state.current)
                state.apply(greedy_move(fields_from_view(view), state.legal_moves(), rng))
            if not state.is_over:
                yield state.to_dict()


def test_no_leak():
    rng = np.random.default_rng(0)
    checked = completed_seen = 0
    for data in leak_test_states():
        config = GameConfig.from_dict(data["config"])
        env = raw_env(**config.to_dict())
        completed_seen += bool(data["completed"])
        for seat in range(config.num_players):
            env.reset(options={"state": data})
            before = env.observe(agent_of(seat))
            shuffled = hidden_permutation(data, seat, rng)
            assert shuffled != data
            env.reset(options={"state": shuffled})
            after = env.observe(agent_of(seat))
            assert np.array_equal(before["observation"], after["observation"]), f"seat {seat} sees hidden cards"
            assert np.array_equal(before["action_mask"], after["action_mask"])
            assert env.infos == {a: {"turn": data["turn"]} for a in env.possible_agents}
            checked += 1
    assert checked >= 20 and completed_seen


def test_seat_view_is_the_seats_view_of_the_game():
    """``seat_view`` is ``GameState.view`` of the agent's seat, for every seat, as the game goes on."""
    env = skipbo_env.env(num_players=3, turn_limit=30)
    env.reset(seed=4)
    raw = env.unwrapped
    rng = np.random.default_rng(1)
    for _agent in env.agent_iter(400):
        for seat, name in enumerate(raw.possible_agents):
            view = raw.seat_view(name)
            assert view == raw.game.view(seat) and view.seat == seat
            assert view.completed_cards == raw.game.view(seat).completed_cards
        obs, _, terminated, truncated, _ = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        env.step(None if terminated or truncated else int(legal[rng.integers(len(legal))]))


def test_seat_view_errors_name_the_problem():
    env = raw_env(num_players=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"unknown agent 'player_2'; agents are \['player_0', 'player_1'\]"):
        env.seat_view("player_2")
    with pytest.raises(ValueError, match="unknown agent 0"):
        env.seat_view(0)


def test_view_reading_agents_play_whole_games_from_seat_view():
    """The documented call: ``agent.act_view(env.unwrapped.seat_view(name))`` for every decision."""
    from skipbo_env.bots import make_bot

    for config in (dict(num_players=2), dict(num_players=4, partner_game=True)):
        env = skipbo_env.env(**config)
        env.reset(seed=3)
        game_config = env.unwrapped.config
        bots = {name: make_bot("heuristic", game_config, seed=i) for i, name in enumerate(env.possible_agents)}
        for name in env.agent_iter():
            _, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else bots[name].act_view(env.unwrapped.seat_view(name)))
        assert env.unwrapped.game.winner is not None  # a legal action every time, to a stock emptied (R22)


def test_seat_view_shows_no_hidden_card():
    """Shuffling the cards a seat cannot see leaves its seat view unchanged (R3, R4)."""
    rng = np.random.default_rng(2)
    checked = 0
    for data in leak_test_states():
        config = GameConfig.from_dict(data["config"])
        env = raw_env(**config.to_dict())
        for seat in range(config.num_players):
            env.reset(options={"state": data})
            before = env.seat_view(agent_of(seat))
            env.reset(options={"state": hidden_permutation(data, seat, rng)})
            assert env.seat_view(agent_of(seat)) == before, f"seat {seat}'s view holds hidden cards"
            checked += 1
    assert checked >= 20


def test_no_leak_check_can_fail():
    """Control: moving a card the seat can see (its own hand) does change its observation."""
    data = new_game(GameConfig(num_players=2, first_player=0), seed=0).to_dict()
    env = raw_env(num_players=2, first_player=0)
    env.reset(options={"state": data})
    before = env.observe("player_0")["observation"]
    changed = copy.deepcopy(data)
    card = changed["hands"][0][0]
    other = next(i for i, c in enumerate(changed["draw_pile"]) if c != card)
    changed["hands"][0][0], changed["draw_pile"][other] = changed["draw_pile"][other], card
    changed["hands"][0].sort()  # the state format lists a hand in increasing order
    env.reset(options={"state": changed})
    assert not np.array_equal(before, env.observe("player_0")["observation"])


# ------------------------------------------------------------ rendering
def test_ansi_render_shows_only_the_acting_view():
    env = raw_env(num_players=2, first_player=0, render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert text.startswith("player_0's view") and "your hand:" in text
    full = raw_env(num_players=2, first_player=0, render_mode="ansi", render_full=True)
    full.reset(seed=1)
    full_text = full.render()
    assert full_text.startswith("full information") and "player_1: stock" in full_text
    hand0 = " ".join(str(c) if c != WILD else "SB" for c in env.game.hand_cards(0))
    assert hand0 in text and hand0 in full_text
    # "human" shows a picture in a window: tests/test_render.py
    with pytest.warns(UserWarning, match="render"):
        assert raw_env().render() is None


# ------------------------------------------------------------ pickling
def test_pickled_env_continues_identically():
    env = raw_env(num_players=3)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(40):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    clone = pickle.loads(pickle.dumps(env))
    assert play_out(env, np.random.default_rng(1), 500) == play_out(clone, np.random.default_rng(1), 500)
    assert env.game.to_dict() == clone.game.to_dict()
