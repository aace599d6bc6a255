"""Why a move is not legal: the one explanation of an illegal move (R11, R12, R16, R18, R21, R27, §9).

:func:`illegal_reason` reads only the mover's seat view, so the rules'
:class:`~skipbo_env.rules.IllegalMoveError` and the terminal UI explain the
same facts; the rules word them with 0-based piles and rule ids
(:meth:`IllegalReason.text`), the UI words them for a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cards import WILD, card_name
from .moves import Discard, EndTurn, Play, Source

if TYPE_CHECKING:
    from .view import SeatView

REASON_KINDS = (
    "not_a_move", "hand_not_empty", "stock_first", "not_in_hand", "wild_discard_off", "no_partner",
    "empty_source", "wrong_number",
)
"""Every :attr:`IllegalReason.kind`."""
PARTNER_SOURCES = (Source.PARTNER_STOCK, Source.PARTNER_DISCARD)


@dataclass(frozen=True)
class IllegalReason:
    """Why one move is illegal for the seat to move, as facts.

    ``kind`` is one of :data:`REASON_KINDS`; the other fields are set where
    they apply: ``card`` (the card the move names or would move), ``count``
    (cards still in the hand), ``source``/``discard_pile`` (where the card
    would come from), ``build_pile`` and ``need`` (the number the pile takes).
    """

    kind: str
    card: int | None = None
    count: int = 0
    source: Source | None = None
    discard_pile: int | None = None
    build_pile: int | None = None
    need: int | None = None
    type_name: str = ""
    """The type of a non-move (kind ``not_a_move``)."""

    def text(self) -> str:
        """The rules' wording (piles numbered from 0, rule ids cited)."""
        kind = self.kind
        if kind == "not_a_move":
            return f"not a move: expected Play, Discard or EndTurn, got {self.type_name}"
        if kind == "hand_not_empty":
            return f"the hand still holds {self.count} card(s); end the turn by discarding (R16, R21)"
        if kind == "stock_first":
            return "the own stock top can be played and must_play_stock is on"
        if kind == "not_in_hand":
            return f"the hand holds no {card_name(self.card)}"  # type: ignore[arg-type]
        if kind == "wild_discard_off":
            return "wilds may not be discarded (allow_wild_discard is off)"
        if kind == "no_partner":
            return "partner cards can only be played in the partner game (R27)"
        if kind == "empty_source":
            stock = self.source in (Source.STOCK, Source.PARTNER_STOCK)
            return "stock is empty" if stock else f"discard pile {self.discard_pile} is empty"
        return (
            f"building pile {self.build_pile} needs a {self.need} (R12), "
            f"the card is a {card_name(self.card)}"  # type: ignore[arg-type]
        )


def illegal_reason(view: SeatView, move: object) -> IllegalReason:
    """Why ``move`` is not legal for ``view.seat`` (call it only for a move known to be illegal,
    by a seat that is to move)."""
    if not isinstance(move, Play | Discard | EndTurn):
        return IllegalReason("not_a_move", type_name=type(move).__name__)
    hand = view.hand
    if isinstance(move, EndTurn):
        if hand:
            return IllegalReason("hand_not_empty", count=len(hand))
        return IllegalReason("stock_first")
    if isinstance(move, Discard):
        if move.card not in hand:
            return IllegalReason("not_in_hand", card=move.card)
        if move.card == WILD and not view.config.allow_wild_discard:
            return IllegalReason("wild_discard_off", card=move.card)
        return IllegalReason("stock_first", card=move.card)
    source = move.source
    where = {"source": source, "discard_pile": move.discard_pile}
    if source in PARTNER_SOURCES and view.partner is None:
        return IllegalReason("no_partner", **where)
    if source is Source.HAND:
        if move.card not in hand:
            return IllegalReason("not_in_hand", card=move.card, **where)
        card = move.card
    else:
        owner = view.seat if source in (Source.STOCK, Source.DISCARD) else view.partner
        if source in (Source.STOCK, Source.PARTNER_STOCK):
            card = view.stock_tops[owner]  # type: ignore[index]
        else:
            pile = view.discard_piles[owner][move.discard_pile]  # type: ignore[index]
            card = pile[-1] if pile else None
        if card is None:
            return IllegalReason("empty_source", **where)
    need = view.building_values[move.build_pile] + 1
    return IllegalReason("wrong_number", card=card, build_pile=move.build_pile, need=need, **where)
