"""Cards of the classic 162-card deck (R1, R2).

A card is a plain ``int``: ``1``..``12`` are number cards and :data:`WILD`
(``13``) is a Skip-Bo card. A wild has no number away from a building pile
(R2); on a building pile it stands for the number the pile needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeGuard

WILD = 13
"""The Skip-Bo (wild) card."""
NUMBERS = tuple(range(1, 13))
"""The number cards, 1..12."""
CARD_VALUES = (*NUMBERS, WILD)
"""Every card value, numbers first then the wild."""
COPIES_PER_NUMBER = 12
WILD_COUNT = 18
DECK_SIZE = COPIES_PER_NUMBER * len(NUMBERS) + WILD_COUNT  # 162 (R1)
HAND_SIZE = 5  # R10
NUM_BUILDING_PILES = 4  # R5
NUM_DISCARD_PILES = 4  # R5
PILE_COMPLETE = 12  # R13


def standard_deck() -> list[int]:
    """The 162 cards in a fixed (unshuffled) order: twelve of each number, then 18 wilds."""
    deck = [n for n in NUMBERS for _ in range(COPIES_PER_NUMBER)]
    deck.extend([WILD] * WILD_COUNT)
    return deck


def card_counts(cards: Iterable[int]) -> list[int]:
    """Counts indexed by card value (index 0 unused, 13 = wild)."""
    counts = [0] * (WILD + 1)
    for card in cards:
        counts[card] += 1
    return counts


EXPECTED_COUNTS = card_counts(standard_deck())


def missing_numbers(pile_value: int, card: int) -> tuple[int, ...]:
    """The numbers that must go on a building pile showing ``pile_value`` (0 empty .. 11)
    before number ``card`` (1..12) fits there, in the order they are played.

    A pile showing ``v`` takes ``v + 1`` (R12); past 12 it is completed and
    restarts at 1 (R13), so the chain wraps from 12 back to 1. Empty when the card fits now.
    Example: a pile showing 10 needs ``(11, 12, 1)`` before a 2.
    """
    return tuple((pile_value + i) % PILE_COMPLETE + 1 for i in range(numbers_missing(pile_value, card)))


def numbers_missing(pile_value: int, card: int) -> int:
    """How many numbers :func:`missing_numbers` lists: ``(card - pile_value - 1) mod 12``."""
    return (card - pile_value - 1) % PILE_COMPLETE


def cards_until_playable(card: int, building_values: Iterable[int]) -> int:
    """The fewest numbers that must go on some building pile before number ``card`` fits there.

    ``0`` means it can be played now; see :func:`numbers_missing`.
    """
    return min(numbers_missing(value, card) for value in building_values)


def card_name(card: int) -> str:
    """``'SB'`` for a wild, the number otherwise."""
    return "SB" if card == WILD else str(card)


def is_card(value: object) -> TypeGuard[int]:
    """True when ``value`` is an ``int`` card value (bools are rejected)."""
    return type(value) is int and 1 <= value <= WILD
