"""Plain-text tables of a game: what one seat sees, or everything.

People count from 1 here, as at the terminal (:mod:`skipbo_env.human`) and in the browser:
turn 1 is the first turn, building piles and discard piles are 1 to 4. The machine formats
(action ids, the rules' :class:`~skipbo_env.rules.Move` fields, JSON states and records) count
from 0. Seats keep the environments' agent names, ``player_0`` to ``player_5``.
"""

from __future__ import annotations

from .rules import GameConfig, GameState, SeatView, card_name, truncation_cause


def _cards(cards) -> str:
    return " ".join(card_name(c) for c in cards) if cards else "-"


def _top(card: int | None) -> str:
    return "-" if card is None else card_name(card)


def turn_number(config: GameConfig, turn: int) -> int:
    """The turn as people count it, from 1: the rules' 0-based ``turn`` counter plus one, except
    after a game truncated at the turn limit (R23), whose counter stands one past its last turn."""
    return turn if turn >= config.turn_limit else turn + 1


def game_status(config: GameConfig, current: int, turn: int, winner: int | None, truncated: bool, winners=()) -> str:
    """One line: whose move it is, or how the game ended (shared by text and pictures)."""
    shown = turn_number(config, turn)
    if winner is not None:
        who = " and ".join(f"player_{s}" for s in winners) if winners else f"player_{winner}"
        return f"turn {shown}: game over, {who} won"
    if truncated:
        return f"turn {shown}: game over, truncated at {truncation_cause(config, turn)}"
    return f"turn {shown}: player_{current} to move"


def seat_tag(config: GameConfig, seat: int, me: int | None = None) -> str:
    """How a seat is tagged for the person at seat ``me`` (``None``: an onlooker): ``"you"``,
    ``"partner"`` (the seat opposite in a partner game, R27), ``"team 1"``/``"team 2"`` for the
    other seats of a partner game, else ``""``. Shared by the text tables, the pictures, the
    terminal and the browser, so a partner is called a partner everywhere."""
    if seat == me:
        return "you"
    if me is not None and config.partner(me) == seat:
        return "partner"
    if config.partner_game:
        return f"team {config.team(seat) + 1}"
    return ""


def _building(values) -> str:
    """``building piles 1:[3]  2:[-]  3:[12]  4:[-]``: the number each pile shows, piles from 1."""
    return "building piles " + "  ".join(f"{b + 1}:[{v or '-'}]" for b, v in enumerate(values))


def _discards(piles) -> str:
    """``discards 1: 9 8  2: -  3: SB  4: -``: each pile bottom to top, piles from 1."""
    return "discards " + "  ".join(f"{d + 1}: {_cards(p)}" for d, p in enumerate(piles))


def render_view(view: SeatView) -> str:
    """The table as ``view.seat`` sees it (SB = Skip-Bo wild)."""
    lines = [
        game_status(view.config, view.current_player, view.turn, view.winner, view.truncated),
        _building(view.building_values) + f"   draw pile {view.draw_size}, completed {view.completed_size}",
    ]
    for seat in (view.seat, *view.opponents()):
        tag = seat_tag(view.config, seat, view.seat)
        lines.append(
            f"player_{seat}{' (' + tag + ')' if tag else ''}: stock {_top(view.stock_tops[seat])}"
            f" ({view.stock_sizes[seat]} left), hand {view.hand_sizes[seat]}, {_discards(view.discard_piles[seat])}"
        )
    lines.append(f"your hand: {_cards(view.hand)}")
    return "\n".join(lines)


def render_state(state: GameState) -> str:
    """Full information: every hand and stock, for replays and debugging."""
    n = state.config.num_players
    lines = [
        game_status(state.config, state.current, state.turn, state.winner, state.truncated, state.winners),
        _building(state.building_values()) + f"   draw pile {len(state.draw_pile)}, completed {len(state.completed)}",
    ]
    for seat in range(n):
        stock = state.stocks[seat]
        tag = seat_tag(state.config, seat)
        lines.append(
            f"player_{seat}{' (' + tag + ')' if tag else ''}: "
            f"stock {_top(stock[-1] if stock else None)} ({len(stock)} left), "
            f"hand {_cards(state.hand_cards(seat))}, {_discards(state.discards[seat])}"
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
