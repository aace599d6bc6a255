"""``ScorerPolicy``: a MaskablePPO policy that scores each action with one shared network.

The default ``MlpPolicy`` maps the observation to 125 logits through dense
layers, so it must learn from data which card fits which building pile, and
how far a pile is from a stock top, for every action separately. This
policy computes those relations exactly, in torch, from the observation
vector alone (no extra input, so it works in every env of the package and
with :class:`~skipbo_env.agents.ppo.PPOAgent` unchanged), and lets one small network
score every action from them:

* **per action** (a 144-wide feature row): the kind of move, the card it
  moves (one-hot 14), the building pile it goes on (value before and after),
  for that pile after the play the chain to the own stock top, the next
  opponent's stock top and the partner's (numbers still missing, how many
  of them the hand / the discard tops hold, whether the chain can be filled
  now), the target discard pile of a discard (top, second card, size, and
  whether the card continues a descending run), the card revealed under a
  played discard top, how many copies of the card the hand holds, whether
  the card bridges a pile to the own stock top and whether it fits a pile
  now;
* **context**: an MLP over the observation plus the same chain features of
  the four piles as they are;
* **logit** of an action = ``MLP(W_a · action_features + W_c · context)``,
  the same weights for all actions; the mask of MaskablePPO then removes
  the illegal ones.

The value network is an MLP over the observation plus the per-pile chain
features. ``docs/training.md`` describes the choice; ``ppo.policy: scorer``
selects it in a training config. The module lies below the agents that play it
(an agent file of kind ``scorer`` is rebuilt from :class:`ScorerPolicy`, :mod:`.agentfile`)
and needs the ``train`` extra (torch, sb3-contrib); :mod:`skipbo_env.training.policy`
keeps the class's name for the pickled checkpoints that name it there.
"""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from ..encoding import BUILD_SLOTS, CARD_SLOTS, HEAD_WIDTH, SEAT_WIDTH, observation_layout
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


def _chain_tables() -> tuple[np.ndarray, np.ndarray]:
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


def _relation_table() -> np.ndarray:
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


def _action_tables(n_actions: int) -> dict[str, np.ndarray]:
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


def _selection(tables: dict[str, np.ndarray]) -> np.ndarray:
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


def _picks(select: np.ndarray) -> np.ndarray:
    """PICKS[j, a]: the j-th table row (in increasing order) of action ``a``'s feature row in
    SELECT (:func:`_selection`), or SELECT's row count (a zero row) where the action has fewer."""
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
    extra = obs_dim + 4 * ActionScorer.PILE_FEATURES
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


def _mlp(sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), activation()]
    return nn.Sequential(*layers)


class ActionScorer(nn.Module):
    """The policy's ``mlp_extractor``: latent_pi is one logit per action, latent_vf the value features."""

    PILE_FEATURES = 3 * (GAP_CLASSES + 3)

    # buffers registered in __init__ (register_buffer hides them from the type checker)
    gap: torch.Tensor
    need: torch.Tensor
    numbers: torch.Tensor
    rel: torch.Tensor
    select: torch.Tensor
    picks: torch.Tensor
    slots: torch.Tensor
    kind: torch.Tensor
    card_row: torch.Tensor
    pile_row: torch.Tensor
    disc_row: torch.Tensor
    src_row: torch.Tensor
    value_row: torch.Tensor

    def __init__(self, obs_dim: int, n_actions: int, context_arch: tuple[int, ...],
                 scorer_arch: tuple[int, ...], value_arch: tuple[int, ...], activation: type[nn.Module]):
        super().__init__()
        game = game_of_spaces(obs_dim, n_actions)
        layout = observation_layout(game)
        self.players = game.num_players
        self.n_actions = n_actions
        self.partner = game.num_players // 2 if game.partner_game else None
        self.layout = layout
        gap, need = _chain_tables()
        # laid out [target slot, pile value * class] so that one matmul applies them to a batch of targets
        self.register_buffer("gap", torch.as_tensor(gap.transpose(1, 0, 2).reshape(CARD_SLOTS, -1)), persistent=False)
        self.register_buffer("need", torch.as_tensor(need.transpose(1, 0, 2).reshape(CARD_SLOTS, -1)), persistent=False)
        self.register_buffer("numbers", torch.arange(12, dtype=torch.float32), persistent=False)
        self.register_buffer("rel", torch.as_tensor(_relation_table()), persistent=False)
        self.register_buffer("slots", torch.eye(CARD_SLOTS)[:13], persistent=False)
        for name, table in _action_tables(n_actions).items():
            self.register_buffer(name, torch.as_tensor(table), persistent=False)
        select = _selection(_action_tables(n_actions))
        self.register_buffer("select", torch.as_tensor(select), persistent=False)
        self.register_buffer("picks", torch.as_tensor(_picks(select)), persistent=False)
        extra = obs_dim + 4 * self.PILE_FEATURES
        self.context = _mlp([extra, *context_arch], activation)
        hidden = scorer_arch[0]
        with torch.no_grad():
            width = self.features(torch.zeros(1, obs_dim))[0].shape[-1]
        self.action_in = nn.Linear(width, hidden)
        self.context_in = nn.Linear(context_arch[-1], hidden, bias=False)
        self.act = activation()
        self.scorer = nn.Sequential(_mlp(list(scorer_arch), activation), nn.Linear(scorer_arch[-1], 1))
        self.value = _mlp([extra, *value_arch], activation)
        self.latent_dim_pi = n_actions
        self.latent_dim_vf = value_arch[-1]

    # ------------------------------------------------------------ pieces
    def _piece(self, obs: torch.Tensor, name: str) -> torch.Tensor:
        """Piece ``name`` of a batch of observations, flat (``[B, length]``)."""
        return obs[:, self.layout.slice(name)]

    def _seat(self, obs: torch.Tensor, seat: int | None) -> dict[str, torch.Tensor]:
        b = obs.shape[0]
        if seat is None:
            empty = obs.new_zeros((b, 4, CARD_SLOTS))
            empty[..., 13] = 1
            stock = obs.new_zeros((b, CARD_SLOTS))
            stock[:, 13] = 1
            return {"stock": stock, "tops": empty, "seconds": empty, "sizes": obs.new_zeros((b, 4))}
        return {
            "stock": self._piece(obs, f"seat{seat}.stock_top"),
            "tops": self._piece(obs, f"seat{seat}.discard_tops").reshape(b, 4, CARD_SLOTS),
            "seconds": self._piece(obs, f"seat{seat}.discard_seconds").reshape(b, 4, CARD_SLOTS),
            "sizes": self._piece(obs, f"seat{seat}.discard_sizes"),
        }

    def _chains(self, q: torch.Tensor, stock: torch.Tensor, avail: torch.Tensor, wilds: torch.Tensor) -> torch.Tensor:
        """Chain features (CHAIN_PIECE: gap one-hot, cover, short, reachable) from piles ``q`` [B, K, 12]
        to each of T targets (``stock`` [B, T, 14] the target card, ``avail`` [B, T, 12] the numbers
        at hand, ``wilds`` [B, T]): ``[B, K, T * 16]``, target by target. Every sum is of small
        whole numbers, so the values do not depend on how the piles and targets are batched."""
        b, k, t = q.shape[0], q.shape[1], stock.shape[1]
        to_gap = (stock @ self.gap).reshape(b, t, BUILD_SLOTS, GAP_CLASSES).transpose(1, 2)
        gap = torch.bmm(q, to_gap.reshape(b, BUILD_SLOTS, t * GAP_CLASSES)).reshape(b, k, t, GAP_CLASSES)
        need = (stock @ self.need).reshape(b, t, BUILD_SLOTS, BUILD_SLOTS)
        cover = torch.bmm(q, (need @ avail[..., None]).squeeze(-1).transpose(1, 2))  # [B, K, T]
        count = gap[..., :12] @ self.numbers
        short = torch.relu(count - cover - wilds[:, None, :])
        present = q.sum(-1)[..., None] * (1 - stock[:, None, :, 13])
        reachable = (short == 0).to(q.dtype) * present
        return torch.cat([gap, (cover / 12)[..., None], (short / 12)[..., None], reachable[..., None]],
                         dim=-1).reshape(b, k, -1)

    # ------------------------------------------------------------ forward
    def _state(self, obs: torch.Tensor) -> dict:
        """Per-state pieces shared by the action rows and the context: seats, piles, chain helper."""
        b = obs.shape[0]
        hand = self._piece(obs, "hand_counts")  # counts / 5
        build = self._piece(obs, "building_values").reshape(b, 4, BUILD_SLOTS)
        own = self._seat(obs, 0)
        opp = self._seat(obs, 1)  # the next player: an opponent in every game
        mate = self._seat(obs, self.partner)

        def numbers(tops: torch.Tensor) -> torch.Tensor:
            return tops[..., :12].sum(1)

        hand_has = (hand[:, :12] > 0).to(obs.dtype)
        stock = torch.stack([own["stock"], opp["stock"], mate["stock"]], dim=1)
        avail = torch.stack([torch.clamp(hand_has + numbers(own["tops"]), max=1),
                             torch.clamp(numbers(opp["tops"]), max=1), torch.clamp(numbers(mate["tops"]), max=1)], dim=1)
        wilds = torch.stack([hand[:, 12] * 5 + own["tops"][..., 12].sum(1), opp["tops"][..., 12].sum(1),
                             mate["tops"][..., 12].sum(1)], dim=1)
        # the piles as they are (the context) and each raised by one (a play on it: the action rows)
        after_now = torch.roll(build, 1, dims=-1)  # a legal play raises a pile by one; 12 completes it (0)
        chains = self._chains(torch.cat([build, after_now], dim=1), stock, avail, wilds)
        context_in = torch.cat([obs, chains[:, :4].reshape(b, -1)], dim=1)
        return {"b": b, "hand": hand, "build": build, "own": own, "mate": mate, "after_now": after_now,
                "after_chains": chains[:, 4:], "context_in": context_in}

    def _tables(self, obs: torch.Tensor, st: dict) -> dict[str, torch.Tensor]:
        """Per-state tables that the action rows gather from (one row per card source, pile, ...)."""
        b, hand, build, own, mate = st["b"], st["hand"], st["build"], st["own"], st["mate"]
        zeros1 = obs.new_zeros((b, 1, CARD_SLOTS))
        piles = torch.cat([build, st["after_now"], st["after_chains"]], dim=-1)
        hand_pad = torch.cat([hand, obs.new_zeros((b, 1))], dim=1)
        bridge = torch.clamp(torch.bmm(build, (own["stock"] @ self.need).reshape(b, BUILD_SLOTS, BUILD_SLOTS)).sum(1),
                             max=1)
        fits = torch.clamp(build.sum(1), max=1)
        pad2 = obs.new_zeros((b, 2))
        return {
            "cards": torch.cat([zeros1, self.slots[None].expand(b, -1, -1), own["stock"][:, None], own["tops"],
                                mate["stock"][:, None], mate["tops"]], dim=1),  # [B, 24, 14] by card_row
            "piles": torch.cat([piles, obs.new_zeros((b, 1, piles.shape[-1]))], dim=1),  # [B, 5, 72] by pile_row
            "tops": torch.cat([own["tops"], zeros1], dim=1),  # [B, 5, 14] by disc_row
            "seconds": torch.cat([own["seconds"], zeros1], dim=1),
            "sizes": torch.cat([own["sizes"], obs.new_zeros((b, 1))], dim=1),  # [B, 5]
            "src_seconds": torch.cat([own["seconds"], mate["seconds"], zeros1], dim=1),  # [B, 9, 14] by src_row
            "src_sizes": torch.cat([own["sizes"], mate["sizes"], obs.new_zeros((b, 1))], dim=1),  # [B, 9]
            "per_card": torch.stack([hand_pad, torch.cat([bridge, pad2], dim=1),
                                     torch.cat([fits, obs.new_ones((b, 1)), obs.new_zeros((b, 1))], dim=1)],
                                    dim=-1),  # [B, 14, 3] by value_row
        }

    def _action_rows(self, obs: torch.Tensor, st: dict) -> torch.Tensor:
        """The [B, actions, 144] feature rows of ACTION_PIECES (the reference form; the forward pass
        uses :meth:`_action_in`, which never builds them)."""
        b = st["b"]
        return self._rows_of(self._tables(obs, st), torch.arange(b)[:, None], torch.arange(self.n_actions)[None, :])

    def _rows_of(self, t: dict[str, torch.Tensor], rows: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """The feature row of action ``actions[...]`` in state ``rows[...]`` (broadcast together) from
        the per-state tables ``t`` (:meth:`_tables`): ``[*shape, 144]``."""
        card = t["cards"][rows, self.card_row[actions]]
        disc = self.disc_row[actions]
        tops = t["tops"][rows, disc]
        relation = ((card @ self.rel.reshape(CARD_SLOTS, -1)).reshape(*card.shape[:-1], CARD_SLOTS, 4)
                    * tops[..., None]).sum(-2)
        src = self.src_row[actions]
        return torch.cat([
            self.kind[actions].expand(*card.shape[:-1], -1), card, t["piles"][rows, self.pile_row[actions]], tops,
            t["seconds"][rows, disc], t["sizes"][rows, disc][..., None], relation, t["src_seconds"][rows, src],
            t["src_sizes"][rows, src][..., None], t["per_card"][rows, self.value_row[actions]],
        ], dim=-1)

    def _action_in(self, obs: torch.Tensor, st: dict) -> torch.Tensor:
        """``action_in(_action_rows(...))`` [B, actions, hidden] without building the rows.

        The rows are gathers of small per-state tables (``X[:, row]``), and a linear map of a
        gather is the gather of the linear map: ``X[:, row] @ W == (X @ W)[:, row]``. So each
        table is projected first (a few rows instead of one per action, :meth:`_projected`), and
        the projections of each action's table rows (:func:`_selection`, :func:`_picks`) are
        summed: the same function (equal up to float rounding; the tests compare both forms),
        forward and backward much cheaper than building the [B, actions, 144] rows.

        The rows are added one by one in increasing row order, the order in which the product
        with the 0/1 selection matrix adds them (``tests/test_policy.py`` checks that the numbers
        are the same to the bit), for a tenth of the product's work.
        """
        projected, constant = self._projected(obs, st)
        projected = torch.cat([projected, projected.new_zeros((st["b"], 1, projected.shape[-1]))], dim=1)
        total = projected.index_select(1, self.picks[0])
        for pick in self.picks[1:]:
            total = total + projected.index_select(1, pick)
        return total + constant

    def _projected(self, obs: torch.Tensor, st: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """The per-state tables projected by ``action_in``'s weights ([B, table rows, hidden], the
        rows that :func:`_selection` numbers) and the part of every action's pre-activation that
        is the same in every state (its ``kind`` columns and the bias, [actions, hidden])."""
        b = st["b"]
        t = self._tables(obs, st)
        w = self.action_in.weight.t()  # [144, hidden], rows in ACTION_PIECES order
        cut = dict(zip(("kind", "card", "pile", "disc", "relation", "src", "per_card"),
                       torch.split(w, list(GROUP_WIDTHS)), strict=True))
        disc = torch.cat([t["tops"], t["seconds"], t["sizes"][..., None]], dim=-1)
        # relation of a discard of card slot v on own pile d: REL[v, top of d]
        relation = torch.einsum("bdt,vtr->bdvr", t["tops"][:, :4], self.rel[:13]).reshape(b, 52, 4)
        src = torch.cat([t["src_seconds"], t["src_sizes"][..., None]], dim=-1)
        projected = torch.cat([
            t["cards"] @ cut["card"], t["piles"] @ cut["pile"], disc @ cut["disc"], relation @ cut["relation"],
            src @ cut["src"], t["per_card"] @ cut["per_card"],
        ], dim=1)
        return projected, self.kind @ cut["kind"] + self.action_in.bias

    def pair_logits(self, obs: torch.Tensor, rows: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """The logits of action ``actions[k]`` in observation ``rows[k]`` only ([L]), for the cost of
        L action rows instead of B * actions (a player needs its legal actions' logits only).

        :meth:`_action_rows` (the reference form) built for those pairs alone: the forward pass's
        logits at those entries, equal up to float rounding."""
        return self._pairs(obs, self._state(obs), rows, actions)

    def _pairs(self, obs: torch.Tensor, st: dict, rows: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """:meth:`pair_logits` from the per-state pieces ``st`` (:meth:`_state`)."""
        row = self._rows_of(self._tables(obs, st), rows, actions)
        context = self.context_in(self.context(st["context_in"]))
        return self.scorer(self.act(self.action_in(row) + context[rows])).squeeze(-1)

    def masked_forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits [B, actions], context input) with only the legal actions of ``mask`` ([B, actions],
        bool) scored: the forward pass's logits at the legal entries (equal up to float rounding) and
        0 elsewhere, where the policy's masking puts its large negative logit anyway. The same
        distribution and the same gradients as the full pass for a fraction of its cost (a position
        has a handful of legal actions out of 125): what :class:`ScorerPolicy` uses in training (rollouts, PPO
        updates, behaviour cloning); :class:`~skipbo_env.agents.ppo.PPOAgent` keeps the full pass."""
        st = self._state(obs)
        rows, actions = torch.nonzero(mask, as_tuple=True)
        pairs = self._pairs(obs, st, rows, actions)
        return obs.new_zeros(mask.shape).index_put((rows, actions), pairs), st["context_in"]

    def features(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(action rows [B, actions, 144], context input [B, obs + 4 * 48]) of a batch of observations."""
        st = self._state(obs)
        return self._action_rows(obs, st), st["context_in"]

    def _logits(self, action_in: torch.Tensor, context_in: torch.Tensor) -> torch.Tensor:
        """Logits from ``action_in`` (:meth:`_action_in`, [B, actions, hidden]) and the context input."""
        hidden = self.act(action_in + self.context_in(self.context(context_in))[:, None, :])
        return self.scorer(hidden).squeeze(-1)

    def reference_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """The logits computed the long way, from the full feature rows (tests compare it with the forward pass)."""
        action, context_in = self.features(obs)
        return self._logits(self.action_in(action), context_in)

    def forward_actor(self, obs: torch.Tensor) -> torch.Tensor:
        st = self._state(obs)
        return self._logits(self._action_in(obs, st), st["context_in"])

    def forward_critic(self, obs: torch.Tensor) -> torch.Tensor:
        return self.value(self._state(obs)["context_in"])  # no action rows: the value needs none

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        st = self._state(obs)
        context_in = st["context_in"]
        return self._logits(self._action_in(obs, st), context_in), self.value(context_in)


class ScorerPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy whose logits come from :class:`ActionScorer` (no final dense action layer)."""

    # sb3 declares MlpExtractor; any module with latent_dim_pi/vf and forward_actor/critic serves
    mlp_extractor: ActionScorer  # type: ignore[assignment]

    def __init__(self, observation_space, action_space, lr_schedule, context_arch=(256,), scorer_arch=(64, 32),
                 value_arch=(256, 256), activation_fn: type[nn.Module] = nn.ReLU,
                 features_version: int = FEATURES_VERSION, **kwargs):
        if features_version != FEATURES_VERSION:
            raise ValueError(f"this checkpoint's scorer policy was trained on features version {features_version}; "
                             f"this code computes version {FEATURES_VERSION}")
        self.context_arch = tuple(context_arch)
        self.scorer_arch = tuple(scorer_arch)
        self.value_arch = tuple(value_arch)
        super().__init__(observation_space, action_space, lr_schedule, activation_fn=activation_fn, **kwargs)

    def _build_mlp_extractor(self) -> None:
        obs_space, action_space = self.observation_space, self.action_space
        if not isinstance(obs_space, spaces.Box) or not isinstance(action_space, spaces.Discrete):
            raise TypeError(f"the scorer policy reads a Box observation and a Discrete action space, "
                            f"not {obs_space} and {action_space}")
        self.mlp_extractor = ActionScorer(
            int(np.prod(obs_space.shape)), int(action_space.n), self.context_arch,
            self.scorer_arch, self.value_arch, self.activation_fn,
        )

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the scorer's output already is one logit per action
        last = self.mlp_extractor.scorer[-1]
        assert isinstance(last, nn.Linear)  # the scorer ends in a Linear (ActionScorer.__init__)
        nn.init.orthogonal_(last.weight, gain=0.01)
        nn.init.zeros_(last.bias)
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]  # a concrete optimizer (Adam): it takes lr
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _masked_logits(self, obs: torch.Tensor, action_masks) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """(logits [B, actions] with only the legal actions scored (:meth:`ActionScorer.masked_forward`),
        the mask as a bool tensor, the value input), or None without masks or where the features are
        not shared (then the caller takes the base class's path)."""
        if action_masks is None:
            return None
        features = self.extract_features(obs)
        if isinstance(features, tuple):
            return None
        mask = torch.as_tensor(action_masks, dtype=torch.bool, device=features.device).reshape(features.shape[0], -1)
        logits, context_in = self.mlp_extractor.masked_forward(features, mask)
        return logits, mask, context_in

    def forward(self, obs, deterministic: bool = False, action_masks=None):
        """Actions, values and log-probabilities; with masks, only the legal actions are scored.

        With masks, the action is drawn as sb3-contrib's masked distribution draws it, with the same
        tensor operations in the same order (so the same numbers and the same draws from torch's
        generator), without building its distribution objects (each checks its arguments: about a
        sixth of a rollout step's cost); ``tests/test_policy.py`` compares the two."""
        scored = self._scored(obs, action_masks)
        if scored is None:
            return super().forward(obs, deterministic, action_masks)
        log_p, _, context_in = scored
        probs = torch.softmax(log_p, dim=-1)
        if deterministic:
            actions = torch.argmax(probs, dim=1)
        else:
            actions = torch.multinomial(probs, 1, True).T.reshape(-1)
        log_prob = log_p.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        return actions, self.value_net(self.mlp_extractor.value(context_in)), log_prob

    def evaluate_actions(self, obs, actions, action_masks=None):
        """Values, log-probabilities and entropies (PPO's update); with masks, only the legal actions
        are scored, and the log-probabilities and entropies are sb3-contrib's masked distribution's,
        computed with its tensor operations in its order (the same numbers and gradients, to the
        bit, ``tests/test_policy.py``) without building the distribution objects."""
        scored = self._scored(obs, action_masks)
        if scored is None:
            return super().evaluate_actions(obs, actions, action_masks)
        log_p, mask, context_in = scored
        values = self.value_net(self.mlp_extractor.value(context_in))
        log_prob = log_p.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)
        p_log_p = torch.where(mask, log_p * torch.softmax(log_p, dim=-1), torch.tensor(0.0, device=log_p.device))
        return values, log_prob, -p_log_p.sum(-1)

    def _scored(self, obs: torch.Tensor, action_masks) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """(log-probabilities [B, actions], mask, value input) from :meth:`_masked_logits`, or None.
        The log-probabilities are those of sb3-contrib's ``MaskableCategorical``:
        its constructor normalises the logits, ``apply_masking`` puts -1e8 on the illegal actions
        of the normalised logits, and ``Categorical`` normalises again."""
        scored = self._masked_logits(obs, action_masks)
        if scored is None:
            return None
        logits, mask, context_in = scored
        first = logits - logits.logsumexp(dim=-1, keepdim=True)
        masked = torch.where(mask, first, torch.tensor(-1e8, dtype=first.dtype, device=first.device))
        return masked - masked.logsumexp(dim=-1, keepdim=True), mask, context_in

    def get_distribution(self, obs, action_masks=None):
        """The action distribution; with masks, only the legal actions are scored."""
        scored = self._masked_logits(obs, action_masks)
        if scored is None:
            return super().get_distribution(obs, action_masks)
        logits, mask, _ = scored
        distribution = self._get_action_dist_from_latent(logits)
        distribution.apply_masking(mask)
        return distribution

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data.update(context_arch=self.context_arch, scorer_arch=self.scorer_arch, value_arch=self.value_arch,
                    features_version=FEATURES_VERSION)
        return data
