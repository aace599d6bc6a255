"""Invariants over many random games (R1, R5, R10, R12, R13, R15, R19–R23, R27, R28).

``test_invariants_over_10000_games`` plays 10,000 games over 2–6 players,
short, partner and variant games, with seats driven by uniform random play,
play-first random play and the greedy policy of ``skipbo_env.bots.greedy``:

* every step of all 10,000 games: the 162 cards with the right counts, building
  piles showing 0–11 with well-formed contents, a non-empty legal move list
  while the game is on (empty after), ``view(mover).legal_moves() ==
  legal_moves()``, and the transition checks of :func:`_check_transition`;
* every step of the 3,000 "full" games (turn limits 8–30 instead of 15–60):
  also the exact JSON round trip of the state dict and the reshuffle test of
  the seat view (:func:`conftest.check_view_hides`) for the mover and one
  other seat.

It then asserts that the interesting events (wins with cards in hand,
truncations, recycles, short refills, partner plays, empty-hand end turns, a
seat playing on with an empty stock) each happened many times, so the checks
did meet those transitions. Takes about 1.5 minutes on one core, hence
``slow``. ``test_invariants_hypothesis`` runs everything, at every step, on
300 configurations and seeds drawn by hypothesis (turn limits 1–30).
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from conftest import check_card_count, check_view_hides
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skipbo_env.bots.greedy import greedy_move
from skipbo_env.encoding import fields_from_view
from skipbo_env.rules import (
    WILD,
    Discard,
    EndTurn,
    GameConfig,
    GameState,
    Play,
    Source,
    new_game,
)

NUM_GAMES = 10_000
FULL_EVERY = 10  # games g with g % 10 < 3 get the full checks: 3,000 games
UNIFORM, PLAY_FIRST, GREEDY = 0, 1, 2


def sample_config(rng: np.random.Generator, full: bool) -> GameConfig:
    """A random configuration: 2–6 players, partner/short games, stock sizes, variants."""
    n = int(rng.integers(2, 7))
    low, high = (8, 30) if full else (15, 60)
    kwargs: dict = {"num_players": n, "turn_limit": int(rng.integers(low, high + 1))}
    if n in (4, 6) and rng.random() < 0.4:
        kwargs["partner_game"] = True
    r = rng.random()
    if r < 0.25:
        kwargs["short_game"] = True
    elif r < 0.5:
        kwargs["stock_size"] = int(rng.integers(1, 6))  # quick wins
    elif r < 0.7:
        kwargs["stock_size"] = int(rng.integers(1, 162 // n + 1))  # down to an empty draw pile (R19, R20)
    if rng.random() < 0.25:
        kwargs["allow_wild_discard"] = False
    if rng.random() < 0.25:
        kwargs["must_play_stock"] = True
    if rng.random() < 0.3:
        kwargs["first_player"] = int(rng.integers(n))
    return GameConfig(**kwargs)


def choose(state: GameState, kind: int, rng: np.random.Generator):
    legal = state.legal_moves()
    if kind == GREEDY:
        return greedy_move(fields_from_view(state.view(state.current)), legal, rng)
    if kind == PLAY_FIRST:
        plays = [m for m in legal if isinstance(m, Play)]
        if plays and rng.random() < 0.85:
            return plays[int(rng.integers(len(plays)))]
    return legal[int(rng.integers(len(legal)))]


def check_cheap(state: GameState) -> None:
    check_card_count(state)  # R1
    for pile in state.building:
        assert len(pile) <= 11  # R13: a pile of 12 leaves at once
        for i, card in enumerate(pile):
            assert card == i + 1 or card == WILD  # R2, R12
    for seat in range(state.config.num_players):
        assert state.hand_size(seat) <= 5
        assert len(state.discards[seat]) == 4  # R5
    assert len(state.building) == 4 and len(state.completed) % 12 == 0
    legal = state.legal_moves()
    if state.is_over:
        assert legal == ()
        assert list(state.view(state.current).legal_moves()) == []
    else:
        assert legal, "no legal move while the game is on"
        assert state.view(state.current).legal_moves() == legal


def check_full(state: GameState, rng: np.random.Generator) -> None:
    data = state.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert GameState.from_dict(data).to_dict() == data
    n = state.config.num_players
    check_view_hides(state, state.current, rng)
    check_view_hides(state, (state.current + 1 + int(rng.integers(n - 1))) % n, rng)


class _Before:
    """What :func:`_check_transition` needs to know of the state before a move."""

    __slots__ = ("seat", "turn", "hand_size", "draw_size", "completed_size", "building_values")

    def __init__(self, state: GameState) -> None:
        self.seat = state.current
        self.turn = state.turn
        self.hand_size = state.hand_size(state.current)
        self.draw_size = len(state.draw_pile)
        self.completed_size = len(state.completed)
        self.building_values = state.building_values()


def _check_transition(before: _Before, move, after: GameState, events: Counter) -> None:
    """What one move must change (R10, R13, R15, R16, R19–R23, R27)."""
    cfg = after.config
    seat = before.seat
    refill_possible = bool(after.draw_pile or after.completed)
    if isinstance(move, Play):
        events["play"] += 1
        assert after.turn == before.turn
        assert after.current == seat
        if move.source in (Source.PARTNER_STOCK, Source.PARTNER_DISCARD):
            events["partner play"] += 1
        completes = before.building_values[move.build_pile] == 11
        assert after.building_values()[move.build_pile] == (
            0 if completes else before.building_values[move.build_pile] + 1
        )
        events["pile completed"] += completes
        if after.winner is not None:
            events["win"] += 1
            assert move.source in (Source.STOCK, Source.PARTNER_STOCK)  # R22
            assert all(not after.stocks[s] for s in after.winners)
            if before.hand_size:
                events["win with cards in hand"] += 1
        elif move.source is Source.HAND and before.hand_size == 1:
            events["hand emptied by play"] += 1
            completed = before.completed_size + 12 * completes
            assert after.hand_size(seat) == min(5, before.draw_size + completed)  # R15, R19, R20
            if before.draw_size < 5 and completed:
                events["recycle"] += 1  # R19
                assert len(after.completed) == 0
            if before.draw_size + completed < 5:
                events["short refill"] += 1  # R20
        else:
            assert after.hand_size(seat) == before.hand_size - (move.source is Source.HAND)
        if not after.stocks[seat] and after.winner is None:
            assert cfg.partner_game and after.stocks[cfg.partner(seat)]  # R27
            events["empty own stock, game on"] += 1
        return
    assert after.turn == before.turn + 1
    if isinstance(move, EndTurn):
        events["end turn"] += 1
        assert before.hand_size == 0  # R21
    else:
        assert isinstance(move, Discard)
        events["discard"] += 1
        assert after.discards[seat][move.discard_pile][-1] == move.card  # R16
    if after.turn >= cfg.turn_limit:
        events["truncated"] += 1
        assert after.truncated and after.current == seat  # R23
        return
    nxt = after.current
    assert nxt == (seat + 1) % cfg.num_players  # R9
    assert after.hand_size(nxt) == 5 or not refill_possible  # R10, R20


def play_checked(config: GameConfig, seed: int, full: bool, events: Counter) -> GameState:
    """Play one game with the seats' policies drawn from ``seed``, checking every step."""
    rng = np.random.default_rng(seed)
    check_rng = np.random.default_rng(seed + 1_000_003)
    kinds = rng.integers(3, size=config.num_players)
    state = new_game(config, seed=seed)
    while True:
        check_cheap(state)
        if full:
            check_full(state, check_rng)
            events["full-checked step"] += 1
        if state.is_over:
            break
        before = _Before(state)
        move = choose(state, int(kinds[state.current]), rng)
        state.apply(move)
        events["step"] += 1
        _check_transition(before, move, state, events)
    events["game"] += 1
    events["full-checked game"] += full
    return state


@pytest.mark.slow
def test_invariants_over_10000_games():
    events: Counter = Counter()
    players_seen, partner_games, variants = set(), 0, Counter()
    for g in range(NUM_GAMES):
        full = g % FULL_EVERY < 3
        config = sample_config(np.random.default_rng([g, 7]), full)
        players_seen.add(config.num_players)
        partner_games += config.partner_game
        variants["short"] += config.short_game
        variants["no wild discard"] += not config.allow_wild_discard
        variants["must play stock"] += config.must_play_stock
        play_checked(config, g, full, events)
    print("\n" + ", ".join(f"{k}: {v}" for k, v in sorted(events.items())))
    assert events["game"] == NUM_GAMES and events["full-checked game"] == 3 * NUM_GAMES // 10
    assert players_seen == {2, 3, 4, 5, 6} and partner_games > NUM_GAMES // 20
    assert min(variants.values()) > NUM_GAMES // 10
    for event in ("win", "win with cards in hand", "truncated", "recycle", "end turn", "partner play",
                  "pile completed", "hand emptied by play", "empty own stock, game on", "short refill"):
        assert events[event] > NUM_GAMES // 500, event


configs = st.builds(
    lambda n, partner, short, wild, must, limit, stock: GameConfig(
        num_players=n,
        partner_game=partner and n in (4, 6),
        short_game=short and stock is None,
        allow_wild_discard=wild,
        must_play_stock=must,
        turn_limit=limit,
        stock_size=None if stock is None else min(stock, 162 // n),
    ),
    st.integers(2, 6),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.integers(1, 30),
    st.none() | st.integers(1, 81),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs, seed=st.integers(0, 2**32 - 1))
def test_invariants_hypothesis(config, seed):
    play_checked(config, seed, full=True, events=Counter())
