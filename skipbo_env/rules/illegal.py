"""Why a move is not legal: the one explanation of an illegal move (R11, R12, R16, R18, R21, R27, §9).

:func:`illegal_reason` reads only the mover's seat view, so the rules'
:class:`~skipbo_env.rules.IllegalMoveError` and the terminal UI explain the
same facts; the rules word them with 0-based piles and rule ids
(:meth:`IllegalReason.text`), the UI words them for a person.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .cards import WILD, card_name
from .moves import Discard, EndTurn, Play, Source
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

    def words(self, templates: Mapping[str, str], first_pile: int = 0) -> str:
        """The reason in words: ``templates[kind]`` filled with the facts.

        Placeholders: ``{card}`` (card name), ``{count}``, ``{need}``,
        ``{build_pile}``, ``{type_name}``, ``{place}`` (``stock``,
        ``discard pile 2``, ``partner's stock``, ...) and ``{whose_place}``
        (``your stock``, ``the partner's discard pile 1``, ...); piles are
        numbered from ``first_pile``.
        """
        partner = self.source in PARTNER_SOURCES
        if self.source in (Source.STOCK, Source.PARTNER_STOCK):
            place = "stock"
        else:
            place = f"discard pile {(self.discard_pile or 0) + first_pile}"
        place = f"partner's {place}" if partner else place
        return templates[self.kind].format(
            card="" if self.card is None else card_name(self.card),
            count=self.count,
            need=self.need,
            build_pile=None if self.build_pile is None else self.build_pile + first_pile,
            type_name=self.type_name,
            place=place,
            whose_place=f"the {place}" if partner else f"your {place}",
        )

    def text(self) -> str:
        """The rules' wording (:data:`RULE_WORDS`: piles numbered from 0, rule ids cited)."""
        return self.words(RULE_WORDS)


RULE_WORDS = {
    "not_a_move": "not a move: expected Play, Discard or EndTurn, got {type_name}",
    "hand_not_empty": "the hand still holds {count} card(s); end the turn by discarding (R16, R21)",
    "stock_first": "the own stock top can be played and must_play_stock is on",
    "not_in_hand": "the hand holds no {card}",
    "wild_discard_off": "wilds may not be discarded (allow_wild_discard is off)",
    "no_partner": "partner cards can only be played in the partner game (R27)",
    "empty_source": "{place} is empty",
    "wrong_number": "building pile {build_pile} needs a {need} (R12), the card is a {card}",
}
"""The rules' words for each reason (the messages of :class:`~skipbo_env.rules.IllegalMoveError`)."""


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
    source, discard_pile = move.source, move.discard_pile
    if source in PARTNER_SOURCES and view.partner is None:
        return IllegalReason("no_partner", source=source, discard_pile=discard_pile)
    card: int | None
    if source is Source.HAND:
        if move.card not in hand:
            return IllegalReason("not_in_hand", card=move.card, source=source, discard_pile=discard_pile)
        card = move.card
    else:
        owner = view.seat if source in (Source.STOCK, Source.DISCARD) else view.partner
        assert owner is not None  # a partner source without a partner returned "no_partner" above
        if source in (Source.STOCK, Source.PARTNER_STOCK):
            card = view.stock_tops[owner]
        else:
            assert discard_pile is not None  # Play.__post_init__: a discard source names its pile
            pile = view.discard_piles[owner][discard_pile]
            card = pile[-1] if pile else None
        if card is None:
            return IllegalReason("empty_source", source=source, discard_pile=discard_pile)
    need = view.building_values[move.build_pile] + 1
    return IllegalReason(
        "wrong_number", card=card, build_pile=move.build_pile, need=need, source=source, discard_pile=discard_pile
    )
