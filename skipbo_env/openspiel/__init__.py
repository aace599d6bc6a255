"""Skip-Bo as an OpenSpiel game (the ``openspiel`` extra): ``python_skipbo``.

Importing this package registers the game with ``pyspiel``
(``pyspiel.load_game("python_skipbo", {"players": 3})``). The game is the rules core seen through
OpenSpiel's interface: the project's action ids, every card dealt or drawn an explicit chance
node, the project's terminal rewards, and the project's observation vector from the observer.
``docs/openspiel.md`` describes the parameters, the chance nodes and the tensors.
"""

from __future__ import annotations

from ..extras import require

require("openspiel", "the OpenSpiel game (skipbo_env.openspiel)", "pyspiel")

from .bots import SkipBoBot  # noqa: E402  (after the extra check: these modules import pyspiel)
from .game import (  # noqa: E402
    CHANCE_CARD_OFFSET,
    CHANCE_SEAT_OFFSET,
    GAME_TYPE,
    SkipBoGame,
    SkipBoState,
    config_from_params,
)
from .observer import SkipBoObserver  # noqa: E402

__all__ = [
    "CHANCE_CARD_OFFSET",
    "CHANCE_SEAT_OFFSET",
    "GAME_TYPE",
    "SkipBoBot",
    "SkipBoGame",
    "SkipBoObserver",
    "SkipBoState",
    "config_from_params",
]
