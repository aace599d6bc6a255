"""Play, watch and replay Skip-Bo in the browser (``skipbo-web``, ``python -m skipbo_env.web``).

A consumer of the lower layers: legality from the rules, agents from
:func:`skipbo_env.agents.load_agent`, moves through :class:`skipbo_env.episode.GameLoop`, records
as :class:`skipbo_env.records.GameRecord`. Modules: :mod:`.app` (the Starlette app; the ``web``
extra), :mod:`.guard` (what every request must be), :mod:`.matches` (games in memory),
:mod:`.tables` (the JSON a seat sees), :mod:`.server` (uvicorn with bounds). This package's own
import needs no extra, so ``skipbo-web`` can say which one is missing. See docs/web.md.
"""
