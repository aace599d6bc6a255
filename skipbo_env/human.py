"""A person at the terminal: move keys, the table they see, and their player.

Move keys are short codes (``h5>2``: hand 5 onto building pile 2; ``x7>4``: discard hand 7 onto
discard pile 4; piles numbered from 1); docs/play.md lists them all. :func:`parse_key` turns a
key into the rules' typed move and :func:`move_key` does the reverse; legality comes from the
rules. :class:`HumanPlayer` is a rules ``Player``: it shows the table from ``state.view(seat)``
only, lists the legal moves with their keys, and asks again after malformed or illegal input.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from .extras import docs_url
from .render import seat_tag
from .rules import (
    END_TURN,
    NUMBERS,
    WILD,
    Discard,
    EndTurn,
    GameConfig,
    GameState,
    Move,
    Play,
    SeatView,
    Source,
    card_name,
    illegal_reason,
    truncation_cause,
)
from .rules.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES, PILE_COMPLETE
from .rules.moves import CANONICAL

Segment = str | tuple[str, str]
"""A piece of a printed line: plain text, or ``(text, rich style)``."""

# ====================================================================== terminal
class Terminal:
    """Where the program reads and writes: colour through rich, or plain text.

    Args:
        stdin, stdout: the streams (``sys.stdin``/``sys.stdout`` by default).
        color: print with rich styles; plain text otherwise.
    """

    def __init__(
        self, stdin: TextIO | None = None, stdout: TextIO | None = None, color: bool = False
    ) -> None:
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self.color = color
        self._console = None
        if color:
            from rich.console import Console  # colours need rich (the train extra); plain text does not

            self._console = Console(
                file=self.stdout, force_terminal=True, highlight=False, soft_wrap=True, emoji=False
            )
        # The builtin input() gives line editing, but only on the real, interactive streams.
        self._interactive = (
            self.stdin is sys.stdin and self.stdout is sys.stdout
            and isatty(self.stdin) and isatty(self.stdout)
        )

    def line(self, *segments: Segment) -> None:
        """Print one line made of plain or styled segments."""
        if self._console is not None:
            from rich.text import Text  # only with colours (rich, see __init__)

            self._console.print(Text.assemble(*segments))
        else:
            self.stdout.write("".join(s if isinstance(s, str) else s[0] for s in segments) + "\n")

    def lines(self, lines: Sequence[Sequence[Segment]]) -> None:
        for segments in lines:
            self.line(*segments)

    def error(self, message: str) -> None:
        self.line(("! " + message, "bold red"))

    def ask(self, prompt: str) -> str | None:
        """One line typed by the person, without its newline; ``None`` at end of input."""
        if self._interactive:
            try:
                return input(prompt)
            except EOFError:
                self.stdout.write("\n")
                return None
        self.stdout.write(prompt)
        self.stdout.flush()
        text = self.stdin.readline()
        if not text:
            self.stdout.write("\n")
            return None
        text = text.rstrip("\r\n")
        self.stdout.write(text + "\n")  # echo piped input so the transcript reads like a session
        return text

    def pause(self, seconds: float) -> None:
        self.stdout.flush()
        if seconds > 0:
            time.sleep(seconds)


def isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


# ====================================================================== move keys
class MoveKeyError(ValueError):
    """A move key that cannot be read; the message says what is wrong."""


_WILD_NAMES = ("sb", "w")


def move_key(move: Move) -> str:
    """The key of a move, e.g. ``h5>2``, ``hSB>1``, ``d2>1``, ``x7>4``, ``e``."""
    if isinstance(move, Play):
        target = f">{move.build_pile + 1}"
        if move.source is Source.HAND:
            assert move.card is not None  # a hand play names its card (Play.__post_init__)
            return f"h{card_name(move.card)}{target}"
        if move.source is Source.STOCK:
            return f"s{target}"
        if move.source is Source.PARTNER_STOCK:
            return f"ps{target}"
        assert move.discard_pile is not None  # a discard source names its pile (Play.__post_init__)
        prefix = "d" if move.source is Source.DISCARD else "pd"
        return f"{prefix}{move.discard_pile + 1}{target}"
    if isinstance(move, Discard):
        return f"x{card_name(move.card)}>{move.discard_pile + 1}"
    if isinstance(move, EndTurn):
        return "e"
    raise TypeError(f"not a move: {move!r}")


def _card(text: str, key: str) -> int:
    if text in _WILD_NAMES:
        return WILD
    if text.isdigit() and int(text) in NUMBERS:
        return int(text)
    shown = text or "nothing"
    raise MoveKeyError(f"{key!r}: the card must be 1 to 12 or SB (W) for a wild, got {shown}")


def _pile(text: str, what: str, key: str, count: int = NUM_BUILDING_PILES) -> int:
    """A pile number typed 1..count, returned 0-based."""
    if text.isdigit() and 1 <= int(text) <= count:
        return int(text) - 1
    shown = text or "nothing"
    raise MoveKeyError(f"{key!r}: {what} are numbered 1 to {count}, got {shown}")


def parse_key(text: str) -> Move:
    """The move a key names (case and spaces ignored); :class:`MoveKeyError` says what is wrong.

    Only the syntax is checked here: whether the move is legal is the rules'
    business (``SeatView.legal_moves()``).
    """
    key = "".join(text.split()).lower()
    if not key:
        raise MoveKeyError("no move typed; type a key such as h5>2, or ? for help")
    if key == "e":
        return END_TURN
    source, arrow, target = key.partition(">")
    if not arrow:
        raise MoveKeyError(f"{key!r}: a move key needs '>' and a target pile, e.g. h5>2 or x7>4 (? for help)")
    if source.startswith("x"):
        discard_pile = _pile(target, "discard piles", key, NUM_DISCARD_PILES)
        return CANONICAL[Discard(_card(source[1:], key), discard_pile)]
    pile = _pile(target, "building piles", key)
    if source.startswith("h"):
        return CANONICAL[Play(Source.HAND, pile, card=_card(source[1:], key))]
    if source == "s":
        return CANONICAL[Play(Source.STOCK, pile)]
    if source == "ps":
        return CANONICAL[Play(Source.PARTNER_STOCK, pile)]
    if source.startswith(("pd", "d")):
        partner = source.startswith("pd")
        number = source[2:] if partner else source[1:]
        discard_pile = _pile(number, "discard piles", key, NUM_DISCARD_PILES)
        kind = Source.PARTNER_DISCARD if partner else Source.DISCARD
        return CANONICAL[Play(kind, pile, discard_pile=discard_pile)]
    raise MoveKeyError(
        f"{key!r}: unknown source {source!r}; use h<card> (hand), s (stock), d<pile> (discard pile), "
        "ps/pd<pile> (partner), x<card> (discard), e (end turn)"
    )


# ================================================================ move meaning
def _top(pile: Sequence[int]) -> int | None:
    return pile[-1] if pile else None


def _played_card(move: Play, view: SeatView, mover: int) -> int | None:
    """The card a play moves (public: hand card named by the move, or a face-up top)."""
    owner = mover if move.source in (Source.STOCK, Source.DISCARD) else view.config.partner(mover)
    if move.source is Source.HAND:
        return move.card
    if owner is None:
        return None
    if move.source in (Source.STOCK, Source.PARTNER_STOCK):
        return view.stock_tops[owner]
    assert move.discard_pile is not None  # a discard source names its pile (Play.__post_init__)
    return _top(view.discard_piles[owner][move.discard_pile])


_ORIGINS = {
    Source.HAND: "hand",
    Source.STOCK: "stock",
    Source.DISCARD: "discard pile {}",
    Source.PARTNER_STOCK: "partner's stock",
    Source.PARTNER_DISCARD: "partner's discard pile {}",
}


def describe_move(move: Move, view: SeatView, mover: int) -> str:
    """Plain words for a move of seat ``mover``, read from a view taken before the move.

    Only public facts are used (face-up tops, building piles, the card a hand
    play or discard names), so any seat's view will do.
    """
    if isinstance(move, Discard):
        return f"discards {card_name(move.card)} onto discard pile {move.discard_pile + 1} (turn ends)"
    if isinstance(move, EndTurn):
        return "ends the turn with an empty hand"
    card = _played_card(move, view, mover)
    origin = _ORIGINS[move.source].format((move.discard_pile or 0) + 1)
    value = view.building_values[move.build_pile] + 1
    shown = "?" if card is None else card_name(card)
    text = f"plays {shown} from {origin} onto building pile {move.build_pile + 1}"
    if card == WILD:
        text += f" as {value}"
    if value == PILE_COMPLETE:
        text += " - pile complete, set aside"
    return text


PERSON_WORDS = {
    "not_a_move": "not a move",
    "hand_not_empty": "your hand still holds {count} card(s): end the turn by discarding one (x<card>><pile>)",
    "stock_first": "your stock top can be played and this game says the stock must be played first",
    "not_in_hand": "your hand holds no {card}",
    "wild_discard_off": "wilds may not be discarded in this game",
    "no_partner": "there is no partner in this game",
    "empty_source": "{whose_place} is empty",
    "wrong_number": "building pile {build_pile} needs a {need}, the card is a {card}",
}
"""The rules' reasons (:class:`skipbo_env.rules.IllegalReason`) in the words of the terminal UI."""


def explain_illegal(view: SeatView, move: Move) -> str:
    """The rules' reason why a well-formed move is not legal for ``view.seat`` now
    (:func:`skipbo_env.rules.illegal_reason`), worded for the person (piles numbered from 1)."""
    return illegal_reason(view, move).words(PERSON_WORDS, first_pile=1)


# ====================================================================== table
_CARD_STYLES = ((4, "bold blue"), (8, "bold green"), (12, "bold red"))


def card_segment(card: int | None) -> Segment:
    """A card coloured like the printed deck: 1-4 blue, 5-8 green, 9-12 red, SB yellow."""
    if card is None:
        return ("-", "dim")
    if card == WILD:
        return ("SB", "bold yellow")
    style = next(s for limit, s in _CARD_STYLES if card <= limit)
    return (str(card), style)


def cards_segments(cards: Sequence[int]) -> list[Segment]:
    if not cards:
        return [("-", "dim")]
    out: list[Segment] = []
    for i, card in enumerate(cards):
        if i:
            out.append(" ")
        out.append(card_segment(card))
    return out


@dataclass(frozen=True)
class SeatRow:
    """One seat's line of the table."""

    seat: int
    label: str
    tag: str
    """``you``, ``partner`` or a team name; empty when nothing applies."""
    stock_top: int | None
    stock_size: int
    hand: tuple[int, ...] | None
    """The hand's cards when they may be shown, else ``None`` (only the size is)."""
    hand_size: int
    discards: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Table:
    """Everything one printed table holds."""

    status: str
    building: tuple[int, ...]
    draw_size: int
    completed_size: int
    rows: tuple[SeatRow, ...]
    own_hand: tuple[int, ...] | None
    """The person's hand on its own line (seat view tables)."""


def status_text(
    state_or_view: GameState | SeatView, labels: Sequence[str], me: int | None = None
) -> str:
    """``turn 4: your move``, ``turn 4: player_1 (greedy) to move``, or the result."""
    if isinstance(state_or_view, GameState):
        current, turn, winner = state_or_view.current, state_or_view.turn, state_or_view.winner
        truncated, config = state_or_view.truncated, state_or_view.config
    else:
        current, turn, winner = state_or_view.current_player, state_or_view.turn, state_or_view.winner
        truncated, config = state_or_view.truncated, state_or_view.config
    if winner is not None:
        seats = config.team_seats(config.team(winner))
        who = " and ".join(seat_name(s, labels, me) for s in seats)
        return f"game over in turn {turn + 1}: {who} won"
    if truncated:
        return f"game over: no winner after {turn} turns, truncated at {truncation_cause(config, turn)}"
    if current == me:
        return f"turn {turn + 1}: your move"
    return f"turn {turn + 1}: {seat_name(current, labels, me)} to move"


def seat_name(seat: int, labels: Sequence[str], me: int | None = None) -> str:
    """``player_1 (greedy)``, or ``you`` for the person's own seat."""
    return "you" if seat == me else f"player_{seat} ({labels[seat]})"


def seating_text(config: GameConfig, me: int, labels: Sequence[str]) -> str:
    """Who the person plays with and against: ``You are player_0; partner: player_2 (greedy);
    opponents: player_1 (greedy), player_3 (greedy).`` (a partner game, R27) or
    ``You are player_0; opponents: player_1 (heuristic).``"""
    partner = config.partner(me)
    others = ", ".join(seat_name(s, labels) for s in range(config.num_players) if s not in (me, partner))
    with_partner = "" if partner is None else f"partner: {seat_name(partner, labels)}; "
    return f"You are player_{me}; {with_partner}opponents: {others}."


def table_of_view(view: SeatView, labels: Sequence[str]) -> Table:
    """The table as ``view.seat`` sees it: nothing but the seat view is read."""
    rows = []
    for seat in (*view.opponents(), view.seat):
        tag = seat_tag(view.config, seat, view.seat)
        rows.append(
            SeatRow(seat, labels[seat], tag, view.stock_tops[seat], view.stock_sizes[seat], None,
                    view.hand_sizes[seat], view.discard_piles[seat])
        )
    return Table(
        status_text(view, labels, me=view.seat), tuple(view.building_values), view.draw_size,
        view.completed_size, tuple(rows), tuple(view.hand),
    )


def table_of_state(state: GameState, labels: Sequence[str], me: int | None = None) -> Table:
    """Full information (every hand shown): for replays and the end of a game."""
    cfg = state.config
    rows = []
    for seat in range(cfg.num_players):
        tag = seat_tag(cfg, seat, me)
        stock = state.stocks[seat]
        rows.append(
            SeatRow(seat, labels[seat], tag, _top(stock), len(stock), tuple(state.hand_cards(seat)),
                    state.hand_size(seat), tuple(tuple(p) for p in state.discards[seat]))
        )
    return Table(
        status_text(state, labels, me), tuple(state.building_values()), len(state.draw_pile),
        len(state.completed), tuple(rows), None,
    )


def table_lines(table: Table) -> list[list[Segment]]:
    """The printed lines of a table."""
    lines: list[list[Segment]] = [[("== " + table.status + " ==", "bold")]]
    building: list[Segment] = ["building piles "]
    for b, value in enumerate(table.building):
        building += [f" {b + 1}:[", card_segment(value or None), "]"]
    building.append(f"   draw pile {table.draw_size}, completed {table.completed_size}")
    lines.append(building)
    width = max(len(_row_name(r)) for r in table.rows)
    for row in table.rows:
        name_style = "bold cyan" if row.tag == "you" else "green" if row.tag == "partner" else "bold"
        line: list[Segment] = [
            (_row_name(row).ljust(width), name_style), "  stock ", card_segment(row.stock_top),
            f" ({row.stock_size} left)  hand ",
        ]
        line += cards_segments(row.hand) if row.hand is not None else [str(row.hand_size)]
        lines.append(line)
        piles: list[Segment] = [" " * width + "  discards"]
        for d, pile in enumerate(row.discards):
            piles += [f"  {d + 1}: "] + cards_segments(pile)
        lines.append(piles)
    if table.own_hand is not None:
        own: list[Segment] = [("your hand", "bold cyan"), "  "]
        lines.append(own + cards_segments(table.own_hand))
    return lines


def _row_name(row: SeatRow) -> str:
    name = f"player_{row.seat} {row.label}"
    return f"{name} ({row.tag})" if row.tag else name


# ====================================================================== legal moves
_GROUPS = (
    ("stock", lambda m: isinstance(m, Play) and m.source is Source.STOCK),
    ("partner's stock", lambda m: isinstance(m, Play) and m.source is Source.PARTNER_STOCK),
    ("hand", lambda m: isinstance(m, Play) and m.source is Source.HAND),
    ("discard piles", lambda m: isinstance(m, Play) and m.source is Source.DISCARD),
    ("partner's discard piles", lambda m: isinstance(m, Play) and m.source is Source.PARTNER_DISCARD),
    ("discard and end the turn", lambda m: isinstance(m, Discard)),
    ("end the turn", lambda m: isinstance(m, EndTurn)),
)


def moves_lines(legal: Sequence[Move]) -> list[list[Segment]]:
    """The legal moves as keys, grouped by where the card comes from (stock first)."""
    lines: list[list[Segment]] = [[("your moves:", "bold")]]
    for title, member in _GROUPS:
        keys = [move_key(m) for m in legal if member(m)]
        if keys:
            lines.append([f"  {title}: ", (" ".join(keys), "cyan")])
    lines.append([("  ? help, t table, q quit", "dim")])
    return lines


HELP = f"""\
How to play (more in {docs_url("play")}).
Build the four building piles up from 1 to 12; play the last card of your stock
to win. On your turn play any number of cards onto building piles, then discard
one hand card to end the turn.

Move keys (piles are numbered 1 to 4, cards 1-12 and SB for a Skip-Bo wild):
  h5>2    hand 5 onto building pile 2        hSB>1 (or hW>1): a wild from the hand
  s>3     your stock top onto building pile 3
  d2>1    top of your discard pile 2 onto building pile 1
  ps>1    your partner's stock top onto building pile 1       (partner game)
  pd3>2   top of your partner's discard pile 3 onto building pile 2
  x7>4    discard hand 7 onto your discard pile 4 (ends the turn)
  e       end the turn when your hand is empty and cannot be refilled
Other commands: ? or help (this screen), t (show the table again), q (quit).
The table: building piles show the number on top ([-] is an empty space, it
takes a 1 or a wild); each player's stock top and cards left, hand size, and
discard piles listed bottom to top (the last card is the playable top)."""


# ====================================================================== the person
class QuitGame(Exception):
    """The person left the game (``q``, end of input); ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class HumanPlayer:
    """A person choosing moves by key; a rules ``Player`` (``view -> move``).

    Each call shows the table from the seat view, lists the legal moves and
    reads keys until a legal one is typed. Raises :class:`QuitGame` on ``q``
    or at end of input.
    """

    def __init__(self, terminal: Terminal, labels: Sequence[str]) -> None:
        self.terminal = terminal
        self.labels = list(labels)

    def __call__(self, view: SeatView) -> Move:
        legal = view.legal_moves()
        if not legal:
            raise ValueError(f"seat {view.seat} is not to move")
        term = self.terminal
        self.show(view, legal)
        while True:
            text = term.ask("your move> ")
            if text is None:
                raise QuitGame("end of input")
            command = text.strip().lower()
            if command in ("q", "quit", "exit"):
                raise QuitGame("quit")
            if command in ("?", "help"):
                term.line(HELP)
                continue
            if command in ("t", "table"):
                self.show(view, legal)
                continue
            if not command:
                term.lines(moves_lines(legal))
                continue
            try:
                move = parse_key(command)
            except MoveKeyError as exc:
                term.error(str(exc))
                continue
            if move in legal:
                return move
            term.error(f"{command!r} is not legal now: {explain_illegal(view, move)}")

    def show(self, view: SeatView, legal: Sequence[Move]) -> None:
        self.terminal.lines(table_lines(table_of_view(view, self.labels)))
        self.terminal.lines(moves_lines(legal))
