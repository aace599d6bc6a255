"""The OpenSpiel game ``python_skipbo`` (skipbo_env.openspiel, the ``openspiel`` extra).

* OpenSpiel's own random simulation test for 2, 3, 4 (partner) and 6 players.
* The playthrough file ``tests/playthroughs/python_skipbo.txt``, written by OpenSpiel's
  playthrough tool, regenerates exactly (``python tests/playthroughs/make_playthrough.py``
  rewrites it).
* Rules agreement: the golden recorded games (tests/golden) replayed through the pyspiel game,
  each chance node forced to the card the rules core dealt or drew, give the same states and
  the same returns as the rules core (R6–R10 deal, R10/R15 refills, R19 reshuffles, R22 win,
  R23 and the move limit).
* Chance nodes, observer, ``resample_from_infostate`` (no leak, IS-MCTS's key check),
  serialization, the bot wrapper.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="the OpenSpiel game needs the 'openspiel' extra: pip install 'skipbo-env[openspiel]'"
)

import skipbo_env.openspiel  # noqa: E402,F401  (registers python_skipbo)
from skipbo_env.bots import make_bot  # noqa: E402
from skipbo_env.encoding import encode_action, encode_view  # noqa: E402
from skipbo_env.episode.rewards import terminal_rewards  # noqa: E402
from skipbo_env.openspiel import CHANCE_SEAT_OFFSET, SkipBoBot, config_from_params  # noqa: E402
from skipbo_env.rules import ConfigError, GameConfig, GameState, move_from_dict, new_game  # noqa: E402
from skipbo_env.rules.cards import DECK_SIZE  # noqa: E402

GOLDEN = sorted((Path(__file__).resolve().parent / "golden" / "games").glob("*.json"))


def params_of(config: GameConfig) -> dict:
    """The OpenSpiel parameters of a rules configuration."""
    return {
        "players": config.num_players,
        "partner_game": config.partner_game,
        "short_game": config.short_game,
        "stock_size": config.stock_size,
        "allow_wild_discard": config.allow_wild_discard,
        "must_play_stock": config.must_play_stock,
        "first_player": -1 if config.first_player is None else config.first_player,
        "turn_limit": config.turn_limit,
        "move_limit": config.move_limit,
    }


def card_total(gs: GameState) -> int:
    return (
        len(gs.draw_pile) + sum(map(sum, gs.hands)) + sum(map(len, gs.stocks))
        + sum(len(p) for piles in gs.discards for p in piles) + sum(map(len, gs.building)) + len(gs.completed)
    )


def play_random(state, rng: np.random.Generator, max_steps: int = 100_000):
    """Play ``state`` to its end with uniform random actions, checking the chance nodes and the
    162 cards (R1) at every decision."""
    for _ in range(max_steps):
        if state.is_terminal():
            return state
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            assert abs(sum(probs) - 1.0) < 1e-9 and min(probs) > 0
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            assert card_total(state.game_state) == DECK_SIZE
            state.apply_action(int(rng.choice(state.legal_actions())))
    raise AssertionError("the game did not end")


# ------------------------------------------------------------------ OpenSpiel's tests
@pytest.mark.parametrize(
    "params",
    [
        {"players": 2, "stock_size": 5},
        {"players": 3, "stock_size": 5},
        {"players": 4, "partner_game": True, "stock_size": 5},
        {"players": 6, "stock_size": 5},
        {"players": 2, "short_game": True, "must_play_stock": True, "allow_wild_discard": False},
    ],
    ids=["2p", "3p", "4p-partner", "6p", "2p-short-variants"],
)
def test_random_sim_test(params):
    game = pyspiel.load_game("python_skipbo", params)
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize("players,partner", [(2, False), (3, False), (4, True), (6, False)])
def test_random_sim_test_full_stocks(players, partner):
    game = pyspiel.load_game("python_skipbo", {"players": players, "partner_game": partner})
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_playthrough_regenerates():
    import importlib.util

    path = Path(__file__).resolve().parent / "playthroughs" / "make_playthrough.py"
    spec = importlib.util.spec_from_file_location("make_playthrough", path)
    assert spec is not None and spec.loader is not None
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    assert maker.PATH.read_text() == maker.playthrough_text(), (
        "tests/playthroughs/python_skipbo.txt is out of date: python tests/playthroughs/make_playthrough.py"
    )


# ------------------------------------------------------------------ the game's parameters
def test_load_game_parameters_and_types():
    game = pyspiel.load_game("python_skipbo", {"players": 3})
    assert game.num_players() == 3
    assert game.num_distinct_actions() == 125
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    partner = pyspiel.load_game("python_skipbo", {"players": 4, "partner_game": True})
    assert partner.num_distinct_actions() == 145
    assert partner.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM  # two teams (R27)
    assert pyspiel.load_game("python_skipbo").get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert pyspiel.load_game("python_skipbo(players=5,short_game=True)").config.stock_size == 10  # R26


def test_bad_parameters_name_the_field():
    with pytest.raises(ConfigError, match="^players: must be in 2..6, got 7$"):
        config_from_params({"players": 7})
    with pytest.raises(ConfigError, match="partner_game"):
        config_from_params({"players": 3, "partner_game": True})
    with pytest.raises(ValueError, match="no parameter 'num_players'"):
        config_from_params({"num_players": 3})


# ------------------------------------------------------------------ chance nodes
def test_deal_is_chance_nodes_over_the_deck():
    """R9: the first player is a chance node; R6/R7: then every stock card; R8/R10: the first hand."""
    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": 3})
    state = game.new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(CHANCE_SEAT_OFFSET, 0.5), (CHANCE_SEAT_OFFSET + 1, 0.5)]
    state.apply_action(CHANCE_SEAT_OFFSET + 1)
    outcomes = dict(state.chance_outcomes())
    assert outcomes[12] == pytest.approx(18 / 162)  # 18 wilds of 162 cards (R1)
    assert outcomes[0] == pytest.approx(12 / 162)
    for _ in range(6 + 5):
        state.apply_action(12)  # wilds all the way
    gs = state.game_state
    assert not state.is_chance_node() and state.current_player() == 1
    assert gs.stocks == [[13] * 3, [13] * 3]
    assert gs.hand_cards(1) == [13] * 5
    assert len(gs.draw_pile) == 162 - 11


def test_impossible_chance_outcome_is_refused():
    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": 9, "first_player": 0})
    state = game.new_initial_state()
    for _ in range(12):
        state.apply_action(0)  # the twelve 1s of the deck (R1)
    with pytest.raises(ValueError, match="chance outcome 0 .card 1. cannot happen here"):
        state.apply_action(0)
    with pytest.raises(ValueError, match="cannot happen here"):
        state.apply_action(CHANCE_SEAT_OFFSET)


def test_resample_during_the_deal_deals_as_many_cards():
    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": 3})
    state = game.new_initial_state()
    for action in [CHANCE_SEAT_OFFSET + 1, 0, 1, 2]:
        state.apply_action(action)
    rng = np.random.default_rng(0)
    sample = state.resample_from_infostate(0, lambda: float(rng.random()))
    assert str(sample) == str(state) == "dealing: first player 1, 3 of 11 cards dealt"
    assert sample.information_state_string(0) == state.information_state_string(0)


def test_refill_and_hand_emptied_draws_are_chance_nodes():
    """R10: the next seat's refill after a discard; R15: five new cards once the hand is played out."""
    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": 2, "first_player": 0})
    state = game.new_initial_state()
    for card in [5, 5, 5, 5] + [1, 2, 3, 4, 5]:
        state.apply_action(card - 1)
    for card in [1, 2, 3, 4]:  # play the hand 1..4 onto building pile 0
        state.apply_action(
            encode_action(
                move_from_dict({"kind": "play", "source": "hand", "card": card, "build_pile": 0}), game.config
            )
        )
    assert not state.is_chance_node()
    state.apply_action(encode_action(move_from_dict({"kind": "play", "source": "hand", "card": 5, "build_pile": 0}),
                                     game.config))
    assert state.is_chance_node() and state.pending_draws == 5  # R15
    for _ in range(5):
        state.apply_action(12)
    assert state.game_state.hand_cards(0) == [13] * 5
    state.apply_action(encode_action(move_from_dict({"kind": "discard", "card": 13, "discard_pile": 0}), game.config))
    assert state.is_chance_node() and state.pending_draws == 5  # R10: seat 1 draws a hand
    assert state.history_tokens(0)[-1].startswith("0:")
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert state.current_player() == 1 and state.game_state.hand_size(1) == 5


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_games_agree_with_rules_core(path):
    """Each recorded game replayed with chance nodes forced to the core's cards: same states, same returns."""
    record = json.loads(path.read_text())
    config = GameConfig.from_dict(record["config"])
    core = new_game(config, seed=record["seed"])
    game = pyspiel.load_game("python_skipbo", params_of(config))
    state = game.new_initial_state()
    n = config.num_players
    if config.first_player is None:
        state.apply_action(CHANCE_SEAT_OFFSET + core.current)
    for i in range(config.stock_size):
        for k in range(n):
            state.apply_action(core.stocks[(core.current + k) % n][i] - 1)
    for card in core.hand_cards(core.current):
        state.apply_action(card - 1)
    assert_same(state, core)
    for i, move_dict in enumerate(record["moves"]):
        if i == len(record["moves"]) // 2:
            assert_round_trips(game, state)
        move = move_from_dict(move_dict)
        core.apply(move)
        state.apply_action(encode_action(move, config))
        drawer = core.current
        while state.is_chance_node():  # the cards the core drew: its hand less ours
            ours = state.game_state.hands[drawer]
            card = next(v for v in range(1, 14) if core.hands[drawer][v] > ours[v])
            state.apply_action(card - 1)
        assert_same(state, core)
    assert state.is_terminal()
    assert state.returns() == list(terminal_rewards(config, core.winner))
    assert core.winner == record["winner"]
    assert_round_trips(game, state)


def assert_round_trips(game, state) -> None:
    """The state string, the game-and-state string and a pickle all give back the same state."""
    copies = [game.deserialize_state(state.serialize()),
              pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1],
              pickle.loads(pickle.dumps(state))]
    for copy in copies:
        assert str(copy) == str(state) and copy.history() == state.history()
        assert copy.returns() == state.returns() and copy.legal_actions() == state.legal_actions()
        assert [copy.information_state_string(s) for s in range(game.num_players())] == [
            state.information_state_string(s) for s in range(game.num_players())]


def assert_same(state, core: GameState) -> None:
    ours = state.game_state
    assert ours.stocks == core.stocks
    assert ours.discards == core.discards
    assert ours.building == core.building
    assert sorted(ours.completed) == sorted(core.completed)
    assert (ours.current, ours.turn, ours.moves, ours.winner) == (core.current, core.turn, core.moves, core.winner)
    if core.is_over:
        # a move that ends the game makes no chance nodes: a refill it made (the move limit can
        # stop the game after a discard) took other cards, so only the sizes agree
        assert [sum(h) for h in ours.hands] == [sum(h) for h in core.hands]
        assert len(ours.draw_pile) == len(core.draw_pile)
        assert state.is_terminal()
    else:
        assert ours.hands == core.hands
        assert sorted(ours.draw_pile) == sorted(core.draw_pile)
        assert sorted(state.legal_actions()) == sorted(encode_action(m, core.config) for m in core.legal_moves())


# ------------------------------------------------------------------ observer
def test_observation_tensor_is_the_project_vector():
    game = pyspiel.load_game("python_skipbo", {"players": 3, "stock_size": 4})
    state = game.new_initial_state()
    rng = np.random.default_rng(1)
    while state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(actions, p=probs)))
    for seat in range(3):
        expected = encode_view(state.game_state.view(seat))
        np.testing.assert_array_equal(np.array(state.observation_tensor(seat)), expected)
        np.testing.assert_array_equal(np.array(state.information_state_tensor(seat)), expected)
    assert game.observation_tensor_size() == expected.size


def test_strings_hide_other_seats_cards():
    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": 3, "first_player": 0})
    state = game.new_initial_state()
    for card in [12, 12, 12, 12, 12, 12] + [1, 1, 1, 1, 1]:
        state.apply_action(card - 1)
    state.apply_action(encode_action(move_from_dict({"kind": "discard", "card": 1, "discard_pile": 0}), game.config))
    for card in [7, 7, 7, 7, 7]:
        state.apply_action(card - 1)  # seat 1 draws five 7s
    own = state.information_state_string(1)
    other = state.information_state_string(0)
    assert "1+7" in own and "1+?" in other and "1+7" not in other
    assert "hand 7 7 7 7 7" in state.observation_string(1)
    assert "hand 7" not in state.observation_string(0)
    observer = game.make_py_observer(pyspiel.IIGObservationType(
        public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE))
    observer.set_from(state, 1)
    assert "hand_counts" not in observer.dict and not observer.string_from(state, 1).startswith("seat")
    with pytest.raises(ValueError, match="ALL_PLAYERS"):
        game.make_py_observer(pyspiel.IIGObservationType(
            public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.ALL_PLAYERS))


# ------------------------------------------------------------------ resampling, serialization, bots
def _midgame(seed: int, params: dict):
    game = pyspiel.load_game("python_skipbo", params)
    state = game.new_initial_state()
    rng = np.random.default_rng(seed)
    steps = 0
    while steps < 60 or state.is_chance_node():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
        steps += 1
    return game, state


@pytest.mark.parametrize(
    "params", [{"players": 2, "stock_size": 8}, {"players": 4, "partner_game": True, "stock_size": 5}]
)
def test_resample_keeps_the_infostate_and_varies_hidden_cards(params):
    game, state = _midgame(3, params)
    seat = state.current_player()
    key = state.information_state_string(seat)
    rng = np.random.default_rng(0)
    others = set()
    for _ in range(10):
        sample = state.resample_from_infostate(seat, lambda: float(rng.random()))
        assert sample.information_state_string(seat) == key  # IS-MCTS asserts this
        assert sample.legal_actions() == state.legal_actions()
        gs = sample.game_state
        assert card_total(gs) == DECK_SIZE
        other = (seat + 1) % game.num_players()
        assert all(t.endswith("?") for t in sample.history_tokens(other) if t.startswith(f"{other}+"))  # no leak
        others.add(tuple(gs.hand_cards(other)) + tuple(gs.stocks[other]))
        if len(others) < 3:
            play_random(sample, rng)  # the sampled game plays on to its end
    assert len(others) > 1


def test_serialize_round_trip_and_clone_independence():
    game, state = _midgame(5, {"players": 3})
    text = state.serialize()
    again = game.deserialize_state(text)
    assert str(again) == str(state) and again.history() == state.history()
    assert again.information_state_string(1) == state.information_state_string(1)
    copy = pickle.loads(pickle.dumps(state))
    assert str(copy) == str(state)
    clone = state.clone()
    play_random(clone, np.random.default_rng(0))
    assert str(again) == str(state)  # the original did not move


def test_skipbo_bot_plays_the_heuristic_through_evaluate_bots():
    from open_spiel.python.algorithms import evaluate_bots

    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": 5})
    bots = [SkipBoBot(make_bot("heuristic", game.config, seed=0)), SkipBoBot(make_bot("greedy", game.config, seed=1))]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="decision node"):
        bots[0].step(game.new_initial_state())


def test_ismcts_bot_finishes_a_game():
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": 2})
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), uct_c=2.0,
                           max_simulations=5, random_state=np.random.RandomState(0))
    rng = np.random.default_rng(0)
    bot.set_resampler(lambda s, p: s.resample_from_infostate(p, lambda: float(rng.random())))
    heuristic = SkipBoBot(make_bot("heuristic", game.config, seed=0))
    state = game.new_initial_state()
    chance = np.random.RandomState(0)
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(chance.choice(actions, p=probs)))
        else:
            player = state.current_player()
            state.apply_action(bot.step(state) if player == 0 else heuristic.step(state))
    assert sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])
