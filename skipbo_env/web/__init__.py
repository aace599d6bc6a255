"""Play, watch and replay Skip-Bo in the browser (``skipbo-web``, ``python -m skipbo_env.web``).

A consumer of the lower layers: legality from the rules, agents from
:func:`skipbo_env.agents.load_agent`, moves through the one game loop
(:class:`skipbo_env.episode.GameLoop`), records as
:class:`skipbo_env.records.GameRecord`. See docs/web.md.

Modules: :mod:`~skipbo_env.web.app` (the Starlette app: ``WebApp``, ``create_app``; importing
it without the ``web`` extra raises :class:`~skipbo_env.extras.MissingExtraError`),
:mod:`~skipbo_env.web.guard` (what every request must be), :mod:`~skipbo_env.web.matches`
(games in memory), :mod:`~skipbo_env.web.tables` (the JSON a seat sees),
:mod:`~skipbo_env.web.server` (uvicorn with timeouts and a connection bound). This package's
own import needs no extra, so that ``skipbo-web`` can say which extra is missing.
"""
