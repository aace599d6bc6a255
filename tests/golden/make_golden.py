"""Record the golden games of ``tests/golden/games/`` (see README.md next to this file).

Run from the repository root::

    python tests/golden/make_golden.py

Every game is dealt by ``skipbo_env.rules.new_game(config, seed=...)`` and
played to its end by scripted players (``skipbo_env.bots.make_bot``: greedy,
heuristic, random; plus ``lowest-id``, which always takes the lowest legal
action id and so never ends its turn while it can play). Each game is written
to ``games/NN_<tag>.json`` with its configuration, seed, players, every move
(as a move dict and as an action id), the end facts and SHA-256 hashes of the
initial state, of the state every ``CHECKPOINT_EVERY`` moves and of the final
state (plus the final state dict itself, to show what differs on a failure).

``tests/test_golden.py`` replays these files on the rules core and on the
batched engine. Regenerate only when a change of game behaviour is intended
and documented: the files exist to catch changes nobody meant to make.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

try:  # the scripted players: skipbo_env.bots (make_bot) or, in older trees, agents (make_agent)
    from skipbo_env.bots import make_bot as make_agent  # noqa: E402
except ImportError:
    from agents import make_agent  # noqa: E402
from skipbo_env.encoding import decode_action, encode_action, observe  # noqa: E402
from skipbo_env.rules import Discard, EndTurn, GameConfig, GameState, Play, Source, move_to_dict, new_game  # noqa: E402

GAMES_DIR = HERE / "games"
FORMAT = "skipbo-golden-game"
VERSION = 1
CHECKPOINT_EVERY = 50
"""A state hash is recorded after every this many moves, to locate the first divergence."""

G, H, R, L = "greedy", "heuristic", "random", "lowest-id"

# (tag, GameConfig fields, players by seat, seed for new_game)
GAMES: list[tuple[str, dict[str, Any], list[str], int]] = [
    # 2 players
    ("2p_greedy_vs_greedy", {"num_players": 2}, [G, G], 1),
    ("2p_heuristic_vs_greedy", {"num_players": 2}, [H, G], 2),
    ("2p_random_vs_heuristic", {"num_players": 2}, [R, H], 3),
    ("2p_first1", {"num_players": 2, "first_player": 1}, [G, H], 4),
    ("2p_short", {"num_players": 2, "short_game": True}, [G, R], 5),
    ("2p_short_must_nowild", {"num_players": 2, "short_game": True, "must_play_stock": True,
                              "allow_wild_discard": False}, [R, G], 6),
    ("2p_stock5_random", {"num_players": 2, "stock_size": 5}, [R, R], 7),
    ("2p_stock70_reshuffles", {"num_players": 2, "stock_size": 70, "turn_limit": 150}, [G, G], 100),
    ("2p_stock60_short_draws", {"num_players": 2, "stock_size": 60, "turn_limit": 150}, [G, R], 9),
    ("2p_stock1", {"num_players": 2, "stock_size": 1}, [R, G], 10),
    ("2p_turnlimit20", {"num_players": 2, "turn_limit": 20}, [G, G], 11),
    ("2p_movelimit60", {"num_players": 2, "move_limit": 60}, [R, G], 12),
    ("2p_endless_turn_movelimit", {"num_players": 2, "move_limit": 400}, [L, L], 0),
    ("2p_bigseed", {"num_players": 2, "stock_size": 12}, [H, R], 2**63 - 25),
    # 3 players
    ("3p_mixed", {"num_players": 3}, [G, R, H], 21),
    ("3p_nowild_stock12", {"num_players": 3, "stock_size": 12, "allow_wild_discard": False}, [G, G, R], 22),
    ("3p_short_must", {"num_players": 3, "short_game": True, "must_play_stock": True}, [R, H, G], 23),
    ("3p_first2_turnlimit15", {"num_players": 3, "first_player": 2, "turn_limit": 15}, [G, H, R], 24),
    ("3p_movelimit80", {"num_players": 3, "move_limit": 80}, [H, G, G], 25),
    # 4 players
    ("4p_greedy", {"num_players": 4}, [G, G, G, G], 41),
    ("4p_stock8_random", {"num_players": 4, "stock_size": 8}, [R, G, R, R], 42),
    ("4p_partner", {"num_players": 4, "partner_game": True}, [G, H, G, R], 43),
    ("4p_partner_short", {"num_players": 4, "partner_game": True, "short_game": True}, [H, R, G, G], 44),
    ("4p_partner_must_first3", {"num_players": 4, "partner_game": True, "must_play_stock": True,
                                "first_player": 3}, [G, G, R, H], 45),
    ("4p_partner_turnlimit12", {"num_players": 4, "partner_game": True, "turn_limit": 12}, [G, R, G, R], 46),
    ("4p_heuristic_stock15", {"num_players": 4, "stock_size": 15}, [H, H, H, H], 47),
    # 5 players
    ("5p_mixed", {"num_players": 5}, [G, R, H, G, R], 51),
    ("5p_short", {"num_players": 5, "short_game": True}, [R, G, G, H, R], 52),
    ("5p_nowild_stock10", {"num_players": 5, "stock_size": 10, "allow_wild_discard": False}, [G, H, R, G, G], 53),
    ("5p_first4_turnlimit25", {"num_players": 5, "first_player": 4, "turn_limit": 25}, [G, G, R, H, G], 54),
    # 6 players
    ("6p_mixed", {"num_players": 6}, [G, G, G, R, R, H], 61),
    ("6p_partner", {"num_players": 6, "partner_game": True}, [G, H, R, G, G, R], 62),
    ("6p_partner_short_first5", {"num_players": 6, "partner_game": True, "short_game": True,
                                 "first_player": 5}, [R, G, H, G, R, G], 63),
    ("6p_must_stock6", {"num_players": 6, "stock_size": 6, "must_play_stock": True}, [G, R, G, H, G, R], 64),
    ("6p_partner_movelimit100", {"num_players": 6, "partner_game": True, "move_limit": 100}, [G, G, R, G, H, G], 65),
    ("6p_stock27_turnlimit10", {"num_players": 6, "stock_size": 27, "turn_limit": 10}, [G, R, G, R, G, R], 66),
]


def state_hash(state_dict: dict) -> str:
    """SHA-256 of the state dict serialized canonically (sorted keys, no spaces)."""
    text = json.dumps(state_dict, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class LowestId:
    """Always the lowest legal action id: plays hand cards (wilds too) and never discards while it can play."""

    def act(self, observation: dict) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def make_player(label: str, config: GameConfig, seed: int):
    return LowestId() if label == L else make_agent(label, config, seed=seed)


def note_events(before: GameState, move, after: GameState, events: dict[str, int]) -> None:
    """Counts of the transitions a game went through (documentation of what the set covers)."""
    if len(after.completed) < len(before.completed):
        events["reshuffles"] += 1
    if sum(map(len, after.building)) < sum(map(len, before.building)):
        events["completed_piles"] += 1
    if isinstance(move, Play):
        events["plays"] += 1
        if move.source in (Source.PARTNER_STOCK, Source.PARTNER_DISCARD):
            events["partner_plays"] += 1
    elif isinstance(move, Discard):
        events["discards"] += 1
    elif isinstance(move, EndTurn):
        events["end_turns"] += 1


def empty_events() -> dict[str, int]:
    return dict.fromkeys(("plays", "discards", "end_turns", "partner_plays", "completed_piles", "reshuffles"), 0)


def record_game(index: int, tag: str, fields: dict[str, Any], labels: list[str], seed: int) -> dict[str, Any]:
    config = GameConfig(**fields)
    state = new_game(config, seed=seed)
    agent_seeds = [1000 * index + seat for seat in range(config.num_players)]
    players = [make_player(label, config, s) for label, s in zip(labels, agent_seeds, strict=True)]
    initial = state_hash(state.to_dict())
    moves, actions, checkpoints = [], [], {}
    events = empty_events()
    while not state.is_over:
        seat = state.current
        action = int(players[seat].act(observe(state, seat)))
        move = decode_action(action, config)
        assert encode_action(move, config) == action
        before = state.copy()
        state.apply(move)
        note_events(before, move, state, events)
        moves.append(move_to_dict(move))
        actions.append(action)
        if state.moves % CHECKPOINT_EVERY == 0:
            checkpoints[str(state.moves)] = state_hash(state.to_dict())
    final = state.to_dict()
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": f"{index:02d}_{tag}",
        "config": config.to_dict(),
        "seed": seed,
        "players": labels,
        "agent_seeds": agent_seeds,
        "winner": state.winner,
        "winners": list(state.winners),
        "truncated": state.truncated,
        "turns": state.turn,
        "moves_count": state.moves,
        "events": events,
        "initial_state_sha256": initial,
        "checkpoint_every": CHECKPOINT_EVERY,
        "checkpoint_sha256": checkpoints,
        "final_state_sha256": state_hash(final),
        "final_state": final,
        "actions": actions,
        "moves": moves,
    }


def dumps_game(game: dict[str, Any]) -> str:
    """JSON with one key per line, the action ids on one line and one move per line."""
    lines = []
    for key, value in game.items():
        if key == "moves":
            body = ",\n  ".join(json.dumps(m, sort_keys=True, separators=(",", ":")) for m in value)
            lines.append(f' "moves": [\n  {body}\n ]' if value else ' "moves": []')
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True, separators=(',', ':'))}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=GAMES_DIR, help=f"output folder (default {GAMES_DIR})")
    out = parser.parse_args(argv).out.resolve()
    start = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.json"):
        old.unlink()
    total = 0
    for index, (tag, fields, labels, seed) in enumerate(GAMES):
        game = record_game(index, tag, fields, labels, seed)
        text = dumps_game(game)
        assert json.loads(text) == game
        path = out / f"{game['name']}.json"
        path.write_text(text)
        total += len(text)
        end = (
            f"winner {game['winner']}" if game["winner"] is not None
            else f"truncated at turn {game['turns']}, move {game['moves_count']}"
        )
        print(f"{path}: {game['moves_count']} moves, {end}")
    print(f"{len(GAMES)} games, {total / 1024:.0f} KiB, {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
