"""Game state, dealing and move application (R6–R23, R26, R27).

In every list of cards the last element is the top. Dealing (R6, R7) pops cards one at a time
to each player in seat order, starting with the first player, so a stock's first card ends up at
its bottom; what is left is the draw pile. The seat to move always holds its refilled hand: the
start-of-turn refill (R8, R10) is part of the move that ends the previous turn. See
docs/state-format.md.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from .cards import (
    DECK_SIZE,
    EXPECTED_COUNTS,
    HAND_SIZE,
    NUM_DISCARD_PILES,
    PILE_COMPLETE,
    WILD,
    card_counts,
    card_name,
    is_card,
    standard_deck,
)
from .config import GameConfig
from .errors import ConfigError, GameOverError, IllegalMoveError, StateError
from .illegal import illegal_reason
from .legal import generate_legal_moves
from .moves import CANONICAL, Discard, EndTurn, Move, Play, Source
from .serialization import state_fields_from_dict, state_to_dict
from .view import SeatView

SeedLike = int | np.random.Generator | None


def make_rng(seed: SeedLike) -> np.random.Generator:
    """A PCG64 generator from an int seed or ``None``; a Generator is used as is."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (type(seed) is not int or seed < 0):
        raise ValueError(f"seed must be a non-negative int, a numpy Generator or None, got {seed!r}")
    return np.random.default_rng(seed)


@functools.lru_cache(maxsize=16384)
def cards_of_counts(counts: tuple[int, ...]) -> tuple[int, ...]:
    """The sorted cards of a hand given as counts indexed by value (index 0 unused, 13 = wild)."""
    return tuple(v for v in range(1, WILD + 1) for _ in range(counts[v]))


class GameState:
    """The complete state of one game; :meth:`apply` advances it in place.

    Attributes (treat as read-only; change the game only through :meth:`apply`):
        config: the :class:`GameConfig`.
        draw_pile: face-down draw pile, last element on top (R4).
        hands: per seat, card counts indexed by value (index 0 unused, 13 = wild).
        stocks: per seat, the stock, last element is the face-up top (R3, R7).
        discards: per seat, four discard piles, last element on top (R3).
        building: four building piles holding their actual cards, wilds
            included; a pile's value is its length (R12).
        completed: cards of finished building piles (R13), face down.
        current: the seat to move.
        turn: number of completed turns.
        moves: number of moves applied in the game (bounded by ``config.move_limit``).
        winner: the seat whose play won the game (R22, R27), or ``None``.
        rng: the game's own generator, used to shuffle the completed pile (R19).
    """

    __slots__ = (
        "config",
        "draw_pile",
        "hands",
        "stocks",
        "discards",
        "building",
        "completed",
        "current",
        "turn",
        "moves",
        "winner",
        "rng",
        "_legal",
    )

    def __init__(
        self,
        config: GameConfig,
        draw_pile: list[int],
        hands: list[list[int]],
        stocks: list[list[int]],
        discards: list[list[list[int]]],
        building: list[list[int]],
        completed: list[int],
        current: int,
        turn: int,
        winner: int | None,
        rng: np.random.Generator,
        moves: int = 0,
    ) -> None:
        self.config = config
        self.draw_pile = draw_pile
        self.hands = hands
        self.stocks = stocks
        self.discards = discards
        self.building = building
        self.completed = completed
        self.current = current
        self.turn = turn
        self.moves = moves
        self.winner = winner
        self.rng = rng
        self._legal: tuple[Move, ...] | None = None

    # ------------------------------------------------------------- status
    @property
    def truncated(self) -> bool:
        """True when the turn limit (R23) or the move limit ended the game without a winner."""
        return self.winner is None and self._limit_reached()

    @property
    def is_over(self) -> bool:
        """True once the game is won or truncated."""
        return self.winner is not None or self._limit_reached()

    def _limit_reached(self) -> bool:
        return self.turn >= self.config.turn_limit or self.moves >= self.config.move_limit

    @property
    def winners(self) -> tuple[int, ...]:
        """Seats that won: the winner, plus the partner in the partner game (R27)."""
        if self.winner is None:
            return ()
        return self.config.team_seats(self.config.team(self.winner))

    def hand_size(self, seat: int) -> int:
        return sum(self.hands[seat])

    def hand_cards(self, seat: int) -> list[int]:
        """The seat's hand as a sorted list of cards."""
        return list(cards_of_counts(tuple(self.hands[seat])))

    def building_values(self) -> list[int]:
        """The number each building pile shows (0 = empty space)."""
        return [len(p) for p in self.building]

    # ------------------------------------------------------------- moves
    def legal_moves(self) -> tuple[Move, ...]:
        """Legal moves of the seat to move, in the generator's fixed order; empty once the game is over.

        While the game is on it is never empty. A tuple: the state caches it, and nothing outside
        may change what the rules accept.
        """
        if self._legal is None:
            self._legal = () if self.is_over else tuple(self._generate())
        return self._legal

    def _generate(self) -> list[Move]:
        seat = self.current
        stock = self.stocks[seat]
        partner = self.config.partner(seat)
        partner_stock_top: int | None
        partner_tops: Sequence[int | None]
        if partner is None:
            partner_stock_top, partner_tops = None, ()
        else:
            pstock = self.stocks[partner]
            partner_stock_top = pstock[-1] if pstock else None
            partner_tops = [p[-1] if p else None for p in self.discards[partner]]
        return generate_legal_moves(
            self.hands[seat],
            [len(p) for p in self.building],
            stock[-1] if stock else None,
            [p[-1] if p else None for p in self.discards[seat]],
            partner_stock_top,
            partner_tops,
            self.config.allow_wild_discard,
            self.config.must_play_stock,
        )

    def is_legal(self, move: object) -> bool:
        canonical = CANONICAL.get(move) if isinstance(move, Play | Discard | EndTurn) else None
        return canonical is not None and canonical in self.legal_moves()

    def apply(self, move: Move) -> None:
        """Apply one legal move of the seat to move.

        Raises:
            GameOverError: the game already ended; nothing changes.
            IllegalMoveError: the move is not legal here; nothing changes.
        """
        if self.is_over:
            raise GameOverError(move, self._over_reason())
        if not self.is_legal(move):
            raise IllegalMoveError(move, self._explain(move))
        self._legal = None
        seat = self.current
        if isinstance(move, Play):
            self._play(seat, move)
        elif isinstance(move, Discard):
            self.hands[seat][move.card] -= 1
            self.discards[seat][move.discard_pile].append(move.card)  # R16
            self._end_turn()
        else:
            self._end_turn()  # R21
        self.moves += 1  # may reach config.move_limit: the game is then over (truncated)

    def _play(self, seat: int, move: Play) -> None:
        source = move.source
        partner = self.config.partner(seat)
        # The move is legal (apply checked), so Play.__post_init__'s invariants hold: a hand play
        # names its card, a discard source its pile, and partner sources exist only with a partner.
        card: int
        if source is Source.HAND:
            card = move.hand_card
            self.hands[seat][card] -= 1
        elif source is Source.STOCK:
            card = self.stocks[seat].pop()  # R14: the next card is now the top
        elif source is Source.DISCARD:
            card = self.discards[seat][move.source_pile].pop()
        elif source is Source.PARTNER_STOCK:
            assert partner is not None  # partner sources are legal only in the partner game
            card = self.stocks[partner].pop()
        else:
            assert partner is not None  # partner sources are legal only in the partner game
            card = self.discards[partner][move.source_pile].pop()
        pile = self.building[move.build_pile]
        pile.append(card)
        if len(pile) == PILE_COMPLETE:  # R13
            self.completed.extend(pile)
            self.building[move.build_pile] = []
        if source is Source.STOCK or source is Source.PARTNER_STOCK:
            if self._side_stocks_empty(seat):  # R22, R27
                self.winner = seat
                return
        if source is Source.HAND and not any(self.hands[seat]):
            self._draw(seat, HAND_SIZE)  # R15

    def _side_stocks_empty(self, seat: int) -> bool:
        cfg = self.config
        return all(not self.stocks[s] for s in cfg.team_seats(cfg.team(seat)))

    def _end_turn(self) -> None:
        self.turn += 1
        if self.turn >= self.config.turn_limit:  # R23
            return
        self.current = (self.current + 1) % self.config.num_players
        self._refill(self.current)

    def _refill(self, seat: int) -> None:
        """R10: draw until the hand holds five cards."""
        missing = HAND_SIZE - sum(self.hands[seat])
        if missing > 0:
            self._draw(seat, missing)

    def _draw(self, seat: int, count: int) -> None:
        hand = self.hands[seat]
        for _ in range(count):
            if not self.draw_pile:
                if not self.completed:
                    return  # R20: draw fewer cards, the turn goes on
                self._recycle()
            hand[self.draw_pile.pop()] += 1

    def _recycle(self) -> None:
        """R19: shuffle the completed pile into a new draw pile with the game's generator."""
        cards = np.array(self.completed, dtype=np.int64)
        self.rng.shuffle(cards)
        self.draw_pile = cards.tolist()
        self.completed = []

    # ------------------------------------------------------------- errors
    def _over_reason(self) -> str:
        if self.winner is not None:
            return f"the game is over: seat {self.winner} won"
        return f"the game is over: truncated at {truncation_cause(self.config, self.turn)}"

    def _explain(self, move: object) -> str:
        """Why a move is illegal here (only called once it is known to be)."""
        return illegal_reason(self.view(self.current), move).text()

    # ------------------------------------------------------------- helpers
    def copy(self) -> GameState:
        """An independent deep copy, generator state included."""
        rng = np.random.Generator(type(self.rng.bit_generator)())
        rng.bit_generator.state = self.rng.bit_generator.state
        return GameState(
            self.config,
            list(self.draw_pile),
            [list(h) for h in self.hands],
            [list(s) for s in self.stocks],
            [[list(p) for p in piles] for piles in self.discards],
            [list(p) for p in self.building],
            list(self.completed),
            self.current,
            self.turn,
            self.winner,
            rng,
            self.moves,
        )

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know of this game; see :class:`skipbo_env.rules.view.SeatView`."""
        n = self.config.num_players
        if type(seat) is not int or not 0 <= seat < n:
            raise ValueError(f"seat must be an int in 0..{n - 1}, got {seat!r}")
        stocks = self.stocks
        # by position, in field order: a keyword call is a third slower, and the envs make a view every step
        return SeatView(
            seat,
            self.config,
            cards_of_counts(tuple(self.hands[seat])),  # hand
            tuple([s[-1] if s else None for s in stocks]),  # stock_tops
            tuple(map(len, stocks)),  # stock_sizes
            tuple([tuple(map(tuple, piles)) for piles in self.discards]),  # discard_piles
            tuple(map(len, self.building)),  # building_values
            tuple(map(sum, self.hands)),  # hand_sizes
            len(self.draw_pile),  # draw_size
            len(self.completed),  # completed_size
            self.current,  # current_player
            self.turn,
            self.winner,
            self.truncated,
            tuple(map(tuple, self.building)),  # building_piles
            tuple(sorted(self.completed)),  # completed_cards
        )

    def to_dict(self) -> dict:
        """JSON-safe dict; see ``docs/state-format.md``."""
        return state_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict) -> GameState:
        """Validate and load a dict made by :meth:`to_dict`; raises :class:`StateError`."""
        return cls(*state_fields_from_dict(data))

    def __repr__(self) -> str:
        status = (
            f"winner={self.winner}" if self.winner is not None
            else "truncated" if self.truncated else f"current={self.current}"
        )
        return f"GameState({self.config.num_players} players, turn {self.turn}, {status})"


def truncation_cause(config: GameConfig, turn: int) -> str:
    """What ended a game without a winner, in words: ``"the turn limit (1000)"`` (R23) or
    ``"the move limit (20000)"``. ``turn`` is the game's turn counter at the end (a game that
    stopped before the turn limit was stopped by the move limit)."""
    if turn >= config.turn_limit:
        return f"the turn limit ({config.turn_limit})"
    return f"the move limit ({config.move_limit})"


def validate_deck(deck: Sequence[object]) -> list[int]:
    """Check that ``deck`` is the 162 cards (R1) and return it as a list of ints."""
    if isinstance(deck, str | bytes) or not isinstance(deck, Sequence | np.ndarray):
        raise StateError("deck", f"must be a sequence of {DECK_SIZE} cards")
    if len(deck) != DECK_SIZE:
        raise StateError("deck", f"must hold {DECK_SIZE} cards (R1), got {len(deck)}")
    cards: list[int] = []
    for i, item in enumerate(deck):
        card = int(item) if isinstance(item, np.integer) else item
        if not is_card(card):
            raise StateError(f"deck[{i}]", f"not a card (1..12 or {WILD} for a wild): {card!r}")
        cards.append(card)
    counts = card_counts(cards)
    for value in range(1, WILD + 1):
        if counts[value] != EXPECTED_COUNTS[value]:
            raise StateError(
                "deck",
                f"holds {counts[value]} x {card_name(value)}, expected {EXPECTED_COUNTS[value]} (R1)",
            )
    return cards


def new_game(
    config: GameConfig | None = None,
    seed: SeedLike = None,
    deck: Sequence[int] | None = None,
) -> GameState:
    """Deal a new game (R6–R10).

    Args:
        config: the game configuration (defaults to ``GameConfig()``).
        seed: int seed or ``numpy.random.Generator``; the game keeps the
            generator for reshuffles (R19). Same seed, same game.
        deck: an explicit card order, last element on top, instead of a
            shuffle. Must be the 162 cards of R1.

    Randomness, in this order: the first player (when ``config.first_player``
    is ``None``), then the shuffle (when no ``deck`` is given).
    """
    config = config if config is not None else GameConfig()
    if not isinstance(config, GameConfig):
        raise ConfigError(
            "config", f"must be a GameConfig (GameConfig(**d) or GameConfig.from_dict(d) builds one), "
            f"got {type(config).__name__}"
        )
    rng = make_rng(seed)
    n = config.num_players
    first = int(rng.integers(n)) if config.first_player is None else config.first_player
    if deck is None:
        cards = rng.permutation(np.array(standard_deck(), dtype=np.int64)).tolist()
    else:
        cards = validate_deck(deck)
    stocks: list[list[int]] = [[] for _ in range(n)]
    for _ in range(config.stock_size):
        for k in range(n):
            stocks[(first + k) % n].append(cards.pop())
    state = GameState(
        config,
        draw_pile=cards,
        hands=[[0] * (WILD + 1) for _ in range(n)],
        stocks=stocks,
        discards=[[[] for _ in range(NUM_DISCARD_PILES)] for _ in range(n)],
        building=[[] for _ in range(4)],
        completed=[],
        current=first,
        turn=0,
        winner=None,
        rng=rng,
    )
    state._refill(first)  # R8, R10: the first player draws at the start of the first turn
    return state
