"""TurnNetAgent (``turn-2p``): a network that picks the turn, taught by the search agent.

The heuristic planner proposes the seat's candidate turns (:class:`~skipbo_env.agents.turns.TopK`);
:func:`turn_features` describes the position each leaves, a small numpy network
(:class:`TurnNet`) scores them in one batched pass, and the agent plays the best one's first move.
The network was fitted to the 2-player search agent's scores
(:mod:`skipbo_env.training.turn_recipe`); the 2-player game only. Turn-agent files are network
files (:mod:`.netfile`) of the kind :data:`TURN_KIND`, refused when their ``features_version``
is not :data:`FEATURES_VERSION`. See docs/agents.md ("turn-2p").
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..bots.heuristic import CHAIN, MAX_CHAIN, HeuristicWeights, reach_chance
from ..rules import WILD, GameConfig, Move, SeatView, Source
from ..rules.cards import HAND_SIZE, PILE_COMPLETE
from ..rules.moves import Discard, Play
from ..rules.sampling import unseen_counts
from .netfile import MLP, NetKind, is_net_file, load_net, write_net
from .turns import (
    DEFAULT_CANDIDATES,
    DEFAULT_DISCARDS,
    PolicyNet,
    TurnAgent,
    path_log_probs,
    with_policy_turn,
)

FORMAT = "skipbo-turn-agent"
FORMAT_VERSION = 1
METADATA_KEY = "skipbo_turn_agent"
"""Key of the description in the safetensors header's metadata."""
FEATURES_VERSION = 1
"""Version of :func:`turn_features`; bump it whenever the features change (old files are refused)."""
FEATURE_SIZE = 308
"""Length of :func:`turn_features`'s vector."""
OPPONENT_UNSEEN = 0.55
"""The heuristic's chance that an opponent's unseen hand supplies one missing number (its ``unseen_card``)."""
OWN_UNSEEN = 0.3
"""The heuristic's same chance for the seat's own next draw (its ``own_unseen_card``)."""
_CARDS = WILD + 1  # card values 1..13 (13 = wild); index 0 unused


def unseen_shares(view: SeatView) -> np.ndarray:
    """Share of each card value (index 1..13) among the cards the seat has not seen (index 0 unused)."""
    counts = np.array(unseen_counts(view), np.float64)
    return counts / max(counts.sum(), 1.0)


def _cover(missing: list[int], jokers: int, draws: int, shares: np.ndarray) -> float:
    """Chance that ``draws`` cards dealt from the unseen ``shares`` bring the ``missing`` numbers,
    ``jokers`` wilds already in hand making up for as many of them (one drawn wild for one more)."""
    if len(missing) <= jokers:
        return 1.0
    if draws <= 0 or len(missing) - jokers > draws:
        return 0.0
    q = sorted(1.0 - (1.0 - shares[x]) ** draws for x in missing)  # hardest first
    wild = 1.0 - (1.0 - shares[WILD]) ** draws
    without = float(np.prod(q[jokers:]))  # the wilds in hand stand for the hardest numbers
    with_wild = float(np.prod(q[jokers + 1:]))  # a drawn wild for one more
    return (1.0 - wild) * without + wild * with_wild


def _chances(target: int | None, building: tuple[int, ...], numbers: set[int] | frozenset[int], jokers: int,
             draws: int, shares: np.ndarray) -> list[float]:
    """Per building pile (in the order of ``building``), :func:`_cover`'s chance to bring it to ``target - 1``."""
    if target is None:
        return [0.0] * len(building)
    if target == WILD:
        return [1.0] * len(building)
    out = []
    for pile in building:
        need = CHAIN[pile][target]
        if len(need) > MAX_CHAIN:
            out.append(0.0)
        else:
            out.append(_cover([x for x in need if x not in numbers], jokers, draws, shares))
    return out


def _onehot(size: int, index: int | None) -> np.ndarray:
    out = np.zeros(size, np.float32)
    if index is not None:
        out[index] = 1.0
    return out


@dataclass
class _TurnOutcome:
    """What the seat holds after the plays of a candidate turn (before any refill)."""

    building: list[int]
    hand: list[int]
    """Copies of each card value (index 1..13) left in the hand."""
    piles: list[list[int]]
    """The seat's discard piles, bottom first."""
    stock_played: bool
    stock_size: int
    ends: list[float]
    """One-hot of how the turn ends: a stock play, a play that empties the hand, a discard, an end of turn."""
    counts: list[int]
    """Plays, hand plays, discard-pile plays, wilds played, piles completed."""


def _play_turn(view: SeatView, path: tuple[Move, ...]) -> _TurnOutcome:
    """Apply the moves of ``path`` to what the seat of ``view`` sees (2 players: no partner moves)."""
    me = view.seat
    hand = [0] * _CARDS
    for card in view.hand:
        hand[card] += 1
    out = _TurnOutcome(building=list(view.building_values), hand=hand,
                       piles=[list(p) for p in view.discard_piles[me]], stock_played=False,
                       stock_size=view.stock_sizes[me], ends=[0.0, 0.0, 0.0, 0.0], counts=[0, 0, 0, 0, 0])
    counts = out.counts
    for move in path:
        if isinstance(move, Play):
            counts[0] += 1
            if move.source is Source.HAND:
                assert move.card is not None  # a hand play names its card (Play.__post_init__)
                hand[move.card] -= 1
                counts[1] += 1
                counts[3] += move.card == WILD
            elif move.source is Source.DISCARD:
                assert move.discard_pile is not None
                counts[2] += 1
                counts[3] += out.piles[move.discard_pile].pop() == WILD
            elif move.source is Source.STOCK:
                out.stock_played = True
                out.stock_size -= 1
                out.ends[0] = 1.0
            else:
                raise ValueError(f"turn_features reads 2-player turns; {move} is a partner-game move")
            b = move.build_pile
            out.building[b] += 1
            if out.building[b] == PILE_COMPLETE:  # R13
                out.building[b] = 0
                counts[4] += 1
        elif isinstance(move, Discard):
            hand[move.card] -= 1
            out.piles[move.discard_pile].append(move.card)
            out.ends[2] = 1.0
        else:
            out.ends[3] = 1.0
    if not any(out.ends):
        out.ends[1] = 1.0
    return out


def _own_parts(view: SeatView, turn: _TurnOutcome, key: tuple[int, ...], own_top: int | None) -> list[np.ndarray]:
    """The building piles (sorted), then the seat's hand, stock and discard piles after the turn."""
    stock_top = view.stock_tops[view.seat]
    parts: list[np.ndarray] = [_onehot(12, v) for v in key]
    parts.append(np.array(turn.hand[1:], np.float32) / 2.0)
    parts.append(np.array([sum(turn.hand) / HAND_SIZE], np.float32))
    parts.append(_onehot(13, None if own_top is None else own_top - 1))
    parts.append(np.array([turn.stock_played, stock_top is None and not turn.stock_played, turn.stock_size / 30.0],
                          np.float32))
    own_rows = sorted((p[-1] if p else 0, p[-2] if len(p) > 1 else 0, len(p)) for p in turn.piles)
    for top, second, size in own_rows:
        parts += [_onehot(14, top), _onehot(14, second), np.array([size / 10.0], np.float32)]
    return parts


def _opponent_parts(view: SeatView, opp: int) -> list[np.ndarray]:
    """The opponent's stock top and size, hand size and discard tops (sorted)."""
    opp_top = view.stock_tops[opp]
    parts = [_onehot(13, None if opp_top is None else opp_top - 1),
             np.array([view.stock_sizes[opp] / 30.0, view.hand_sizes[opp] / HAND_SIZE], np.float32)]
    for top, size in sorted((p[-1] if p else 0, len(p)) for p in view.discard_piles[opp]):
        parts += [_onehot(14, top), np.array([size / 10.0], np.float32)]
    return parts


def _either(chances: list[float]) -> np.ndarray:
    """The per-pile chances (sorted) and the chance that at least one of them comes true."""
    return np.array([*sorted(chances), 1.0 - float(np.prod([1.0 - p for p in chances]))], np.float32)


def turn_features(view: SeatView, path: tuple[Move, ...], value: float, rank: int, extra: bool,
                  shares: np.ndarray | None = None) -> np.ndarray:
    """The position candidate turn ``path`` leaves, as the seat sees it (float32, :data:`FEATURE_SIZE`).

    ``value`` is the planner's score of the candidate, ``rank`` its place in the candidate list,
    ``extra`` whether it is one of the alternative-discard candidates; ``shares`` is
    :func:`unseen_shares` of ``view`` (computed when not given). The layout is documented in
    docs/agents.md ("turn-2p"). Reads only ``view`` (2 players: the opponent is the next seat).
    """
    if shares is None:
        shares = unseen_shares(view)
    opp = (view.seat + 1) % view.num_players
    turn = _play_turn(view, path)
    hand, piles = turn.hand, turn.piles
    key = tuple(sorted(turn.building))
    own_top = None if turn.stock_played else view.stock_tops[view.seat]
    parts = _own_parts(view, turn, key, own_top) + _opponent_parts(view, opp)
    parts.append(np.array([view.draw_size / 100.0, view.completed_size / 100.0], np.float32))
    parts.append(np.array(turn.ends, np.float32))
    plays, hand_plays, discard_plays, wilds, completed = turn.counts
    parts.append(np.array([plays / 5, hand_plays / 5, discard_plays / 5, wilds, completed], np.float32))
    opp_top = view.stock_tops[opp]
    opp_numbers = frozenset(p[-1] for p in view.discard_piles[opp] if p and p[-1] != WILD)
    opp_jokers = sum(1 for p in view.discard_piles[opp] if p and p[-1] == WILD)
    danger = reach_chance(opp_top, key, opp_numbers, opp_jokers, OPPONENT_UNSEEN)
    own_numbers = {c for c in range(1, WILD) if hand[c]} | {p[-1] for p in piles if p and p[-1] != WILD}
    own_jokers = hand[WILD] + sum(1 for p in piles if p and p[-1] == WILD)
    own = 0.0 if own_top is None else reach_chance(own_top, key, frozenset(own_numbers), own_jokers, OWN_UNSEEN)
    parts.append(np.array([value / 100.0, danger, own, rank / 16.0, float(extra)], np.float32))
    parts.append(shares[1:].astype(np.float32) * 10.0)
    # the opponent refills to a full hand before it plays: its chance per pile from the unseen shares
    parts.append(_either(_chances(opp_top, key, opp_numbers, opp_jokers, HAND_SIZE, shares)))
    draws = HAND_SIZE - sum(hand) if view.draw_size + view.completed_size > 0 else 0
    parts.append(_either(_chances(own_top, key, own_numbers, own_jokers, draws, shares)))
    out = np.concatenate(parts)
    assert out.shape == (FEATURE_SIZE,), out.shape
    return out


TURN_KIND = NetKind(what="turn-agent file", format=FORMAT, format_version=FORMAT_VERSION, metadata_key=METADATA_KEY,
                    inputs_field="features_version", inputs_version=FEATURES_VERSION,
                    inputs=lambda game: FEATURE_SIZE, inputs_name="turn features")
"""The turn-agent files' kind (:mod:`skipbo_env.agents.netfile`)."""
TurnNet = MLP
"""The turn network: a standardized ReLU network in numpy over :func:`turn_features` rows."""


def is_turn_agent_file(path: str | os.PathLike) -> bool:
    """True when ``path`` is a safetensors file whose header holds a turn-agent description."""
    return is_net_file(path, TURN_KIND)


def load_turn_net(path: str | os.PathLike, config: GameConfig | None = None) -> tuple[MLP, dict[str, Any]]:
    """The network of turn-agent file ``path`` and its checked description (:func:`.netfile.load_net`).

    With ``config``, the file's game must be that one; every problem is a
    :class:`~skipbo_env.agents.modelfile.CheckpointError` naming the file.
    """
    return load_net(path, TURN_KIND, config)


def write_turn_net(path: str | os.PathLike, net: MLP, game: GameConfig, provenance: dict[str, Any]) -> Path:
    """Write ``net`` as turn-agent file ``path`` (atomically; checked by the loader's rules first)."""
    return write_net(path, TURN_KIND, net, game, provenance)


def check_turn_game(config: GameConfig) -> None:
    """Raise ``ValueError`` unless ``config`` is a game the turn features read (2 players, no partners)."""
    if config.num_players != 2 or config.partner_game:
        raise ValueError(f"the turn network reads 2-player games without partners, not {config.num_players} "
                         f"players (partner_game={config.partner_game})")


class TurnNetAgent(TurnAgent):
    """Plays the turn network of an agent file (see the module docstring). Implements ``act_view``.

    With a policy network (``policy_net`` and a ``policy`` weight > 0) the agent plays two networks
    together: each candidate's score is the turn network's log-softmax over the candidates plus
    ``policy`` times the policy network's log-probability of the candidate
    (:func:`~skipbo_env.agents.turns.path_log_probs`), and the policy network's own turn prefix
    (:func:`~skipbo_env.agents.turns.policy_turn`) joins the candidates when the planner did not
    propose it (as an alternative candidate, with the lowest planner score). The shipped
    ``turn-2p-plus`` is ``turn-2p`` with ``ppo-2p-plus`` at weight 0.5.

    Args:
        path: a turn-agent file (:func:`write_turn_net`).
        config: the game (2 players, no partners; it must be the file's).
        seed: accepted for the agent protocol; the agent is deterministic.
        policy: weight of the policy network's log-probability (a finite number >= 0).
        policy_net: an agent with the action logits of observation vectors
            (:class:`~skipbo_env.agents.ppo.PPOAgent`), or ``None``; it must play ``config``.
    """

    name = "turnnet"

    def __init__(self, path: str | os.PathLike, config: GameConfig, seed: int | None = None, *,
                 candidates: int = DEFAULT_CANDIDATES, discards: int = DEFAULT_DISCARDS,
                 weights: HeuristicWeights | None = None, policy: float = 0.0,
                 policy_net: PolicyNet | None = None) -> None:
        if not isinstance(config, GameConfig):
            raise TypeError(f"config must be a GameConfig, got {type(config).__name__}")
        check_turn_game(config)
        if isinstance(policy, bool) or not isinstance(policy, int | float) or not math.isfinite(policy) or policy < 0:
            raise ValueError(f"policy must be a finite weight >= 0, got {policy!r}")
        if policy and policy_net is None:
            raise ValueError("policy > 0 needs a policy_net (an agent with action logits, e.g. a PPOAgent)")
        super().__init__(config, seed, candidates=candidates, discards=discards, weights=weights)
        self.path = Path(path)
        self.net, self.description = load_turn_net(self.path, config)
        self.policy = float(policy)
        self.policy_net = policy_net if policy else None

    def _candidates(self, view: SeatView, legal: tuple[Move, ...]) -> list[tuple[float, tuple[Move, ...]]]:
        found = super()._candidates(view, legal)
        return found if self.policy_net is None else with_policy_turn(found, self.policy_net, view)

    def _scores(self, view: SeatView, found: list[tuple[float, tuple[Move, ...]]]) -> np.ndarray:
        scores = self.net.scores(candidate_features(view, found, self.candidates))
        if self.policy_net is None:
            return scores
        scores = scores.astype(np.float64)
        top = scores.max()
        scores = scores - top - np.log(np.exp(scores - top).sum())  # log-softmax over the candidates
        return scores + self.policy * path_log_probs(self.policy_net, view, [path for _, path in found])


def candidate_features(view: SeatView, found: list[tuple[float, tuple[Move, ...]]], candidates: int) -> np.ndarray:
    """:func:`turn_features` of every candidate of ``found`` (the planner's list: its first ``candidates``
    are its best sequences, the rest alternative discards), one row each."""
    shares = unseen_shares(view)
    return np.stack([turn_features(view, path, value, i, i >= candidates, shares)
                     for i, (value, path) in enumerate(found)])


__all__ = ["FEATURE_SIZE", "FEATURES_VERSION", "TurnNet", "TurnNetAgent", "candidate_features", "is_turn_agent_file",
           "load_turn_net", "turn_features", "unseen_shares", "write_turn_net"]
