"""Scripted players with distinct styles: each ranks the same turn plans by its own priorities.

Every style reads only the decoded observation and shares one search, :func:`turn_lines` (every
sequence of plays it can make, each a :class:`Line`); at each decision it plays the first move
of the line it ranks first (:meth:`StylePolicy.line_key`, compared lexicographically) and
discards by its own keep values. The styles: ``stock-chaser`` (:class:`StockChaserPolicy`),
``hand-emptier`` (:class:`HandEmptierPolicy`), ``blocker`` (:class:`BlockerPolicy`) and
``high-first`` (:class:`HighFirstPolicy`); they are deterministic. See docs/opponents.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..encoding import ObservationFields
from ..rules import WILD, GameConfig, Move, Source, cards_until_playable, missing_numbers
from ..rules.cards import PILE_COMPLETE as PILE_TOP
from ..rules.moves import (
    DISCARDS,
    END_TURN,
    Play,
)
from .base import ScriptedAgent
from .greedy import greedy_move
from .heuristic import candidate_plays, fewest_missing, known_discards, placement_score, reach_chance

MAX_NODES = 1500
"""Positions the line search expands per decision."""
UNSEEN_CARD = 0.5
"""Chance that an opponent's unseen hand supplies one missing number of a chain (for danger)."""
SEAT_DECAY = 0.5
"""Weight of each further opponent relative to the one before."""
BLOCKER_DECAY = 0.0
"""The blocker watches the next seat only (its partner two seats on is counted out too)."""
DRY_CARDS = 10
"""Below this many cards to draw (draw plus completed pile), every style first plays as many
cards and completes as many piles as it can, so that cards flow back to the draw pile (R19)
and the game does not stall (R23)."""


@dataclass(frozen=True, slots=True)
class Line:
    """One sequence of plays this turn and what it leaves."""

    moves: tuple[Play, ...]
    stock: bool
    """It ends by playing the own stock top."""
    partner_stock: bool
    """It ends by playing the partner's stock top (partner game, R27)."""
    refill: bool
    """It ends by emptying the hand while cards are left to draw (R15)."""
    hand_numbers: int
    """Number cards played from the hand."""
    wilds: int
    """Wilds played (hand or discard top) other than a wild stock top."""
    discard_plays: int
    """Cards played from the own discard piles."""
    completed: int
    """Building piles completed (R13)."""
    high: int
    """Sum of the numbers the played cards stood for."""
    building: tuple[int, ...]
    """The building piles after the line."""
    hand: tuple[int, ...]
    """The hand after the line: count per value, index 0 unused, 13 = wild."""
    discard_tops: tuple[int | None, ...]
    """The own discard tops after the line (``None`` empty, 0 unknown)."""


class _Search:
    """Depth-first search over the plays of the seen cards; the position is mutated and restored."""

    def __init__(self, obs: ObservationFields, max_nodes: int) -> None:
        me, partner = obs.me, obs.partner
        self.max_nodes = max_nodes
        self.hand = [0, *obs.hand_counts]
        self.building = list(obs.building_values)
        self.stock_top = me.stock_top
        self.own = [known_discards(me.discard_tops[d], me.discard_seconds[d]) for d in range(4)]
        self.own_sizes = me.discard_sizes
        self.partner_stock = None if partner is None else partner.stock_top
        self.theirs = ([known_discards(partner.discard_tops[d], partner.discard_seconds[d]) for d in range(4)]
                       if partner is not None else [(), (), (), ()])
        self.own_depth = [0, 0, 0, 0]
        self.their_depth = [0, 0, 0, 0]
        self.can_draw = obs.draw_size + obs.completed_size > 0
        self.counts = [0, 0, 0, 0, 0]  # hand numbers, wilds, discard plays, completed, high
        self.lines: list[Line] = []
        self.seen: set[tuple] = set()

    def _own_top(self, d: int) -> int | None:
        cards, depth = self.own[d], self.own_depth[d]
        if depth < len(cards):
            return cards[depth]
        return None if depth >= self.own_sizes[d] else 0

    def _record(self, path: tuple[Play, ...], stock: bool = False, partner_stock: bool = False,
                refill: bool = False) -> None:
        hand_numbers, wilds, discard_plays, completed, high = self.counts
        self.lines.append(Line(
            path, stock, partner_stock, refill, hand_numbers, wilds, discard_plays, completed, high,
            tuple(self.building), tuple(self.hand), tuple(self._own_top(d) for d in range(4)),
        ))

    def visit(self, path: tuple[Play, ...]) -> None:
        node = (tuple(self.hand), tuple(sorted(self.building)), tuple(self.own_depth), tuple(self.their_depth))
        if node in self.seen or len(self.seen) >= self.max_nodes:
            return
        self.seen.add(node)
        self._record(path)
        for move, card in self._plays():
            undo = self._apply(move, card)
            step = (*path, move)
            if move.source is Source.STOCK:
                self._record(step, stock=True)
            elif move.source is Source.PARTNER_STOCK:
                self._record(step, partner_stock=True)
            elif move.source is Source.HAND and not any(self.hand) and self.can_draw:
                self._record(step, refill=True)
            else:
                self.visit(step)
            self._undo(move, card, undo)

    def _plays(self) -> list[tuple[Play, int]]:
        """Candidate plays here (:func:`~skipbo_env.bots.heuristic.candidate_plays`)."""
        return candidate_plays(self.building, self.stock_top, self.own, self.own_depth,
                               self.partner_stock, self.theirs, self.their_depth, self.hand)

    def _apply(self, move: Play, card: int) -> tuple[int, list[int]]:
        undo = (self.building[move.build_pile], list(self.counts))
        source = move.source
        if source is Source.HAND:
            self.hand[card] -= 1
            self.counts[0] += card != WILD
        elif source is Source.DISCARD:
            self.own_depth[move.source_pile] += 1
            self.counts[2] += 1
        elif source is Source.PARTNER_DISCARD:
            self.their_depth[move.source_pile] += 1
        if card == WILD and source is not Source.STOCK and source is not Source.PARTNER_STOCK:
            self.counts[1] += 1
        b = move.build_pile
        self.building[b] += 1
        self.counts[4] += self.building[b]
        if self.building[b] == PILE_TOP:  # R13
            self.building[b] = 0
            self.counts[3] += 1
        return undo

    def _undo(self, move: Play, card: int, undo: tuple[int, list[int]]) -> None:
        self.building[move.build_pile], self.counts = undo
        if move.source is Source.HAND:
            self.hand[card] += 1
        elif move.source is Source.DISCARD:
            self.own_depth[move.source_pile] -= 1
        elif move.source is Source.PARTNER_DISCARD:
            self.their_depth[move.source_pile] -= 1


def turn_lines(obs: ObservationFields, max_nodes: int = MAX_NODES) -> list[Line]:
    """Every line of plays from this position (the empty line first), in a fixed order."""
    search = _Search(obs, max_nodes)
    search.visit(())
    return search.lines


def table_danger(obs: ObservationFields, building: Sequence[int], q: float = UNSEEN_CARD,
                 decay: float = SEAT_DECAY) -> float:
    """How much ``building`` helps the other seats reach their stock tops on their next turns:
    their chances (:func:`~skipbo_env.bots.heuristic.reach_chance` from their discard tops),
    the next seat's weighted 1 and each further seat's ``decay`` times the one before; an
    opponent's chance counts for, the partner's against."""
    key = tuple(sorted(building))
    total, weight = 0.0, 1.0
    for seat in obs.seats[1:]:
        top = seat.stock_top
        if top is not None and top != WILD:
            numbers = frozenset(c for c in seat.discard_tops if c is not None and c != WILD)
            jokers = sum(1 for c in seat.discard_tops if c == WILD)
            chance = reach_chance(top, key, numbers, jokers, q)
            total += weight * (-chance if seat.is_partner else chance)
        weight *= decay
    return total


def stock_need(stock_top: int | None, building: Sequence[int], hand: Sequence[int],
               tops: Sequence[int | None]) -> int:
    """The fewest numbers missing to bring some building pile to one below ``stock_top``, after
    the hand's numbers and wilds and the own discard tops are used (0: reachable now)."""
    if stock_top is None or stock_top == WILD:
        return 0
    have = {c for c in range(1, PILE_TOP + 1) if hand[c]} | {t for t in tops if t and t != WILD}
    jokers = hand[WILD] + sum(1 for t in tops if t == WILD)
    return fewest_missing(stock_top, building, have, jokers)


class StylePolicy:
    """A style as a policy ``(obs, legal, rng) -> Move``: the first move of the line it ranks
    first, or its discard when that line plays nothing. Subclasses define :meth:`line_key`
    and :meth:`keep_value`."""

    name = "style"

    def __init__(self, config: GameConfig, max_nodes: int = MAX_NODES) -> None:
        self.config = config
        self.max_nodes = max_nodes

    def line_key(self, line: Line, obs: ObservationFields) -> tuple[float, ...]:  # pragma: no cover
        """Larger is better; compared as a tuple, so earlier entries dominate."""
        raise NotImplementedError

    def keep_value(self, card: int, obs: ObservationFields) -> float:  # pragma: no cover
        """How much a hand card is worth keeping rather than discarding."""
        raise NotImplementedError

    def __call__(self, obs: ObservationFields, legal: Sequence[Move], rng: np.random.Generator) -> Move:
        lines = turn_lines(obs, self.max_nodes)
        if self.config.must_play_stock and any(line.stock and len(line.moves) == 1 for line in lines):
            lines = [line for line in lines if line.moves]  # the stock must be played: no discard yet
        if obs.draw_size + obs.completed_size < DRY_CARDS:
            best = max(lines, key=lambda line: (line.stock, *_dry_key(line), *self.line_key(line, obs)))
        else:
            best = max(lines, key=lambda line: self.line_key(line, obs))
        move: Move | None = best.moves[0] if best.moves else self.discard(obs)
        if move is None or move not in legal:
            return greedy_move(obs, legal, rng)
        return move

    def discard(self, obs: ObservationFields) -> Move | None:
        """The discard of highest ``placement_score - keep_value``; end the turn with an empty hand."""
        if not any(obs.hand_counts):
            return END_TURN
        tops = obs.me.discard_tops
        best_value, best_move = -np.inf, None
        for card in range(1, WILD + 1):
            if not obs.hand_counts[card - 1] or (card == WILD and not self.config.allow_wild_discard):
                continue
            keep = self.keep_value(card, obs)
            empty_seen = False
            for d in range(4):
                if tops[d] is None:
                    if empty_seen:
                        continue
                    empty_seen = True
                value = placement_score(card, tops[d]) - keep
                if value > best_value:
                    best_value, best_move = value, DISCARDS[card][d]
        return best_move


def _dry_key(line: Line) -> tuple[int, int]:
    """Completed piles, then cards played other than wilds: what a style ranks first when the
    deck runs dry."""
    return (line.completed, len(line.moves) - line.wilds)


def _distance(card: int, obs: ObservationFields) -> int:
    return cards_until_playable(card, obs.building_values)


class StockChaserPolicy(StylePolicy):
    """Stock first by the shortest chain; otherwise move the piles towards the stock top."""

    name = "stock-chaser"

    def line_key(self, line: Line, obs: ObservationFields) -> tuple[float, ...]:
        if line.stock:
            return (3, -len(line.moves), -line.wilds, -table_danger(obs, line.building), line.discard_plays)
        if line.partner_stock:
            return (2, -len(line.moves), -line.wilds, 0, 0)
        need = stock_need(obs.me.stock_top, line.building, line.hand, line.discard_tops)
        return (1, -need, -line.wilds, -round(table_danger(obs, line.building), 1),
                line.discard_plays + line.hand_numbers)

    def keep_value(self, card: int, obs: ObservationFields) -> float:
        if card == WILD:
            return 50.0
        top = obs.me.stock_top
        chain = set()
        if top is not None and top != WILD:
            pile = min(obs.building_values, key=lambda v: len(missing_numbers(v, top)))
            chain = set(missing_numbers(pile, top))
        value = 6.0 if card in chain else 0.0
        return value + max(0, 4 - _distance(card, obs)) - (2.0 if obs.hand_counts[card - 1] >= 2 else 0.0)


class HandEmptierPolicy(StylePolicy):
    """Stock lines with the most hand cards; otherwise empty the hand (R15), wilds and all."""

    name = "hand-emptier"

    def line_key(self, line: Line, obs: ObservationFields) -> tuple[float, ...]:
        played = line.hand_numbers + obs.hand_counts[WILD - 1] - line.hand[WILD]
        danger = -round(table_danger(obs, line.building), 1)
        if line.stock:
            return (4, -line.wilds, played, danger, line.discard_plays)
        if line.refill:
            return (3, danger, -line.wilds, line.discard_plays)
        if line.partner_stock:
            return (2, -line.wilds, played, danger)
        return (1, -line.wilds, line.hand_numbers, danger, line.discard_plays)

    def keep_value(self, card: int, obs: ObservationFields) -> float:
        if card == WILD:
            return 50.0
        return 2.0 * max(0, 6 - _distance(card, obs))


class BlockerPolicy(StylePolicy):
    """The line that leaves the other seats the least: past their stock numbers, never one below."""

    name = "blocker"

    def line_key(self, line: Line, obs: ObservationFields) -> tuple[float, ...]:
        danger = -round(table_danger(obs, line.building, decay=BLOCKER_DECAY), 1)
        if line.stock:
            return (2, danger, -len(line.moves), -line.wilds)
        if line.partner_stock:
            return (1, danger, -len(line.moves), -line.wilds)
        return (0, danger, line.refill, -line.wilds, line.discard_plays, line.hand_numbers)

    def keep_value(self, card: int, obs: ObservationFields) -> float:
        if card == WILD:
            return 50.0
        value = max(0, 4 - _distance(card, obs)) * 1.5
        for seat in obs.seats[1:]:
            top = seat.stock_top
            if top is not None and top != WILD and card in (top, top - 1) and not seat.is_partner:
                value += 3.0  # a card at an opponent's number: played later, it jumps their pile
        return value


class HighFirstPolicy(StylePolicy):
    """Wilds only for the stock; high cards first and piles completed; low cards discarded."""

    name = "high-first"

    def line_key(self, line: Line, obs: ObservationFields) -> tuple[float, ...]:
        if line.stock:
            return (3, -line.wilds, line.high, -len(line.moves))
        if line.partner_stock:
            return (2, -line.wilds, line.high, 0)
        danger = -round(table_danger(obs, line.building), 1)
        return (1, -line.wilds, danger, line.completed, line.high, line.refill)

    def keep_value(self, card: int, obs: ObservationFields) -> float:
        if card == WILD:
            return 100.0
        return card / 2.0 + max(0, 3 - _distance(card, obs))


class _StyleAgent(ScriptedAgent):
    """A scripted agent over one :class:`StylePolicy`."""

    policy_type: type[StylePolicy] = StylePolicy

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        super().__init__(config, seed)
        self.policy = self.policy_type(config)

    def choose(self, obs: ObservationFields, legal: Sequence[Move]) -> Move:
        return self.policy(obs, legal, self.rng)


class StockChaserAgent(_StyleAgent):
    """``stock-chaser``: :class:`StockChaserPolicy`."""

    name = "stock-chaser"
    policy_type = StockChaserPolicy


class HandEmptierAgent(_StyleAgent):
    """``hand-emptier``: :class:`HandEmptierPolicy`."""

    name = "hand-emptier"
    policy_type = HandEmptierPolicy


class BlockerAgent(_StyleAgent):
    """``blocker``: :class:`BlockerPolicy`."""

    name = "blocker"
    policy_type = BlockerPolicy


class HighFirstAgent(_StyleAgent):
    """``high-first``: :class:`HighFirstPolicy`."""

    name = "high-first"
    policy_type = HighFirstPolicy


STYLES: dict[str, type[ScriptedAgent]] = {
    cls.name: cls for cls in (StockChaserAgent, HandEmptierAgent, BlockerAgent, HighFirstAgent)
}
"""The style agents by name."""


__all__ = [
    "STYLES",
    "BlockerAgent",
    "BlockerPolicy",
    "HandEmptierAgent",
    "HandEmptierPolicy",
    "HighFirstAgent",
    "HighFirstPolicy",
    "Line",
    "StockChaserAgent",
    "StockChaserPolicy",
    "StylePolicy",
    "stock_need",
    "table_danger",
    "turn_lines",
]
