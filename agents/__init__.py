"""``agents``: the repository's top-level name for :mod:`skipbo_env.agents`.

The agents' code lives in the installable package (``skipbo_env.agents``, and ``skipbo_env.bots``
for the scripted rules), so that nothing under ``skipbo_env`` imports this folder and a wheel does
not claim the bare name ``agents``. This package only re-exports them under the names scripts and
users of the repository already import (``agents.Agent``, ``agents.load_agent``,
``agents.tournament``, ``agents.ppo``, ``agents.report``, ...). See docs/architecture.md.
"""

from __future__ import annotations

import sys

from skipbo_env.agents import *  # noqa: F403 - the re-export is this package's purpose
from skipbo_env.agents import __all__ as __all__
from skipbo_env.agents import ppo, registry, report, tournament
from skipbo_env.bots import base, heuristic

for _name, _module in {
    "base": base,
    "heuristic": heuristic,
    "ppo": ppo,
    "registry": registry,
    "report": report,
    "tournament": tournament,
}.items():
    sys.modules[f"{__name__}.{_name}"] = _module  # ``import agents.tournament`` is skipbo_env.agents.tournament
