"""Cards, configuration and the deal: R1, R3–R9, R26, and configuration errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import all_cards, check_card_count, deal_deck

from skipbo_env.rules import (
    DECK_SIZE,
    WILD,
    ConfigError,
    GameConfig,
    StateError,
    default_stock_size,
    new_game,
    standard_deck,
    validate_deck,
)
from skipbo_env.rules.cards import card_counts, card_name, is_card


# ------------------------------------------------------------------ R1 cards
def test_r1_deck_has_162_cards_twelve_of_each_number_and_18_wilds():
    deck = standard_deck()
    assert DECK_SIZE == 162 and len(deck) == 162
    counts = card_counts(deck)
    assert counts[1:13] == [12] * 12
    assert counts[WILD] == 18


def test_r1_every_new_game_holds_exactly_the_deck():
    for n in range(2, 7):
        state = new_game(GameConfig(num_players=n), seed=n)
        assert sorted(all_cards(state)) == sorted(standard_deck())
        check_card_count(state)


def test_r1_card_helpers():
    assert card_name(WILD) == "SB" and card_name(7) == "7"
    assert is_card(1) and is_card(WILD)
    assert not is_card(0) and not is_card(14) and not is_card(True) and not is_card(3.0)


@pytest.mark.parametrize(
    ("deck", "path"),
    [
        (standard_deck()[:-1], "deck"),  # 161 cards
        (standard_deck()[:-1] + [12], "deck"),  # 17 wilds and 13 twelves
        (standard_deck()[:-1] + [0], "deck[161]"),
        (standard_deck()[:-1] + ["13"], "deck[161]"),
        ("not a deck", "deck"),
    ],
)
def test_r1_explicit_deck_must_be_the_162_cards(deck, path):
    with pytest.raises(StateError) as info:
        new_game(GameConfig(), seed=0, deck=deck)
    assert info.value.path == path
    assert str(info.value).startswith(path)


def test_r1_validate_deck_accepts_numpy_arrays():
    deck = np.array(standard_deck(), dtype=np.int64)
    assert validate_deck(deck) == standard_deck()


# ------------------------------------------------------------ R6, R26 stocks
@pytest.mark.parametrize(("n", "size"), [(2, 30), (3, 30), (4, 30), (5, 20), (6, 20)])
def test_r6_default_stock_sizes(n, size):
    assert default_stock_size(n) == size
    state = new_game(GameConfig(num_players=n), seed=1)
    assert [len(s) for s in state.stocks] == [size] * n
    assert len(state.draw_pile) == DECK_SIZE - n * size - 5  # the first player's hand (R8)


def test_r6_stock_size_is_configurable_up_to_what_the_deck_allows():
    state = new_game(GameConfig(num_players=2, stock_size=81), seed=0)
    assert [len(s) for s in state.stocks] == [81, 81]
    assert state.draw_pile == [] and state.hand_size(state.current) == 0  # nothing left to draw (R20)
    assert new_game(GameConfig(num_players=6, stock_size=27), seed=0).draw_pile[:0] == []
    with pytest.raises(ConfigError, match=r"stock_size: must be in 1\.\.81, got 82"):
        GameConfig(num_players=2, stock_size=82)
    with pytest.raises(ConfigError, match=r"stock_size: must be in 1\.\.27, got 28"):
        GameConfig(num_players=6, stock_size=28)


@pytest.mark.parametrize("n", range(2, 7))
def test_r26_short_game_stocks_hold_10(n):
    cfg = GameConfig(num_players=n, short_game=True)
    assert cfg.stock_size == 10
    state = new_game(cfg, seed=3)
    assert [len(s) for s in state.stocks] == [10] * n
    assert GameConfig(num_players=n, short_game=True, stock_size=10).stock_size == 10


# --------------------------------------------------------- R3, R4, R7, R8 deal
def test_r7_deal_one_card_at_a_time_round_robin_from_the_top():
    """The explicit deck's last card is the top; the first player gets the first card."""
    stocks = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]  # served in order: seat 2, 0, 1
    deck = deal_deck(stocks, draw_top=[10, 11, 12, WILD, 1])
    state = new_game(GameConfig(num_players=3, stock_size=3, first_player=2), deck=deck)
    assert state.stocks[2] == [1, 2, 3]
    assert state.stocks[0] == [4, 5, 6]
    assert state.stocks[1] == [7, 8, 9]
    # R7: the rest of the deck is the draw pile, in the same order, minus the first hand (R8, R10)
    assert state.draw_pile == deck[: DECK_SIZE - 9 - 5]
    assert state.hand_cards(2) == sorted([10, 11, 12, WILD, 1])


def test_r7_deal_by_hand_matches_the_docstring_convention():
    deck = list(range(1, 13)) * 12 + [WILD] * 18
    state = new_game(GameConfig(num_players=2, stock_size=4, first_player=0), deck=deck)
    top8 = deck[-8:][::-1]  # popped in this order: seat 0, seat 1, seat 0, ...
    assert state.stocks[0] == top8[0::2]
    assert state.stocks[1] == top8[1::2]


def test_r3_r4_r7_r8_places_at_the_start():
    state = new_game(GameConfig(num_players=4), seed=11)
    first = state.current
    assert len(state.building) == 4 and all(p == [] for p in state.building)  # R4, R7
    assert state.completed == []
    for seat in range(4):
        assert len(state.discards[seat]) == 4 and all(p == [] for p in state.discards[seat])  # R3, R7
        expected_hand = 5 if seat == first else 0  # R8: no hands dealt, the first player draws
        assert state.hand_size(seat) == expected_hand
    view = state.view((first + 1) % 4)
    assert view.stock_tops == tuple(s[-1] for s in state.stocks)  # R7: every stock top face up
    assert view.hand == ()


def test_r8_first_hand_comes_from_the_top_of_the_draw_pile():
    deck = deal_deck(
        [[1] * 12 + [2] * 12 + [3] * 6, [3] * 6 + [11] * 12 + [WILD] * 12], draw_top=[4, 5, 6, 7, 8, 9, 10]
    )
    state = new_game(GameConfig(first_player=0), deck=deck)
    assert state.hand_cards(0) == [6, 7, 8, 9, 10]
    assert state.draw_pile[-2:] == [4, 5]


# ------------------------------------------------------------ R9 first player
def test_r9_first_player_given():
    for n in range(2, 7):
        for first in range(n):
            state = new_game(GameConfig(num_players=n, first_player=first), seed=5)
            assert state.current == first


def test_r9_first_player_from_the_seed_is_drawn_first():
    """Without ``first_player`` the seat is the generator's first draw, before the shuffle."""
    seen = set()
    for seed in range(60):
        state = new_game(GameConfig(num_players=4), seed=seed)
        assert state.current == int(np.random.default_rng(seed).integers(4))
        seen.add(state.current)
    assert seen == {0, 1, 2, 3}


def test_r9_shuffle_follows_the_first_player_draw():
    seed = 42
    rng = np.random.default_rng(seed)
    first = int(rng.integers(3))
    deck = rng.permutation(np.array(standard_deck())).tolist()
    by_seed = new_game(GameConfig(num_players=3), seed=seed)
    by_deck = new_game(GameConfig(num_players=3, first_player=first), deck=deck)
    assert by_seed.current == first
    assert by_seed.stocks == by_deck.stocks
    assert by_seed.draw_pile == by_deck.draw_pile
    assert by_seed.hands == by_deck.hands


def test_r9_play_goes_in_seat_order():
    state = new_game(GameConfig(num_players=5, first_player=3), seed=0)
    order = []
    for _ in range(7):
        order.append(state.current)
        state.apply(next(m for m in state.legal_moves() if type(m).__name__ != "Play"))
    assert order == [3, 4, 0, 1, 2, 3, 4]


# ------------------------------------------------------------------ config
def test_config_defaults_and_round_trip():
    cfg = GameConfig()
    assert cfg.num_players == 2 and cfg.stock_size == 30 and cfg.turn_limit == 1000
    assert cfg.allow_wild_discard is True and cfg.must_play_stock is False
    assert cfg.first_player is None and not cfg.short_game and not cfg.partner_game
    for c in (cfg, GameConfig(num_players=6, partner_game=True, must_play_stock=True, first_player=5)):
        assert GameConfig.from_dict(c.to_dict()) == c


def test_config_seats_and_teams():
    cfg = GameConfig(num_players=6, partner_game=True)
    assert cfg.num_teams == 3
    assert [cfg.partner(s) for s in range(6)] == [3, 4, 5, 0, 1, 2]  # R27: opposite seats
    assert [cfg.team(s) for s in range(6)] == [0, 1, 2, 0, 1, 2]
    assert cfg.team_seats(1) == (1, 4)
    solo = GameConfig(num_players=3)
    assert solo.num_teams == 3 and solo.partner(0) is None and solo.team_seats(2) == (2,)


@pytest.mark.parametrize(
    ("kwargs", "field", "pattern"),
    [
        ({"num_players": 7}, "num_players", r"must be in 2\.\.6, got 7"),
        ({"num_players": 1}, "num_players", r"must be in 2\.\.6, got 1"),
        ({"num_players": "4"}, "num_players", r"must be an int, got str"),
        ({"num_players": 4.0}, "num_players", r"must be an int, got float"),
        ({"num_players": True}, "num_players", r"must be an int, got bool"),
        ({"num_players": 3, "partner_game": True}, "partner_game", r"needs 4 or 6 players.*got 3"),
        ({"num_players": 5, "partner_game": True}, "partner_game", r"needs 4 or 6 players.*got 5"),
        ({"num_players": 2, "partner_game": True}, "partner_game", r"needs 4 or 6 players.*got 2"),
        ({"num_players": 4, "stock_size": 41}, "stock_size", r"must be in 1\.\.40, got 41"),
        ({"stock_size": 0}, "stock_size", r"must be in 1\.\.81, got 0"),
        ({"stock_size": "30"}, "stock_size", r"must be an int"),
        ({"short_game": True, "stock_size": 15}, "stock_size", r"short game \(R26\).*10, got 15"),
        ({"short_game": 1}, "short_game", r"must be true or false, got 1"),
        ({"partner_game": "yes"}, "partner_game", r"must be true or false"),
        ({"allow_wild_discard": None}, "allow_wild_discard", r"must be true or false"),
        ({"must_play_stock": 0}, "must_play_stock", r"must be true or false"),
        ({"first_player": 2}, "first_player", r"must be in 0\.\.1, got 2"),
        ({"num_players": 6, "first_player": -1}, "first_player", r"must be in 0\.\.5, got -1"),
        ({"first_player": "0"}, "first_player", r"must be an int"),
        ({"turn_limit": 0}, "turn_limit", r"must be >= 1, got 0"),
        ({"turn_limit": 10.5}, "turn_limit", r"must be an int"),
        ({"turn_limit": None}, "turn_limit", r"must be an int"),
    ],
)
def test_config_errors_name_the_field_and_the_allowed_range(kwargs, field, pattern):
    with pytest.raises(ConfigError, match=pattern) as info:
        GameConfig(**kwargs)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    with pytest.raises(ConfigError):  # the dict route checks the same
        GameConfig.from_dict(kwargs)


def test_config_unknown_key_is_named_with_the_allowed_keys():
    with pytest.raises(ConfigError, match=r"players: unknown key; allowed keys: .*num_players") as info:
        GameConfig.from_dict({"players": 4})
    assert info.value.field == "players"
    with pytest.raises(ConfigError, match="config: must be a mapping"):
        GameConfig.from_dict([("num_players", 2)])


def test_config_is_frozen():
    cfg = GameConfig()
    with pytest.raises(AttributeError):
        cfg.num_players = 3  # type: ignore[misc]
