"""What the action-scoring network computes from an observation vector, as numpy tables.

The feature rows themselves are computed in torch by :class:`~skipbo_env.nets.scorer_net.ActionScorer`;
this module holds their layout (:data:`ACTION_PIECES`), its version (:data:`FEATURES_VERSION`), the
constant tables the computation gathers from, and the parameter shapes of a network of given sizes
(:func:`scorer_tensor_shapes`). numpy only.
"""

from __future__ import annotations

import numpy as np

from ..observations.v1 import BUILD_SLOTS, CARD_SLOTS, HEAD_WIDTH, NAME, SEAT_WIDTH
from ..rules import (
    ALL_MOVES,
    NUM_SOLO_MOVES,
    WILD,
    ConfigError,
    Discard,
    GameConfig,
    Play,
    Source,
    missing_numbers,
)

SCORER_OBSERVATION = NAME
"""The observation whose pieces the features read (``v1``); a scorer file trained on another is refused."""
FEATURES_VERSION = 1
"""Version of the feature computation below. A checkpoint stores the version it was trained with, and
loading one with another version fails: the same weights on other features would play differently.
Raise it with any change to what :meth:`ActionScorer.features` computes."""
GAP_CLASSES = 13
"""Numbers missing between a pile and a target card: 0..11, or 12 for no target."""
CHAIN_PIECE = ("gap", GAP_CLASSES), ("cover", 1), ("short", 1), ("reachable", 1)
"""Chain features from a pile to a target card: the numbers missing (one-hot 0..11, 12: no target),
how many of them the seat holds (/ 12: hand or discard tops for the observer, discard tops for the
others), how many it would still lack after spending its wilds (/ 12), and 1 if it lacks none."""
ACTION_PIECES: tuple[tuple[str, int], ...] = (
    ("kind", 7), ("card", CARD_SLOTS), ("pile", BUILD_SLOTS), ("pile_after", BUILD_SLOTS),
    ("own_chain", 16), ("next_chain", 16), ("partner_chain", 16),
    ("discard_top", CARD_SLOTS), ("discard_second", CARD_SLOTS), ("discard_size", 1), ("relation", 4),
    ("source_second", CARD_SLOTS), ("source_size", 1), ("hand_copies", 1), ("bridge", 1), ("fits", 1),
)
"""The per-action feature row, in order (zeros where a piece does not apply to the action's kind).

``kind``: one-hot of KINDS; ``card``: the card moved (one-hot 14); ``pile``/``pile_after``: the
building pile's value before and after a play (one-hot 0..11); ``*_chain``: CHAIN_PIECE from the pile
after the play to the observer's, the next player's and the partner's stock top; ``discard_*``: the
target pile of a discard (top, second card, size / 20); ``relation``: the discarded card against that
top (same number, one below, one above, empty pile); ``source_*``: the card a discard-pile play reveals
and that pile's size; ``hand_copies``: copies of the card in the hand / 5; ``bridge``: 1 if the number
is missing between some pile and the own stock top; ``fits``: 1 if the card fits a pile now."""
ACTION_WIDTH = sum(width for _, width in ACTION_PIECES)
"""Width of an action's feature row (144): the input of :attr:`ActionScorer.action_in`."""
PILE_FEATURES = 3 * (GAP_CLASSES + 3)
"""Chain features of one building pile in the context input: CHAIN_PIECE towards the own, the next
player's and the partner's stock top (48)."""
KINDS = (Source.HAND, Source.STOCK, Source.DISCARD, "discard", "end", Source.PARTNER_STOCK, Source.PARTNER_DISCARD)


def game_of_spaces(obs_dim: int, n_actions: int) -> GameConfig:
    """The table layout (players, partner game) behind an observation size and action count."""
    players, rest = divmod(obs_dim - HEAD_WIDTH, SEAT_WIDTH)
    if rest or not 2 <= players <= 6 or n_actions not in (NUM_SOLO_MOVES, len(ALL_MOVES)):
        raise ValueError(f"observation size {obs_dim} with {n_actions} actions is not a Skip-Bo table")
    try:
        return GameConfig(num_players=players, partner_game=n_actions == len(ALL_MOVES))
    except ConfigError as exc:
        raise ValueError(f"observation size {obs_dim} with {n_actions} actions: {exc}") from exc


def chain_tables() -> tuple[np.ndarray, np.ndarray]:
    """GAP[q, t, k]: one-hot of the numbers missing from a pile at q (0..11) to target slot t.

    NEED[q, t, v]: 1 if number v + 1 is one of them. Target slots are card
    slots (0..11 numbers, 12 wild: nothing missing, 13 none: class 12).
    """
    gap = np.zeros((BUILD_SLOTS, CARD_SLOTS, GAP_CLASSES), dtype=np.float32)
    need = np.zeros((BUILD_SLOTS, CARD_SLOTS, BUILD_SLOTS), dtype=np.float32)
    for q in range(BUILD_SLOTS):
        for t in range(12):
            missing = missing_numbers(q, t + 1)  # a pile showing q, target card t + 1
            gap[q, t, len(missing)] = 1
            for number in missing:
                need[q, t, number - 1] = 1
        gap[q, 12, 0] = 1
        gap[q, 13, GAP_CLASSES - 1] = 1
    return gap, need


def relation_table() -> np.ndarray:
    """REL[v, top, r]: a card in slot v put on a discard top in slot top (13: empty pile).

    r = 0 same number, 1 one below the top (descending run), 2 one above, 3 empty pile.
    """
    rel = np.zeros((CARD_SLOTS, CARD_SLOTS, 4), dtype=np.float32)
    for v in range(13):
        rel[v, 13, 3] = 1
        for top in range(12):
            if v == top:
                rel[v, top, 0] = 1
            elif v < 12 and v == top - 1:
                rel[v, top, 1] = 1
            elif v < 12 and v == top + 1:
                rel[v, top, 2] = 1
    return rel


def action_tables(n_actions: int) -> dict[str, np.ndarray]:
    """Static index rows of every action: what it moves, from where, to where."""
    kind = np.zeros((n_actions, len(KINDS)), dtype=np.float32)
    card_row = np.zeros(n_actions, dtype=np.int64)  # 0 none, 1..13 fixed slot, 14 stock, 15..18 discards, 19.. partner
    pile_row = np.full(n_actions, 4, dtype=np.int64)  # building pile, 4 = none
    disc_row = np.full(n_actions, 4, dtype=np.int64)  # target discard pile, 4 = none
    src_row = np.full(n_actions, 8, dtype=np.int64)  # source discard pile (own 0..3, partner 4..7), 8 = none
    value_row = np.full(n_actions, 13, dtype=np.int64)  # hand slot of the card, 13 = none
    for a, move in enumerate(ALL_MOVES[:n_actions]):
        if isinstance(move, Play):
            kind[a, KINDS.index(move.source)] = 1
            pile_row[a] = move.build_pile
            if move.source is Source.HAND:
                assert move.card is not None  # a hand play names its card
                slot = 12 if move.card == WILD else move.card - 1
                card_row[a], value_row[a] = 1 + slot, slot
            elif move.source is Source.STOCK:
                card_row[a] = 14
            elif move.source is Source.DISCARD:
                assert move.discard_pile is not None  # a discard-pile play names its pile
                card_row[a], src_row[a] = 15 + move.discard_pile, move.discard_pile
            elif move.source is Source.PARTNER_STOCK:
                card_row[a] = 19
            else:
                assert move.discard_pile is not None  # a partner-discard play names its pile
                card_row[a], src_row[a] = 20 + move.discard_pile, 4 + move.discard_pile
        elif isinstance(move, Discard):
            kind[a, 3] = 1
            slot = 12 if move.card == WILD else move.card - 1
            card_row[a], value_row[a], disc_row[a] = 1 + slot, slot, move.discard_pile
        else:
            kind[a, 4] = 1
    return {"kind": kind, "card_row": card_row, "pile_row": pile_row, "disc_row": disc_row,
            "src_row": src_row, "value_row": value_row}


PROJECTED_GROUPS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("kind", ("kind",), 0),
    ("card_row", ("card",), 24),
    ("pile_row", ("pile", "pile_after", "own_chain", "next_chain", "partner_chain"), 5),
    ("disc_row", ("discard_top", "discard_second", "discard_size"), 5),
    ("relation", ("relation",), 52),
    ("src_row", ("source_second", "source_size"), 9),
    ("value_row", ("hand_copies", "bridge", "fits"), 14),
)
"""How :meth:`ActionScorer._action_in` cuts an action row: (the table an action gathers the group
from, the ACTION_PIECES of the group, in order, and the table's rows). The tables: cards (24 rows by
``card_row``), building piles (5 by ``pile_row``), target discard piles (5 by ``disc_row``), discard
relations (52: pile * 13 + card slot), source discard piles (9 by ``src_row``), card facts (14 by
``value_row``); ``kind`` is a constant per action, not a table."""
if tuple(name for _, group, _ in PROJECTED_GROUPS for name in group) != tuple(n for n, _ in ACTION_PIECES):
    raise RuntimeError("PROJECTED_GROUPS must list ACTION_PIECES in order")  # pragma: no cover - a code invariant
GROUP_WIDTHS = tuple(sum(dict(ACTION_PIECES)[name] for name in group) for _, group, _ in PROJECTED_GROUPS)
"""Width of each group of PROJECTED_GROUPS in the 144-wide action row."""


def selection_matrix(tables: dict[str, np.ndarray]) -> np.ndarray:
    """SELECT[a, r] = 1 when row ``r`` of the stacked projected tables of :meth:`ActionScorer._action_in`
    (PROJECTED_GROUPS after ``kind``, in order) is part of action ``a``'s feature row."""
    n = len(tables["card_row"])
    offsets, at = {}, 0
    for table, _, rows in PROJECTED_GROUPS[1:]:
        offsets[table] = at
        at += rows
    select = np.zeros((n, at), dtype=np.float32)
    for a in range(n):
        for name in ("card_row", "pile_row", "disc_row", "src_row", "value_row"):
            select[a, offsets[name] + tables[name][a]] = 1.0
        if tables["disc_row"][a] < 4:  # a discard: its card against the target pile's top
            select[a, offsets["relation"] + tables["disc_row"][a] * 13 + tables["value_row"][a]] = 1.0
    return select


def pick_rows(select: np.ndarray) -> np.ndarray:
    """PICKS[j, a]: the j-th table row (in increasing order) of action ``a``'s feature row in
    SELECT (:func:`selection_matrix`), or SELECT's row count (a zero row) where the action has fewer."""
    rows = [np.flatnonzero(line) for line in select]
    picks = np.full((max(len(r) for r in rows), len(rows)), select.shape[1], dtype=np.int64)
    for a, r in enumerate(rows):
        picks[:len(r), a] = r
    return picks


def scorer_tensor_shapes(obs_dim: int, context_arch: tuple[int, ...], scorer_arch: tuple[int, ...],
                         value_arch: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """The names and shapes of the parameters of an :class:`ActionScorer` of these sizes (its
    ``state_dict``), without building it: what an agent file must hold before its network is
    allocated. ``tests/test_agent_files.py`` checks it against built scorers."""
    extra = obs_dim + 4 * PILE_FEATURES
    hidden = scorer_arch[0]
    out: dict[str, tuple[int, ...]] = {}

    def mlp(prefix: str, sizes: list[int]) -> None:  # _mlp's Linear layers sit at the even indices
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            out[f"{prefix}.{2 * i}.weight"], out[f"{prefix}.{2 * i}.bias"] = (b, a), (b,)

    mlp("context", [extra, *context_arch])
    out["action_in.weight"], out["action_in.bias"] = (hidden, ACTION_WIDTH), (hidden,)
    out["context_in.weight"] = (hidden, context_arch[-1])
    mlp("scorer.0", list(scorer_arch))
    out["scorer.1.weight"], out["scorer.1.bias"] = (1, scorer_arch[-1]), (1,)
    mlp("value", [extra, *value_arch])
    return out

