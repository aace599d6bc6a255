"""HeuristicAgent: plans each decision by searching over the plays of the cards it can see.

The planner (:class:`HeuristicPolicy`) reads only the decoded observation:
its hand, its stock top, the top two cards of its discard piles (and of its
partner's in the partner game), the building pile values and the other
seats' stock tops and discard tops. From that it enumerates every sequence
of plays it can make this turn (a depth-first search over positions, each
position visited once) and scores where each sequence can stop:

* a sequence that plays the own stock top (or the partner's) ends there and
  scores :attr:`HeuristicWeights.stock` (the next stock card is unknown, so
  the agent plans again once it is turned up, R14);
* a sequence that empties the hand while cards are left to draw ends there
  and scores :attr:`HeuristicWeights.refill` (R15: five new cards);
* any other position can end the turn with the best discard (R16).

Every position is also scored for what it leaves on the table: building
piles that let an opponent play their stock top cost (the next opponent
most, later ones less, since the piles change before they move); piles
that let the partner play theirs count for it; wilds spent without reaching
the stock cost (spare wilds for the stock); cards played from discard piles
and from the hand earn a little (unblocked piles, a sooner refill). The
discard builds descending runs and keeps the hand cards that bridge a
building pile to the own stock top.

Only the first move of the best sequence is played; the rest is cached and
followed while the observation matches what the plan predicted, so a turn
usually costs one or two searches. The planner is deterministic: equal
scores are resolved by a fixed move order, not by chance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from skipbo_env.encoding import ObservationFields
from skipbo_env.policies import greedy_move
from skipbo_env.rules import (
    WILD,
    Discard,
    EndTurn,
    GameConfig,
    Move,
    Play,
    Source,
)
from skipbo_env.rules.moves import (
    DISCARD_PLAYS,
    DISCARDS,
    END_TURN,
    HAND_PLAYS,
    PARTNER_DISCARD_PLAYS,
    PARTNER_STOCK_PLAYS,
    STOCK_PLAYS,
)

from .base import ScriptedAgent

PILE_TOP = 12
HAND_SIZE = 5


@dataclass(frozen=True)
class HeuristicWeights:
    """Scores the planner adds up; larger is better for the agent."""

    stock: float = 100.0
    """Playing the own stock top."""
    partner_stock: float = 90.0
    """Playing the partner's stock top (partner game, R27)."""
    refill: float = 30.0
    """Emptying the hand while cards are left to draw (R15), scaled by how many can be drawn."""
    wild_spent: float = 20.0
    """Cost of a wild (hand or discard top) played without reaching a stock card."""
    hand_play: float = 1.0
    """Each number card played from the hand."""
    discard_play: float = 3.0
    """Each card played from an own discard pile."""
    partner_discard_play: float = 1.0
    """Each card played from a partner's discard pile."""
    pile_completed: float = 1.0
    """Each building pile completed (its cards return to the draw pile later, R19)."""
    danger: float = 45.0
    """Cost when the next opponent is sure to reach their stock top; scaled by the chance."""
    partner_help: float = 15.0
    """Gain when the partner is sure to reach their stock top on their turn."""
    own_reach: float = 6.0
    """Gain when the own stock top is sure to be reachable next turn."""
    unseen_card: float = 0.55
    """Chance that an unseen hand supplies one missing number of a chain."""
    seat_decay: float = 0.5
    """Weight of each further seat relative to the one before (the piles change between)."""
    max_nodes: int = 3000
    """Search budget per decision: positions expanded."""


DEFAULT_WEIGHTS = HeuristicWeights()


def _chain_values(pile: int, target: int) -> list[int]:
    """Numbers that must go on a pile showing ``pile`` before ``target`` fits (wrapping past 12)."""
    gap = (target - 1 - pile) % PILE_TOP
    return [(pile + i) % PILE_TOP + 1 for i in range(1, gap + 1)]


def _reach_chance(
    target: int | None, building: list[int], numbers: frozenset[int] | set[int], jokers: int, q: float
) -> float:
    """Chance that a seat can bring some pile to ``target - 1`` with cards it is known to hold
    (``numbers`` plus ``jokers`` wilds), each other missing number coming from unseen cards
    with chance ``q``. A wild target always fits: chance 1. No target: 0."""
    if target is None:
        return 0.0
    if target == WILD:
        return 1.0
    miss_none = 1.0
    for pile in building:
        need = _chain_values(pile, target)
        if len(need) > HAND_SIZE + 4:
            continue
        missing = sum(1 for v in need if v not in numbers) - jokers
        chance = 1.0 if missing <= 0 else q**missing
        miss_none *= 1.0 - chance
        if miss_none == 0.0:
            break
    return 1.0 - miss_none


@dataclass
class _Other:
    """What the planner uses of another seat: its stock top and playable discard tops."""

    weight: float
    """Positive for opponents (their reach costs), negative for the partner (it helps)."""
    stock_top: int | None
    numbers: frozenset[int]
    jokers: int


class _Search:
    """One decision's search; positions are mutated in place and restored on the way back."""

    def __init__(self, obs: ObservationFields, config: GameConfig, w: HeuristicWeights) -> None:
        self.w = w
        self.config = config
        me = obs.me
        self.hand = [0] * (WILD + 1)
        for i, count in enumerate(obs.hand_counts):
            self.hand[i + 1] = count
        self.start_hand = list(self.hand)
        self.building = list(obs.building_values)
        self.stock_top = me.stock_top
        self.own_cards = [
            tuple(c for c in (me.discard_tops[d], me.discard_seconds[d]) if c is not None) for d in range(4)
        ]
        self.own_depth = [0, 0, 0, 0]
        partner = obs.partner
        if partner is not None:
            self.partner_stock = partner.stock_top
            self.partner_cards = [
                tuple(c for c in (partner.discard_tops[d], partner.discard_seconds[d]) if c is not None)
                for d in range(4)
            ]
        else:
            self.partner_stock = None
            self.partner_cards = [(), (), (), ()]
        self.partner_depth = [0, 0, 0, 0]
        self.can_draw = min(HAND_SIZE, obs.draw_size + obs.completed_size)
        self.others = self._others(obs)
        self.credit = 0.0
        self.seen: set = set()
        self.best_value = -np.inf
        self.best_path: tuple[Move, ...] = ()
        self.nodes = 0

    def _others(self, obs: ObservationFields) -> list[_Other]:
        out = []
        weight = 1.0
        for seat in obs.seats[1:]:
            if seat.stock_size > 0:
                numbers = frozenset(c for c in seat.discard_tops if c is not None and c != WILD)
                jokers = sum(1 for c in seat.discard_tops if c == WILD)
                if seat.is_partner:
                    scale = -self.w.partner_help * weight
                else:
                    scale = self.w.danger * weight
                out.append(_Other(scale, seat.stock_top, numbers, jokers))
            weight *= self.w.seat_decay
        return out

    # ---------------------------------------------------------------- scoring
    def _table_value(self) -> float:
        """Score of the building piles for the seats that move next (danger, partner help)."""
        q = self.w.unseen_card
        value = 0.0
        for other in self.others:
            if other.stock_top is None or other.stock_top == WILD:
                continue  # a wild top fits anywhere: nothing this turn changes it
            value -= other.weight * _reach_chance(
                other.stock_top, self.building, other.numbers, other.jokers, q
            )
        return value

    def _own_reach(self) -> float:
        top = self.stock_top
        if top is None or top == WILD:
            return 0.0
        numbers = {c for c in range(1, PILE_TOP + 1) if self.hand[c]}
        jokers = self.hand[WILD]
        for d in range(4):
            cards = self.own_cards[d]
            if self.own_depth[d] < len(cards):
                card = cards[self.own_depth[d]]
                if card == WILD:
                    jokers += 1
                else:
                    numbers.add(card)
        return self.w.own_reach * _reach_chance(top, self.building, numbers, jokers, 0.3)

    def _own_top(self, d: int) -> int | None:
        """The own discard pile's top at this point of the plan; 0 when it is unknown."""
        cards = self.own_cards[d]
        depth = self.own_depth[d]
        if depth < len(cards):
            return cards[depth]
        return None if depth >= self.own_sizes[d] else 0

    def _keep_value(self, card: int) -> float:
        """How much a hand card is worth keeping rather than discarding."""
        if card == WILD:
            return 50.0
        value = 0.0
        dist = min((card - v - 1) % PILE_TOP for v in self.building)
        value += max(0, 4 - dist) * 1.5
        top = self.stock_top
        if top is not None and top != WILD:
            for v in self.building:
                if card in _chain_values(v, top)[:HAND_SIZE]:
                    value += 4.0
                    break
        if self.hand[card] >= 2:
            value -= 2.0
        return value

    def _best_discard(self) -> tuple[float, Discard | None]:
        best_value, best_move = -np.inf, None
        allow_wild = self.config.allow_wild_discard
        seen_empty = False
        piles = []
        for d in range(4):
            top = self._own_top(d)
            if top is None:
                if seen_empty:
                    continue
                seen_empty = True
            piles.append((d, top))
        for card in range(1, WILD + 1):
            if not self.hand[card] or (card == WILD and not allow_wild):
                continue
            keep = self._keep_value(card)
            for d, top in piles:
                value = _placement(card, top) - keep
                if value > best_value:
                    best_value, best_move = value, DISCARDS[card][d]
        return best_value, best_move

    # ---------------------------------------------------------------- search
    def run(self, own_sizes: tuple[int, ...]) -> tuple[Move, ...]:
        self.own_sizes = own_sizes
        self._visit(())
        return self.best_path

    def _consider(self, value: float, path: tuple[Move, ...]) -> None:
        if value > self.best_value:
            self.best_value, self.best_path = value, path

    def _stock_playable(self) -> bool:
        top = self.stock_top
        return top is not None and (top == WILD or any(v + 1 == top for v in self.building))

    def _visit(self, path: tuple[Move, ...]) -> None:
        key = (
            tuple(self.hand),
            tuple(sorted(self.building)),
            tuple(self.own_depth),
            tuple(self.partner_depth),
        )
        if key in self.seen or self.nodes >= self.w.max_nodes:
            return
        self.seen.add(key)
        self.nodes += 1
        base = self.credit + self._table_value()
        hand_size = sum(self.hand)
        if not (self.config.must_play_stock and self._stock_playable()):
            if hand_size:
                value, move = self._best_discard()
                if move is not None:
                    self._consider(base + self._own_reach() + value, (*path, move))
            else:
                self._consider(base + self._own_reach(), (*path, END_TURN))
        for move, card, undo in self._plays():
            self._apply(move, card)
            if move.source is Source.STOCK:
                self._consider(self.credit + self.w.stock + self._table_value(), (*path, move))
            elif move.source is Source.PARTNER_STOCK:
                self._consider(self.credit + self.w.partner_stock + self._table_value(), (*path, move))
            elif move.source is Source.HAND and hand_size == 1 and self.can_draw:
                refill = self.w.refill * self.can_draw / HAND_SIZE
                self._consider(self.credit + refill + 0.5 * self._table_value(), (*path, move))
            else:
                self._visit((*path, move))
            undo()

    def _plays(self):
        """Candidate plays here: (move, card, undo) with one pile per distinct pile value."""
        out = []
        building = self.building
        piles_by_need: dict[int, int] = {}
        for b, v in enumerate(building):
            piles_by_need.setdefault(v + 1, b)
        distinct = list(piles_by_need.values())

        def targets(card: int) -> list[int]:
            if card == WILD:
                return distinct
            b = piles_by_need.get(card)
            return [] if b is None else [b]

        if self.stock_top is not None:
            for b in targets(self.stock_top):
                out.append((STOCK_PLAYS[b], self.stock_top, None))
        if self.partner_stock is not None:
            for b in targets(self.partner_stock):
                out.append((PARTNER_STOCK_PLAYS[b], self.partner_stock, None))
        for d in range(4):
            cards = self.own_cards[d]
            if self.own_depth[d] < len(cards):
                for b in targets(cards[self.own_depth[d]]):
                    out.append((DISCARD_PLAYS[d][b], cards[self.own_depth[d]], None))
        for d in range(4):
            cards = self.partner_cards[d]
            if self.partner_depth[d] < len(cards):
                for b in targets(cards[self.partner_depth[d]]):
                    out.append((PARTNER_DISCARD_PLAYS[d][b], cards[self.partner_depth[d]], None))
        for card in range(1, WILD + 1):
            if self.hand[card]:
                for b in targets(card):
                    out.append((HAND_PLAYS[card][b], card, None))
        return [(m, c, self._undo_for(m)) for m, c, _ in out]

    def _undo_for(self, move: Play):
        b = move.build_pile
        before_value = self.building[b]
        before_credit = self.credit

        def undo() -> None:
            self.building[b] = before_value
            self.credit = before_credit
            source = move.source
            if source is Source.HAND:
                self.hand[move.card] += 1  # type: ignore[index]
            elif source is Source.DISCARD:
                self.own_depth[move.discard_pile] -= 1  # type: ignore[index]
            elif source is Source.PARTNER_DISCARD:
                self.partner_depth[move.discard_pile] -= 1  # type: ignore[index]

        return undo

    def _apply(self, move: Play, card: int) -> None:
        w = self.w
        source = move.source
        if source is Source.HAND:
            self.hand[card] -= 1
            if card != WILD:
                self.credit += w.hand_play
        elif source is Source.DISCARD:
            self.own_depth[move.discard_pile] += 1  # type: ignore[index]
            self.credit += w.discard_play
        elif source is Source.PARTNER_DISCARD:
            self.partner_depth[move.discard_pile] += 1  # type: ignore[index]
            self.credit += w.partner_discard_play
        if card == WILD and source is not Source.STOCK and source is not Source.PARTNER_STOCK:
            self.credit -= w.wild_spent
        b = move.build_pile
        self.building[b] += 1
        if self.building[b] == PILE_TOP:
            self.building[b] = 0
            self.credit += w.pile_completed


def _placement(card: int, top: int | None) -> float:
    """How well ``card`` sits on a discard pile topped by ``top`` (``None`` empty, 0 unknown)."""
    if top == 0:
        return 0.0
    if card == WILD:
        return 1.0 if top is None else (0.0 if top == WILD else -1.0)
    if top is None:
        return 0.5 + card / 12.0
    if top == WILD:
        return -6.0
    if top == card + 1:
        return 4.0
    if top == card:
        return 2.5
    if top > card:
        return 1.5 - 0.2 * (top - card)
    return -2.0 - 0.2 * (card - top)


class HeuristicPolicy:
    """The heuristic's decision rule as a policy ``(obs, legal, rng) -> Move`` for one configuration.

    Follows a cached plan while the observation matches its prediction, else
    searches again (see the module docstring). A planned move that is not in
    ``legal`` (which only happens if the observation and mask disagree) falls
    back to :func:`skipbo_env.policies.greedy_move`.
    """

    def __init__(self, config: GameConfig, weights: HeuristicWeights = DEFAULT_WEIGHTS) -> None:
        self.config = config
        self.weights = weights

    def __call__(self, obs: ObservationFields, legal: list[Move], rng: np.random.Generator) -> Move:
        if len(legal) == 1:
            return legal[0]
        search = _Search(obs, self.config, self.weights)
        path = search.run(obs.me.discard_sizes)
        move = path[0] if path else None
        if move is None or move not in legal:
            return greedy_move(obs, legal, rng)
        return move


class HeuristicAgent(ScriptedAgent):
    """The strongest scripted player here: plans each decision (:class:`HeuristicPolicy`)."""

    name = "heuristic"

    def __init__(
        self, config: GameConfig, seed: int | None = None, weights: HeuristicWeights = DEFAULT_WEIGHTS
    ) -> None:
        super().__init__(config, seed)
        self.policy = HeuristicPolicy(config, weights)

    def choose(self, obs: ObservationFields, legal: list[Move]) -> Move:
        return self.policy(obs, legal, self.rng)

    def act(self, observation: Mapping[str, Any]) -> int:
        return super().act(observation)


__all__ = ["HeuristicAgent", "HeuristicPolicy", "HeuristicWeights", "EndTurn", "Play"]
