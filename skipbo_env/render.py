"""Plain-text tables of a game: what one seat sees, or everything."""

from __future__ import annotations

from .rules import GameConfig, GameState, SeatView, card_name, truncation_cause


def _cards(cards) -> str:
    return " ".join(card_name(c) for c in cards) if cards else "-"


def _top(card: int | None) -> str:
    return "-" if card is None else card_name(card)


def game_status(config: GameConfig, current: int, turn: int, winner: int | None, truncated: bool, winners=()) -> str:
    """One line: whose move it is, or how the game ended (shared by text and pictures)."""
    if winner is not None:
        who = " and ".join(f"player_{s}" for s in winners) if winners else f"player_{winner}"
        return f"turn {turn}: game over, {who} won"
    if truncated:
        return f"turn {turn}: game over, truncated at {truncation_cause(config, turn)}"
    return f"turn {turn}: player_{current} to move"


def render_view(view: SeatView) -> str:
    """The table as ``view.seat`` sees it (SB = Skip-Bo wild)."""
    lines = [
        game_status(view.config, view.current_player, view.turn, view.winner, view.truncated),
        "building: " + "  ".join(f"[{v or '-'}]" for v in view.building_values)
        + f"   draw pile {view.draw_size}, completed {view.completed_size}",
    ]
    for seat in (view.seat, *view.opponents()):
        tag = "you" if seat == view.seat else ("partner" if seat == view.partner else "")
        piles = " | ".join(_cards(p) for p in view.discard_piles[seat])
        lines.append(
            f"player_{seat}{' (' + tag + ')' if tag else ''}: stock {_top(view.stock_tops[seat])}"
            f" ({view.stock_sizes[seat]} left), hand {view.hand_sizes[seat]}, discards: {piles}"
        )
    lines.append(f"your hand: {_cards(view.hand)}")
    return "\n".join(lines)


def render_state(state: GameState) -> str:
    """Full information: every hand and stock, for replays and debugging."""
    n = state.config.num_players
    lines = [
        game_status(state.config, state.current, state.turn, state.winner, state.truncated, state.winners),
        "building: " + "  ".join(f"[{len(p) or '-'}]" for p in state.building)
        + f"   draw pile {len(state.draw_pile)}, completed {len(state.completed)}",
    ]
    for seat in range(n):
        stock = state.stocks[seat]
        piles = " | ".join(_cards(p) for p in state.discards[seat])
        lines.append(
            f"player_{seat}: stock {_top(stock[-1] if stock else None)} ({len(stock)} left), "
            f"hand {_cards(state.hand_cards(seat))}, discards: {piles}"
        )
    return "\n".join(lines)


def render_table(state: GameState, seat: int | None = None) -> str:
    """The text an env renders: ``seat``'s view under a title line, or with
    ``seat=None`` the full information of :func:`render_state`.

    The view never shows a card ``seat`` cannot see (it is built from
    :meth:`GameState.view`); the full table shows every hand and stock top.
    """
    if seat is None:
        return "full information (every hand)\n" + render_state(state)
    return f"player_{seat}'s view\n" + render_view(state.view(seat))
