"""Recipes that read top to bottom, one file each (``python -m skipbo_env.recipes.NAME --help``).

The PPO recipes train the action-scoring network (:class:`skipbo_env.nets.ScorerNet`) in one RL
library's own API each and write an agent file: :mod:`.cleanrl_ppo` (CleanRL's single-file style,
on the compiled vector env), :mod:`.tianshou_ppo` and :mod:`.torchrl_ppo`; :mod:`.common` holds
what they share. :mod:`.openspiel_ismcts` plays OpenSpiel's search bots against the package's
agents; :mod:`.record_video` records a game as a video. A recipe whose extra is missing stops
with one line naming it. See docs/pipelines.md.
"""

import sys
from types import TracebackType

from ..extras import missing_extra_line


def _one_line_for_a_missing_extra(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """``python -m skipbo_env.recipes.NAME``: a missing extra is one line on stderr (exit 1), not a traceback."""
    line = missing_extra_line(exc, f"python -m {sys.argv[0].rsplit('/', 1)[-1].removesuffix('.py')}") \
        if isinstance(exc, ImportError) else None
    if line is None:
        sys.__excepthook__(kind, exc, tb)
    else:
        print(line.replace("python -m ", "python -m skipbo_env.recipes.", 1), file=sys.stderr)


if sys.argv[:1] == ["-m"]:  # this process runs a module of this package with python -m
    sys.excepthook = _one_line_for_a_missing_extra
