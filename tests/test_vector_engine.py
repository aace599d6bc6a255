"""The batched engine against the rules core.

* ``test_differential_*``: the engine and the rules core play the same games
  from the same deals (``new_game`` -> ``to_dict`` -> ``BatchEngine.load``),
  the same random legal move in both; after every decision the legal-action
  mask, the observation vector of every seat (bit for bit) and the exported
  state dict (generator state included) must be equal. 1,060 dealt games
  over 2–6 players, short, partner and variant games, plus hand-built
  positions for the rare transitions (R20, R21, partner wins, completions
  right before a reshuffle). It then checks that wins, truncations (turn
  limit and move limit), reshuffles (R19), short draws (R20), mid-turn
  refills (R15) and empty-hand end turns (R21) all happened.
* The move limit: a game stuck in one endless turn is truncated at exactly
  the same move by both engines.
* The numpy PCG64 protocol of the kernels (deals and reshuffles agree by
  construction), bad input, the in-engine agents, lazy import, what the first env compiles.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from conftest import state_dict

from skipbo_env.bots.greedy import greedy_move
from skipbo_env.encoding import action_mask, encode_action, encode_view
from skipbo_env.rules import (
    ALL_MOVES,
    WILD,
    EndTurn,
    GameConfig,
    GameOverError,
    GameState,
    IllegalMoveError,
    Play,
    Source,
    StateError,
    new_game,
)
from skipbo_env.rules.serialization import rng_to_dict

vector = pytest.importorskip("skipbo_env.vector")
BatchEngine = vector.BatchEngine
K = pytest.importorskip("skipbo_env.vector._kernels")

# (config fields, games): 1,060 games in all
DIFFERENTIAL_CONFIGS = [
    ({"num_players": 2, "turn_limit": 40}, 150),
    ({"num_players": 2, "stock_size": 70, "turn_limit": 120}, 100),  # 17-card draw pile: many reshuffles
    ({"num_players": 2, "short_game": True, "must_play_stock": True, "allow_wild_discard": False}, 100),
    ({"num_players": 3, "stock_size": 5, "turn_limit": 100}, 100),
    ({"num_players": 3, "stock_size": 50, "allow_wild_discard": False, "turn_limit": 90}, 80),
    ({"num_players": 4, "partner_game": True, "stock_size": 5, "turn_limit": 100}, 120),
    ({"num_players": 4, "stock_size": 38, "partner_game": True, "must_play_stock": True, "turn_limit": 90}, 70),
    ({"num_players": 5, "stock_size": 5, "turn_limit": 80, "first_player": 3}, 100),
    ({"num_players": 6, "partner_game": True, "stock_size": 4, "turn_limit": 100}, 120),
    ({"num_players": 6, "stock_size": 26, "turn_limit": 60, "must_play_stock": True}, 80),
    ({"num_players": 3, "stock_size": 40, "move_limit": 150}, 40),  # truncated at the move limit
]
PLAY_BIAS = 0.8
"""Probability of picking among the legal plays (when there is one) rather than among all legal moves:
games then progress to wins within the small turn limits."""


def pick_move(legal, rng: np.random.Generator):
    plays = [m for m in legal if isinstance(m, Play)]
    if plays and rng.random() < PLAY_BIAS:
        return plays[int(rng.integers(len(plays)))]
    return legal[int(rng.integers(len(legal)))]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check_game(engine, slot: int, state: GameState, masks: np.ndarray, obs: list[np.ndarray]) -> None:
    """Mask, every seat's observation and the whole state of one slot against the rules core."""
    config = state.config
    expected_mask = action_mask(state.legal_moves(), config)
    assert same_bits(masks[slot], expected_mask), f"mask differs at turn {state.turn}"
    for seat in range(config.num_players):
        expected = encode_view(state.view(seat))
        assert same_bits(obs[seat][slot], expected), f"observation of seat {seat} differs at turn {state.turn}"
    assert engine.export(slot) == state.to_dict(), f"state differs at turn {state.turn}"


def note_events(before: GameState, move, after: GameState, events: Counter) -> None:
    if len(after.completed) < len(before.completed):
        events["reshuffle R19"] += 1
    if not after.is_over and not after.draw_pile and not after.completed and after.hand_size(after.current) < 5:
        events["short draw R20"] += 1
    if isinstance(move, Play) and move.source is Source.HAND and before.hand_size(before.current) == 1:
        if after.hand_size(before.current) > 0:
            events["refill R15"] += 1
    if isinstance(move, EndTurn):
        events["end turn R21"] += 1
    if isinstance(move, Play) and move.source is Source.PARTNER_STOCK:
        events["partner stock play"] += 1
    if after.winner is not None:
        events["win"] += 1
    if after.truncated:
        events["truncated"] += 1
        if after.moves >= after.config.move_limit:
            events["move limit"] += 1


def play_differential(states: list[GameState], rng: np.random.Generator, events: Counter) -> int:
    """Play every state to its end in the engine and in the rules core, checking after every decision."""
    config = states[0].config
    engine = BatchEngine(config, len(states), seed=0)
    for slot, state in enumerate(states):
        engine.load(slot, state.to_dict())
    active = list(range(len(states)))
    decisions = 0
    while active:
        masks = engine.masks()
        obs = [engine.observations(seats=seat).copy() for seat in range(config.num_players)]
        rows, actions, still = [], [], []
        for slot in active:
            state = states[slot]
            check_game(engine, slot, state, masks, obs)
            if state.is_over:
                continue
            before = state.copy()
            move = pick_move(state.legal_moves(), rng)
            state.apply(move)
            note_events(before, move, state, events)
            rows.append(slot)
            actions.append(encode_action(move, config))
            still.append(slot)
        if rows:
            engine.step(np.array(actions), rows=np.array(rows))
            decisions += len(rows)
        active = still
    return decisions


@pytest.fixture(scope="module")
def events() -> Counter:
    return Counter()


@pytest.mark.parametrize("index", range(len(DIFFERENTIAL_CONFIGS)))
def test_differential_dealt_games(index, events):
    fields, games = DIFFERENTIAL_CONFIGS[index]
    config = GameConfig(**fields)
    states = [new_game(config, seed=1000 * index + g) for g in range(games)]
    rng = np.random.default_rng(index)
    decisions = play_differential(states, rng, events)
    events["games"] += games
    events["decisions"] += decisions
    assert all(state.is_over for state in states)


def hand_built_positions() -> list[dict]:
    """Rare transitions: empty draw and completed piles (R20, R21), team wins, completion before a reshuffle."""
    return [
        # R20/R21: nothing left to draw; seat 0 holds 1, 2 and empties its hand.
        state_dict(2, hands={0: [1, 2], 1: [5, 6, 7]}, rest=("discard", 1, 0), turn_limit=40),
        # a pile at 11 and one completed pile: playing the 12 then emptying the hand reshuffles both (R13, R15, R19)
        state_dict(
            2, hands={0: [12], 1: [3, 4]}, building=(11, 0, 0, 0), completed=1, rest=("discard", 1, 2), turn_limit=40
        ),
        # partner game: seat 2's stock is empty, seat 0 plays its last stock card or the partner's (R27)
        state_dict(
            4,
            partner_game=True,
            stocks={0: [7, 1], 2: [], 1: [9, 9], 3: [8, 8]},
            hands={0: [2, 3, 4, 5, 6]},
            building=(0, 1, 5, 0),
        ),
        # 6 players, partners; wilds everywhere on the discard piles
        state_dict(
            6,
            partner_game=True,
            stock_fill=2,
            hands={0: [WILD, WILD, 1]},
            discards={3: [[WILD, 4], [2], [], [WILD]], 0: [[3], [], [], []]},
            building=(10, 0, 3, 11),
            completed=2,
            rest=("discard", 5, 1),
            turn_limit=60,
        ),
        # must_play_stock with wilds not discardable
        state_dict(
            3,
            must_play_stock=True,
            allow_wild_discard=False,
            hands={0: [WILD, WILD, WILD]},
            stocks={0: [4, 1]},
            rest=("discard", 2, 3),
            turn_limit=40,
        ),
    ]


def test_differential_hand_built_positions(events):
    rng = np.random.default_rng(7)
    for data in hand_built_positions():  # 30 copies of each, with different reshuffle streams
        states = [GameState.from_dict(dict(data, rng=rng_to_dict(np.random.default_rng(k)))) for k in range(30)]
        events["decisions"] += play_differential(states, rng, events)


def test_differential_covered_the_rare_transitions(events):
    """Runs after the differential tests: every transition of interest was met many times."""
    if events["games"] < 1000:
        pytest.skip("run together with the differential tests")
    for name in ("win", "truncated", "move limit", "reshuffle R19", "short draw R20", "refill R15",
                 "end turn R21", "partner stock play"):
        assert events[name] >= 20, f"{name} happened only {events[name]} times: {dict(events)}"


# --------------------------------------------------------------------- move limit
def test_move_limit_truncates_the_endless_turn_like_the_rules_core():
    """Always playing the lowest legal action id plays hand cards (wilds too) and never discards: from
    move 311 of this 2-player deal the cards cycle hand -> building pile -> completed pile -> draw pile
    -> hand (R13, R15, R19) and the turn never ends. Both engines stop at exactly ``move_limit`` moves,
    truncated, in equal states; a move after that is refused by both."""
    limit = 600
    config = GameConfig(num_players=2, move_limit=limit)
    state = new_game(config, seed=0)
    engine = BatchEngine(config, 2, seed=0)
    engine.load(0, state.to_dict())
    turns_at = {}
    while not state.is_over:
        masks = engine.masks()
        assert not engine.done[0]
        action = int(np.flatnonzero(masks[0])[0])
        legal = state.legal_moves()
        move = min(legal, key=lambda m: encode_action(m, config))
        assert action == encode_action(move, config)
        state.apply(move)
        engine.step(np.array([action]), rows=[0])
        assert engine.export(0) == state.to_dict(), f"state differs at move {state.moves}"
        turns_at[state.moves] = state.turn
    assert state.moves == limit and state.truncated and state.winner is None
    assert state.turn < config.turn_limit
    assert turns_at[320] == turns_at[limit]  # stuck in one turn: only the move limit ends the game
    assert engine.status.tolist()[0] == 2 and engine.done[0] and int(engine.moves[0]) == limit
    assert engine.masks()[0].sum() == 0
    assert engine.to_state(0).truncated
    with pytest.raises(GameOverError, match="move limit"):
        state.apply(move)
    with pytest.raises(GameOverError, match="slot 0"):
        engine.step(np.array([action]), rows=[0])
    engine.reset([0])  # a new game starts from zero moves
    assert int(engine.moves[0]) == 0 and engine.export(0)["moves"] == 0 and not engine.done[0]


def test_move_limit_counts_every_move_and_loads_midway():
    """A loaded game keeps its move count; the move that reaches the limit still ends the turn and
    refills the next seat's hand (R10) before the game is over."""
    config = GameConfig(num_players=2, move_limit=8)
    data = state_dict(2, hands={0: [1, 5, 5, 5, 5], 1: [6, 6]}, turn=3, move_limit=8)
    data["moves"] = 7
    engine = BatchEngine(config, 1, seed=0)
    engine.load(0, data)
    assert engine.export(0) == data and int(engine.moves[0]) == 7
    state = GameState.from_dict(data)
    discard = next(m for m in state.legal_moves() if not isinstance(m, Play))  # a discard: ends the turn
    state.apply(discard)
    engine.step(np.array([encode_action(discard, config)]))
    assert state.truncated and state.moves == 8 and state.current == 1 and state.hand_size(1) == 5
    assert engine.export(0) == state.to_dict() and engine.status.tolist() == [2]


# --------------------------------------------------------------------- PCG64 protocol
def numpy_state(engine, slot: int) -> dict:
    return engine.generator(slot).bit_generator.state


def test_pcg_draws_match_numpy():
    rng = np.random.default_rng(3)
    engine = BatchEngine(GameConfig(), 2, seed=5)
    for _ in range(300):
        gen = engine.generator(0)
        high = int(rng.integers(2, 2**31))
        assert K.pcg_integers(engine.pcg, 0, high) == gen.integers(high)
        assert numpy_state(engine, 0) == gen.bit_generator.state
        size = int(rng.integers(1, 163))
        engine.cold[0, :size] = np.arange(size) % 200
        expected = np.arange(size) % 200
        gen.shuffle(expected)
        K.pcg_shuffle(engine.pcg, 0, engine.cold, 0, size)
        assert engine.cold[0, :size].tolist() == expected.tolist()
        assert numpy_state(engine, 0) == gen.bit_generator.state


@pytest.mark.parametrize(
    "fields",
    [{"num_players": 2}, {"num_players": 3, "first_player": 2}, {"num_players": 6, "partner_game": True},
     {"num_players": 5, "short_game": True, "turn_limit": 3}],
)
def test_engine_deals_are_new_game_deals(fields):
    """Slot i deals new_game(config, Generator(PCG64(SeedSequence(seed).spawn(B + 1)[i]))), then the next games."""
    config = GameConfig(**fields)
    engine = BatchEngine(config, 5, seed=11)
    children = np.random.SeedSequence(11).spawn(6)
    for slot in range(5):
        expected = new_game(config, np.random.Generator(np.random.PCG64(children[slot])))
        assert engine.export(slot) == expected.to_dict()
    gens = [engine.generator(slot) for slot in range(5)]
    engine.reset([1, 3])
    for slot in (1, 3):
        assert engine.export(slot) == new_game(config, gens[slot]).to_dict()


def test_load_export_round_trip_and_to_state():
    config = GameConfig(num_players=4, partner_game=True)
    engine = BatchEngine(config, 3, seed=0)
    data = state_dict(4, partner_game=True, hands={1: [WILD, 3]}, discards={2: [[5, 4, WILD], [], [12], []]},
                      building=(3, 11, 0, 7), completed=3, current=1, turn=17)
    engine.load(2, data)
    assert engine.export(2) == data
    assert engine.to_state(2).to_dict() == data
    assert engine.export(0) != data  # other slots untouched
    engine.load_state(1, GameState.from_dict(data))  # the in-memory path: same arrays as load
    assert engine.export(1) == data
    for arrays in (engine.hot, engine.cold, engine.pcg):
        assert np.array_equal(arrays[1], arrays[2])
    with pytest.raises(TypeError, match="needs a GameState"):
        engine.load_state(0, data)


# --------------------------------------------------------------------- bad input
def test_illegal_and_late_actions_raise_and_change_nothing():
    config = GameConfig(num_players=2, turn_limit=1)
    engine = BatchEngine(config, 2, seed=1)
    before = [engine.export(s) for s in range(2)]
    masks = engine.masks()
    illegal = int(np.flatnonzero(masks[1] == 0)[0])
    legal = int(np.flatnonzero(masks[0])[0])
    with pytest.raises(IllegalMoveError, match="slot 1"):
        engine.step(np.array([legal, illegal]))
    with pytest.raises(IllegalMoveError, match="action ids are 0..124"):
        engine.step(np.array([legal, 125]))
    with pytest.raises(ValueError, match="actions must be 2 ints"):
        engine.step(np.array([legal]))
    with pytest.raises(ValueError, match="one action per step"):
        engine.step(np.array([legal, legal]), rows=[0, 0])
    assert [engine.export(s) for s in range(2)] == before
    discard = next(a for a in np.flatnonzero(masks[0]) if 72 <= a < 124)
    engine.step(np.array([discard]), rows=[0])  # ends the only turn: truncated (R23)
    assert engine.status.tolist() == [2, 0]
    with pytest.raises(GameOverError, match="slot 0"):
        engine.step(np.array([discard]), rows=[0])
    assert engine.masks()[0].sum() == 0
    engine.reset(np.array([True, False]))
    assert engine.status.tolist() == [0, 0]


def test_load_rejects_bad_states():
    engine = BatchEngine(GameConfig(num_players=2), 1, seed=0)
    with pytest.raises(ValueError, match="differs from the engine"):
        engine.load(0, new_game(GameConfig(num_players=3), seed=0).to_dict())
    dxsm = new_game(GameConfig(num_players=2), np.random.Generator(np.random.PCG64DXSM(0))).to_dict()
    with pytest.raises(ValueError, match="PCG64 generators only"):
        engine.load(0, dxsm)
    broken = new_game(GameConfig(num_players=2), seed=0).to_dict()
    broken["draw_pile"] = broken["draw_pile"][1:]
    with pytest.raises(StateError):
        engine.load(0, broken)
    with pytest.raises(ValueError, match="slot indexes"):
        engine.load(1, new_game(GameConfig(num_players=2), seed=0).to_dict())


def test_bad_construction():
    with pytest.raises(ValueError, match="batch_size"):
        BatchEngine(GameConfig(), 0)
    with pytest.raises(TypeError, match="GameConfig"):
        BatchEngine({"num_players": 2}, 4)
    with pytest.raises(ValueError, match="seed"):
        BatchEngine(GameConfig(), 4, seed=-1)


# --------------------------------------------------------------------- in-engine agents
class FixedDraw:
    """A stand-in generator whose ``integers(k)`` returns one fixed index (to enumerate a policy's choices)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def integers(self, k: int) -> int:
        if self.index >= k:
            raise IndexError
        return self.index


def greedy_choices(state: GameState) -> set[int]:
    """Every action ``policies.greedy_move`` may choose here (it draws once from its generator)."""
    from skipbo_env.encoding import fields_from_view

    fields = fields_from_view(state.view(state.current))
    legal = state.legal_moves()
    out = set()
    for index in range(len(legal)):
        try:
            out.add(encode_action(greedy_move(fields, legal, FixedDraw(index)), state.config))
        except IndexError:
            break
    return out


@pytest.mark.parametrize(
    "fields",
    [{"num_players": 2, "turn_limit": 60}, {"num_players": 4, "partner_game": True, "turn_limit": 60},
     {"num_players": 3, "allow_wild_discard": False, "must_play_stock": True, "turn_limit": 60}],
)
def test_in_engine_greedy_follows_greedy_move(fields):
    """The compiled greedy picks one of the moves policies.greedy_move can pick, in every position met."""
    config = GameConfig(**fields)
    engine = BatchEngine(config, 32, seed=2)
    checked = 0
    while not engine.done.all():
        greedy = engine.agent_actions("greedy")
        randoms = engine.agent_actions("random")
        masks = engine.masks()
        for slot in np.flatnonzero(~engine.done):
            state = engine.to_state(int(slot))
            assert greedy[slot] in greedy_choices(state)
            assert masks[slot, randoms[slot]] == 1
            checked += 1
        rows = np.flatnonzero(~engine.done)
        engine.step(greedy[rows], rows=rows)
    assert checked > 500
    assert (engine.agent_actions("greedy") == -1).all()


def test_random_legal_is_uniform_over_the_legal_actions():
    engine = BatchEngine(GameConfig(), 1, seed=4)
    engine.load(0, state_dict(2, hands={0: [1, 2, 3, 12, WILD]}, building=(0, 1, 2, 5)))
    masks = engine.masks()
    legal = np.flatnonzero(masks[0])
    draws = Counter(int(engine.random_legal()[0]) for _ in range(20 * len(legal) * 20))
    assert set(draws) == set(legal.tolist())
    assert min(draws.values()) > 0.6 * 400 and max(draws.values()) < 1.4 * 400
    with pytest.raises(ValueError, match="read-only"):
        masks[0, 0] = 1  # step() validates against this buffer
    engine = BatchEngine(GameConfig(num_players=3), 16, seed=4)
    for _ in range(200):  # without masks() in between, random_legal() follows the changed games
        actions = engine.random_legal()
        engine.step(actions)
        if engine.done.any():
            engine.reset(engine.done)


def test_action_ids_follow_the_move_table():
    assert [K.A_HAND, K.A_HAND_WILD, K.A_STOCK, K.A_DISC, K.A_DISCARD, K.A_END, K.A_PSTOCK, K.A_PDISC] == [
        ALL_MOVES.index(m)
        for m in (
            Play(Source.HAND, 0, card=1),
            Play(Source.HAND, 0, card=WILD),
            Play(Source.STOCK, 0),
            Play(Source.DISCARD, 0, discard_pile=0),
            ALL_MOVES[72],
            EndTurn(),
            Play(Source.PARTNER_STOCK, 0),
            Play(Source.PARTNER_DISCARD, 0, discard_pile=0),
        )
    ]
    assert ALL_MOVES[72].card == 1 and ALL_MOVES[72].discard_pile == 0


def test_imports_are_lazy():
    """``import skipbo_env`` loads no numba; ``import skipbo_env.vector`` loads no torch or SB3."""
    code = (
        "import sys, skipbo_env, skipbo_env.rules, skipbo_env.encoding, skipbo_env.bots, skipbo_env.agents\n"
        "assert 'numba' not in sys.modules, 'numba imported'\n"
        "assert 'skipbo_env.vector' not in sys.modules\n"
        "import skipbo_env.vector\n"
        "assert 'torch' not in sys.modules and 'stable_baselines3' not in sys.modules\n"
        "skipbo_env.vector.SkipBoVecEnv\n"
        "assert 'stable_baselines3' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_first_env_without_heuristic_seats_does_not_compile_the_planner():
    """The advance kernels get None for the plan cache, so numba leaves the planner out (cold start)."""
    code = (
        "import gymnasium as gym, numpy as np, skipbo_env\n"
        "from skipbo_env.vector import _kernels as K\n"
        "env = gym.make_vec('SkipBo-v0', num_envs=8, vectorization_mode='vector_entry_point', opponents='greedy')\n"
        "_, info = env.reset(seed=0)\n"
        "for _ in range(5):\n"
        "    _, _, _, _, info = env.step(np.argmax(info['action_mask'], axis=1))\n"
        "assert not K.heuristic_plan.signatures and not K.heuristic_choice.signatures\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_no_kernel_is_compiled_for_a_literal_argument(tmp_path):
    """A constant passed to a kernel makes numba compile it once more for that value, seconds of a
    fresh install's first env: compile every kernel of two envs in a new, empty numba cache."""
    code = (
        "import numpy as np\n"
        "from numba.core import types\n"
        "from numba.core.registry import CPUDispatcher\n"
        "from skipbo_env.rules import GameConfig\n"
        "from skipbo_env.vector import LearnerBatch, _kernels as K\n"
        "for opponents in ('greedy', 'heuristic'):\n"
        "    batch = LearnerBatch(GameConfig(num_players=3), 8, opponents=opponents, seed=2)\n"
        "    batch.reset()\n"
        "    for _ in range(20):\n"
        "        batch.step(batch.engine.random_legal())\n"
        "plain = {name: [tuple(map(types.unliteral, sig)) for sig in f.signatures]\n"
        "         for name, f in vars(K).items() if isinstance(f, CPUDispatcher)}\n"
        "twice = [name for name, sigs in plain.items() if len(set(sigs)) < len(sigs)]\n"
        "assert not twice, twice\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_tiled_games_replay_their_source_and_parked_slots_sit_still():
    """tile_games copies whole games (generator included: a copy deals and draws as its source),
    park marks the slots after a prefix finished, and equal agent streams give equal rollouts."""
    config = GameConfig(num_players=3, short_game=True)
    engine = BatchEngine(config, 7, seed=4)
    for _ in range(5):  # a few random moves first, so the games differ
        acts = engine.random_legal()
        live = np.flatnonzero(acts >= 0)
        engine.step(acts[live], live)
    engine.tile_games(2, 3)
    engine.park(6)
    assert engine.status[6] == 2 and engine.done[6]
    engine.set_agent_streams(np.array([11, 22], np.uint64))
    assert engine.arng.tolist() == [11, 22] * 3 + [11]
    played = engine.play_until((engine.current + 2) % 3, vector.SeatKind.HEURISTIC, vector.PlanCache(7, 3))
    assert played > 0
    for k in (1, 2):  # each copy of games 0 and 1 made the same moves, from the same deal
        for j in (0, 1):
            assert engine.export(k * 2 + j) == engine.export(j)
    assert engine.stock_sizes.shape == (7, 3) and (engine.stock_sizes <= 10).all()
    with pytest.raises(ValueError, match="do not fit a batch of 7"):
        engine.tile_games(4, 2)
    with pytest.raises(ValueError, match="3 seat kinds and 7 anchors"):
        engine.advance([vector.SeatKind.RANDOM] * 2, engine.current)


def test_advance_plays_in_engine_seats_up_to_the_learner_or_an_outside_seat():
    """advance: the seat kinds are relative to each game's anchor; it stops at LEARNER and OUTSIDE
    seats (and at HEURISTIC seats without a plan cache)."""
    SeatKind = vector.SeatKind
    config = GameConfig(num_players=3, short_game=True)
    engine = BatchEngine(config, 6, seed=1)
    anchors = np.zeros(6, np.int64)
    engine.advance([SeatKind.LEARNER, SeatKind.GREEDY, SeatKind.OUTSIDE], anchors)
    running = ~engine.done
    assert np.isin(engine.current[running], [0, 2]).all()
    engine.advance([SeatKind.HEURISTIC] * 3, anchors)  # no plan cache: nothing moves
    assert np.isin(engine.current[running], [0, 2]).all()
    assert [int(k) for k in SeatKind] == [K.KIND_LEARNER, K.KIND_RANDOM, K.KIND_GREEDY, K.KIND_OUTSIDE,
                                          K.KIND_HEURISTIC]


def test_fused_random_play_finishes_games():
    engine = BatchEngine(GameConfig(num_players=2, short_game=True), 4, seed=0)
    assert engine.play_random(400, with_obs=True) > 0
    masks = engine.masks()  # the engine's mask buffer is still consistent with its games
    assert (masks.sum(axis=1) == engine.legal_counts).all()
