"""HeuristicAgent: plans each decision by searching over the plays of the cards it can see.

:class:`HeuristicPolicy` reads only the decoded observation, enumerates the sequences of plays it
can make this turn, and scores where each can stop (a stock play, a hand emptied for a refill, or
a discard) and what it leaves on the table, with :class:`HeuristicWeights` that depend on the
table (:func:`default_weights`). It plays the best sequence's first move, the rest while the
observations match the plan, and is deterministic. docs/agents.md ("heuristic") lists every term.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace

import numpy as np

from ..encoding import ObservationFields
from ..rules import WILD, GameConfig, Move, Source, cards_until_playable, missing_numbers
from ..rules.cards import HAND_SIZE
from ..rules.cards import PILE_COMPLETE as PILE_TOP
from ..rules.moves import (
    DISCARD_PLAYS,
    DISCARDS,
    END_TURN,
    HAND_PLAYS,
    PARTNER_DISCARD_PLAYS,
    PARTNER_STOCK_PLAYS,
    STOCK_PLAYS,
    Play,
)
from .base import ScriptedAgent
from .greedy import greedy_move

_NUMBERS = range(1, PILE_TOP + 1)


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
    """Each building pile completed (its cards come back through the draw pile, R19)."""
    danger: float = 45.0
    """Cost when the next opponent is sure to reach their stock top; scaled by the chance."""
    partner_help: float = 15.0
    """Gain when the partner is sure to reach their stock top on their turn."""
    own_reach: float = 6.0
    """Gain when the own stock top is sure to be reachable next turn."""
    unseen_card: float = 0.55
    """Chance that an opponent's unseen hand supplies one missing number of a chain."""
    own_unseen_card: float = 0.3
    """The same for the agent's own next draw."""
    seat_decay: float = 0.5
    """Weight of each further seat relative to the one before (the piles change between)."""
    dry_cards: float = 50.0
    """The deck runs dry below this many cards to draw (draw plus completed pile): from there
    to an empty deck, the dry terms below grow linearly, so that cards keep flowing and the
    game does not stall (R23)."""
    dry_danger: float = 0.3
    """Danger and partner help are multiplied by this at an empty deck."""
    dry_play: float = 2.0
    """Extra credit per card played (any source) at an empty deck."""
    dry_completed: float = 10.0
    """Extra credit per completed building pile (its cards become drawable, R19) at an empty deck."""
    max_nodes: int = 2000
    """Search budget per decision: positions expanded."""
    stock_detour: float = 0.0
    """Cost of each play made before the own stock top in a sequence that plays it: a positive cost
    takes the shortest chain to the stock and keeps the other cards for the stock card turned up next."""
    stock_need: float = 0.0
    """Cost of each number still missing, where the turn ends, between the nearest building pile and
    the own stock top (after the hand's numbers and wilds and the own discard tops are counted)."""

    def __post_init__(self) -> None:
        """Every weight a finite real number; the chances in 0..1; a node budget of at least 1."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "max_nodes":
                if type(value) is not int or not 1 <= value <= MAX_NODES:
                    raise ValueError(f"HeuristicWeights.max_nodes must be an int in 1..{MAX_NODES}, got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"HeuristicWeights.{f.name} must be a finite number, got {value!r}")
        for name in ("unseen_card", "own_unseen_card", "seat_decay", "dry_danger"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"HeuristicWeights.{name} must be in 0..1, got {getattr(self, name)!r}")
        if self.dry_cards < 0:
            raise ValueError(f"HeuristicWeights.dry_cards must be >= 0, got {self.dry_cards!r}")


MAX_NODES = 1_000_000
"""The largest search budget a :class:`HeuristicWeights` takes (positions per decision)."""


DEFAULT_WEIGHTS = HeuristicWeights()
"""The weights of the 2-player game (and of every table :data:`TABLE_WEIGHTS` does not list)."""

CHAIN_WEIGHTS = replace(DEFAULT_WEIGHTS, stock_detour=7.0, stock_need=4.0)
"""The 2-player weights with the shortest chain to the stock (a play before the stock top costs
more than it earns) and the own stock's set-up counted: the 3 to 6 player weights before
:data:`MULTI_PLAYER_WEIGHTS` credited hand plays more (the search agent still plans with them)."""

MULTI_PLAYER_WEIGHTS = replace(CHAIN_WEIGHTS, hand_play=5.0)
"""The weights at 3 to 6 players: :data:`CHAIN_WEIGHTS` with every hand card played worth 5 (not 1).
With two or more seats moving the building piles between the own turns, a card held for a later
turn is worth less, and playing hand cards brings more new ones at the next draw (R15)."""

TABLE_WEIGHTS: dict[int, HeuristicWeights] = {n: MULTI_PLAYER_WEIGHTS for n in (3, 4, 5, 6)}
"""The weights by number of players where they differ from :data:`DEFAULT_WEIGHTS` (the partner
game included: a 4-player partner game plays the 4-player weights)."""


def default_weights(num_players: int) -> HeuristicWeights:
    """The heuristic's weights at a table of ``num_players`` (:data:`TABLE_WEIGHTS`, else
    :data:`DEFAULT_WEIGHTS`): what :class:`HeuristicAgent`, the compiled heuristic and the
    search agent use unless given weights."""
    return TABLE_WEIGHTS.get(num_players, DEFAULT_WEIGHTS)

# CHAIN[pile][target]: the numbers that must go on a pile showing ``pile`` (0..11)
# before ``target`` (1..12) fits, wrapping past 12 (R12, R13).
CHAIN: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        missing_numbers(pile, target) if target else ()
        for target in range(PILE_TOP + 1)
    )
    for pile in range(PILE_TOP)
)
MAX_CHAIN = HAND_SIZE + 4
"""Chains longer than this are ignored: no seat can fill them in one turn."""


def fewest_missing(target: int, building: Sequence[int], numbers: frozenset[int] | set[int], jokers: int) -> int:
    """The fewest numbers still missing to bring some building pile to ``target - 1`` once the
    ``numbers`` a seat holds and its ``jokers`` wilds are used (0: it can be reached now)."""
    return min(max(0, sum(1 for v in CHAIN[pile][target] if v not in numbers) - jokers) for pile in building)


def reach_chance(target: int | None, building: tuple[int, ...], numbers: frozenset[int], jokers: int,
                 q: float) -> float:
    """Chance that a seat brings some building pile to ``target - 1`` in its turn.

    It holds ``numbers`` (known cards it can play) and ``jokers`` wilds; each
    other missing number of a chain comes from unseen cards with chance ``q``,
    independently. A wild target fits every pile (chance 1); no target: 0.
    """
    if target is None:
        return 0.0
    if target == WILD:
        return 1.0
    none = 1.0
    for pile in building:
        need = CHAIN[pile][target]
        if len(need) > MAX_CHAIN:
            continue
        missing = len(need) - jokers
        for v in need:
            if v in numbers:
                missing -= 1
        if missing <= 0:
            return 1.0
        none *= 1.0 - q**missing
    return 1.0 - none


def placement_score(card: int, top: int | None) -> float:
    """How well ``card`` sits on a discard pile topped by ``top`` (``None``: empty; 0: unknown).

    Descending runs (top one higher) score best, then the same number, then an
    empty pile (more for high cards, which start long runs); burying a lower
    number or a wild scores worst.
    """
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


@dataclass(frozen=True)
class _Seat:
    """What the planner uses of another seat."""

    weight: float
    """Positive for opponents (their reach costs), negative for the partner (it helps)."""
    stock_top: int
    numbers: frozenset[int]
    jokers: int


class _Search:
    """One decision's search. The position is mutated in place and restored on the way back."""

    def __init__(self, obs: ObservationFields, config: GameConfig, w: HeuristicWeights) -> None:
        self.w = w
        self.allow_wild_discard = config.allow_wild_discard
        self.must_play_stock = config.must_play_stock
        me = obs.me
        self.hand = [0, *obs.hand_counts]  # index = card value, 13 = wild
        self.building = list(obs.building_values)
        self.stock_top = me.stock_top
        self.last_stock_card = me.stock_size == 1
        self.own_cards = [known_discards(me.discard_tops[d], me.discard_seconds[d]) for d in range(4)]
        self.own_sizes = me.discard_sizes
        self.own_depth = [0, 0, 0, 0]
        partner = obs.partner
        self.partner_stock = partner.stock_top if partner is not None else None
        self.partner_cards = (
            [known_discards(partner.discard_tops[d], partner.discard_seconds[d]) for d in range(4)]
            if partner is not None else [(), (), (), ()]
        )
        self.partner_depth = [0, 0, 0, 0]
        self.can_draw = min(HAND_SIZE, obs.draw_size + obs.completed_size)
        dry = max(0.0, 1.0 - (obs.draw_size + obs.completed_size) / w.dry_cards) if w.dry_cards > 0 else 0.0
        self.danger_scale = 1.0 - dry * (1.0 - w.dry_danger)
        self.play_credit = dry * w.dry_play
        self.completed_credit = w.pile_completed + dry * w.dry_completed
        self.others = self._others(obs)
        self.credit = 0.0
        self.seen: set = set()
        self.table_memo: dict[tuple[int, ...], float] = {}
        self.best_value = -np.inf
        self.best_path: tuple[Move, ...] = ()
        self.nodes = 0

    def _others(self, obs: ObservationFields) -> list[_Seat]:
        out = []
        weight = 1.0
        for seat in obs.seats[1:]:
            top = seat.stock_top
            if top is not None and top != WILD:  # a wild top fits anywhere: nothing here changes it
                numbers = frozenset(c for c in seat.discard_tops if c is not None and c != WILD)
                jokers = sum(1 for c in seat.discard_tops if c == WILD)
                scale = -self.w.partner_help if seat.is_partner else self.w.danger
                scale *= weight * self.danger_scale
                out.append(_Seat(scale, top, numbers, jokers))
            weight *= self.w.seat_decay
        return out

    # ---------------------------------------------------------------- scoring
    def _table_value(self, key: tuple[int, ...]) -> float:
        """Score of the building piles (sorted values ``key``) for the seats that move next."""
        value = self.table_memo.get(key)
        if value is None:
            q = self.w.unseen_card
            value = 0.0
            for seat in self.others:
                value -= seat.weight * reach_chance(seat.stock_top, key, seat.numbers, seat.jokers, q)
            self.table_memo[key] = value
        return value

    def _own_top(self, d: int) -> int | None:
        """The own discard pile's top at this point of the plan (``None`` empty, 0 unknown)."""
        cards = self.own_cards[d]
        depth = self.own_depth[d]
        if depth < len(cards):
            return cards[depth]
        return None if depth >= self.own_sizes[d] else 0

    def _own_reach(self, key: tuple[int, ...]) -> float:
        """The own stock top's prospects where the turn ends: :attr:`HeuristicWeights.own_reach` times
        the chance to reach it next turn, less :attr:`HeuristicWeights.stock_need` per missing number."""
        top = self.stock_top
        if top is None or top == WILD:
            return 0.0
        hand = self.hand
        numbers = {c for c in _NUMBERS if hand[c]}
        jokers = hand[WILD]
        for d in range(4):
            card = self._own_top(d)
            if card == WILD:
                jokers += 1
            elif card:
                numbers.add(card)
        held = frozenset(numbers)
        value = self.w.own_reach * reach_chance(top, key, held, jokers, self.w.own_unseen_card)
        if self.w.stock_need:
            value -= self.w.stock_need * fewest_missing(top, key, held, jokers)
        return value

    def _keep_value(self, card: int, key: tuple[int, ...]) -> float:
        """How much a hand card is worth keeping rather than discarding."""
        if card == WILD:
            return 50.0
        dist = cards_until_playable(card, key)
        value = max(0, 4 - dist) * 1.5
        top = self.stock_top
        if top is not None and top != WILD:
            for v in key:
                if card in CHAIN[v][top][:HAND_SIZE]:
                    value += 4.0
                    break
        if self.hand[card] >= 2:
            value -= 2.0
        return value

    def _discard_piles(self) -> list[tuple[int, int | None]]:
        """(pile, top) of the own discard piles a discard may go on; empty piles are all alike,
        so only the first empty one is listed."""
        piles = []
        empty_seen = False
        for d in range(4):
            top = self._own_top(d)
            if top is None:
                if empty_seen:
                    continue
                empty_seen = True
            piles.append((d, top))
        return piles

    def _best_discard(self, key: tuple[int, ...]) -> tuple[float, Move | None]:
        piles = self._discard_piles()
        best_value, best_move = -np.inf, None
        for card in range(1, WILD + 1):
            if not self.hand[card] or (card == WILD and not self.allow_wild_discard):
                continue
            keep = self._keep_value(card, key)
            for d, top in piles:
                value = placement_score(card, top) - keep
                if value > best_value:
                    best_value, best_move = value, DISCARDS[card][d]
        return best_value, best_move

    # ---------------------------------------------------------------- search
    def run(self) -> tuple[Move, ...]:
        """The best sequence found: plays, then a discard, end turn, or a final stock/refill play."""
        self._visit(())
        return self.best_path

    def _consider(self, value: float, path: tuple[Move, ...]) -> None:
        if value > self.best_value:
            self.best_value, self.best_path = value, path

    def _visit(self, path: tuple[Move, ...]) -> None:
        key = tuple(sorted(self.building))
        node = (tuple(self.hand), key, tuple(self.own_depth), tuple(self.partner_depth))
        if node in self.seen or self.nodes >= self.w.max_nodes:
            return
        self.seen.add(node)
        self.nodes += 1
        w = self.w
        table = self._table_value(key)
        hand_size = sum(self.hand)
        stock_fits = self.stock_top is not None and (
            self.stock_top == WILD or (self.stock_top - 1) in self.building
        )
        if not (self.must_play_stock and stock_fits):
            if hand_size:
                value, move = self._best_discard(key)
                if move is not None:
                    self._consider(self.credit + table + self._own_reach(key) + value, (*path, move))
            else:
                self._consider(self.credit + table + self._own_reach(key), (*path, END_TURN))
        for move, card in self._plays():
            undo = self._apply(move, card)
            source = move.source
            if source is Source.STOCK:
                bonus = w.stock * (10.0 if self.last_stock_card else 1.0) - w.stock_detour * len(path)
                self._consider(self.credit + bonus + self._table_value(tuple(sorted(self.building))),
                               (*path, move))
            elif source is Source.PARTNER_STOCK:
                self._consider(
                    self.credit + w.partner_stock + self._table_value(tuple(sorted(self.building))),
                    (*path, move),
                )
            elif source is Source.HAND and hand_size == 1 and self.can_draw:
                refill = w.refill * self.can_draw / HAND_SIZE
                table_after = self._table_value(tuple(sorted(self.building)))
                self._consider(self.credit + refill + 0.5 * table_after, (*path, move))
            else:
                self._visit((*path, move))
            self._undo(move, card, undo)

    def _plays(self) -> list[tuple[Play, int]]:
        """Candidate plays here (:func:`candidate_plays`)."""
        return candidate_plays(self.building, self.stock_top, self.own_cards, self.own_depth,
                               self.partner_stock, self.partner_cards, self.partner_depth, self.hand)

    def _apply(self, move: Play, card: int) -> tuple[int, float]:
        """Play ``move`` in the search position; returns what :meth:`_undo` needs."""
        w = self.w
        undo = (self.building[move.build_pile], self.credit)
        self.credit += self.play_credit
        source = move.source
        if source is Source.HAND:
            self.hand[card] -= 1
            if card != WILD:
                self.credit += w.hand_play
        elif source is Source.DISCARD:
            self.own_depth[move.source_pile] += 1
            self.credit += w.discard_play
        elif source is Source.PARTNER_DISCARD:
            self.partner_depth[move.source_pile] += 1
            self.credit += w.partner_discard_play
        if card == WILD and source is not Source.STOCK and source is not Source.PARTNER_STOCK:
            self.credit -= w.wild_spent
        b = move.build_pile
        self.building[b] += 1
        if self.building[b] == PILE_TOP:  # R13
            self.building[b] = 0
            self.credit += self.completed_credit
        return undo

    def _undo(self, move: Play, card: int, undo: tuple[int, float]) -> None:
        self.building[move.build_pile], self.credit = undo
        source = move.source
        if source is Source.HAND:
            self.hand[card] += 1
        elif source is Source.DISCARD:
            self.own_depth[move.source_pile] -= 1
        elif source is Source.PARTNER_DISCARD:
            self.partner_depth[move.source_pile] -= 1


def known_discards(top: int | None, second: int | None) -> tuple[int, ...]:
    """The cards of a discard pile the observation shows, top first."""
    if top is None:
        return ()
    return (top,) if second is None else (top, second)


def candidate_plays(building: Sequence[int], stock_top: int | None, own_cards: Sequence[Sequence[int]],
                    own_depth: Sequence[int], partner_stock: int | None, partner_cards: Sequence[Sequence[int]],
                    partner_depth: Sequence[int], hand: Sequence[int]) -> list[tuple[Play, int]]:
    """The plays a turn search tries from a position, with the card each plays, one building pile
    per distinct pile value: the stock card, each own discard pile's card at its depth, the
    partner's stock and discard cards, then each card number held in ``hand`` (counts by card,
    index 0 unused); a wild goes to each of those piles. Discard piles are given by their known
    cards top first (:func:`known_discards`) and how many were played off them (``*_depth``)."""
    out: list[tuple[Play, int]] = []
    pile_for: dict[int, int] = {}
    for b, v in enumerate(building):
        pile_for.setdefault(v + 1, b)
    distinct = list(pile_for.values())

    def add(card: int, table: Sequence[Play]) -> None:
        if card == WILD:
            out.extend((table[b], card) for b in distinct)
        else:
            b = pile_for.get(card)
            if b is not None:
                out.append((table[b], card))

    for stock, stock_plays, piles, depths, discard_plays in (
            (stock_top, STOCK_PLAYS, own_cards, own_depth, DISCARD_PLAYS),
            (partner_stock, PARTNER_STOCK_PLAYS, partner_cards, partner_depth, PARTNER_DISCARD_PLAYS)):
        if stock is not None:
            add(stock, stock_plays)
        for d in range(4):
            if depths[d] < len(piles[d]):
                add(piles[d][depths[d]], discard_plays[d])
    for card in range(1, WILD + 1):
        if hand[card]:
            add(card, HAND_PLAYS[card])
    return out


def _signature(obs: ObservationFields) -> tuple:
    """What a plan depends on: own hand, building piles, own and partner cards in view, draw sizes."""
    me = obs.me
    partner = obs.partner
    theirs = None if partner is None else (partner.stock_top, partner.discard_tops, partner.discard_seconds)
    return (obs.hand_counts, obs.building_values, me.stock_top, me.stock_size, me.discard_tops,
            me.discard_seconds, theirs, obs.draw_size + obs.completed_size, obs.turn)


def _predict(signature: tuple, move: Move) -> tuple | None:
    """The signature after a hand play of a number or wild; ``None`` for other moves (they
    reveal cards or end the plan)."""
    if not isinstance(move, Play) or move.source is not Source.HAND:
        return None
    hand, building, *rest = signature
    hand = list(hand)
    hand[move.hand_card - 1] -= 1
    if not any(hand):
        return None  # R15: the refill draws unknown cards
    building = list(building)
    building[move.build_pile] = (building[move.build_pile] + 1) % PILE_TOP
    return (tuple(hand), tuple(building), *rest)


Planner = Callable[[ObservationFields, GameConfig, HeuristicWeights], Sequence[Move]]
"""A turn planner: the best play sequence from the decoded observation (see :func:`plan_turn`)."""


def plan_turn(obs: ObservationFields, config: GameConfig, weights: HeuristicWeights | None = None,
              ) -> tuple[Move, ...]:
    """The planner's best sequence from this position: plays, then a discard, end turn, or a
    final stock/refill play (empty when it considered nothing). The reference (Python) planner;
    ``skipbo_env.vector.compiled_heuristic.compiled_plan`` is the same search compiled."""
    return _Search(obs, config, default_weights(config.num_players) if weights is None else weights).run()


class HeuristicPolicy:
    """The heuristic's decision rule as a policy ``(obs, legal, rng) -> Move`` for one configuration.

    See the module docstring. A planned move that is not in ``legal`` (only
    possible if the observation and mask disagree) falls back to
    :func:`skipbo_env.bots.greedy.greedy_move`. ``planner`` computes the plans
    (default :func:`plan_turn`; the compiled planner gives the same plans).
    """

    def __init__(self, config: GameConfig, weights: HeuristicWeights | None = None,
                 planner: Planner = plan_turn) -> None:
        self.config = config
        self.weights = default_weights(config.num_players) if weights is None else weights
        self.planner = planner
        self._plan: list[Move] = []
        self._expect: tuple | None = None
        self.searches = 0

    def reset(self) -> None:
        """Forget the cached plan."""
        self._plan, self._expect = [], None

    def __call__(self, obs: ObservationFields, legal: Sequence[Move], rng: np.random.Generator) -> Move:
        signature = _signature(obs)
        if not (self._plan and signature == self._expect):
            self.searches += 1
            self._plan = list(self.planner(obs, self.config, self.weights))
        move = self._plan.pop(0) if self._plan else None
        if move is None or move not in legal:
            self.reset()
            return greedy_move(obs, legal, rng)
        self._expect = _predict(signature, move) if self._plan else None
        return move


class HeuristicAgent(ScriptedAgent):
    """The strongest scripted player here: plans each turn (:class:`HeuristicPolicy`)."""

    name = "heuristic"

    def __init__(
        self, config: GameConfig, seed: int | None = None, weights: HeuristicWeights | None = None,
        planner: Planner = plan_turn,
    ) -> None:
        super().__init__(config, seed)
        self.policy = HeuristicPolicy(config, weights, planner)

    def seed(self, seed: int | None = None) -> None:
        super().seed(seed)
        self.policy.reset()

    def choose(self, obs: ObservationFields, legal: Sequence[Move]) -> Move:
        return self.policy(obs, legal, self.rng)


__all__ = [
    "CHAIN_WEIGHTS",
    "HeuristicAgent",
    "HeuristicPolicy",
    "HeuristicWeights",
    "MULTI_PLAYER_WEIGHTS",
    "Planner",
    "TABLE_WEIGHTS",
    "default_weights",
    "placement_score",
    "plan_turn",
    "reach_chance",
]
