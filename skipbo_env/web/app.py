"""The web app: a Starlette application serving the page and a small JSON API.

API (all JSON; errors are ``{"error": "..."}`` with a 4xx status)::

    GET  /api/agents                          the seats on offer: "human" and the agents
    POST /api/games                           {"seats": [...], "partner": false, "short": false,
                                               "seed": 7, "target": 500} -> game id and a link per human seat
    GET  /api/games/{id}?seat=&token=&since=&advance=
                                              the table the seat sees (watch mode: every card),
                                              the moves since the move count ``since``, the legal moves
    POST /api/games/{id}/move                 {"seat", "token", "action" (move id) or "key", "seen"}
    POST /api/games/{id}/next                 the next game of the match
    GET  /api/games/{id}/record?seat=&token=  the finished game as a record (skipbo-play --replay)
    POST /api/replay                          a record (the JSON of a record file) -> every table
    GET  /api/records, /api/records/{n}       the record files named on the command line

The server's legal-move list (the rules') is the authority: the page only shows
the moves it is given and sends back a move id. A game of agents alone
(watch mode) advances only when asked (``advance``, up to 50 moves).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..agents import agent_label, known_agents, load_agent
from ..records import GameRecord
from ..rules import GameConfig, SkipBoError
from ..rules.scoring import MATCH_TARGET
from .matches import HUMAN, GameStore, WebError, WebGame
from .tables import replay_json

STATIC = Path(__file__).parent / "static"
MAX_BODY = 16 * 1024 * 1024
"""Largest request body (a record file) in bytes."""
MAX_SEED = 2**63 - 1
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]


def agent_files(folders: Sequence[Path], allow_pickle: bool) -> list[Path]:
    """Agent files in ``folders``: ``*.safetensors``, and ``*.zip`` checkpoints with ``allow_pickle``."""
    found: list[Path] = []
    for folder in folders:
        if folder.is_file():
            found.append(folder)
            continue
        if folder.is_dir():
            found += sorted(folder.glob("*.safetensors"))
            if allow_pickle:
                found += sorted(folder.glob("*.zip"))
    return found


def record_files(paths: Sequence[Path]) -> list[Path]:
    """Record files: each named file, and the ``*.json`` files of each named folder."""
    found: list[Path] = []
    for path in paths:
        found += sorted(path.glob("*.json")) if path.is_dir() else [path]
    return found


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
        shipped agents), then the files named on the command line."""
        for path in agent_files([Path(p) for p in agent_paths], allow_pickle):
            key = agent_label(str(path))
            while key in self.agents:
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
            middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=ALLOWED_HOSTS)],
            exception_handlers={WebError: self._web_error, HTTPException: self._http_error},
        )

    # ------------------------------------------------------------ errors and bodies
    @staticmethod
    async def _web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    @staticmethod
    async def _http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code)

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
            return json.loads(b"".join(chunks) or b"null")
        except (ValueError, RecursionError):
            raise WebError(400, "the request body is not valid JSON") from None

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
        return FileResponse(STATIC / "index.html", headers={
            "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
            "Cache-Control": "no-store",
        })

    async def list_agents(self, request: Request) -> Response:
        return JSONResponse({
            "human": HUMAN,
            "agents": list(self.agents),
            "files": [a for a, spec in self.agents.items() if spec != a],
            "trained": [a for a in self.agents if a not in ("random", "greedy", "heuristic")],
            "allow_pickle": self.allow_pickle,
            "max_games": self.store.max_games,
            "match_target": MATCH_TARGET,
        })

    # ------------------------------------------------------------ games
    async def create(self, request: Request) -> Response:
        data = self._object(await self._body(request), "seats", "partner", "short", "seed", "target")
        seats = data.get("seats")
        if not isinstance(seats, list) or not 2 <= len(seats) <= 6:
            raise WebError(400, "seats must be a list of 2 to 6 players: \"human\" or an agent name")
        for i, spec in enumerate(seats):
            if spec != HUMAN and spec not in self.agents:
                raise WebError(400, f"seat {i}: {str(spec)[:80]!r} is not on offer; choose human or one of "
                                    f"{', '.join(self.agents)}")
        partner, short = data.get("partner", False), data.get("short", False)
        if not isinstance(partner, bool) or not isinstance(short, bool):
            raise WebError(400, "partner and short must be true or false")
        seed = data.get("seed")
        if seed is None:
            seed = secrets.randbelow(2**31)
        if type(seed) is not int or not 0 <= seed <= MAX_SEED:
            raise WebError(400, f"seed must be an integer 0..2**63-1, got {seed!r}")
        target = data.get("target", MATCH_TARGET)
        if type(target) is not int or not 1 <= target <= 100_000:
            raise WebError(400, f"target must be an integer 1..100000 points, got {target!r}")
        try:
            config = GameConfig(num_players=len(seats), short_game=short, partner_game=partner)
        except SkipBoError as exc:
            raise WebError(400, str(exc)) from None
        self.store.room()
        specs = [HUMAN if s == HUMAN else self.agents[s] for s in seats]

        def make() -> WebGame:
            def load(spec: str, cfg: GameConfig, agent_seed: int) -> Any:
                try:
                    return load_agent(spec, cfg, agent_seed, allow_pickle=self.allow_pickle)
                except (OSError, ValueError, ImportError) as exc:
                    raise WebError(400, f"cannot load agent {agent_label(spec)!r}: {exc}") from None

            game = WebGame(config, specs, load, seed, target)
            self.store.add(game)
            return game

        game = await run_in_threadpool(make)
        links = [{"seat": s, "token": t, "url": f"/#play/{game.id}/{s}/{t}"} for s, t in game.tokens.items()]
        return JSONResponse({
            "game_id": game.id, "mode": game.mode, "seed": seed, "labels": game.labels, "links": links,
            "watch_url": f"/#watch/{game.id}" if game.mode == "watch" else None,
        })

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

        return JSONResponse(await run_in_threadpool(work))

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

        return JSONResponse(await run_in_threadpool(work))

    async def next_game(self, request: Request) -> Response:
        game = self.store.get(request.path_params["gid"])
        data = self._object(await self._body(request) or {}, "seat", "token")

        def work() -> dict[str, Any]:
            with game.lock:
                seat = game.check_seat(data.get("seat"), data.get("token"))
                game.next_game()
                return game.snapshot(seat, 0)

        return JSONResponse(await run_in_threadpool(work))

    async def record(self, request: Request) -> Response:
        game = self.store.get(request.path_params["gid"])
        seat = self._int_param(request, "seat")
        token = request.query_params.get("token")

        def work() -> dict[str, Any]:
            with game.lock:
                game.check_seat(seat, token)
                if game.mode == "play" and not game.state.is_over:
                    raise WebError(409, "the record holds every card; it is available when the game is over")
                return game.record().to_dict()

        data = await run_in_threadpool(work)
        name = f"skipbo-{game.id[:8]}-game{game.game_no + 1}.json"
        return JSONResponse(data, headers={"Content-Disposition": f'attachment; filename="{name}"'})

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

        return JSONResponse(await run_in_threadpool(work))

    async def list_records(self, request: Request) -> Response:
        return JSONResponse({"records": [{"n": i, "name": p.name} for i, p in enumerate(self.records)]})

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
            return {**replay_json(record), "name": path.name}

        return JSONResponse(await run_in_threadpool(work))


def create_app(**kwargs: Any) -> Starlette:
    """The ASGI application (keyword arguments: those of :class:`WebApp`)."""
    return WebApp(**kwargs).app
