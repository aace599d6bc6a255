"""Recipes that read top to bottom, one file each, on the package's public pieces
(``python -m skipbo_env.recipes.NAME --help`` lists a recipe's settings).

The PPO recipes train the action-scoring network (:class:`skipbo_env.nets.ScorerNet`) in one RL
library's own API each, with the legal-action masks respected, and write an agent file that
``load_agent`` and ``skipbo evaluate`` play:

* :mod:`.cleanrl_ppo`: PPO written out in the style of CleanRL's single-file scripts, on the compiled
  vector env (``SkipBo-v0``'s vector entry point), scripted or self-play opponents;
* :mod:`.tianshou_ppo`: Tianshou 2's PPO, collector and trainer on ``SkipBo-v0`` envs (the ``tianshou`` extra);
* :mod:`.torchrl_ppo`: TorchRL's Gymnasium wrapper, collector, GAE and clipped PPO loss on ``SkipBo-v0`` envs
  (the ``torchrl`` extra);
* :mod:`.common`: what they share (the settings, the command line, the run folder, evaluations and
  progress lines).

:mod:`.openspiel_ismcts` plays OpenSpiel's search bots against the package's agents (the ``openspiel`` extra);
:mod:`.record_video` records a game as a video (the ``render`` extra). Run with ``python -m``, a recipe whose
extra is missing stops with one line naming it.
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
