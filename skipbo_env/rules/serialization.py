"""State <-> JSON-safe dict, with full validation on load (docs/state-format.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .cards import (
    EXPECTED_COUNTS,
    HAND_SIZE,
    NUM_BUILDING_PILES,
    NUM_DISCARD_PILES,
    PILE_COMPLETE,
    WILD,
    card_name,
    is_card,
)
from .config import GameConfig
from .errors import ConfigError, StateError, shown

FORMAT = "skipbo-state"
VERSION = 1
KEYS = (
    "format",
    "version",
    "config",
    "draw_pile",
    "hands",
    "stocks",
    "discard_piles",
    "building_piles",
    "completed",
    "current_player",
    "turn",
    "moves",
    "winner",
    "rng",
)
_RNG_FAMILIES = {"PCG64": np.random.PCG64, "PCG64DXSM": np.random.PCG64DXSM}


def state_to_dict(state) -> dict[str, Any]:
    """Every field of the state as plain lists, ints, bools, strings and None."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "config": state.config.to_dict(),
        "draw_pile": list(state.draw_pile),
        "hands": [state.hand_cards(s) for s in range(state.config.num_players)],
        "stocks": [list(s) for s in state.stocks],
        "discard_piles": [[list(p) for p in piles] for piles in state.discards],
        "building_piles": [list(p) for p in state.building],
        "completed": list(state.completed),
        "current_player": state.current,
        "turn": state.turn,
        "moves": state.moves,
        "winner": state.winner,
        "rng": rng_to_dict(state.rng),
    }


def rng_to_dict(rng: np.random.Generator) -> dict[str, Any]:
    """The generator's exact state; 128-bit integers are written as decimal strings."""
    bits = rng.bit_generator
    name = type(bits).__name__
    if name not in _RNG_FAMILIES:
        raise StateError("rng", f"only {sorted(_RNG_FAMILIES)} generators can be saved, got {name}")
    raw = bits.state
    return {
        "bit_generator": name,
        "state": str(raw["state"]["state"]),
        "inc": str(raw["state"]["inc"]),
        "has_uint32": int(raw["has_uint32"]),
        "uinteger": int(raw["uinteger"]),
    }


def rng_from_dict(data: Any) -> np.random.Generator:
    _check_keys("rng", data, ("bit_generator", "state", "inc", "has_uint32", "uinteger"))
    name = data["bit_generator"]
    if name not in _RNG_FAMILIES:
        raise StateError("rng.bit_generator", f"must be one of {sorted(_RNG_FAMILIES)}, got {shown(name)}")
    words = {}
    for key in ("state", "inc"):
        text = data[key]
        if (not isinstance(text, str) or not (text.isascii() and text.isdigit())
                or len(text) > 39 or int(text) >= 2**128):
            raise StateError(f"rng.{key}", f"must be a decimal string of a 128-bit integer, got {shown(text)}")
        words[key] = int(text)
    if words["inc"] % 2 == 0:  # PCG64 keeps the increment odd; an even one can cycle in a tiny loop
        raise StateError("rng.inc", f"must be odd (numpy's PCG64 increment), got {words['inc']}")
    if data["has_uint32"] not in (0, 1) or type(data["has_uint32"]) is not int:
        raise StateError("rng.has_uint32", f"must be 0 or 1, got {shown(data['has_uint32'])}")
    if type(data["uinteger"]) is not int or not 0 <= data["uinteger"] < 2**32:
        raise StateError("rng.uinteger", f"must be an int in 0..2**32-1, got {shown(data['uinteger'])}")
    bits = _RNG_FAMILIES[name]()
    try:
        bits.state = {
            "bit_generator": name,
            "state": words,
            "has_uint32": data["has_uint32"],
            "uinteger": data["uinteger"],
        }
    except (ValueError, TypeError) as exc:  # pragma: no cover - numpy's own check
        raise StateError("rng", f"numpy rejected the generator state: {exc}") from exc
    return np.random.Generator(bits)


# ------------------------------------------------------------------ loading
def _check_keys(path: str, data: Any, keys: tuple[str, ...]) -> None:
    if not isinstance(data, Mapping):
        raise StateError(path, f"must be an object, got {type(data).__name__}")
    missing = [k for k in keys if k not in data]
    if missing:
        raise StateError(path, f"missing key(s): {', '.join(missing)}")
    extra = [str(k) for k in data if k not in keys]
    if extra:
        raise StateError(path, f"unknown key(s): {', '.join(extra)}")


def _list(path: str, value: Any, length: int | None = None) -> list:
    if not isinstance(value, list):
        raise StateError(path, f"must be a list, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise StateError(path, f"must have {length} entries, got {len(value)}")
    return value


def _cards(path: str, value: Any, max_len: int | None = None) -> list[int]:
    cards = _list(path, value)
    if max_len is not None and len(cards) > max_len:
        raise StateError(path, f"holds {len(cards)} cards, at most {max_len} allowed")
    for i, card in enumerate(cards):
        if not is_card(card):
            raise StateError(f"{path}[{i}]", f"not a card (1..12 or {WILD} for a wild): {shown(card)}")
    return list(cards)



def _hands(value: Any, n: int) -> list[list[int]]:
    """One hand per seat, each at most HAND_SIZE cards listed in increasing order (the state keeps a
    hand as counts, so another order would not come back as it was read)."""
    hands = [_cards(f"hands[{s}]", h, HAND_SIZE) for s, h in enumerate(_list("hands", value, n))]
    for s, hand in enumerate(hands):
        if hand != sorted(hand):
            raise StateError(
                f"hands[{s}]", f"must list its cards in increasing order (as to_dict writes them), got {hand}"
            )
    return hands


def _index(path: str, value: Any, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise StateError(path, f"must be an int in {low}..{high}, got {shown(value)}")
    return value


def state_fields_from_dict(data: Any) -> tuple:
    """Validate ``data`` completely and return the :class:`~skipbo_env.rules.GameState`
    constructor arguments, in order (``GameState.from_dict`` builds the state from them,
    so nothing is half-loaded)."""
    _check_keys("state", data, KEYS)
    if data["format"] != FORMAT:
        raise StateError("format", f"must be {FORMAT!r}, got {shown(data['format'])}")
    if type(data["version"]) is not int or data["version"] != VERSION:
        raise StateError("version", f"unsupported version {shown(data['version'])}; this code reads {VERSION}")
    try:
        config = GameConfig.from_dict(data["config"])
    except ConfigError as exc:
        path = "config" if exc.field == "config" else f"config.{exc.field}"
        raise StateError(path, str(exc)) from exc
    n = config.num_players
    draw_pile = _cards("draw_pile", data["draw_pile"])
    hands = _hands(data["hands"], n)
    stocks = [
        _cards(f"stocks[{s}]", st, config.stock_size)
        for s, st in enumerate(_list("stocks", data["stocks"], n))
    ]
    discards = []
    for s, piles in enumerate(_list("discard_piles", data["discard_piles"], n)):
        _list(f"discard_piles[{s}]", piles, NUM_DISCARD_PILES)
        discards.append([_cards(f"discard_piles[{s}][{d}]", p) for d, p in enumerate(piles)])
    building = []
    for b, pile in enumerate(_list("building_piles", data["building_piles"], NUM_BUILDING_PILES)):
        cards = _cards(f"building_piles[{b}]", pile, PILE_COMPLETE - 1)
        for i, card in enumerate(cards):
            if card != WILD and card != i + 1:
                raise StateError(
                    f"building_piles[{b}][{i}]",
                    f"position {i} of a building pile must be a {i + 1} or a wild, got {card_name(card)} (R12)",
                )
        building.append(cards)
    completed = _cards("completed", data["completed"])
    if len(completed) % PILE_COMPLETE:
        raise StateError("completed", f"holds {len(completed)} cards, not a multiple of {PILE_COMPLETE} (R13)")
    current = _index("current_player", data["current_player"], 0, n - 1)
    turn = _index("turn", data["turn"], 0, config.turn_limit)
    moves = _index("moves", data["moves"], turn, config.move_limit)  # every turn ends with a move
    winner = data["winner"]
    if winner is not None:
        winner = _index("winner", winner, 0, n - 1)
    rng = rng_from_dict(data["rng"])

    every = draw_pile + completed + [c for h in hands for c in h] + [c for s in stocks for c in s]
    every += [c for piles in discards for p in piles for c in p] + [c for p in building for c in p]
    counts = [0] * (WILD + 1)
    for card in every:
        counts[card] += 1
    for value in range(1, WILD + 1):
        if counts[value] != EXPECTED_COUNTS[value]:
            raise StateError(
                "cards",
                f"the state holds {counts[value]} x {card_name(value)} in all, expected "
                f"{EXPECTED_COUNTS[value]} (162 cards, R1)",
            )
    _check_outcome(config, stocks, current, turn, winner)
    over = winner is not None or turn >= config.turn_limit or moves >= config.move_limit
    if not over and not hands[current] and draw_pile:
        # A hand emptied by a play is refilled at once (R15) and a turn starts with a refill (R10), so the
        # player to move can hold nothing only when the draw pile ran out (R20); a completed pile may have
        # formed since, which is drawn only at the next draw (R19).
        raise StateError(
            f"hands[{current}]",
            "the player to move holds no card while the draw pile does: an emptied hand is refilled at once (R15)",
        )

    hand_counts = []
    for h in hands:
        c = [0] * (WILD + 1)
        for card in h:
            c[card] += 1
        hand_counts.append(c)
    return config, draw_pile, hand_counts, stocks, discards, building, completed, current, turn, winner, rng, moves


def _check_outcome(config: GameConfig, stocks, current: int, turn: int, winner: int | None) -> None:
    """Winner, turn limit and empty stocks must tell the same story (R22, R23, R27)."""
    for team in range(config.num_teams):
        seats = config.team_seats(team)
        side_done = all(not stocks[s] for s in seats)
        if side_done and (winner is None or config.team(winner) != team):
            raise StateError(
                "stocks", f"the stock(s) of seat(s) {list(seats)} are empty but that side is not the winner"
            )
    if winner is not None:
        unfinished = [s for s in config.team_seats(config.team(winner)) if stocks[s]]
        if unfinished:
            raise StateError(
                "winner",
                f"seat {winner} cannot have won: the stock(s) of seat(s) {unfinished} are not empty (R22, R27)",
            )
        if winner != current:
            raise StateError("winner", f"the winner {winner} must be the seat that moved last ({current})")
        if turn >= config.turn_limit:
            raise StateError("winner", "a game won cannot also have reached the turn limit")
