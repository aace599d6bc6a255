"""The web app: a Starlette application serving the page and a small JSON API.

The API (``/api/agents``, ``/api/games``, ``/api/games/{id}``, its ``move``, ``next`` and
``record``, ``/api/replay``, ``/api/records``) is listed in docs/web.md ("The API"). Every request
passes :class:`~skipbo_env.web.guard.RequestGuard` first; no answer holds what the asking seat
may not see (tables from its view, the record only once the game is over, a drawn seed only
once the match is over). The rules' legal-move list is the authority: the page sends back a
move id. Watch mode advances only when asked (``advance``, up to 50 moves).
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..extras import require

require("web", "the web app (skipbo-web)", "starlette", "uvicorn")

from starlette.applications import Starlette  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.requests import ClientDisconnect, Request  # noqa: E402
from starlette.responses import FileResponse, JSONResponse, Response  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402
from starlette.staticfiles import StaticFiles  # noqa: E402

from ..agents import SHIPPED_PLAYERS, agent_label, known_agents, load_agent  # noqa: E402
from ..agents.registry import is_search_spec  # noqa: E402
from ..bots import BOTS  # noqa: E402
from ..files import FileReadError, is_regular_file  # noqa: E402
from ..records import GameRecord  # noqa: E402
from ..rules import GameConfig, SkipBoError  # noqa: E402
from ..rules.scoring import MATCH_TARGET  # noqa: E402
from .guard import RequestGuard  # noqa: E402
from .matches import HUMAN, SECRET_BITS, GameStore, WebError, WebGame  # noqa: E402
from .tables import replay_json  # noqa: E402

STATIC = Path(__file__).parent / "static"
MAX_BODY = 16 * 1024 * 1024
"""Largest request body (a record file) in bytes."""
MAX_SEED = 2**63 - 1
LOG = logging.getLogger("skipbo_env.web")


def _named_files(paths: Sequence[Path], patterns: Sequence[str], what: str) -> list[Path]:
    """Each named regular file, and the regular files matching ``patterns`` in each named folder;
    a path that is neither (missing, a pipe, a device) is a :class:`FileReadError` naming it."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += [p for pattern in patterns for p in sorted(path.glob(pattern)) if is_regular_file(p)]
        elif is_regular_file(path):
            found.append(path)
        elif path.exists():
            raise FileReadError(path, f"is not a regular file; a {what} must be a file or a folder of them")
        else:
            raise FileReadError(path, f"no such {what} or folder")
    return found


def agent_files(paths: Sequence[Path], allow_pickle: bool) -> list[Path]:
    """Agent files: each named file, and in each named folder its ``*.safetensors`` files (and
    ``*.zip`` checkpoints with ``allow_pickle``)."""
    return _named_files(paths, ["*.safetensors", *(["*.zip"] if allow_pickle else [])], "agent file")


def record_files(paths: Sequence[Path]) -> list[Path]:
    """Record files: each named file, and the ``*.json`` files of each named folder."""
    return _named_files(paths, ["*.json"], "record file")


def unicode_problem(data: Any) -> bool:
    """Whether a parsed JSON value holds text that is not Unicode (a lone surrogate such as ``"\\ud800"``)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack += item.keys()
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return False


class JSON(JSONResponse):
    """A JSON response in ASCII: text from a file name or a record always encodes."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


class WebApp:
    """The app's settings and state; :attr:`app` is the ASGI application."""

    def __init__(
        self,
        agent_paths: Sequence[str | Path] = (),
        records: Sequence[str | Path] = (),
        allow_pickle: bool = False,
        max_games: int = 100,
        ttl: float = 1800.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.allow_pickle = allow_pickle
        self.store = GameStore(max_games, ttl, **({"clock": clock} if clock else {}))
        self.agents: dict[str, str] = {name: name for name in known_agents()}
        """Agent id on the page -> the spec given to load_agent: the names it knows (scripted and
        shipped agents), then the files named on the command line (a file whose name is taken,
        ``human`` included, gets a ``'``)."""
        for path in agent_files([Path(p) for p in agent_paths], allow_pickle):
            key = agent_label(str(path))
            while key in self.agents or key == HUMAN:
                key += "'"
            self.agents[key] = str(path)
        self.records = record_files([Path(p) for p in records])
        routes = [
            Route("/", self.index),
            Route("/api/agents", self.list_agents),
            Route("/api/games", self.create, methods=["POST"]),
            Route("/api/games/{gid}", self.poll),
            Route("/api/games/{gid}/move", self.move, methods=["POST"]),
            Route("/api/games/{gid}/next", self.next_game, methods=["POST"]),
            Route("/api/games/{gid}/record", self.record),
            Route("/api/replay", self.replay, methods=["POST"]),
            Route("/api/records", self.list_records),
            Route("/api/records/{n:int}", self.open_record),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]
        self.app = Starlette(
            routes=routes,
            middleware=[Middleware(RequestGuard)],
            exception_handlers={WebError: self._web_error, HTTPException: self._http_error,
                                Exception: self._server_error},
        )

    # ------------------------------------------------------------ errors and bodies
    @staticmethod
    async def _web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        return JSON({"error": exc.message}, status_code=exc.status)

    @staticmethod
    async def _http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return JSON({"error": str(exc.detail)}, status_code=exc.status_code)

    @staticmethod
    async def _server_error(request: Request, exc: Exception) -> Response:
        """A fault of the server (a bug): a JSON 500; the traceback goes to the log."""
        return JSON({"error": f"the server failed on this request ({type(exc).__name__})"}, status_code=500)

    @staticmethod
    async def _body(request: Request) -> Any:
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
            raise WebError(413, f"the request is larger than {MAX_BODY // 2**20} MiB")
        chunks, total = [], 0
        try:
            async for chunk in request.stream():
                total += len(chunk)
                if total > MAX_BODY:
                    raise WebError(413, f"the request is larger than {MAX_BODY // 2**20} MiB")
                chunks.append(chunk)
        except ClientDisconnect:
            raise WebError(400, "the client went away before sending the whole request") from None
        try:
            data = json.loads(b"".join(chunks).decode("utf-8") or "null")
        except (ValueError, RecursionError):
            raise WebError(400, "the request body is not valid JSON in UTF-8") from None
        if unicode_problem(data):
            raise WebError(400, "the request body holds text that is not Unicode (a lone surrogate escape)")
        return data

    @staticmethod
    def _object(data: Any, *allowed: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise WebError(400, "the request body must be a JSON object")
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise WebError(400, f"unknown field(s) {', '.join(map(repr, unknown))}; expected {', '.join(allowed)}")
        return data

    @staticmethod
    def _int_param(request: Request, name: str) -> int | None:
        text = request.query_params.get(name)
        if text is None or text == "":
            return None
        try:
            return int(text)
        except ValueError:
            raise WebError(400, f"{name} must be an integer, got {text[:40]!r}") from None

    # ------------------------------------------------------------ pages
    async def index(self, request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def list_agents(self, request: Request) -> Response:
        return JSON({
            "human": HUMAN,
            "agents": list(self.agents),
            "files": [a for a, spec in self.agents.items() if spec != a],
            "scripted": [a for a in self.agents if a in BOTS],
            "search": [a for a in self.agents if is_search_spec(a)],
            "trained": [a for a, spec in self.agents.items() if a not in BOTS and not is_search_spec(a)],
            "players": {a: SHIPPED_PLAYERS[a] for a in self.agents if a in SHIPPED_PLAYERS},
            "allow_pickle": self.allow_pickle,
            "max_games": self.store.max_games,
            "match_target": MATCH_TARGET,
        })

    # ------------------------------------------------------------ games
    async def create(self, request: Request) -> Response:
        data = self._object(await self._body(request), "seats", "partner", "short", "seed", "target")
        seats = self._seats(data.get("seats"))
        specs = [HUMAN if s == HUMAN else self.agents[s] for s in seats]
        partner, short = data.get("partner", False), data.get("short", False)
        if not isinstance(partner, bool) or not isinstance(short, bool):
            raise WebError(400, "partner and short must be true or false")
        seed = data.get("seed")
        chosen = seed is not None
        if not chosen:
            seed = secrets.randbits(SECRET_BITS)  # a key: the deals come from it by keyed_seed
        elif type(seed) is not int or not 0 <= seed <= MAX_SEED:
            raise WebError(400, f"seed must be an integer 0..2**63-1, got {seed!r}")
        target = data.get("target", MATCH_TARGET)
        if type(target) is not int or not 1 <= target <= 100_000:
            raise WebError(400, f"target must be an integer 1..100000 points, got {target!r}")
        try:
            config = GameConfig(num_players=len(specs), short_game=short, partner_game=partner)
        except SkipBoError as exc:
            raise WebError(400, str(exc)) from None
        self.store.room()

        def make() -> WebGame:
            game = WebGame(config, specs, self._load_agent, seed, target, seed_shown=chosen, labels=seats)
            self.store.add(game)
            return game

        game = await run_in_threadpool(make)
        links = [{"seat": s, "token": t, "url": f"/#play/{game.id}/{s}/{t}"} for s, t in game.tokens.items()]
        return JSON({
            "game_id": game.id, "mode": game.mode, "seed": seed if chosen else None, "labels": game.labels,
            "links": links, "watch_url": f"/#watch/{game.id}" if game.mode == "watch" else None,
        })

    def _seats(self, seats: Any) -> list[str]:
        """The seats of a new game, checked: ``"human"`` or an agent on offer each."""
        if not isinstance(seats, list) or not 2 <= len(seats) <= 6:
            raise WebError(400, "seats must be a list of 2 to 6 players: \"human\" or an agent name")
        for i, spec in enumerate(seats):
            if not isinstance(spec, str) or (spec != HUMAN and spec not in self.agents):
                raise WebError(400, f"seat {i}: {str(spec)[:80]!r} is not on offer; choose human or one of "
                                    f"{', '.join(self.agents)}")
        return seats

    def _load_agent(self, spec: str, config: GameConfig, seed: int) -> Any:
        """An agent for a seat; a file that does not load is a 400 naming it and the loader's reason."""
        try:
            return load_agent(spec, config, seed, allow_pickle=self.allow_pickle)
        except (OSError, ValueError, ImportError) as exc:  # the loaders' named errors (CheckpointError, ...)
            raise WebError(400, f"cannot load agent {agent_label(spec)!r}: {exc}") from None
        except Exception as exc:  # a loader fault: the file is still refused, the traceback logged
            LOG.exception("loading agent %s failed", spec)
            raise WebError(400, f"cannot load agent {agent_label(spec)!r} ({type(exc).__name__}: {exc})") from None

    async def poll(self, request: Request) -> Response:
        game = self.store.get(request.path_params["gid"])
        seat, since = self._int_param(request, "seat"), self._int_param(request, "since")
        advance = self._int_param(request, "advance")
        token = request.query_params.get("token")

        def work() -> dict[str, Any]:
            with game.lock:
                who = game.check_seat(seat, token)
                if advance is not None:
                    game.advance(advance)
                return game.snapshot(who, since)

        return JSON(await run_in_threadpool(work))

    async def move(self, request: Request) -> Response:
        game = self.store.get(request.path_params["gid"])
        data = self._object(await self._body(request), "seat", "token", "action", "key", "seen")

        def work() -> dict[str, Any]:
            with game.lock:
                seat = game.check_seat(data.get("seat"), data.get("token"))
                if seat is None:
                    raise WebError(400, "nobody moves by hand in a game of agents alone")
                seen = data.get("seen")
                if seen is not None and type(seen) is not int:
                    raise WebError(400, f"seen must be a move count, got {seen!r}")
                game.move(seat, data.get("action"), data.get("key"), seen)
                return game.snapshot(seat, seen if seen is not None else game.step_count)

        return JSON(await run_in_threadpool(work))

    async def next_game(self, request: Request) -> Response:
        game = self.store.get(request.path_params["gid"])
        data = self._object(await self._body(request) or {}, "seat", "token")

        def work() -> dict[str, Any]:
            with game.lock:
                seat = game.check_seat(data.get("seat"), data.get("token"))
                game.next_game()
                return game.snapshot(seat, 0)

        return JSON(await run_in_threadpool(work))

    async def record(self, request: Request) -> Response:
        game = self.store.get(request.path_params["gid"])
        seat = self._int_param(request, "seat")
        token = request.query_params.get("token")

        def work() -> dict[str, Any]:
            with game.lock:
                game.check_seat(seat, token)
                if not game.state.is_over:
                    raise WebError(409, "the record holds every card and the draw order; it is available "
                                        "when the game is over")
                return game.record().to_dict()

        data = await run_in_threadpool(work)
        name = f"skipbo-{game.id[:8]}-game{game.game_no + 1}.json"
        return JSON(data, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    # ------------------------------------------------------------ replays
    async def replay(self, request: Request) -> Response:
        data = await self._body(request)

        def work() -> dict[str, Any]:
            try:
                record = GameRecord.from_dict(data)
            except (SkipBoError, ValueError, TypeError, KeyError) as exc:
                raise WebError(400, f"not a game record: {exc}") from None
            except RecursionError:
                raise WebError(400, "not a game record: nested too deeply") from None
            return replay_json(record)

        return JSON(await run_in_threadpool(work))

    async def list_records(self, request: Request) -> Response:
        return JSON({"records": [{"n": i, "name": p.name} for i, p in enumerate(self.records)]})

    async def open_record(self, request: Request) -> Response:
        n = request.path_params["n"]
        if not 0 <= n < len(self.records):
            raise WebError(404, f"no record {n}; there are {len(self.records)}")
        path = self.records[n]

        def work() -> dict[str, Any]:
            try:
                record = GameRecord.load(path)
            except (OSError, ValueError) as exc:
                raise WebError(400, f"cannot replay {path.name}: {exc}") from None
            except RecursionError:
                raise WebError(400, f"cannot replay {path.name}: nested too deeply") from None
            return {**replay_json(record), "name": path.name}

        return JSON(await run_in_threadpool(work))


def create_app(**kwargs: Any) -> Starlette:
    """The ASGI application (keyword arguments: those of :class:`WebApp`)."""
    return WebApp(**kwargs).app
