"""Pictures of a game: the table drawn as an RGB frame, and a small window to show frames.

:func:`draw_view` draws what one seat may see (from its :class:`~skipbo_env.rules.SeatView`, so no
hidden card can reach the picture), :func:`draw_state` the full table, :func:`draw_table` what
the envs render. Each returns an ``np.uint8`` array ``(H, W, 3)`` whose size depends only on the
number of players (:func:`frame_shape`); the functions are pure. Drawing needs Pillow (the
``render`` extra; importing this module does not load it); :class:`TableWindow` is Tk.
docs/environments.md ("Rendering") shows what the frames look like.
"""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .extras import missing_extra
from .render import game_status, seat_tag
from .rules import WILD, GameConfig, GameState, SeatView, card_name

# ---------------------------------------------------------------- look
FELT = (22, 84, 58)
"""The table."""
TEXT = (236, 240, 232)
DIM_TEXT = (170, 200, 180)
HIGHLIGHT = (250, 205, 70)
"""The frame around the seat to move (or the winners)."""
CARD_FACE = (252, 250, 242)
NUMBER_COLOURS = {
    "blue": (28, 86, 196),
    "green": (22, 140, 62),
    "red": (206, 36, 40),
}
"""The printed deck's number colours: 1-4 blue, 5-8 green, 9-12 red."""
WILD_FACE = (246, 138, 28)
WILD_INK = (150, 30, 20)
BACK = (28, 44, 120)
BACK_TRIM = (214, 170, 60)
SLOT = (60, 120, 90)
"""The outline of an empty pile."""

CARD_W, CARD_H = 46, 66
GAP = 8
FAN = 15
"""How much of each covered discard card shows."""
FAN_CARDS = 4
"""At most this many cards of a discard pile are drawn."""
FRAME_WIDTH = 800
HEADER_H = 34
CENTRE_H = 112
ROW_H = 18 + CARD_H + (FAN_CARDS - 1) * FAN + 22


def card_colour(card: int) -> tuple[int, int, int]:
    """The ink of a card: its number group's colour, or the wild card's face."""
    if card == WILD:
        return WILD_FACE
    if not 1 <= card <= 12:
        raise ValueError(f"not a card: {card!r}")
    return NUMBER_COLOURS["blue" if card <= 4 else "green" if card <= 8 else "red"]


# ---------------------------------------------------------------- layout
Box = tuple[int, int, int, int]
"""``(left, top, right, bottom)`` in pixels, right and bottom exclusive."""


@dataclass(frozen=True)
class Layout:
    """Where everything sits in a frame of a game with ``num_players`` seats.

    Seats are rows in seat order, top to bottom, in both the view and the full
    table, so the two frames of one position differ only where cards are
    hidden, in the header's title, and in a partner game in the tag of the
    viewer's partner ("partner" in the view, its team in the full table).
    """

    num_players: int

    @property
    def shape(self) -> tuple[int, int, int]:
        height = HEADER_H + CENTRE_H + self.num_players * ROW_H
        return (-(-height // 16) * 16, FRAME_WIDTH, 3)  # multiples of 16 suit video encoders

    # header
    @property
    def title_box(self) -> Box:
        """The header's right part: whose view this is, or "full table"."""
        return (FRAME_WIDTH - 230, 0, FRAME_WIDTH, HEADER_H)

    # centre
    def building_box(self, pile: int) -> Box:
        x = 24 + pile * (CARD_W + GAP)
        y = HEADER_H + 26
        return (x, y, x + CARD_W, y + CARD_H)

    @property
    def draw_pile_box(self) -> Box:
        x = 24 + 4 * (CARD_W + GAP) + 40
        y = HEADER_H + 26
        return (x, y, x + CARD_W, y + CARD_H)

    # seats
    def row_top(self, seat: int) -> int:
        return HEADER_H + CENTRE_H + seat * ROW_H

    def row_box(self, seat: int) -> Box:
        top = self.row_top(seat)
        return (0, top, FRAME_WIDTH, top + ROW_H)

    def stock_box(self, seat: int) -> Box:
        x, y = 24, self.row_top(seat) + 18
        return (x, y, x + CARD_W, y + CARD_H)

    def discard_card_box(self, seat: int, pile: int, depth: int) -> Box:
        """The ``depth``-th drawn card of a discard pile (0 = the lowest drawn)."""
        x = 110 + pile * (CARD_W + GAP)
        y = self.row_top(seat) + 18 + depth * FAN
        return (x, y, x + CARD_W, y + CARD_H)

    def hand_box(self, seat: int, slot: int) -> Box:
        x = 366 + slot * (CARD_W + GAP)
        y = self.row_top(seat) + 18
        return (x, y, x + CARD_W, y + CARD_H)

    def hand_area(self, seat: int) -> Box:
        """Every hand slot of ``seat`` (5 cards wide)."""
        left, top, _, bottom = self.hand_box(seat, 0)
        return (left, top, self.hand_box(seat, 4)[2], bottom)


def frame_shape(config: GameConfig) -> tuple[int, int, int]:
    """``(H, W, 3)`` of every frame of a game with ``config``."""
    return Layout(config.num_players).shape


# ---------------------------------------------------------------- the table
@dataclass(frozen=True)
class _Table:
    """What a frame shows: hands are a tuple of face-up cards or a count of backs."""

    config: GameConfig
    hands: tuple[tuple[int, ...] | int, ...]
    stock_tops: tuple[int | None, ...]
    stock_sizes: tuple[int, ...]
    discard_piles: tuple[tuple[tuple[int, ...], ...], ...]
    building_values: tuple[int, ...]
    draw_size: int
    completed_size: int
    current: int
    turn: int
    winner: int | None
    truncated: bool
    title: str
    seat: int | None
    """The seat whose view this is (``None``: the full table)."""


def _table(view: SeatView, hands: tuple[tuple[int, ...] | int, ...], title: str, seat: int | None) -> _Table:
    return _Table(
        config=view.config,
        hands=hands,
        stock_tops=view.stock_tops,
        stock_sizes=view.stock_sizes,
        discard_piles=view.discard_piles,
        building_values=view.building_values,
        draw_size=view.draw_size,
        completed_size=view.completed_size,
        current=view.current_player,
        turn=view.turn,
        winner=view.winner,
        truncated=view.truncated,
        title=title,
        seat=seat,
    )


def draw_view(view: SeatView) -> np.ndarray:
    """The table as ``view.seat`` sees it: its own hand face up, every other hand as backs."""
    hands = tuple(view.hand if s == view.seat else view.hand_sizes[s] for s in range(view.num_players))
    return _paint(_table(view, hands, f"player_{view.seat}'s view", view.seat))


def draw_state(state: GameState) -> np.ndarray:
    """The full table: every hand face up (for debugging, replays and videos)."""
    views = [state.view(s) for s in range(state.config.num_players)]
    return _paint(_table(views[0], tuple(v.hand for v in views), "full table", None))


def draw_table(state: GameState, seat: int | None = None) -> np.ndarray:
    """The frame an env renders: ``seat``'s view (built from ``state.view(seat)``), or with
    ``seat=None`` the full table of :func:`draw_state`."""
    return draw_state(state) if seat is None else draw_view(state.view(seat))


# ---------------------------------------------------------------- painting
def pillow() -> Any:
    """The ``PIL`` package, or an :class:`ImportError` naming the extra that installs it."""
    try:  # Pillow: the render extra
        import PIL
        from PIL import Image, ImageDraw, ImageFont  # noqa: F401
    except ImportError as exc:
        raise missing_extra(exc, "render", "drawing the table (render_mode 'rgb_array' or 'human')") from exc
    return PIL


@functools.lru_cache(maxsize=8)
def _font(size: int) -> Any:
    from PIL import ImageFont  # Pillow: the render extra (callers checked it with pillow())

    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType: a scalable font
    except TypeError:  # older Pillow: the fixed bitmap font
        return ImageFont.load_default()


def _text(draw: Any, xy: tuple[float, float], text: str, size: int, fill, centre: bool = False) -> None:
    font = _font(size)
    x, y = xy
    if centre:
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        x, y = x - (left + right) / 2, y - (top + bottom) / 2
    draw.text((x, y), text, font=font, fill=fill)


def _card(draw: Any, box: Box, card: int) -> None:
    """One card face up."""
    left, top, right, bottom = box
    shape = (left, top, right - 1, bottom - 1)
    cx = (left + right) / 2
    if card == WILD:
        draw.rounded_rectangle(shape, radius=6, fill=WILD_FACE, outline=WILD_INK, width=2)
        draw.ellipse((left + 6, top + 16, right - 7, bottom - 17), fill=CARD_FACE)
        _text(draw, (cx, (top + bottom) / 2), "SB", 18, WILD_INK, centre=True)
        _text(draw, (cx, top + 9), "SKIP-BO", 9, CARD_FACE, centre=True)
        return
    ink = card_colour(card)
    draw.rounded_rectangle(shape, radius=6, fill=CARD_FACE, outline=ink, width=3)
    label = card_name(card)
    _text(draw, (left + 6, top + 4), label, 11, ink)
    _text(draw, (cx, (top + bottom) / 2 + 3), label, 26, ink, centre=True)


def _back(draw: Any, box: Box) -> None:
    """One card face down."""
    left, top, right, bottom = box
    draw.rounded_rectangle((left, top, right - 1, bottom - 1), radius=6, fill=BACK, outline=CARD_FACE, width=2)
    draw.rounded_rectangle((left + 6, top + 6, right - 7, bottom - 7), radius=4, outline=BACK_TRIM, width=1)
    _text(draw, ((left + right) / 2, (top + bottom) / 2), "SB", 13, BACK_TRIM, centre=True)


def _slot(draw: Any, box: Box) -> None:
    """An empty place for a pile."""
    left, top, right, bottom = box
    draw.rounded_rectangle((left, top, right - 1, bottom - 1), radius=6, outline=SLOT, width=2)


def _paint(table: _Table) -> np.ndarray:
    PIL = pillow()
    layout = Layout(table.config.num_players)
    height, width, _ = layout.shape
    image = PIL.Image.new("RGB", (width, height), FELT)
    draw = PIL.ImageDraw.Draw(image)
    config = table.config
    winners = () if table.winner is None else config.team_seats(config.team(table.winner))

    # header: the game's status and whose picture this is
    status = game_status(config, table.current, table.turn, table.winner, table.truncated, winners)
    _text(draw, (16, 9), status, 16, TEXT)
    _text(draw, (layout.title_box[0] + 10, 9), table.title, 16, HIGHLIGHT)
    draw.line((0, HEADER_H - 1, width, HEADER_H - 1), fill=SLOT, width=1)

    # centre: building piles, draw pile, completed cards
    _text(draw, (24, HEADER_H + 7), "building piles", 13, DIM_TEXT)
    for pile, value in enumerate(table.building_values):
        box = layout.building_box(pile)
        if value:
            _card(draw, box, value)
        else:
            _slot(draw, box)
    box = layout.draw_pile_box
    _text(draw, (box[0], HEADER_H + 7), "draw pile", 13, DIM_TEXT)
    if table.draw_size:
        _back(draw, box)
    else:
        _slot(draw, box)
    _text(draw, (box[2] + 10, box[1] + 8), f"{table.draw_size} cards", 14, TEXT)
    _text(draw, (box[2] + 10, box[1] + 30), f"completed: {table.completed_size}", 14, DIM_TEXT)

    # one row per seat: stock, discard piles, hand
    for seat in range(config.num_players):
        row = layout.row_box(seat)
        if (seat == table.current and table.winner is None and not table.truncated) or seat in winners:
            draw.rounded_rectangle(
                (row[0] + 4, row[1] + 2, row[2] - 5, row[3] - 3), radius=8, outline=HIGHLIGHT, width=2
            )
        # the header's title names the viewing seat, so its own row is tagged as in the full table
        tag = seat_tag(config, seat, None if seat == table.seat else table.seat)
        tags = [tag] if tag else []
        if seat in winners:
            tags.append("winner")
        elif seat == table.current and not (table.winner is not None or table.truncated):
            tags.append("to move")
        name = f"player_{seat}" + (f"  ({', '.join(tags)})" if tags else "")
        _text(draw, (14, row[1] + 3), name, 13, TEXT)
        stock = layout.stock_box(seat)
        top = table.stock_tops[seat]
        if top is None:
            _slot(draw, stock)
        else:
            _card(draw, stock, top)
        _text(draw, (stock[0], stock[3] + 4), f"stock {table.stock_sizes[seat]}", 12, DIM_TEXT)
        for pile, cards in enumerate(table.discard_piles[seat]):
            shown = cards[-FAN_CARDS:]
            if not shown:
                _slot(draw, layout.discard_card_box(seat, pile, 0))
            for depth, card in enumerate(shown):
                _card(draw, layout.discard_card_box(seat, pile, depth), card)
            if len(cards) > FAN_CARDS:
                last = layout.discard_card_box(seat, pile, len(shown) - 1)
                _text(draw, (last[0], last[3] + 4), f"{len(cards)} cards", 12, DIM_TEXT)
        hand = table.hands[seat]
        count = hand if isinstance(hand, int) else len(hand)
        _text(draw, (layout.hand_box(seat, 0)[0], row[1] + 3), f"hand ({count})", 12, DIM_TEXT)
        for slot in range(count):
            box = layout.hand_box(seat, slot)
            if isinstance(hand, int):
                _back(draw, box)
            else:
                _card(draw, box, hand[slot])
    return np.asarray(image, dtype=np.uint8).copy()


# ---------------------------------------------------------------- window
class TableWindow:
    """A small Tk window showing frames (``render_mode="human"``), paced to ``fps``.

    Tk comes with Python; Pillow's ``ImageTk`` turns a frame into a Tk image.
    The window opens on the first :meth:`show` and closes with :meth:`close`
    (or the window's close button; the next frame opens it again). Where no
    window can open (no display, as on a headless training machine, or a
    Python without Tk) it warns once, saying to use ``"rgb_array"``, and shows
    nothing: code written for a desktop (and Gymnasium's ``check_env``, which
    tries every render mode) still runs. A pickled window comes back closed.
    """

    def __init__(self, title: str = "Skip-Bo", fps: float | None = None) -> None:
        self.title = title
        self.fps = fps
        self._root: Any = None
        self._label: Any = None
        self._shown_at: float | None = None
        self.unavailable: str | None = None
        """Why no window can open (set after the first failed try), else ``None``."""

    def show(self, frame: np.ndarray) -> None:
        PIL = pillow()
        if self.unavailable is not None:
            return
        if self._root is None and not self._open():
            return
        from PIL import ImageTk  # Pillow: the render extra (checked by pillow() above)

        photo = ImageTk.PhotoImage(PIL.Image.fromarray(frame), master=self._root)
        self._label.configure(image=photo)
        self._label.image = photo  # Tk keeps no reference of its own
        self._root.update()
        if self.fps:
            now = time.monotonic()
            if self._shown_at is not None:
                time.sleep(max(0.0, 1.0 / self.fps - (now - self._shown_at)))
            self._shown_at = time.monotonic()

    def close(self) -> None:
        root, self._root, self._label, self._shown_at = self._root, None, None, None
        if root is not None:
            try:
                root.destroy()
            except Exception:  # already gone (closed by the user)
                pass

    def _open(self) -> bool:
        """Open the window; ``False`` (with a warning) where none can open."""
        try:  # tkinter: not in every Python build
            import tkinter
        except ImportError:
            return self._give_up("this Python has no tkinter (on Debian/Ubuntu: apt install python3-tk)")
        try:
            root = tkinter.Tk()
        except tkinter.TclError as exc:
            return self._give_up(f"no display ({exc})")
        root.title(self.title)
        root.protocol("WM_DELETE_WINDOW", self.close)
        self._label = tkinter.Label(root)
        self._label.pack()
        self._root = root
        return True

    def _give_up(self, why: str) -> bool:
        self.unavailable = why
        warnings.warn(
            f"render_mode='human' cannot open a window: {why}; nothing is shown. "
            "Use render_mode='rgb_array' and save the frames (examples/record_video.py).",
            UserWarning,
            stacklevel=4,
        )
        return False

    def __getstate__(self) -> dict[str, Any]:
        return {"title": self.title, "fps": self.fps}

    def __setstate__(self, state: dict[str, Any]) -> None:
        TableWindow.__init__(self, **state)
