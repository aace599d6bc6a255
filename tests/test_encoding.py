"""Observation vector and action table (skipbo_env/encoding.py, docs/observations.md, docs/actions.md)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

from skipbo_env.encoding import (
    COUNT_SCALE,
    DISCARD_SIZE_SCALE,
    ObservationFields,
    decode_action,
    decode_observation,
    encode_action,
    encode_view,
    fields_from_view,
    legal_moves_from_mask,
    num_actions,
    observation_layout,
    observe,
)
from skipbo_env.rules import (
    ALL_MOVES,
    NUM_SOLO_MOVES,
    Discard,
    EndTurn,
    GameConfig,
    GameState,
    Source,
    move_from_dict,
    move_to_dict,
    new_game,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"

CONFIGS = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p": dict(num_players=4),
    "5p": dict(num_players=5),
    "6p": dict(num_players=6),
    "4p-partner": dict(num_players=4, partner_game=True),
    "6p-partner": dict(num_players=6, partner_game=True),
    "2p-short": dict(num_players=2, short_game=True),
    "3p-no-wild-discard": dict(num_players=3, allow_wild_discard=False),
    "2p-must-play-stock": dict(num_players=2, must_play_stock=True),
    "4p-stock3-first2": dict(num_players=4, stock_size=3, first_player=2),
}


def random_states(config: GameConfig, games: int, seed: int, max_turns: int = 120):
    """States met along random legal play (every move), ending with each game's last state."""
    rng = np.random.default_rng(seed)
    for g in range(games):
        state = new_game(config, seed=seed * 100 + g)
        yield state
        while not state.is_over and state.turn < max_turns:
            legal = state.legal_moves()
            state.apply(legal[int(rng.integers(len(legal)))])
            yield state


# ------------------------------------------------------------------ actions
@pytest.mark.parametrize("partner_game", [False, True])
def test_action_round_trip_every_id(partner_game):
    config = GameConfig(num_players=4, partner_game=partner_game)
    n = num_actions(config)
    assert n == (145 if partner_game else 125)
    for action in range(n):
        move = decode_action(action, config)
        assert move is ALL_MOVES[action]
        assert encode_action(move, config) == action
        rebuilt = move_from_dict(move_to_dict(move))  # an equal move, not the table's object
        assert encode_action(rebuilt, config) == action
        assert decode_action(np.int64(action), config) is move


def test_action_ids_outside_the_table_fail():
    solo = GameConfig(num_players=2)
    for bad in (-1, 125, 145, 1.0, True, "3", None):
        with pytest.raises(ValueError, match="action must be an int"):
            decode_action(bad, solo)
    for move in ALL_MOVES[NUM_SOLO_MOVES:]:  # partner moves outside the partner game
        with pytest.raises(ValueError, match="no action id"):
            encode_action(move, solo)
    with pytest.raises(ValueError, match="no action id"):
        encode_action("play stock", solo)


def _formula_id(move) -> int:
    """The id formulas of docs/actions.md."""
    if isinstance(move, EndTurn):
        return 124
    if isinstance(move, Discard):
        return 72 + 4 * (move.card - 1) + move.discard_pile
    b = move.build_pile
    return {
        Source.HAND: lambda: 4 * (move.card - 1) + b,
        Source.STOCK: lambda: 52 + b,
        Source.DISCARD: lambda: 56 + 4 * move.discard_pile + b,
        Source.PARTNER_STOCK: lambda: 125 + b,
        Source.PARTNER_DISCARD: lambda: 129 + 4 * move.discard_pile + b,
    }[move.source]()


def test_action_formulas_match_the_table():
    assert [_formula_id(m) for m in ALL_MOVES] == list(range(len(ALL_MOVES)))


def _doc_table_rows(text: str, first_header: str) -> list[list[str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_actions_doc_matches_the_code():
    rows = _doc_table_rows((DOCS / "actions.md").read_text(), "ids")
    partner = GameConfig(num_players=4, partner_game=True)
    covered = []
    for ids, _move, formula, examples in rows:
        low, _, high = ids.partition("–")
        span = range(int(low), int(high or low) + 1)
        covered += span
        kinds = {(type(ALL_MOVES[i]).__name__, getattr(ALL_MOVES[i], "source", None)) for i in span}
        assert len(kinds) == 1, f"row {ids} mixes moves {kinds}"
        for i in span:  # the row's formula gives its ids
            move = ALL_MOVES[i]
            env = {
                "v": getattr(move, "card", None) or 0,
                "b": getattr(move, "build_pile", 0),
                "d": getattr(move, "discard_pile", None) or 0,
            }
            assert eval(formula.strip("`"), {}, env) == i, f"row {ids}: formula {formula} at id {i}"
        found = re.findall(r'`(\d+)`: "([^"]+)"', examples)
        assert found, f"row {ids} has no example"
        for action, text in found:
            assert str(decode_action(int(action), partner)) == text
    assert covered == list(range(len(ALL_MOVES)))


# -------------------------------------------------------------- observations
def test_layout_sizes_and_pieces():
    for n, size in {2: 435, 3: 620, 4: 805, 5: 990, 6: 1175}.items():
        layout = observation_layout(GameConfig(num_players=n))
        assert layout.size == size == 65 + 185 * n
        offset = 0
        for _name, start, length in layout.pieces:  # contiguous, covering the vector
            assert start == offset
            offset += length
        assert offset == layout.size
        assert layout.low.shape == layout.high.shape == (size,)
        assert (layout.low <= layout.high).all()
    short = observation_layout(GameConfig(num_players=4, partner_game=True, short_game=True))
    assert short.pieces == observation_layout(GameConfig(num_players=4)).pieces


def test_observations_doc_matches_the_layout():
    text = (DOCS / "observations.md").read_text()
    for n in range(2, 7):
        layout = observation_layout(GameConfig(num_players=n))
        starts = {name: (start, length) for name, start, length in layout.pieces}
        pieces = _doc_table_rows(text, "piece")
        documented = {}
        for name, offset, length, *_ in pieces:
            name, offset = name.strip("`"), offset.strip("`")
            seats = range(n) if "{k}" in name else [None]
            for k in seats:
                key = name.replace("{k}", str(k))
                documented[key] = (eval(offset, {}, {"k": k, "n": n}), int(length))
        assert documented == starts, f"{n} players"
        row = next(r for r in _doc_table_rows(text, "players") if r[0] == str(n))
        assert int(row[1]) == layout.size
        for k in range(6):
            expected = str(starts[f"seat{k}.stock_top"][0]) if k < n else "–"
            assert row[2 + k] == expected
        tail = [starts[name][0] for name in ("draw_size", "completed_size", "turn", "to_move")]
        assert [int(x) for x in row[8:12]] == tail


def _check_state(state: GameState, seats) -> None:
    config = state.config
    layout = observation_layout(config)
    for seat in seats:
        view = state.view(seat)
        fields = fields_from_view(view)
        vec = encode_view(view)
        assert vec.dtype == np.float32 and vec.shape == (layout.size,)
        assert (vec >= layout.low).all() and (vec <= layout.high).all(), "outside the Box bounds"
        decoded = decode_observation(vec, config)
        assert isinstance(decoded, ObservationFields)
        assert decoded == fields
        obs = observe(state, seat)
        assert np.array_equal(obs["observation"], vec)
        mask = obs["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (num_actions(config),)
        if seat == state.current and not state.is_over:
            legal = state.legal_moves()
            assert legal_moves_from_mask(mask, config) == sorted(legal, key=lambda m: encode_action(m, config))
            assert int(mask.sum()) == len(legal) == len(set(legal))
            assert view.legal_moves() == legal
        else:
            assert not mask.any()


@pytest.mark.parametrize("name", list(CONFIGS))
def test_observation_round_trip_over_random_games(name):
    config = GameConfig(**CONFIGS[name])
    n = config.num_players
    ended = 0
    max_turns = 400 if config.stock_size <= 3 else 120
    for i, state in enumerate(random_states(config, games=2, seed=7, max_turns=max_turns)):
        # the seat to move at every step, every seat now and then and at the end
        seats = range(n) if i % 15 == 0 or state.is_over else [state.current]
        if i % 3 and not state.is_over and max_turns > 120:
            continue  # the long small-stock games: every third state
        _check_state(state, seats)
        ended += state.is_over
    if config.stock_size <= 3:
        assert ended, "the small-stock games should reach their end"


def test_turn_scale_and_truncated_state():
    config = GameConfig(num_players=3, turn_limit=7)
    for state in random_states(config, games=1, seed=3, max_turns=10):
        _check_state(state, range(3))
    assert state.truncated
    assert decode_observation(encode_view(state.view(0)), config).turn == 7


def test_hand_fields_read_back():
    state = new_game(GameConfig(num_players=2, first_player=0), seed=4)
    fields = decode_observation(observe(state, 0)["observation"], state.config)
    counts = [0] * 13
    for card in state.hand_cards(0):
        counts[card - 1] += 1
    assert list(fields.hand_counts) == counts
    assert fields.to_move and fields.me.stock_top == state.stocks[0][-1]
    assert fields.seats[1].hand_size == 0 and fields.seats[1].stock_size == 30
    assert fields.me.stock_size == 30 and fields.draw_size == 162 - 60 - 5


def test_decode_rejects_bad_vectors():
    config = GameConfig(num_players=2)
    vec = observe(new_game(config, seed=0), 0)["observation"]
    with pytest.raises(ValueError, match="shape"):
        decode_observation(vec[:-1], config)
    broken = vec.copy()
    broken[13:25] = 0.0  # building pile 0 no longer one-hot
    with pytest.raises(ValueError, match="one-hot"):
        decode_observation(broken, config)


def test_mask_with_an_empty_hand_and_no_cards_to_draw():
    """R20/R21: an empty hand with nothing to draw; the mask is the rules' list, EndTurn included."""
    config = GameConfig(num_players=2, first_player=0)
    data = new_game(config, seed=5).to_dict()
    # every draw-pile card and seat 0's hand go onto seat 1's discard piles
    spare = data["draw_pile"] + data["hands"][0]
    data["draw_pile"], data["hands"][0] = [], []
    for d in range(4):
        data["discard_piles"][1][d] = spare[d::4]
    state = GameState.from_dict(data)
    mask = observe(state, 0)["action_mask"]
    legal = state.legal_moves()
    assert EndTurn() in legal and mask[124] == 1
    assert legal_moves_from_mask(mask, config) == sorted(legal, key=lambda m: encode_action(m, config))
    assert not any(isinstance(m, Discard) for m in legal_moves_from_mask(mask, config))


def test_named_views_read_what_the_encoder_wrote():
    """The layout's named views (OpenSpiel observer style) address exactly the pieces the encoder fills."""
    from skipbo_env.encoding import HEAD_WIDTH, SEAT_WIDTH, piece_shape, seat_piece

    for config in (GameConfig(num_players=2), GameConfig(num_players=4, partner_game=True)):
        state = new_game(config, seed=11)
        for _ in range(40):
            state.apply(state.legal_moves()[-1])
        seat = state.current
        view = state.view(seat)
        layout = observation_layout(config)
        vec = encode_view(view)
        assert layout.size == HEAD_WIDTH + SEAT_WIDTH * config.num_players
        fields = fields_from_view(view)
        assert layout.view(vec, "hand_counts").tolist() == pytest.approx([c / 5 for c in fields.hand_counts])
        assert layout.view(vec, "building_values").argmax(-1).tolist() == list(fields.building_values)
        block = layout.seats(vec)
        assert block.shape == (config.num_players, SEAT_WIDTH)
        for k, seat_fields in enumerate(fields.seats):
            for name in ("discard_tops", "discard_counts", "is_partner"):
                piece = layout.view(vec, f"seat{k}.{name}")
                assert piece.shape == piece_shape(name)
                assert (piece == seat_piece(block, name)[k]).all()
            assert bool(layout.view(vec, f"seat{k}.is_partner")[0]) == seat_fields.is_partner
        tail = layout.view(vec, "to_move")
        assert tail.shape == (1,) and tail[0] == 1.0


def test_the_engine_refuses_kernel_constants_that_disagree_with_the_layout(monkeypatch):
    from skipbo_env.vector import _kernels as K  # the compiled engine: the fast extra (numba)
    from skipbo_env.vector import engine

    engine._check_kernel_constants()
    monkeypatch.setattr(K, "OBS_TOPS", K.OBS_TOPS + 1)
    with pytest.raises(ImportError, match="observation 'v1': OBS_TOPS: kernels 17, rules/observation 16"):
        engine._check_kernel_constants()


def test_quotients_rounded_once_equal_float32_division():
    """The encoder rounds float64 quotients to float32 once; numpy's float32 division gives the same
    float for every quotient an observation holds (counts, sizes, stock sizes, draw sizes)."""
    pairs = [(k, float(d)) for d in (*COUNT_SCALE.tolist(), DISCARD_SIZE_SCALE, 5.0, 162.0) for k in range(163)]
    pairs += [(k, float(s)) for s in range(1, 82) for k in range(s + 1)]
    for k, d in pairs:
        once = struct.unpack("=f", struct.pack("=f", k / d))[0]
        assert once == float(np.float32(k) / np.float32(d)), (k, d)
