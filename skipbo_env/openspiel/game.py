"""The ``python_skipbo`` game: the rules core's state behind ``pyspiel.Game``/``pyspiel.State``.

Every card that leaves the face-down cards is an explicit chance node (``EXPLICIT_STOCHASTIC``):
the deal and every later draw, with outcomes the card values still face down. A player's action
is applied with :meth:`GameState.apply` on a draw pile kept as a multiset; the cards it drew at
random go back and one chance node per card picks the card the seat gets, so there is no second
rules engine. Player actions are the project's ids; returns are the project's terminal rewards.
docs/openspiel.md gives the details.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pyspiel

from ..encoding import decode_action, encode_action, num_actions
from ..episode.rewards import LOSS_REWARD, WIN_REWARD, terminal_rewards
from ..rules import (
    HAND_SIZE,
    WILD,
    ConfigError,
    Discard,
    GameConfig,
    GameState,
    Move,
    Play,
    Source,
    StateError,
    card_name,
    sample_state,
)
from ..rules.cards import DECK_SIZE, EXPECTED_COUNTS, NUM_DISCARD_PILES
from ..rules.config import DEFAULT_MOVE_LIMIT, DEFAULT_TURN_LIMIT, MAX_PLAYERS, MIN_PLAYERS
from .observer import SkipBoObserver
from .state_strings import Base, base_json, format_state, parse_state

CHANCE_CARD_OFFSET = 0
"""Chance outcome of card value ``v`` (1..12, 13 for a wild): ``CHANCE_CARD_OFFSET + v - 1``."""
CHANCE_SEAT_OFFSET = 13
"""Chance outcome "seat ``s`` moves first": ``CHANCE_SEAT_OFFSET + s``."""

PARAMETERS: dict[str, Any] = {
    "players": 2,
    "partner_game": False,
    "short_game": False,
    "stock_size": 0,
    "allow_wild_discard": True,
    "must_play_stock": False,
    "first_player": -1,
    "turn_limit": DEFAULT_TURN_LIMIT,
    "move_limit": DEFAULT_MOVE_LIMIT,
}
"""Game parameters and defaults. ``stock_size`` 0 is the rules' default size (R6, R26);
``first_player`` -1 makes the first player a chance node (R9). The others are the
:class:`~skipbo_env.rules.GameConfig` fields of the same names."""


def _game_type(utility: pyspiel.GameType.Utility) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name="python_skipbo",
        long_name="Python Skip-Bo",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=MAX_PLAYERS,
        min_num_players=MIN_PLAYERS,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=False,
        parameter_specification=PARAMETERS,
    )


GAME_TYPE = _game_type(pyspiel.GameType.Utility.GENERAL_SUM)
"""The registered type; a loaded game reports ``ZERO_SUM`` when it has two sides of equal size."""


def config_from_params(params: dict[str, Any]) -> GameConfig:
    """The :class:`GameConfig` of OpenSpiel game parameters (see :data:`PARAMETERS`).

    Raises:
        ValueError: a parameter the game does not have.
        ConfigError: a value the rules reject, naming the field.
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(
            f"python_skipbo has no parameter {str(unknown[0])[:80]!r}; parameters: {', '.join(PARAMETERS)}"
        )
    p = {**PARAMETERS, **params}
    for key, value in p.items():
        if type(value) is int and not -(2**31) <= value < 2**31:
            raise ConfigError(key, f"must be below 2**31 (OpenSpiel keeps it as a C++ int), got {value}")
    try:
        return _config(p)
    except ConfigError as error:
        if error.field != "num_players":
            raise
        raise ConfigError("players", str(error).removeprefix("num_players: ")) from error


def _config(p: dict[str, Any]) -> GameConfig:
    return GameConfig(
        num_players=p["players"],
        stock_size=p["stock_size"] or None,
        short_game=p["short_game"],
        partner_game=p["partner_game"],
        allow_wild_discard=p["allow_wild_discard"],
        must_play_stock=p["must_play_stock"],
        first_player=None if p["first_player"] == -1 else p["first_player"],
        turn_limit=p["turn_limit"],
        move_limit=p["move_limit"],
    )


def _zero_sum(config: GameConfig) -> bool:
    return config.num_teams == 2


class SkipBoGame(pyspiel.Game):
    """``python_skipbo``: Skip-Bo for 2–6 players and its variants (see :data:`PARAMETERS`)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.config = config_from_params(params or {})
        params = {**PARAMETERS, **(params or {})}
        config = self.config
        zero_sum = _zero_sum(config)
        utility = pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
        info = pyspiel.GameInfo(
            num_distinct_actions=num_actions(config),
            max_chance_outcomes=CHANCE_SEAT_OFFSET + config.num_players,
            num_players=config.num_players,
            min_utility=LOSS_REWARD,
            max_utility=WIN_REWARD,
            utility_sum=0.0 if zero_sum else None,
            max_game_length=config.move_limit,
        )
        super().__init__(_game_type(utility), info, params)

    def new_initial_state(self) -> SkipBoState:
        """The state before the deal: a chance node."""
        if getattr(_PICKLED_PATH, "active", False):
            raise ValueError("python_skipbo states are not read from OpenSpiel's pickled form "
                             "(it can run code); use game.deserialize_state on a python_skipbo state string")
        return SkipBoState(self)

    def deserialize_state(self, text: str) -> SkipBoState:
        """The state of a :meth:`SkipBoState.serialize` string, replayed action by action
        (:mod:`.state_strings`; nothing is unpickled). Raises :class:`StateError` naming the bad field."""
        parsed = parse_state(text, self.config)
        state = SkipBoState(self)
        if parsed.base is not None:
            state._restore(parsed.base)
        for i, (player, action) in enumerate(parsed.history):
            if player != state.current_player():
                raise StateError(f"history[{i}]", f"{player}:{action} is not a move of player {state.current_player()}")
            try:
                state.apply_action(action)  # checks the action (an impossible card, an illegal move)
            except ValueError as exc:
                raise StateError(f"history[{i}]", f"{player}:{action} is not legal here ({exc})") from None
        if parsed.move_number != state.move_number():
            raise StateError("move_number", f"is {parsed.move_number}, the history makes {state.move_number()}")
        return state

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The observer of this game (:class:`~skipbo_env.openspiel.observer.SkipBoObserver`)."""
        return SkipBoObserver(self.config, iig_obs_type, params)


def _deal_size(config: GameConfig) -> int:
    """Chance nodes of the deal after the first player: every stock card, then the first hand (R6–R10)."""
    stocks = config.num_players * config.stock_size
    return stocks + min(HAND_SIZE, DECK_SIZE - stocks)


def _moved_card(state: GameState, move: Move) -> int | None:
    """The card ``move`` takes from its source (public: every played or discarded card is face
    up), ``None`` for an end of turn."""
    seat = state.current
    if isinstance(move, Discard):
        return move.card
    if not isinstance(move, Play):
        return None
    source = move.source
    if source is Source.HAND:
        return move.hand_card
    partner = state.config.partner(seat)
    if source is Source.STOCK:
        return state.stocks[seat][-1]
    if source is Source.DISCARD:
        return state.discards[seat][move.source_pile][-1]
    assert partner is not None
    if source is Source.PARTNER_STOCK:
        return state.stocks[partner][-1]
    return state.discards[partner][move.source_pile][-1]


def _rebuilt(state: GameState, hands: list[list[int]], draw_pile: list[int], moves: int | None = None) -> GameState:
    """``state`` with other hands and draw pile (and move counter), through the public constructor."""
    return GameState(
        state.config, draw_pile, hands, state.stocks, state.discards, state.building, state.completed,
        state.current, state.turn, state.winner, state.rng, state.moves if moves is None else moves,
    )


def _counts(cards: list[int]) -> list[int]:
    counts = [0] * (WILD + 1)
    for card in cards:
        counts[card] += 1
    return counts


class _Shared:
    """A value that clones share: :class:`GameState` objects here are never changed in place
    (each step builds a new one), so OpenSpiel's ``clone`` (a deep copy of the attributes) keeps it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __deepcopy__(self, memo: dict) -> _Shared:
        return self

    def __getstate__(self) -> Any:
        return (self.value,)  # a tuple: pickle skips __setstate__ for a None state

    def __setstate__(self, state: Any) -> None:
        (self.value,) = state


class _Log:
    """The game's events and, per seat, their text as that seat saw them (see
    :meth:`SkipBoState.history_tokens`); a clone copies the lists, not their items."""

    __slots__ = ("events", "tokens")

    def __init__(self, num_players: int) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.tokens: list[list[str]] = [[] for _ in range(num_players)]

    def __deepcopy__(self, memo: dict) -> _Log:
        out = _Log(0)
        out.events = list(self.events)
        out.tokens = [list(t) for t in self.tokens]
        return out

    def __getstate__(self) -> Any:
        return self.events, self.tokens

    def __setstate__(self, data: Any) -> None:
        self.events, self.tokens = data

    def add(self, event: tuple[Any, ...]) -> None:
        self.events.append(event)
        for seat, tokens in enumerate(self.tokens):
            tokens.append(_token(event, seat))

    def masked(self, seat: int) -> _Log:
        """The log as a copy of the game resampled for ``seat`` knows it: other seats' draws unknown."""
        out = _Log(len(self.tokens))
        for event in self.events:
            out.add(("draw", event[1], None) if event[0] == "draw" and event[1] != seat else event)
        return out


def _token(event: tuple[Any, ...], seat: int) -> str:
    """``event`` as ``seat`` saw it: ``first:1``, a move ``0:52=7`` (seat, action id, the card it
    moved), a draw ``1+SB`` (its own) or ``1+?`` (another seat's, or unknown)."""
    if event[0] == "first":
        return f"first:{event[1]}"
    if event[0] == "draw":
        return f"{event[1]}+{card_name(event[2]) if event[1] == seat and event[2] is not None else '?'}"
    card = "" if event[3] is None else "=" + card_name(event[3])
    return f"{event[1]}:{event[2]}{card}"


class SkipBoState(pyspiel.State):
    """One game of ``python_skipbo``; the rules' state is :attr:`game_state` once dealt."""

    def __init__(self, game: SkipBoGame) -> None:
        super().__init__(game)
        self._config = game.config
        self._box = _Shared(None)
        self._first: int | None = game.config.first_player
        self._dealt: list[int] = []
        self._pending = 0
        self._drawer = -1
        self._log = _Log(game.config.num_players)
        self._base = ""  # JSON of the sampled position a resampled state's history continues from

    @property
    def _gs(self) -> GameState | None:
        return self._box.value

    @_gs.setter
    def _gs(self, value: GameState | None) -> None:
        self._box = _Shared(value)

    # ----------------------------------------------------------------- reading
    @property
    def game_state(self) -> GameState | None:
        """The rules' state (``None`` during the deal). Between a move and its last chance node
        the drawing seat's hand still lacks the cards the chance nodes will give. Read-only:
        clones share it (each step makes a new one)."""
        return self._gs

    @property
    def pending_draws(self) -> int:
        """Chance nodes left before the next decision (after the deal)."""
        return self._pending

    def current_player(self) -> int:
        if self._gs is None or self._pending:
            return int(pyspiel.PlayerId.CHANCE)
        if self._gs.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        return self._gs.current

    def is_terminal(self) -> bool:
        return self._gs is not None and not self._pending and self._gs.is_over

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self._config.num_players
        assert self._gs is not None
        return list(terminal_rewards(self._config, self._gs.winner))

    def _legal_actions(self, player: int) -> list[int]:
        assert self._gs is not None and player == self._gs.current
        return sorted(encode_action(m, self._config) for m in self._gs.legal_moves())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._gs is not None and not self._pending:
            where = "the terminal node" if self._gs.is_over else f"a decision node (player {self._gs.current})"
            raise ValueError(f"chance_outcomes() is asked at {where}; only a chance node has outcomes")
        if self._gs is None and self._first is None:
            n = self._config.num_players
            return [(CHANCE_SEAT_OFFSET + s, 1.0 / n) for s in range(n)]
        counts = self._pool()
        total = sum(counts)
        return [(CHANCE_CARD_OFFSET + v - 1, c / total) for v, c in enumerate(counts) if c]

    def _pool(self) -> list[int]:
        """Counts of the face-down cards a chance node draws from."""
        if self._gs is None:
            dealt = _counts(self._dealt)
            return [EXPECTED_COUNTS[v] - dealt[v] if v else 0 for v in range(WILD + 1)]
        return _counts(self._gs.draw_pile)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if action >= CHANCE_SEAT_OFFSET:
                return f"seat {action - CHANCE_SEAT_OFFSET} moves first"
            return f"card {card_name(action - CHANCE_CARD_OFFSET + 1)}"
        return str(decode_action(action, self._config))

    # ---------------------------------------------------------------- applying
    def _apply_action(self, action: int) -> None:
        if self._gs is None or self._pending:
            self._apply_chance(action)
        else:
            self._apply_move(action)

    def _apply_chance(self, action: int) -> None:
        if action not in dict(self.chance_outcomes()):
            raise ValueError(
                f"chance outcome {action} ({self._action_to_string(int(pyspiel.PlayerId.CHANCE), action)}) "
                f"cannot happen here; possible outcomes: {[a for a, _ in self.chance_outcomes()]}"
            )
        if self._gs is None and self._first is None:
            self._first = action - CHANCE_SEAT_OFFSET
            self._log.add(("first", self._first))
            return
        card = action - CHANCE_CARD_OFFSET + 1
        if self._gs is None:
            self._dealt.append(card)
            if len(self._dealt) > self._config.num_players * self._config.stock_size:
                assert self._first is not None
                self._log.add(("draw", self._first, card))
            if len(self._dealt) == _deal_size(self._config):
                self._gs = self._deal()
            return
        gs = self._gs
        pile = list(gs.draw_pile)
        pile.remove(card)
        hands = [list(h) for h in gs.hands]
        hands[self._drawer][card] += 1
        self._gs = _rebuilt(gs, hands, pile)
        self._pending -= 1
        self._log.add(("draw", self._drawer, card))

    def _deal(self) -> GameState:
        """The dealt game: stocks round the table from the first player (R7), the first hand (R8, R10)."""
        config = self._config
        n = config.num_players
        first = self._first
        assert first is not None
        stocks: list[list[int]] = [[] for _ in range(n)]
        cards = iter(self._dealt)
        for _ in range(config.stock_size):
            for k in range(n):
                stocks[(first + k) % n].append(next(cards))
        hands = [[0] * (WILD + 1) for _ in range(n)]
        for card in cards:
            hands[first][card] += 1
        left = self._pool()  # the deck less every card dealt
        draw_pile = [v for v in range(1, WILD + 1) for _ in range(left[v])]
        return GameState(
            config, draw_pile, hands, stocks, [[[] for _ in range(NUM_DISCARD_PILES)] for _ in range(n)],
            [[] for _ in range(4)], [], first, 0, None,
            np.random.default_rng(0),  # shuffles the completed pile (R19); chance nodes pick the cards drawn
        )

    def _apply_move(self, action: int) -> None:
        gs = self._gs
        assert gs is not None
        move = decode_action(action, self._config)
        seat = gs.current
        card = _moved_card(gs, move) if gs.is_legal(move) else None
        pile_before = list(gs.draw_pile)
        hands_before = [list(h) for h in gs.hands]
        gs = gs.copy()
        gs.apply(move)  # raises IllegalMoveError for an illegal action, changing nothing here
        self._gs = gs
        self._log.add(("move", seat, action, card))
        if gs.is_over:
            return
        self._return_draws(move, seat, hands_before, pile_before)

    def _return_draws(self, move: Move, seat: int, hands_before: list[list[int]], pile_before: list[int]) -> None:
        """Put the cards the rules drew at random back on the pile; one chance node per card."""
        gs = self._gs
        assert gs is not None
        left_hand = None  # the card the move took from the mover's hand
        if isinstance(move, Discard):
            left_hand = move.card
        elif isinstance(move, Play) and move.source is Source.HAND:
            left_hand = move.hand_card
        for drawer in range(self._config.num_players):
            drawn = [a - b for a, b in zip(gs.hands[drawer], hands_before[drawer], strict=True)]
            if drawer == seat and left_hand is not None:
                drawn[left_hand] += 1
            if any(drawn):
                break
        else:
            return
        if sum(drawn) > len(pile_before):  # the pile ran out: R19 reshuffled the completed pile
            for card in pile_before:  # forced: every card of the old pile went to the hand
                drawn[card] -= 1
        hands = [list(h) for h in gs.hands]
        returned = []
        for value in range(1, WILD + 1):
            hands[drawer][value] -= drawn[value]
            returned.extend([value] * drawn[value])
        self._gs = _rebuilt(gs, hands, sorted(gs.draw_pile + returned))
        self._pending = len(returned)
        self._drawer = drawer

    # ------------------------------------------------------------ sampling
    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> SkipBoState:
        """A state ``player_id`` cannot tell from this one, drawn with the project's sampler
        (:func:`skipbo_env.rules.sample_state`: the unseen cards placed uniformly at random).

        The history the copy keeps shows only the draws of ``player_id`` (others' draws become
        unknown), so no infostate string of the copy leaks a card ``player_id`` has not seen.
        ``probability_sampler()`` (OpenSpiel's uniform sampler) seeds the generator. During the
        deal, the hidden cards dealt so far are dealt again from the same chance outcomes.
        """
        seed = int(probability_sampler() * 2.0**53)
        rng = np.random.default_rng(seed)
        game = self.get_game()
        out = game.new_initial_state()
        if self._gs is None:
            if self._first is not None and self._config.first_player is None:
                out.apply_action(CHANCE_SEAT_OFFSET + self._first)
            for _ in self._dealt:
                actions, probs = zip(*out.chance_outcomes(), strict=True)
                out.apply_action(int(rng.choice(actions, p=probs)))
            return out
        sampled = sample_state(self._gs.view(player_id), rng)
        # every move is public, so the copy keeps the real move counter (the move limit)
        out._gs = _rebuilt(sampled, sampled.hands, sorted(sampled.draw_pile), self._gs.moves)
        out._first = self._first
        out._dealt = list(self._dealt)
        out._pending = self._pending
        out._drawer = self._drawer
        out._log = self._log.masked(player_id)
        out._base = base_json(out._first, out._pending, out._drawer, out._log.events, out._gs)
        return out

    def _restore(self, base: Base) -> None:
        """Start from a sampled position (see :meth:`resample_from_infostate`)."""
        self._gs = base.state
        self._first, self._pending, self._drawer = base.first, base.pending, base.drawer
        self._dealt = [0] * _deal_size(self._config)  # dealt already: the values are not read again
        for event in base.events:
            self._log.add(event)
        self._base = base_json(self._first, self._pending, self._drawer, self._log.events, base.state)

    # ------------------------------------------------------------ serializing
    def serialize(self) -> str:
        """This state as a data-only string (:mod:`.state_strings`); ``game.deserialize_state`` reads it."""
        history = [(int(pa.player), int(pa.action)) for pa in self.full_history()]
        return format_state(history, self.move_number(), self._base)

    def __reduce__(self) -> tuple[Any, ...]:
        return _unpickle_state, (str(self.get_game()), self.serialize())

    def history_tokens(self, player: int, private: bool = True) -> list[str]:
        """What ``player`` saw happen, in order: the first player, every move (with the card it
        moved, face up on the table), its own draws as cards and the others' draws as ``?``.
        With ``private=False`` the public history: every draw as ``?``."""
        if private:
            return list(self._log.tokens[player])
        return [_token(event, -1) for event in self._log.events]

    def __str__(self) -> str:
        gs = self._gs
        if gs is None:
            first = "?" if self._first is None else self._first
            return f"dealing: first player {first}, {len(self._dealt)} of {_deal_size(self._config)} cards dealt"
        lines = [
            f"turn {gs.turn} moves {gs.moves} current {gs.current} winner {gs.winner} pending draws {self._pending}",
            "building " + " | ".join(" ".join(card_name(c) for c in p) for p in gs.building),
            f"draw {len(gs.draw_pile)} completed {len(gs.completed)}",
        ]
        for s in range(self._config.num_players):
            stock = " ".join(card_name(c) for c in gs.stocks[s])
            piles = " | ".join(" ".join(card_name(c) for c in p) for p in gs.discards[s])
            hand = " ".join(card_name(c) for c in gs.hand_cards(s))
            lines.append(f"seat {s}: hand [{hand}] stock [{stock}] discards [{piles}]")
        return "\n".join(lines)


def _unpickle_state(game_string: str, text: str) -> SkipBoState:
    game = pyspiel.load_game(game_string)
    if not isinstance(game, SkipBoGame):
        raise ValueError(f"not a python_skipbo game: {game_string[:80]!r}")
    return game.deserialize_state(text)


_PICKLED_PATH = threading.local()
"""Set while OpenSpiel's own (pickle-based) deserialization runs: python_skipbo refuses to take part."""
_SPIEL_SERIALIZE = pyspiel.serialize_game_and_state
_SPIEL_DESERIALIZE = pyspiel.deserialize_game_and_state
_SPIEL_LOAD_GAME = pyspiel.load_game
_HEADER = "# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\nVersion: 1\n\n"


def load_game(name: Any, *args: Any) -> pyspiel.Game:
    """``pyspiel.load_game``; python_skipbo parameters are checked first (a named
    :class:`ConfigError`, not a failed C++ conversion)."""
    if name == GAME_TYPE.short_name and len(args) == 1 and isinstance(args[0], dict):
        config_from_params(args[0])
    return _SPIEL_LOAD_GAME(name, *args)


def serialize_game_and_state(game: pyspiel.Game, state: pyspiel.State) -> str:
    """``pyspiel.serialize_game_and_state``, with a python_skipbo state written data-only."""
    if isinstance(state, SkipBoState):
        return f"{_HEADER}[Game]\n{game}\n[State]\n{state.serialize()}"
    return _SPIEL_SERIALIZE(game, state)


def deserialize_game_and_state(text: str) -> tuple[pyspiel.Game, pyspiel.State]:
    """``pyspiel.deserialize_game_and_state``: a python_skipbo game's state is read by
    :meth:`SkipBoGame.deserialize_state`; OpenSpiel's pickled form of it is refused; other games as before."""
    head, sep, state_text = text.partition("\n[State]\n") if isinstance(text, str) else ("", "", "")
    game_string = head.rpartition("[Game]\n")[2].strip()
    if sep and game_string.startswith(GAME_TYPE.short_name + "("):
        game = _SPIEL_LOAD_GAME(game_string)
        return game, game.deserialize_state(state_text)
    _PICKLED_PATH.active = True
    try:
        return _SPIEL_DESERIALIZE(text)
    finally:
        _PICKLED_PATH.active = False


pyspiel.register_game(GAME_TYPE, SkipBoGame)
# OpenSpiel reads a Python game's state string by unpickling part of it, in C++ where no Python
# method can take over; the module functions users call are replaced by these (other games unchanged).
pyspiel.serialize_game_and_state = serialize_game_and_state
pyspiel.load_game = load_game
pyspiel.deserialize_game_and_state = deserialize_game_and_state
