"""Play, watch and replay Skip-Bo in the browser (``skipbo-web``, ``python -m skipbo_env.web``).

A consumer of the lower layers: legality from the rules, agents from
:func:`skipbo_env.agents.load_agent`, moves through the one game loop
(:class:`skipbo_env.episode.GameLoop`), records as
:class:`skipbo_env.records.GameRecord`. See docs/web.md.
"""

from ..extras import require

require("web", "the web app (skipbo-web)", "starlette", "uvicorn")

from .app import WebApp, create_app  # noqa: E402

__all__ = ["WebApp", "create_app"]
