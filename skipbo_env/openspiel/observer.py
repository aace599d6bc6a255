"""The observer of ``python_skipbo`` (OpenSpiel's observer API: ``make_py_observer``).

The tensor is the project's observation vector of the seat's view (``v1`` unless the parameters
name another observation), its ``dict`` a view per named piece; the information-state tensor is
the same vector. The observation string is the seat's view in one line; the information-state
string adds the history the seat saw (perfect recall). ``private_info`` and ``public_info`` keep
the own hand and the rest of the table; ``ALL_PLAYERS`` raises ``ValueError``. See
docs/openspiel.md ("Observations and information states").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from ..observations import DEFAULT_OBSERVATION, observation_spec
from ..rules import GameConfig, SeatView, card_name

PRIVATE_PIECES = ("hand_counts",)
"""The pieces of the observation vector only the observing seat sees; the others are public."""


def view_string(view: SeatView, private: bool = True, public: bool = True) -> str:
    """One line of ``view``, seats in absolute order: the observing seat and its hand
    (``private``) and the table (``public``)."""
    parts = []
    if private:
        parts += [f"seat {view.seat}", "hand " + (" ".join(card_name(c) for c in view.hand) or "-")]
    if not public:
        return " | ".join(parts)
    parts += [
        f"turn {view.turn} to_move {view.current_player}",
        "building " + " ".join(str(v) for v in view.building_values),
        f"draw {view.draw_size} completed {view.completed_size}",
    ]
    for s in range(view.config.num_players):
        top = view.stock_tops[s]
        piles = "/".join(" ".join(card_name(c) for c in p) or "-" for p in view.discard_piles[s])
        parts.append(
            f"s{s} stock {card_name(top) if top is not None else '-'}x{view.stock_sizes[s]} "
            f"hand {view.hand_sizes[s]} discards {piles}"
        )
    if view.winner is not None:
        parts.append(f"winner {view.winner}")
    elif view.truncated:
        parts.append("truncated")
    return " | ".join(parts)


class SkipBoObserver:
    """One seat's observation (or information state) of a ``python_skipbo`` state.

    ``iig_obs_type`` picks the pieces: ``private_info=SINGLE_PLAYER`` the own hand,
    ``public_info`` the table (everything else), ``perfect_recall`` adds the history to the
    string. The default is the seat's full observation. ``params`` may name the observation
    (``{"observation": "v1"}``, the default); an unknown name raises ``ConfigError``.
    """

    def __init__(self, config: GameConfig, iig_obs_type: Any = None, params: Any = None) -> None:
        params = dict(params or {})
        unknown = sorted(str(k) for k in params if k != "observation")
        if unknown:
            raise ValueError(f"python_skipbo observers take one parameter, 'observation'; got {unknown}")
        spec = observation_spec(params.get("observation", DEFAULT_OBSERVATION))
        self.observation: str = spec.name
        self._encode = spec.encode
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if iig_obs_type.private_info == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("python_skipbo observers show one seat's private cards, not all (ALL_PLAYERS)")
        self.private: bool = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.public: bool = iig_obs_type.public_info
        self.perfect_recall: bool = iig_obs_type.perfect_recall
        layout = spec.layout(config)
        self._slices = [
            layout.slice(name) for name, _, _ in layout.pieces
            if (self.private if name in PRIVATE_PIECES else self.public)
        ]
        names = [name for name, _, _ in layout.pieces if (self.private if name in PRIVATE_PIECES else self.public)]
        self.tensor = np.zeros(sum(sl.stop - sl.start for sl in self._slices), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        whole = np.zeros(layout.size, np.float32)
        offset = 0
        for name, sl in zip(names, self._slices, strict=True):
            length = sl.stop - sl.start
            shape = layout.view(whole, name).shape  # the piece's shape
            self.dict[name] = self.tensor[offset : offset + length].reshape(shape)
            offset += length

    def set_from(self, state: Any, player: int) -> None:
        """Write ``player``'s view of ``state`` into :attr:`tensor` (zeros during the deal)."""
        gs = state.game_state
        if gs is None:
            self.tensor.fill(0.0)
            return
        vec = self._encode(gs.view(player))
        if self.tensor.size == vec.size:  # every piece
            self.tensor[:] = vec
        elif self._slices:
            self.tensor[:] = np.concatenate([vec[sl] for sl in self._slices])

    def string_from(self, state: Any, player: int) -> str:
        """``player``'s observation string, or its information-state string with ``perfect_recall``."""
        gs = state.game_state
        if gs is None:
            text = f"seat {player} | {state}" if self.private else str(state)
        else:
            text = view_string(gs.view(player), self.private, self.public)
        if not self.perfect_recall:
            return text
        return text + " || " + " ".join(state.history_tokens(player, private=self.private))
