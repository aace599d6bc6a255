"""Matches in memory: Skip-Bo games with human and agent seats, and the bounded store.

A :class:`WebGame` steps its games with :class:`skipbo_env.episode.GameLoop` (a human seat has no
agent, so the loop waits there). A request with a person's move has the loop take it, then lets
the agents move until a person is to move, the game ends or the request's move budget is spent.
After every move the game keeps a step (who moved, the move, the table as each human seat sees
it, or the full table in watch mode), which browsers fetch and animate at their own pace.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from ..agents import agent_label, derive_seed
from ..bots import AgentBase, as_agent
from ..encoding import decode_action, encode_action, num_actions
from ..episode import AgentError, Decision, GameLoop
from ..human import explain_illegal, parse_key, seat_name
from ..records import GameRecord, GameRecorder
from ..rules import GameConfig, GameState, game_points, new_game
from ..rules.scoring import MATCH_TARGET
from .tables import full_table, legal_json, move_json, seat_table

HUMAN = "human"
MAX_STEPS_KEPT = 400
"""Steps a game keeps for browsers to animate; a browser further behind gets the current table."""
MAX_ADVANCE = 50
"""Agent moves one watch-mode request may ask for."""


SECRET_BITS = 128
"""Size of a match key the server draws."""


def keyed_seed(key: int, purpose: str, index: int, bits: int = SECRET_BITS) -> int:
    """A seed derived from a secret match ``key`` with HMAC-SHA256 (message ``"PURPOSE INDEX"``,
    the first ``bits`` bits of the digest): one game's seed, even recovered from its generator,
    tells nothing of the key or of another game's seed."""
    digest = hmac.new(key.to_bytes(SECRET_BITS // 8, "big"), f"{purpose} {index}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest, "big") >> (256 - bits)


def match_deal(config: GameConfig, seed: int, game_no: int, first: int | None = None, keyed: bool = False) -> GameState:
    """Game ``game_no`` (from 0) of a match of seed ``seed``.

    Game 0 is ``new_game(config, seed=seed)``: the deal of ``skipbo play --seed SEED`` and
    ``skipbo demo --seed SEED``, so the same seed deals the same game at the terminal and in the
    browser. Later games pass the deal left (R9) from game 0's first player ``first`` and are
    dealt from the seed ``derive_seed(seed, game_no, 0)``. With ``keyed`` (a secret key the server
    drew) every game is dealt from ``keyed_seed(seed, "deal", game_no)`` instead.
    """
    if game_no and first is None:
        raise ValueError(f"game {game_no} of a match needs the first game's first player")
    game_config = config if game_no == 0 else dataclasses.replace(
        config, first_player=(first + game_no) % config.num_players)  # type: ignore[operator]
    if keyed:
        return new_game(game_config, seed=keyed_seed(seed, "deal", game_no))
    return new_game(game_config, seed=seed if game_no == 0 else derive_seed(seed, game_no, 0))


class WebError(Exception):
    """A request the server refuses: an HTTP status and a message for the person."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclasses.dataclass
class Step:
    index: int
    seat: int
    move: dict[str, Any]
    tables: dict[int | None, str]
    """Table JSON text after the move, per human seat (``None``: the full table of watch mode)."""


class WebGame:
    """A match of games played in the browser.

    Args:
        config: the game's configuration (the games are dealt by :func:`match_deal`).
        specs: one per seat: ``"human"`` or an agent spec the loader accepts.
        load: ``load(spec, config, seed)`` builds an agent (the app passes
            :func:`skipbo_env.agents.load_agent` with its pickle setting).
        seed: seed of the match: deals (:func:`match_deal`) and agents (seat ``s``: ``derive_seed(seed, s, bits=32)``,
            as at the terminal).
        target: points that win the match (R25).
        seed_shown: whether answers show the seed from the start (the person chose it). Otherwise
            the seed is a secret key the server drew (:data:`SECRET_BITS`): every deal and agent
            seed comes from it through :func:`keyed_seed`, and it is shown when the match is over.
        labels: the name of each seat's player (default: ``"human"`` or the agent's label).
    """

    def __init__(self, config: GameConfig, specs: Sequence[str], load: Callable[[str, GameConfig, int], Any],
                 seed: int, target: int = MATCH_TARGET, seed_shown: bool = True,
                 labels: Sequence[str] | None = None) -> None:
        self.id = secrets.token_urlsafe(12)
        self.config = config
        self.specs = list(specs)
        self.humans = [s for s, spec in enumerate(specs) if spec == HUMAN]
        self.mode = "play" if self.humans else "watch"
        self.tokens = {s: secrets.token_urlsafe(16) for s in self.humans}
        self.labels = list(labels) if labels is not None else [
            HUMAN if spec == HUMAN else agent_label(spec) for spec in specs]
        self.seed, self.target, self.seed_shown = seed, target, seed_shown
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self._load = load
        self.agents: dict[int, AgentBase] = {}
        """The agent of each agent seat (human seats have none)."""
        for s, spec in enumerate(specs):
            if spec != HUMAN:
                agent_seed = derive_seed(seed, s, bits=32) if seed_shown else keyed_seed(seed, "agent", s, bits=32)
                self.agents[s] = as_agent(load(spec, config, agent_seed))
        self.scores = [0] * config.num_teams
        self.history: list[list[int]] = []
        self.game_no = -1
        self.first: int | None = None
        """The first player of the match's first game (later games pass the deal left, R9)."""
        self.error: str | None = None
        self._deal()

    # ------------------------------------------------------------ games of the match
    def _deal(self) -> None:
        self.game_no += 1
        self.state: GameState = match_deal(self.config, self.seed, self.game_no, self.first, keyed=not self.seed_shown)
        if self.first is None:
            self.first = self.state.current
        self.recorder: GameRecorder = GameRecord.start(self.state, self.labels)
        self.steps: deque[Step] = deque(maxlen=MAX_STEPS_KEPT)
        self.step_count = 0
        self.error = None
        if self.mode == "play":
            self._advance(limit=self.config.move_limit)

    @property
    def match_over(self) -> bool:
        return max(self.scores) >= self.target

    def next_game(self) -> None:
        if not self.state.is_over:
            raise WebError(409, "this game is not over yet")
        if self.match_over:
            raise WebError(409, "the match is over")
        self._deal()

    # ------------------------------------------------------------ the game loop
    def _advance(self, limit: int, action: int | None = None) -> None:
        """The person's ``action`` (if any), then agents' moves until a person is to move, the
        game ends or ``limit`` agent moves are made. An agent that fails stops the game
        (:attr:`error`), not the server."""
        loop = GameLoop(self.state, [self.agents.get(s) for s in range(self.config.num_players)], self.labels)
        try:
            if action is not None:
                self._play(loop, loop.take(action))
            for _ in range(limit):
                if loop.over or loop.waiting:
                    break
                self._play(loop, loop.decide())
        except AgentError as exc:
            self.error = str(exc)
        except Exception as exc:  # an agent that breaks stops the game, not the server
            self.error = f"{type(exc).__name__}: {exc}"
        if self.state.is_over and len(self.history) == self.game_no:
            points = list(game_points(self.state))
            self.history.append(points)
            self.scores = [a + b for a, b in zip(self.scores, points, strict=True)]

    def _play(self, loop: GameLoop, decision: Decision) -> None:
        """Apply ``decision`` and keep it: the record and the step browsers fetch."""
        seat = decision.seat
        move = move_json(decision.move, self.state.view(seat), seat, self.config)
        self.recorder.add(decision.move)
        loop.apply(decision)
        self._record(seat, move)

    def _record(self, seat: int, move: dict[str, Any]) -> None:
        move = {**move, "seat": seat, "name": seat_name(seat, self.labels)}
        tables: dict[int | None, str]
        if self.mode == "play":
            tables = {h: json.dumps(seat_table(self.state.view(h), self.labels)) for h in self.humans}
        else:
            tables = {None: json.dumps(full_table(self.state, self.labels))}
        self.steps.append(Step(self.step_count, seat, move, tables))
        self.step_count += 1

    # ------------------------------------------------------------ requests
    def check_seat(self, seat: Any, token: Any) -> int | None:
        """The human seat a request speaks for (``None`` in watch mode); 403 without its token."""
        if self.mode == "watch":
            return None
        if type(seat) is not int or seat not in self.tokens:
            raise WebError(400, f"seat must be one of the human seats {self.humans}, got {seat!r}")
        if not isinstance(token, str) or not token.isascii() or not secrets.compare_digest(token, self.tokens[seat]):
            raise WebError(403, "this link's token does not belong to that seat")
        return seat

    def move(self, seat: int, action: Any = None, key: Any = None, seen: Any = None) -> None:
        """The person at ``seat`` moves; the rules' legal-move list decides, nothing changes otherwise."""
        if self.error:
            raise WebError(409, f"the game stopped: {self.error}")
        if self.state.is_over:
            raise WebError(409, "the game is over")
        if seen is not None and seen != self.step_count:
            raise WebError(409, f"the game has moved on (you saw {seen} moves, there are {self.step_count}); "
                                "reload the table")
        if self.state.current != seat:
            raise WebError(409, f"it is not your turn: {seat_name(self.state.current, self.labels, seat)} is to move")
        view = self.state.view(seat)
        legal = {m["id"]: m for m in legal_json(view)}
        if action is None and key is None:
            raise WebError(400, "send a move: an action id or a move key")
        if action is not None:
            if type(action) is not int:
                raise WebError(400, f"the action must be an integer move id, got {action!r}")
            if action not in legal:
                raise WebError(422, "not a legal move now: " + self._why(view, action))
        else:
            if not isinstance(key, str) or len(key) > 20:
                raise WebError(400, "the key must be a short move key such as h5>2")
            try:
                parsed = parse_key(key)
            except ValueError as exc:
                raise WebError(400, str(exc)) from None
            try:
                action = encode_action(parsed, self.config)
            except ValueError:  # a move the game's action table lacks: a partner's pile without partners
                raise WebError(422, f"not a move of this game: {key!r} (a partner's piles exist only in "
                                    "the partner game)") from None
            if action not in legal:
                raise WebError(422, "not a legal move now: " + explain_illegal(view, parsed))
        self._advance(limit=self.config.move_limit, action=action)

    def _why(self, view: Any, action: int) -> str:
        if not 0 <= action < num_actions(self.config):
            return f"move id {action} is not in the action table (0..{num_actions(self.config) - 1})"
        return explain_illegal(view, decode_action(action, self.config))

    def advance(self, count: Any) -> None:
        """Watch mode: up to ``count`` more agent moves."""
        if self.mode != "watch":
            raise WebError(400, "only a game of agents alone advances on request")
        if type(count) is not int or not 0 <= count <= MAX_ADVANCE:
            raise WebError(400, f"advance must be an integer 0..{MAX_ADVANCE}, got {count!r}")
        if count and not self.state.is_over and not self.error:
            self._advance(limit=count)

    def snapshot(self, seat: int | None, since: Any = None) -> dict[str, Any]:
        """What the browser of ``seat`` (``None``: watch mode) gets: steps after ``since``, the
        current table, its legal moves and the match."""
        if since is not None and (type(since) is not int or since < 0):
            raise WebError(400, f"since must be a move count >= 0, got {since!r}")
        first = self.steps[0].index if self.steps else self.step_count
        steps = []
        if since is not None and first <= since <= self.step_count:
            steps = [{**s.move, "index": s.index, "table": json.loads(s.tables[seat])}
                     for s in self.steps if s.index >= since]
        if seat is None:
            table = full_table(self.state, self.labels)
            legal: list[dict[str, Any]] = []
        else:
            view = self.state.view(seat)
            table = seat_table(view, self.labels)
            legal = legal_json(view)
        return {
            "game_id": self.id,
            "mode": self.mode,
            "seat": seat,
            "game_no": self.game_no,
            "moves": self.step_count,
            "since": since,
            "steps": steps,
            "table": table,
            "legal": legal,
            "error": self.error,
            "match": {
                "scores": list(self.scores),
                "target": self.target,
                "games": list(self.history),
                "over": self.match_over,
                "seed": self.seed if self.seed_shown or self.match_over else None,
                "points": list(game_points(self.state)) if self.state.is_over else None,
                "sides": [" and ".join(seat_name(s, self.labels, seat) for s in self.config.team_seats(t))
                          for t in range(self.config.num_teams)],
            },
        }

    def record(self) -> GameRecord:
        return self.recorder.record()


class GameStore:
    """The games in memory: at most ``max_games``; a game untouched for ``ttl`` seconds is dropped."""

    def __init__(self, max_games: int = 100, ttl: float = 1800.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_games, self.ttl, self.clock = max_games, ttl, clock
        self._games: dict[str, WebGame] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def sweep(self) -> None:
        now = self.clock()
        with self._lock:
            for gid in [g for g, game in self._games.items() if now - game.touched > self.ttl]:
                del self._games[gid]

    def add(self, game: WebGame) -> None:
        self.sweep()
        with self._lock:
            if len(self._games) >= self.max_games:
                raise WebError(503, f"the server holds its maximum of {self.max_games} games; "
                                    "try again when one has ended or expired")
            game.touched = self.clock()
            self._games[game.id] = game

    def room(self) -> None:
        """503 now, before agents load, when no game can be added."""
        self.sweep()
        if len(self._games) >= self.max_games:
            raise WebError(503, f"the server holds its maximum of {self.max_games} games; "
                                "try again when one has ended or expired")

    def get(self, gid: str) -> WebGame:
        self.sweep()
        with self._lock:
            game = self._games.get(gid)
            if game is None:
                raise WebError(404, f"no game {gid!r}: it never existed or expired after "
                                    f"{self.ttl / 60:g} minutes without activity")
            game.touched = self.clock()
            return game
