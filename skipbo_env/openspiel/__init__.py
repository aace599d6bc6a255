"""Skip-Bo as an OpenSpiel game (the ``openspiel`` extra): ``python_skipbo``.

Importing this package registers the game with ``pyspiel``::

    import pyspiel
    import skipbo_env.openspiel  # registers "python_skipbo"

    game = pyspiel.load_game("python_skipbo", {"players": 3})
    state = game.new_initial_state()

The game is the rules core (:class:`skipbo_env.rules.GameState`) seen through OpenSpiel's
interface: action ids are the project's (``docs/actions.md``), every card dealt or drawn is an
explicit chance node, rewards are the project's terminal rewards, and the observer writes the
project's observation vector (:func:`skipbo_env.encoding.encode_view`). ``docs/openspiel.md``
describes the parameters, the chance nodes and the tensors.
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
