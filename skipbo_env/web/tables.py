"""The JSON the browser gets: a table as one seat sees it, the full table, legal moves, replays.

:func:`seat_table` reads nothing but a :class:`~skipbo_env.rules.SeatView`, so a play-mode
response cannot carry a hidden card; :func:`full_table` (watch and replay) reads the state and
still sends no draw pile order and no stock below the top. Cards are strings ``"1"`` to ``"12"``
and ``"SB"``, ``null`` for an empty place; piles are 0-based here. See docs/web.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..encoding import encode_action
from ..human import describe_move, move_key, seat_name, status_text
from ..records import GameRecord, result_of
from ..render import seat_tag
from ..rules import WILD, Discard, EndTurn, GameState, Move, Play, SeatView, Source

SOURCE_NAMES = {
    Source.HAND: "hand",
    Source.STOCK: "stock",
    Source.DISCARD: "discard",
    Source.PARTNER_STOCK: "partner_stock",
    Source.PARTNER_DISCARD: "partner_discard",
}


def card(value: int | None) -> str | None:
    """A card as the browser gets it: ``"7"``, ``"SB"``, or ``None``."""
    if value is None:
        return None
    return "SB" if value == WILD else str(int(value))


def cards(values: Sequence[int]) -> list[str | None]:
    return [card(v) for v in values]


def _common(config: Any, labels: Sequence[str], me: int | None) -> dict[str, Any]:
    return {
        "num_players": config.num_players,
        "partner_game": config.partner_game,
        "short_game": config.short_game,
        "stock_size": config.stock_size,
        "teams": [list(config.team_seats(t)) for t in range(config.num_teams)],
        "labels": list(labels),
        "me": me,
    }


def seat_table(view: SeatView, labels: Sequence[str]) -> dict[str, Any]:
    """The table ``view.seat`` sees; built from the seat view alone."""
    config, me = view.config, view.seat
    seats = []
    for s in range(config.num_players):
        seats.append({
            "seat": s,
            "name": seat_name(s, labels, me),
            "label": labels[s],
            "tag": seat_tag(config, s, me),
            "stock_top": card(view.stock_tops[s]),
            "stock_size": view.stock_sizes[s],
            "hand_size": view.hand_sizes[s],
            "hand": cards(view.hand) if s == me else None,
            "discards": [cards(p) for p in view.discard_piles[s]],
        })
    return {
        **_common(config, labels, me),
        "full": False,
        "status": status_text(view, labels, me),
        "turn": view.turn,
        "current": view.current_player,
        "over": view.is_over,
        "winner": view.winner,
        "truncated": view.truncated,
        "building": list(view.building_values),
        "draw_size": view.draw_size,
        "completed_size": view.completed_size,
        "seats": seats,
    }


def full_table(state: GameState, labels: Sequence[str]) -> dict[str, Any]:
    """Every hand shown (watch, replay); still no draw pile order and no stock below its top."""
    config = state.config
    seats = []
    for s in range(config.num_players):
        stock = state.stocks[s]
        seats.append({
            "seat": s,
            "name": seat_name(s, labels),
            "label": labels[s],
            "tag": seat_tag(config, s),
            "stock_top": card(stock[-1] if stock else None),
            "stock_size": len(stock),
            "hand_size": state.hand_size(s),
            "hand": cards(state.hand_cards(s)),
            "discards": [cards(p) for p in state.discards[s]],
        })
    return {
        **_common(config, labels, None),
        "full": True,
        "status": status_text(state, labels),
        "turn": state.turn,
        "current": state.current,
        "over": state.is_over,
        "winner": state.winner,
        "truncated": state.truncated,
        "building": list(state.building_values()),
        "draw_size": len(state.draw_pile),
        "completed_size": len(state.completed),
        "seats": seats,
    }


def move_json(move: Move, view: SeatView, mover: int, config: Any) -> dict[str, Any]:
    """A move for the page: its action id, key, words, and where a card goes (public facts only)."""
    out: dict[str, Any] = {
        "id": encode_action(move, config),
        "key": move_key(move),
        "text": describe_move(move, view, mover),
    }
    if isinstance(move, Play):
        out.update(source=SOURCE_NAMES[move.source], target="build", pile=move.build_pile,
                   card=card(move.card) if move.source is Source.HAND else None,
                   from_pile=move.discard_pile)
    elif isinstance(move, Discard):
        out.update(source="hand", target="discard", pile=move.discard_pile, card=card(move.card), from_pile=None)
    elif isinstance(move, EndTurn):
        out.update(source=None, target="end", pile=None, card=None, from_pile=None)
    return out


def legal_json(view: SeatView) -> list[dict[str, Any]]:
    """The seat's legal moves (the rules' list; empty unless it is to move)."""
    return [move_json(m, view, view.seat, view.config) for m in view.legal_moves()]


def replay_json(record: GameRecord) -> dict[str, Any]:
    """A whole record for the replay page: the full table before the first move and after
    each move (``frames[i + 1]`` follows ``moves[i]``). The record was checked when it was
    read (:meth:`GameRecord.from_dict` replays it), so every move applies."""
    labels = list(record.players)
    state = GameState.from_dict(record.initial_state)
    frames, moves = [full_table(state, labels)], []
    for move in record.moves:
        seat = state.current
        moves.append({**move_json(move, state.view(seat), seat, state.config), "seat": seat,
                      "name": seat_name(seat, labels)})
        state.apply(move)
        frames.append(full_table(state, labels))
    return {
        "players": labels,
        "frames": frames,
        "moves": moves,
        "result": result_of(state),
        "finished": state.is_over,
    }
