"""The style agents (skipbo_env.bots.styles): legal play everywhere, determinism, no peeking,
each style's signature decision on a hand-built position, and a strength smoke test."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import W, hidden_reshuffle, make_state

from skipbo_env.bots import BOTS, make_bot
from skipbo_env.bots.styles import STYLES, stock_need, turn_lines
from skipbo_env.encoding import decode_action, fields_from_view, observe
from skipbo_env.rules import Discard, GameConfig, GameState, Play, Source, new_game

NAMES = sorted(STYLES)

CONFIGS = {
    "2p": GameConfig(turn_limit=400),
    "3p-short": GameConfig(num_players=3, short_game=True, turn_limit=300),
    "4p-short": GameConfig(num_players=4, short_game=True, turn_limit=300),
    "5p-short": GameConfig(num_players=5, short_game=True, turn_limit=300),
    "6p-short": GameConfig(num_players=6, short_game=True, turn_limit=300),
    "4p-partner": GameConfig(num_players=4, partner_game=True, short_game=True, turn_limit=300),
    "6p-partner": GameConfig(num_players=6, partner_game=True, short_game=True, turn_limit=300),
    "no-wild-discard": GameConfig(short_game=True, allow_wild_discard=False, turn_limit=300),
    "must-play-stock": GameConfig(num_players=3, short_game=True, must_play_stock=True, turn_limit=300),
}


def play_out(config: GameConfig, names: list[str], seed: int) -> tuple[GameState, list[int]]:
    """One game with ``names`` seated in order, every agent asked through ``act_view``; every
    action is checked against the seat's mask. Returns the final state and the actions."""
    state = new_game(config, seed)
    agents = [make_bot(name, config, seed=seed * 10 + s) for s, name in enumerate(names)]
    actions = []
    while not state.is_over:
        seat = state.current
        action = agents[seat].act_view(state.view(seat))
        assert observe(state, seat)["action_mask"][action] == 1, f"{names[seat]} chose masked action {action}"
        actions.append(action)
        state.apply(decode_action(action, config))
    return state, actions


def test_styles_are_registered_by_name():
    assert set(STYLES) == {"stock-chaser", "hand-emptier", "blocker", "high-first"}
    for name, cls in STYLES.items():
        assert BOTS[name] is cls and cls.reads_view
        assert type(make_bot(name, GameConfig(), seed=0)) is cls


@pytest.mark.parametrize("key", list(CONFIGS))
def test_styles_play_only_legal_moves(key):
    """Mixed tables of the four styles (and random, for odd positions) in every configuration:
    every action is legal (R11-R21, R27 in the partner games) and the games end."""
    config = CONFIGS[key]
    pool = [*NAMES, "random"]
    for game in range(3):
        names = [pool[(game + s) % len(pool)] for s in range(config.num_players)]
        state, _ = play_out(config, names, seed=300 + game)
        assert state.is_over


@pytest.mark.parametrize("name", NAMES)
def test_view_path_matches_vector_path(name):
    """``act`` (the observation vector) and ``act_view`` (the view) choose the same action."""
    for config in (GameConfig(num_players=3, short_game=True), GameConfig(num_players=4, partner_game=True,
                                                                         short_game=True)):
        state = new_game(config, 11)
        by_vector = [make_bot(name, config, seed=s) for s in range(config.num_players)]
        by_view = [make_bot(name, config, seed=s) for s in range(config.num_players)]
        checked = 0
        while not state.is_over:
            seat = state.current
            expected = by_vector[seat].act(observe(state, seat))
            assert by_view[seat].act_view(state.view(seat)) == expected
            state.apply(decode_action(expected, config))
            checked += 1
        assert checked > 20


@pytest.mark.parametrize("name", NAMES)
def test_styles_are_deterministic_for_a_seed(name):
    config = GameConfig(num_players=3, short_game=True)
    first = play_out(config, [name, "greedy", name], seed=5)[1]
    assert play_out(config, [name, "greedy", name], seed=5)[1] == first


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("config", [GameConfig(), GameConfig(num_players=3, short_game=True),
                                    GameConfig(num_players=4, partner_game=True, short_game=True),
                                    GameConfig(num_players=6, short_game=True)],
                         ids=["2p", "3p-short", "4p-partner", "6p-short"])
def test_styles_do_not_peek(name, config):
    """The decision is the same when every card the seat cannot see is reshuffled (R3, R28)."""
    state = new_game(config, 21)
    players = [make_bot(["heuristic", "greedy", name][s % 3], config, seed=s) for s in range(config.num_players)]
    rng = np.random.default_rng(0)
    changed = asked = 0
    while not state.is_over and asked < 40:
        seat = state.current
        shuffled = hidden_reshuffle(state, seat, rng)
        changed += shuffled.to_dict() != state.to_dict()
        real = make_bot(name, config, seed=asked).act_view(state.view(seat))
        assert make_bot(name, config, seed=asked).act_view(shuffled.view(seat)) == real
        asked += 1
        state.apply(decode_action(players[seat].act_view(state.view(seat)), config))
    assert asked == 40 and changed > 30  # the hidden cards really moved


def _first_moves(name: str, state: GameState, count: int) -> list:
    """The first ``count`` moves of seat 0's agent, all in its turn (at most up to its discard)."""
    agent = make_bot(name, state.config, seed=0)
    out: list = []
    while len(out) < count and state.current == 0 and not (out and isinstance(out[-1], Discard)):
        move = decode_action(agent.act_view(state.view(0)), state.config)
        out.append(move)
        state.apply(move)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_style_reaches_its_stock_in_example_e2(name):
    """E2: stock 5 on a pile showing 3 with hand 4: hand 4, then stock 5 (R11, R14)."""
    state = make_state(hands={0: [4, 8, 9, 11, W]}, stocks={0: [12, 7, 5]}, building=[3, 0, 0, 0])
    assert _first_moves(name, state, 2) == [Play(Source.HAND, 0, card=4), Play(Source.STOCK, 0)]


def test_stock_chaser_takes_the_shortest_chain():
    """Stock 5: hand 4 on the pile showing 3 (two plays) rather than 1 2 3 4 on an empty pile."""
    state = make_state(hands={0: [1, 2, 3, 4, 12]}, stocks={0: [12, 5]}, building=[3, 0, 0, 0])
    assert _first_moves("stock-chaser", state, 2) == [Play(Source.HAND, 0, card=4), Play(Source.STOCK, 0)]


def test_hand_emptier_spends_a_wild_to_empty_its_hand():
    """Hand 1 2 3 wild 5 with the stock out of reach: all five go down, the wild as 4 (R2),
    and five new cards are drawn in the same turn (R15). The stock-chaser keeps its wild."""
    position = dict(hands={0: [1, 2, 3, 5, W]}, stocks={0: [12, 10], 1: [12, 12]})
    state = make_state(**position)
    moves = _first_moves("hand-emptier", state, 5)
    assert all(isinstance(m, Play) and m.source is Source.HAND for m in moves)
    assert state.hand_size(0) == 5 and state.current == 0
    chaser = _first_moves("stock-chaser", make_state(**position), 5)
    assert not any(isinstance(m, Play) and m.card == W for m in chaser)


def test_blocker_does_not_set_up_the_next_stock():
    """Hand 5 on the pile showing 4 would let the opponent play its stock 6: the blocker discards."""
    state = make_state(hands={0: [5, 9, 10, 11, 12]}, stocks={0: [12, 12], 1: [12, 6]}, building=[4, 0, 0, 0])
    assert isinstance(_first_moves("blocker", state, 1)[0], Discard)


def test_blocker_plays_past_the_next_stock_number():
    """A pile shows 5 and the opponent's stock is 6: the blocker covers it with its hand 6."""
    state = make_state(hands={0: [6, 10, 10, 11, 12]}, stocks={0: [12, 12], 1: [12, 6]}, building=[5, 0, 0, 0])
    assert _first_moves("blocker", state, 1) == [Play(Source.HAND, 0, card=6)]


def test_high_first_keeps_its_wild_off_the_piles_and_out_of_its_discards():
    """The stock 8 is out of reach: the wild stays in the hand; the turn ends with a number discarded."""
    state = make_state(hands={0: [W, 1, 2, 11, 12]}, stocks={0: [12, 8], 1: [12, 12]}, building=[9, 0, 0, 0])
    moves = _first_moves("high-first", state, 6)
    assert not any(isinstance(m, Play) and m.card == W for m in moves)
    assert isinstance(moves[-1], Discard) and moves[-1].card != W


def test_stock_need_counts_the_missing_numbers():
    state = make_state(hands={0: [4, 8, 9, 11, W]}, stocks={0: [12, 7]}, building=[3, 0, 0, 0])
    obs = fields_from_view(state.view(0))
    # stock 7 on the pile showing 3 needs 4 5 6: the hand gives 4 and a wild, 6 is missing
    assert stock_need(7, obs.building_values, [0, *obs.hand_counts], obs.me.discard_tops) == 1
    assert stock_need(7, (3, 0, 0, 0), [0] * 14, (None,) * 4) == 3
    assert stock_need(4, (3, 0, 0, 0), [0] * 14, (None,) * 4) == 0
    lines = turn_lines(obs)
    assert lines[0].moves == () and not any(line.stock for line in lines)
    assert max(len(line.moves) for line in lines) == 2  # 4 then the wild as 5 (or the wild first)


@pytest.mark.parametrize("name", NAMES)
def test_styles_beat_random_and_greedy(name):
    """A strength smoke test, not a benchmark (docs/opponents.md has the tables)."""
    short = GameConfig(short_game=True)
    against_random = 0
    for g in range(20):
        names = [name, "random"] if g % 2 == 0 else ["random", name]
        against_random += play_out(short, names, seed=g)[0].winner == names.index(name)
    assert against_random >= 18, f"{name} won {against_random}/20 against random"
    config = GameConfig(num_players=2)
    wins = 0
    for g in range(20):
        names = [name, "greedy"] if g % 2 == 0 else ["greedy", name]
        state, _ = play_out(config, names, seed=1000 + g)
        wins += state.winner == names.index(name)
    assert wins >= 12, f"{name} won {wins}/20 against greedy"


def test_tournaments_seat_the_styles_by_name():
    """The styles are Python agents: a tournament with them plays on the rules layer (the batched
    engine replays only random, greedy and the heuristic) and reproduces from its seed."""
    tournament = pytest.importorskip("skipbo_env.agents.tournament")
    config = GameConfig(num_players=3, short_game=True)
    first = tournament.run_tournament(["heuristic", "blocker", "hand-emptier"], config, games=3, seed=4, workers=1)
    again = tournament.run_tournament(["heuristic", "blocker", "hand-emptier"], config, games=3, seed=4, workers=1)
    assert [g.winner for g in first.games] == [g.winner for g in again.games]
    assert sum(a.wins for a in first.agents) + sum(g.truncated for g in first.games) == 3
