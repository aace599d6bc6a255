"""Agents that choose whole turn prefixes among the heuristic planner's candidates.

:class:`TopK` keeps the planner's best-scored play sequences (and some alternative discards) as
candidates; a :class:`TurnAgent` scores them its own way (the search agent by simulation, the
turn network with a network), plays the best one's first move, and plays the rest of it while
each new view is exactly the one the plan predicted; any surprise makes a new choice. Both read
only the seat's :class:`~skipbo_env.rules.SeatView` (``act_view``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from ..bots.heuristic import HeuristicWeights, _Search, default_weights, placement_score
from ..bots.protocol import AgentBase, NeedsViewError
from ..encoding import action_mask, decode_action, encode_action, encode_view, fields_from_view
from ..rules import WILD, GameConfig, Move, Play, SeatView, Source
from ..rules.moves import DISCARDS, Discard
from ..rules.sampling import sample_states

DEFAULT_CANDIDATES = 12
DEFAULT_DISCARDS = 4
MAX_CANDIDATES = 64


class TopK(_Search):
    """The heuristic planner's search, keeping the ``k`` best sequences (best first).

    With ``discards`` > 0, up to that many extra candidates follow: the best sequences that end
    with a discard, each with the best discard of another card value instead (same plays).
    """

    def __init__(self, obs: Any, config: GameConfig, w: HeuristicWeights, k: int, discards: int = 0) -> None:
        super().__init__(obs, config, w)
        self.k = k
        self.discards = discards
        self.found: list[tuple[float, int, tuple[Move, ...]]] = []
        self.alts: dict[int, list[tuple[float, tuple[Move, ...]]]] = {}

    def _consider(self, value: float, path: tuple[Move, ...]) -> None:
        super()._consider(value, path)
        if self.discards and isinstance(path[-1], Discard):
            self.alts[len(self.found)] = self._other_discards(value, path)
        self.found.append((value, len(self.found), path))

    def _other_discards(self, value: float, path: tuple[Move, ...]) -> list[tuple[float, tuple[Move, ...]]]:
        """The best discard of each other card value from this position, valued like the planner's."""
        chosen = path[-1]
        assert isinstance(chosen, Discard)  # _consider calls this for discard-ended paths only
        key = tuple(sorted(self.building))
        piles = self._discard_piles()
        base = value
        out = []
        for card in range(1, WILD + 1):
            if not self.hand[card] or card == chosen.card or (card == WILD and not self.allow_wild_discard):
                continue
            keep = self._keep_value(card, key)
            top_value, top_move = -np.inf, None
            for d, top in piles:
                v = placement_score(card, top) - keep
                if v > top_value:
                    top_value, top_move = v, DISCARDS[card][d]
            if top_move is not None:
                out.append((top_value, (*path[:-1], top_move)))
        best_value = self._best_discard(key)[0]
        out = [(base - best_value + v, p) for v, p in out]
        out.sort(key=lambda item: -item[0])
        return out

    def top(self) -> list[tuple[float, tuple[Move, ...]]]:
        self.run()
        order = sorted(self.found, key=lambda item: (-item[0], item[1]))  # stable: the planner's order breaks ties
        chosen = order[: self.k]
        out = [(value, path) for value, _, path in chosen]
        extra = 0
        for _, index, _ in chosen:
            if extra >= self.discards:
                break
            for value, path in self.alts.get(index, [])[:1]:
                out.append((value, path))
                extra += 1
        return out


class TurnAgent(AgentBase):
    """Base of the agents that pick among the planner's candidate turns (see the module docstring).

    Subclasses set :attr:`name` and implement :meth:`_scores` (higher is better, one score per
    candidate). Implements ``act_view`` (``reads_view``: the game loops ask it); ``act`` (the
    observation vector) is refused, since the view holds what the candidates and scores need
    (every discard pile, the cards seen).
    """

    name = "turns"
    reads_view = True
    keeps_plan = True

    def __init__(self, config: GameConfig, seed: int | None = None, *, candidates: int = DEFAULT_CANDIDATES,
                 discards: int = DEFAULT_DISCARDS, weights: HeuristicWeights | None = None) -> None:
        if not isinstance(config, GameConfig):
            raise TypeError(f"config must be a GameConfig, got {type(config).__name__}")
        if type(candidates) is not int or not 1 <= candidates <= MAX_CANDIDATES:
            raise ValueError(f"candidates must be an int in 1..{MAX_CANDIDATES}, got {candidates!r}")
        if type(discards) is not int or not 0 <= discards <= MAX_CANDIDATES:
            raise ValueError(f"discards must be an int in 0..{MAX_CANDIDATES}, got {discards!r}")
        self.config = config
        self.candidates = candidates
        self.discards = discards
        self.weights = default_weights(config.num_players) if weights is None else weights
        self.searches = 0
        self.decisions = 0
        self.seed(seed)

    def seed(self, seed: int | None = None) -> None:
        """Reset the generator (same seed, same decisions) and forget the plan."""
        self.rng = np.random.default_rng(seed)
        self._plan: list[Move] = []
        self._expect: SeatView | None = None

    def act(self, observation: Mapping[str, Any]) -> int:
        raise NeedsViewError(self.name)

    def act_view(self, view: SeatView) -> int:
        """The action id (:func:`skipbo_env.encoding.encode_action`) to play in ``view``."""
        legal = self._legal(view, "act_view")
        self.decisions += 1
        if self._plan and self._expect is not None and _same(view, self._expect) and self._plan[0] in legal:
            move = self._plan.pop(0)
        else:
            move = self._search(view, legal)
        self._expect = None
        if self._plan:
            self._expect = self._predict(view, move)
            if self._expect is None:
                self._plan = []
        return encode_action(move, self.config)

    def _legal(self, view: SeatView, caller: str) -> tuple[Move, ...]:
        """The legal moves of ``view``, after checking it is a view of this game with the seat to move."""
        if not isinstance(view, SeatView):
            raise TypeError(f"{caller} needs a SeatView, got {type(view).__name__}")
        if not self.config.same_rules(view.config):
            # who dealt first (a match rotates it) changes no decision; every other rule must match
            raise ValueError(f"the view's config {view.config} differs from the agent's {self.config}")
        legal = view.legal_moves()
        if not legal:
            raise ValueError(f"seat {view.seat} is not to move")
        return legal

    def _search(self, view: SeatView, legal: tuple[Move, ...]) -> Move:
        self._plan = []
        if len(legal) == 1:
            return legal[0]
        self.searches += 1
        found = self._candidates(view, legal)
        if not found:
            return legal[0]
        if len(found) == 1:
            best_path = found[0][1]
        else:
            scores = self._scores(view, found)
            best_path = found[int(np.argmax(scores))][1]
        self._plan = list(best_path[1:])
        return best_path[0]

    def _candidates(self, view: SeatView, legal: tuple[Move, ...]) -> list[tuple[float, tuple[Move, ...]]]:
        """The planner's candidates (its score, the sequence), best first, whose first move is legal."""
        found = TopK(fields_from_view(view), self.config, self.weights, self.candidates, self.discards).top()
        return [(value, path) for value, path in found if path and path[0] in legal]

    def _scores(self, view: SeatView, found: list[tuple[float, tuple[Move, ...]]]) -> np.ndarray:
        raise NotImplementedError

    def _predict(self, view: SeatView, move: Move) -> SeatView | None:
        """The view after ``move`` when it reveals nothing (a hand play that keeps cards in hand, a
        discard-pile play); ``None`` otherwise."""
        return predict_view(view, move)


def _same(a: SeatView, b: SeatView) -> bool:
    return a == b and a.completed_cards == b.completed_cards


def keeps_turn_known(view: SeatView, move: Move) -> bool:
    """Whether the seat's view after ``move`` follows from ``view`` alone and the seat is still to
    move: a hand play that keeps cards in hand, or a discard-pile play. A stock play (the next stock
    card, R14), the play that empties the hand (the refill, R15), a discard and an end of turn do not."""
    if not isinstance(move, Play) or move.source in (Source.STOCK, Source.PARTNER_STOCK):
        return False
    return not (move.source is Source.HAND and len(view.hand) == 1)


def predict_view(view: SeatView, move: Move) -> SeatView | None:
    """The view after ``move`` where it follows from ``view`` alone (:func:`keeps_turn_known`);
    ``None`` otherwise."""
    if not keeps_turn_known(view, move):
        return None
    world = sample_states(view, np.random.default_rng(0), 1)[0]  # any world: the move reveals nothing
    world.apply(move)
    return world.view(view.seat)


class PolicyNet(Protocol):
    """What :func:`policy_turn` and :func:`path_log_probs` need of a network: the action logits
    of a batch of observation vectors (:meth:`skipbo_env.agents.ppo.PPOAgent.logits`)."""

    def logits(self, vec: np.ndarray) -> np.ndarray: ...


def _masked_log_softmax(net: PolicyNet, views: list[SeatView], config: GameConfig) -> np.ndarray:
    """``(len(views), actions)``: the network's log-probabilities over each view's legal actions
    (``-inf`` at the others), in one batch."""
    logits = net.logits(np.stack([encode_view(v) for v in views])).reshape(len(views), -1)
    legal = np.stack([action_mask(v.legal_moves(), config) for v in views]).astype(bool)
    logits = np.where(legal, logits, -np.inf)
    top = logits.max(axis=1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))


def policy_turn(net: PolicyNet, view: SeatView) -> tuple[Move, ...]:
    """The turn prefix the network plays from ``view`` (its most likely legal move at each step, as
    :class:`~skipbo_env.agents.ppo.PPOAgent` plays), up to and including the first move after which
    the view no longer follows from ``view`` alone (:func:`keeps_turn_known`): the same kind of
    sequence as the planner's candidates. The seat must be to move."""
    path: list[Move] = []
    here: SeatView | None = view
    while here is not None:
        move = decode_action(int(np.argmax(_masked_log_softmax(net, [here], view.config)[0])), view.config)
        path.append(move)
        here = predict_view(here, move)
    return tuple(path)


def with_policy_turn(found: list[tuple[float, tuple[Move, ...]]], net: PolicyNet,
                     view: SeatView) -> list[tuple[float, tuple[Move, ...]]]:
    """The planner's candidates ``found`` (its score, the sequence) with the network's own turn
    prefix (:func:`policy_turn`) added at the end when it is not among them, with the lowest
    planner score of ``found`` (0 if empty)."""
    own = policy_turn(net, view)
    if any(path == own for _, path in found):
        return found
    return [*found, (min((value for value, _ in found), default=0.0), own)]


def path_log_probs(net: PolicyNet, view: SeatView, paths: list[tuple[Move, ...]]) -> np.ndarray:
    """Per path: the network's log-probability of playing it from ``view``, its moves' log-softmax
    over the legal actions summed up to and including the first move that reveals a card
    (:func:`keeps_turn_known`; a candidate ends there, or with a discard). The positions along the
    paths are exact (nothing is revealed before them) and are evaluated in one batch, each shared
    prefix once. Every path must be playable from ``view``."""
    config = view.config
    positions: dict[tuple[Move, ...], int] = {}  # prefix -> its row in ``views``
    views: list[SeatView] = []
    after: dict[tuple[Move, ...], SeatView | None] = {(): view}  # prefix -> the view it leaves (None: revealed)
    steps: list[list[tuple[int, int]]] = []  # per path: (position, action) of each counted move
    for path in paths:
        counted = []
        for j, move in enumerate(path):
            key = path[:j]
            here = after[key]
            assert here is not None
            if key not in positions:
                positions[key] = len(views)
                views.append(here)
            counted.append((positions[key], encode_action(move, config)))
            if path[:j + 1] not in after:
                after[path[:j + 1]] = predict_view(here, move)
            if after[path[:j + 1]] is None:
                break
        steps.append(counted)
    if not views:
        return np.zeros(len(paths))
    logp = _masked_log_softmax(net, views, config)
    return np.array([sum(logp[i, a] for i, a in counted) for counted in steps], dtype=np.float64)


__all__ = ["DEFAULT_CANDIDATES", "DEFAULT_DISCARDS", "MAX_CANDIDATES", "PolicyNet", "TopK", "TurnAgent",
           "keeps_turn_known", "path_log_probs", "policy_turn", "predict_view", "with_policy_turn"]
