"""The action-scoring network in plain torch: observation vectors (and masks) in, logits and values out.

:class:`ScorerNet` is the whole actor-critic, for any training loop; :class:`ActionScorer` is its
body (the features and the action scores), which the SB3 policy
(:class:`~skipbo_env.agents.scorer.ScorerPolicy`) wraps. Every action's logit comes from its own
feature row (:data:`~skipbo_env.nets.scorer_features.ACTION_PIECES`) and a context of the
observation, through one shared network; the value is an MLP over the observation and the piles'
chain features. docs/training.md ("The policy network") describes it.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from ..encoding import num_actions
from ..observations.v1 import BUILD_SLOTS, CARD_SLOTS, observation_layout
from ..rules import GameConfig
from .scorer_features import (
    FEATURES_VERSION,
    GAP_CLASSES,
    GROUP_WIDTHS,
    PILE_FEATURES,
    action_tables,
    chain_tables,
    game_of_spaces,
    pick_rows,
    relation_table,
    selection_matrix,
)

MASKED_LOGIT = -1e8
"""The logit :class:`ScorerNet` gives an illegal action: after the softmax its probability is 0 in float32."""
DEFAULT_SIZES: dict[str, tuple[int, ...]] = {"context_arch": (256, 256), "scorer_arch": (64, 32),
                                             "value_arch": (256, 256)}
"""The layer sizes of the shipped scorer agents (``ppo-2p``, ``ppo-2p-plus``, ...)."""


def _mlp(sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), activation()]
    return nn.Sequential(*layers)


class ActionScorer(nn.Module):
    """The network's body: one logit per action (:meth:`forward_actor`) and the value head's input
    (:meth:`forward_critic`) from a batch of observation vectors; :class:`ScorerNet` adds the value head."""

    PILE_FEATURES = PILE_FEATURES

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
        gap, need = chain_tables()
        # laid out [target slot, pile value * class] so that one matmul applies them to a batch of targets
        self.register_buffer("gap", torch.as_tensor(gap.transpose(1, 0, 2).reshape(CARD_SLOTS, -1)), persistent=False)
        self.register_buffer("need", torch.as_tensor(need.transpose(1, 0, 2).reshape(CARD_SLOTS, -1)), persistent=False)
        self.register_buffer("numbers", torch.arange(12, dtype=torch.float32), persistent=False)
        self.register_buffer("rel", torch.as_tensor(relation_table()), persistent=False)
        self.register_buffer("slots", torch.eye(CARD_SLOTS)[:13], persistent=False)
        tables = action_tables(n_actions)
        for name, table in tables.items():
            self.register_buffer(name, torch.as_tensor(table), persistent=False)
        select = selection_matrix(tables)
        self.register_buffer("select", torch.as_tensor(select), persistent=False)
        self.register_buffer("picks", torch.as_tensor(pick_rows(select)), persistent=False)
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

    def init_output_layer(self) -> None:
        """Start the scorer's last layer near zero (orthogonal, gain 0.01; bias 0), so that a fresh
        network's policy is about uniform over the legal actions."""
        last = self.scorer[-1]
        assert isinstance(last, nn.Linear)  # the scorer ends in a Linear (__init__)
        nn.init.orthogonal_(last.weight, gain=0.01)
        nn.init.zeros_(last.bias)

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
                             torch.clamp(numbers(opp["tops"]), max=1),
                             torch.clamp(numbers(mate["tops"]), max=1)], dim=1)
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
        the projections of each action's table rows (:func:`~skipbo_env.nets.scorer_features.selection_matrix`,
        :func:`~skipbo_env.nets.scorer_features.pick_rows`) are
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
        rows that :func:`~skipbo_env.nets.scorer_features.selection_matrix` numbers) and the part of
        every action's pre-activation that is the same in every state (its ``kind`` columns and the
        bias, [actions, hidden])."""
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
        has a handful of legal actions out of 125): what :class:`ScorerNet` and the SB3 policy use in training
        (rollouts, PPO updates, behaviour cloning); the trained agents' play keeps the full pass."""
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

    def forward_actor(self, obs: torch.Tensor) -> torch.Tensor:
        st = self._state(obs)
        return self._logits(self._action_in(obs, st), st["context_in"])

    def forward_critic(self, obs: torch.Tensor) -> torch.Tensor:
        return self.value(self._state(obs)["context_in"])  # no action rows: the value needs none

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        st = self._state(obs)
        context_in = st["context_in"]
        return self._logits(self._action_in(obs, st), context_in), self.value(context_in)



def _sizes(name: str, value: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """A layer-size argument as a tuple of positive ints; a ValueError naming ``name`` otherwise."""
    sizes = tuple(value) if isinstance(value, (tuple, list)) else ()
    if not sizes or not all(type(w) is int and w > 0 for w in sizes):
        raise ValueError(f"{name}: must be a non-empty list of positive layer widths, got {value!r}")
    return sizes


class ScorerNet(nn.Module):
    """The action-scoring actor-critic: ``logits, values = net(obs, mask)``.

    ``obs`` is a batch of observation vectors ``[B, obs_dim]`` (float32, the env's ``observation``);
    ``mask`` the legal actions ``[B, n_actions]`` (bool or 0/1, the env's ``action_mask``). Built for
    a table by :meth:`for_game`; the weights start as the SB3 policy's do (orthogonal, the last
    scoring layer near zero). Loading an agent file's weights into it, and writing it as one:
    :func:`skipbo_env.agents.agentfile.load_scorer_net`, :func:`~skipbo_env.agents.agentfile.write_scorer_net`.
    """

    features_version = FEATURES_VERSION
    """The feature computation the weights are trained on (agent files record it)."""

    def __init__(self, obs_dim: int, n_actions: int, context_arch: tuple[int, ...] = DEFAULT_SIZES["context_arch"],
                 scorer_arch: tuple[int, ...] = DEFAULT_SIZES["scorer_arch"],
                 value_arch: tuple[int, ...] = DEFAULT_SIZES["value_arch"],
                 activation: type[nn.Module] = nn.ReLU) -> None:
        super().__init__()
        self.context_arch = _sizes("context_arch", context_arch)
        self.scorer_arch = _sizes("scorer_arch", scorer_arch)
        self.value_arch = _sizes("value_arch", value_arch)
        self.activation = activation
        self.body = ActionScorer(obs_dim, n_actions, self.context_arch, self.scorer_arch, self.value_arch, activation)
        self.value_head = nn.Linear(self.value_arch[-1], 1)
        self.obs_dim, self.n_actions = obs_dim, n_actions
        self.reset_parameters()

    @classmethod
    def for_game(cls, config: GameConfig, **kwargs) -> ScorerNet:
        """A network for ``config``'s table (its observation size and action count); ``kwargs`` go
        to the constructor (``context_arch``, ``scorer_arch``, ``value_arch``, ``activation``)."""
        return cls(observation_layout(config).size, num_actions(config), **kwargs)

    def reset_parameters(self) -> None:
        """Orthogonal weights (gain √2 in the body, 1 for the value head) and zero biases, then the
        scorer's last layer near zero (:meth:`ActionScorer.init_output_layer`)."""
        for module in self.body.modules():
            if isinstance(module, nn.Linear):
                nn.init.orthogonal_(module.weight, gain=math.sqrt(2))
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        nn.init.orthogonal_(self.value_head.weight, gain=1.0)
        nn.init.zeros_(self.value_head.bias)
        self.body.init_output_layer()

    def forward(self, obs: torch.Tensor, mask: torch.Tensor | np.ndarray | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits ``[B, n_actions]``, values ``[B]``). With ``mask`` only the legal actions are
        scored (:meth:`ActionScorer.masked_forward`) and every illegal one gets :data:`MASKED_LOGIT`,
        so ``torch.distributions.Categorical(logits=logits)`` never draws it; every row needs a
        legal action. Without it every action is scored (no masking)."""
        if mask is None:
            logits, latent = self.body(obs)
        else:
            legal = torch.as_tensor(mask, device=obs.device).to(torch.bool)
            if legal.shape != (obs.shape[0], self.n_actions):
                raise ValueError(f"mask: expected shape {(obs.shape[0], self.n_actions)}, got {tuple(legal.shape)}")
            if not bool(legal.any(dim=-1).all()):
                raise ValueError("mask: a row has no legal action (is that seat to move?)")
            scored, context_in = self.body.masked_forward(obs, legal)
            logits = torch.where(legal, scored, torch.tensor(MASKED_LOGIT, dtype=scored.dtype, device=scored.device))
            latent = self.body.value(context_in)
        return logits, self.value_head(latent).squeeze(-1)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """The values ``[B]`` alone (no action is scored)."""
        return self.value_head(self.body.forward_critic(obs)).squeeze(-1)
