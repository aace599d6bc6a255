"""Write the playthrough of ``python_skipbo`` with OpenSpiel's playthrough tool.

Run ``python tests/playthroughs/make_playthrough.py`` after a change of the OpenSpiel game that is
meant to change its playthrough; ``tests/test_openspiel.py`` checks that the file regenerates.
The game is the 2-player game with stocks of one card (a short game that ends with a win), the
random actions drawn from ``SEED``.
"""

from __future__ import annotations

from pathlib import Path

from open_spiel.python.algorithms import generate_playthrough

import skipbo_env.openspiel  # noqa: F401  (registers python_skipbo)

GAME = "python_skipbo(players=2,stock_size=1)"
SEED = 0
PATH = Path(__file__).resolve().parent / "python_skipbo.txt"


def playthrough_text() -> str:
    """The playthrough as OpenSpiel's tool writes it."""
    return generate_playthrough.playthrough(GAME, None, seed=SEED)


if __name__ == "__main__":
    PATH.write_text(playthrough_text())
    print(f"wrote {PATH}")
