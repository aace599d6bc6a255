"""A round-robin ladder: every agent against every other, one tournament per pair (``evaluate.py --ladder``).

Each pair's games depend only on the ladder seed, the game and its two agents, so pairs can be
reused from an earlier ladder (``reuse``); one OpenSkill rating per agent over all pairs' games
pooled. docs/baselines.md ("The 2-player ladder", "How a ladder is played") has the details.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import itertools
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..files import MIB, FileReadError, check_readable, read_text_bounded
from ..records import write_json_atomic
from ..rules import GameConfig
from .executors import ChunkRunner, open_runner
from .registry import agent_label, derive_seed, load_agent
from .report import config_flags, game_row, games_header, parse_game_row
from .tournament import (
    DEFAULT_BATCH,
    GameResult,
    lineups,
    openskill_ratings,
    run_tournament,
    wilson_interval,
)

PROGRESS_EVERY_S = 15.0
"""Seconds between two progress lines of one pair (besides its start and end lines)."""


# ===================================================================== results
@dataclass(frozen=True)
class PairResult:
    """One pair's tournament, seen from the ladder: agents ``a`` and ``b`` (indices into the ladder's
    specs, ``a < b``) and how their games ended."""

    a: int
    b: int
    seed: int
    """The pair's tournament seed (derived from the ladder seed and the two specs)."""
    games: int
    wins_a: int
    wins_b: int
    draws: int
    """Games truncated with no winner (R23): won by neither agent."""
    mean_turns: float
    wall_seconds: float = field(default=0.0, compare=False)
    """Time the pair took (not part of equality: results do not depend on it)."""
    game_results: tuple[GameResult, ...] = field(default=(), repr=False)
    """The pair's games, agent indices local to the pair (0 is the spec that sorts first); empty
    for a result read back from JSON."""
    reused_from: str = field(default="", compare=False)
    """The folder of the earlier ladder whose games this pair reused (``""``: played by this ladder;
    :attr:`wall_seconds` is then the earlier ladder's time for the pair)."""

    def wins(self, agent: int) -> int:
        """Games of this pair won by ladder agent ``agent``."""
        if agent == self.a:
            return self.wins_a
        if agent == self.b:
            return self.wins_b
        raise ValueError(f"agent {agent} is not in the pair ({self.a}, {self.b})")


@dataclass(frozen=True)
class Rating:
    """One agent's pooled OpenSkill rating and its totals over all of its pairs."""

    label: str
    spec: str
    mu: float
    sigma: float
    ordinal: float
    """``mu - 3 sigma``: the conservative estimate the ladder is sorted by."""
    games: int
    wins: int


@dataclass(frozen=True)
class WinRate:
    """The row agent's share of the games against the column agent, with its 95% Wilson interval."""

    rate: float
    low: float
    high: float
    wins: int
    games: int


@dataclass(frozen=True)
class LadderResult:
    """Everything a ladder produced; :meth:`to_markdown` and :meth:`to_dict` are its printed and JSON forms."""

    specs: tuple[str, ...]
    labels: tuple[str, ...]
    config: GameConfig
    seed: int
    games: int
    """The default games per pair (``pair_games`` overrode it for some pairs: see :attr:`pairs`)."""
    pairs: tuple[PairResult, ...]
    """One per unordered pair, in ladder order: (0, 1), (0, 2), ..., (1, 2), ..."""
    ratings: tuple[Rating, ...]
    """One per agent, in the order of :attr:`specs`."""
    wall_seconds: float = field(default=0.0, compare=False)

    def pair(self, a: int, b: int) -> PairResult:
        """The pair of agents ``a`` and ``b`` (ladder indices, either order)."""
        lo, hi = min(a, b), max(a, b)
        for p in self.pairs:
            if (p.a, p.b) == (lo, hi):
                return p
        raise ValueError(f"no pair ({a}, {b}) in a ladder of {len(self.specs)} agents")

    def win_rate(self, row: int, col: int) -> WinRate:
        """Share of the games of ``row`` against ``col`` that ``row`` won (draws count as not won)."""
        p = self.pair(row, col)
        wins = p.wins(row)
        low, high = wilson_interval(wins, p.games)
        return WinRate(rate=wins / p.games, low=low, high=high, wins=wins, games=p.games)

    def order(self) -> list[int]:
        """Agent indices by rating: highest ordinal first (ties: ladder order)."""
        return sorted(range(len(self.specs)), key=lambda i: (-self.ratings[i].ordinal, i))

    # ------------------------------------------------------------------ output
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: settings, ratings, pairs (without their games) and the pairwise matrix."""
        n = len(self.specs)
        matrix: dict[str, dict[str, Any]] = {}
        for r in range(n):
            matrix[self.labels[r]] = {
                self.labels[c]: dataclasses.asdict(self.win_rate(r, c)) for c in range(n) if c != r
            }
        return {
            "specs": list(self.specs),
            "labels": list(self.labels),
            "config": self.config.to_dict(),
            "seed": self.seed,
            "games": self.games,
            "wall_seconds": self.wall_seconds,
            "ratings": [dataclasses.asdict(r) for r in self.ratings],
            "pairs": [
                {k: v for k, v in dataclasses.asdict(p).items() if k != "game_results"}
                | {"labels": [self.labels[p.a], self.labels[p.b]]}
                for p in self.pairs
            ],
            "win_rates": matrix,
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LadderResult:
        """A result read back from :meth:`to_dict` (its pairs without their games)."""
        pairs = tuple(
            PairResult(**{k: v for k, v in p.items() if k in _PAIR_FIELDS}) for p in data["pairs"]
        )
        return cls(
            specs=tuple(data["specs"]),
            labels=tuple(data["labels"]),
            config=GameConfig.from_dict(data["config"]),
            seed=data["seed"],
            games=data["games"],
            pairs=pairs,
            ratings=tuple(Rating(**r) for r in data["ratings"]),
            wall_seconds=data.get("wall_seconds", 0.0),
        )

    def describe(self) -> str:
        """One line: the game, the agents, the game counts per pair, the seed."""
        flags = config_flags(self.config)
        counts = [str(c) for c in sorted({p.games for p in self.pairs}, reverse=True)]
        per_pair = counts[0] if len(counts) == 1 else f"{', '.join(counts[:-1])} or {counts[-1]}"
        total = sum(p.games for p in self.pairs)
        return (
            f"Ladder of {len(self.specs)} agents ({', '.join(self.labels)}): {', '.join(flags)}; "
            f"{len(self.pairs)} pairs, {per_pair} games per pair, "
            f"{total} games in all; seed {self.seed}"
        )

    def to_markdown(self) -> str:
        """The rating table (sorted by ordinal), the pairwise matrix ``win% (CI) n=games`` and the pairs."""
        order = self.order()
        lines = [
            f"### {self.describe()}",
            "",
            "| rank | agent | OpenSkill mu ± sigma | ordinal | games | wins | win rate |",
            "|---:|---|---:|---:|---:|---:|---:|",
        ]
        for rank, i in enumerate(order, 1):
            r = self.ratings[i]
            lines.append(
                f"| {rank} | {r.label} | {r.mu:.2f} ± {r.sigma:.2f} | {r.ordinal:.2f} | {r.games} | "
                f"{r.wins} | {_pct(r.wins / r.games if r.games else 0.0)} |"
            )
        lines += [
            "",
            "Pairwise: share of the games won by the row agent against the column agent, 95% Wilson "
            "interval, games played. A truncated game (no winner) counts as not won for both agents, "
            "so a cell and its mirror add up to 100% less that pair's draws.",
            "",
            "| row vs column | " + " | ".join(self.labels[c] for c in order) + " |",
            "|---|" + "---:|" * len(order),
        ]
        for row in order:
            cells = []
            for col in order:
                if col == row:
                    cells.append("—")
                    continue
                w = self.win_rate(row, col)
                cells.append(f"{_pct(w.rate)} ({_pct(w.low, False)}–{_pct(w.high, False)}) n={w.games}")
            lines.append(f"| {self.labels[row]} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "| pair | games | wins | draws | mean turns | wall time |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for p in self.pairs:
            la, lb = self.labels[p.a], self.labels[p.b]
            lines.append(
                f"| {la} vs {lb} | {p.games} | {p.wins_a} : {p.wins_b} | {p.draws} | {p.mean_turns:.1f} | "
                f"{_duration(p.wall_seconds)}{' (reused)' if p.reused_from else ''} |"
            )
        return "\n".join(lines)


_PAIR_FIELDS = {f.name for f in dataclasses.fields(PairResult) if f.name != "game_results"}


def _pct(x: float, sign: bool = True) -> str:
    return f"{100 * x:.1f}%" if sign else f"{100 * x:.1f}"


# ===================================================================== playing
def pair_order(specs: Sequence[str], a: int, b: int) -> list[int]:
    """Ladder agents ``a`` and ``b`` in the order their pair's tournament seats them: sorted by spec."""
    return sorted((a, b), key=lambda k: specs[k])


def pair_seed(seed: int, spec_a: str, spec_b: str) -> int:
    """The tournament seed of the pair ``{spec_a, spec_b}`` in a ladder with ``seed`` (order-free)."""
    first, second = sorted((spec_a, spec_b))
    digest = hashlib.sha256(f"{first}\0{second}".encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return derive_seed(seed, *words)


def _check_count(what: str, n: object, per_deal: int) -> int:
    if type(n) is not int or n < 1 or n % per_deal:
        raise ValueError(
            f"{what} must be a positive multiple of the {per_deal} seatings played per deal, got {n!r}"
        )
    return n


def _pair_counts(
    specs: tuple[str, ...], games: int, pair_games: Mapping[tuple[str, str], int] | None, per_deal: int
) -> dict[tuple[int, int], int]:
    counts = {pair: games for pair in itertools.combinations(range(len(specs)), 2)}
    index = {s: i for i, s in enumerate(specs)}
    given: dict[tuple[int, int], int] = {}
    for key, n in (pair_games or {}).items():
        if not isinstance(key, tuple) or len(key) != 2:
            raise ValueError(f"pair_games keys must be (spec, spec) pairs, got {key!r}")
        unknown = [os.fspath(s) for s in key if os.fspath(s) not in index]
        if unknown:
            raise ValueError(
                f"pair_games names {', '.join(map(repr, unknown))}, not an agent of the ladder "
                f"({', '.join(specs)})"
            )
        i, j = sorted(index[os.fspath(s)] for s in key)
        if i == j:
            raise ValueError(f"pair_games: {key!r} pairs an agent with itself")
        n = _check_count(f"pair_games[{key!r}]", n, per_deal)
        if given.get((i, j), n) != n:
            raise ValueError(f"pair_games gives the pair {specs[i]} vs {specs[j]} twice: {given[i, j]} and {n}")
        given[i, j] = counts[i, j] = n
    return counts


def run_ladder(
    agents: Sequence[str | os.PathLike],
    config: GameConfig | None = None,
    games: int = 2000,
    seed: int = 0,
    pair_games: Mapping[tuple[str, str], int] | None = None,
    workers: int | None = 1,
    progress: Callable[[str], None] | None = None,
    records_dir: str | os.PathLike | None = None,
    allow_pickle: bool = False,
    batch_size: int = DEFAULT_BATCH,
    reuse: Sequence[str | os.PathLike] = (),
    ray: str | None = None,
) -> LadderResult:
    """Play every pair of ``agents`` in its own tournament and rate them all (see the module docstring).

    Args:
        agents: two or more distinct agent specs (names of
            :func:`~skipbo_env.agents.known_agents` or agent file paths, as for
            :func:`~skipbo_env.agents.tournament.run_tournament`).
        config: the game (default ``GameConfig()``); it must seat the two agents of a pair equally
            (an even number of sides: 2, 4 or 6 players, or the 4-player partner game).
        games: games per pair, a positive multiple of the seatings per deal (2 for 2 players).
        seed: the ladder seed; each pair's seed derives from it and the pair's two specs.
        pair_games: games for particular pairs, keyed by ``(spec, spec)`` in either order
            (e.g. ``{("search", "random"): 400}``); the other pairs play ``games``.
        workers: processes per pair (one pool serves every pair); ``None`` uses every core (with
            ``ray``, every CPU of the cluster), ``1`` plays in this process. Results do not depend on it.
        progress: called with a line of text when a pair starts, about every
            :data:`PROGRESS_EVERY_S` seconds while it plays (games done, games/s, the pair's ETA)
            and when it ends.
        records_dir: if given, each pair's game records go to its subfolder ``<a>-vs-<b>``.
        allow_pickle: also load pickled checkpoints (see :func:`~skipbo_env.agents.load_agent`).
        batch_size: games each worker plays at once; results do not depend on it.
        reuse: folders of earlier ladders (as :func:`write_ladder_outputs` wrote them) whose pairs
            are taken instead of played again where they match (same game, same two specs, same
            pair seed, same number of games; see the module docstring). The first deal of each
            reused pair is replayed as a check. Reused pairs write no game records.

    Raises:
        ValueError: fewer than two agents, an agent given twice (or two with the same label), an
            unknown or unloadable agent (the loader's message, naming it), a game count that is not a
            positive multiple of the seatings, a ``pair_games`` key that is not a pair of the
            ladder's agents, a game that seats the agents of a pair unequally, or a ``reuse``
            folder that cannot be read, was played on another game, holds a matching pair with
            another number of games or a pair another folder also holds, or whose pair's first
            deal now plays differently. All are checked before the first game.
        ray: play the games as Ray tasks on the cluster at this address (``auto``, ``HOST:PORT``),
            as :func:`~skipbo_env.agents.tournament.run_tournament` does; one connection serves
            every pair.
    """
    config = config if config is not None else GameConfig()
    specs = tuple(os.fspath(a) for a in agents)
    labels = _ladder_labels(specs, config)
    games = _check_count("games", games, len(lineups(2, config)))
    if type(seed) is not int or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an int in 0..2**63-1, got {seed!r}")
    counts = _pair_counts(specs, games, pair_games, len(lineups(2, config)))
    for spec in specs:  # fail fast: an unknown agent is named before hours of games
        load_agent(spec, config, seed=None, allow_pickle=allow_pickle)
    if workers is None and ray is None:
        workers = os.cpu_count() or 1
    if workers is not None and (type(workers) is not int or workers < 1):
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")

    say = progress or (lambda line: None)
    start = time.perf_counter()
    reused = _reused_pairs(reuse, specs, labels, config, seed, counts, allow_pickle, batch_size, say)
    settings = _PairSettings(specs, labels, config, seed, workers, ray, records_dir, allow_pickle, batch_size, say)
    pairs = _play_pairs(settings, counts, reused)
    return LadderResult(
        specs=specs, labels=labels, config=config, seed=seed, games=games, pairs=tuple(pairs),
        ratings=_rate(specs, labels, pairs), wall_seconds=time.perf_counter() - start,
    )


def _ladder_labels(specs: tuple[str, ...], config: GameConfig) -> tuple[str, ...]:
    """The agents' labels, once the agents and the game suit a ladder; else ValueError saying why."""
    if len(specs) < 2:
        raise ValueError(f"a ladder needs at least two agents, got {len(specs)}: {list(specs)}")
    dupes = sorted({s for s in specs if specs.count(s) > 1})
    if dupes:
        raise ValueError(f"an agent may appear once in a ladder; given more than once: {', '.join(dupes)}")
    labels = tuple(agent_label(s) for s in specs)
    same = sorted({lab for lab in labels if labels.count(lab) > 1})
    if same:
        raise ValueError(f"agents with the same label cannot be told apart in a ladder: {', '.join(same)}")
    if config.num_teams % 2:
        what = "teams" if config.partner_game else "seats"
        raise ValueError(
            f"a ladder seats two agents per game and needs an even number of {what} so both hold "
            f"the same share; this game has {config.num_teams}"
        )
    return labels


@dataclass(frozen=True)
class _PairSettings:
    """What every pair's tournament of one ladder shares."""

    specs: tuple[str, ...]
    labels: tuple[str, ...]
    config: GameConfig
    seed: int
    workers: int | None
    ray: str | None
    records_dir: str | os.PathLike | None
    allow_pickle: bool
    batch_size: int
    say: Callable[[str], None]


def _play_pairs(
    settings: _PairSettings, counts: Mapping[tuple[int, int], int], reused: Mapping[tuple[int, int], PairResult]
) -> list[PairResult]:
    """Every pair in ladder order: reused where ``reused`` has it, else played (one worker pool for all)."""
    labels, say = settings.labels, settings.say
    total = sum(counts.values())
    done_before = 0
    pairs: list[PairResult] = []
    with contextlib.ExitStack() as stack:
        pool = None
        for number, ((i, j), n) in enumerate(counts.items(), 1):
            name = f"pair {number}/{len(counts)} {labels[i]} vs {labels[j]}"
            if (i, j) in reused:
                pairs.append(reused[i, j])
                done_before += n
                say(f"{name}: {n} games reused from {reused[i, j].reused_from} (ladder: {done_before}/{total} games)")
                continue
            if pool is None and (settings.ray is not None or (settings.workers or 1) > 1):
                # one pool (or cluster connection) for every pair, started for the first one played
                pool = stack.enter_context(open_runner(settings.workers or 1, settings.ray))
            pair = _play_pair(settings, i, j, n, name, _Ticker(name, n, total, done_before, say), pool)
            pairs.append(pair)
            done_before += n
            say(
                f"{name}: done, {n} games in {pair.wall_seconds:.1f} s ({n / max(pair.wall_seconds, 1e-9):.1f} "
                f"games/s); {labels[i]} {_pct(pair.wins_a / n)}, {labels[j]} {_pct(pair.wins_b / n)}, "
                f"draws {_pct(pair.draws / n)} (ladder: {done_before}/{total} games)"
            )
    return pairs


def _play_pair(
    settings: _PairSettings, i: int, j: int, n: int, name: str, ticker: _Ticker, pool: ChunkRunner | None
) -> PairResult:
    """The tournament of ladder agents ``i < j``: ``n`` games from the pair's seed."""
    specs, labels = settings.specs, settings.labels
    pseed = pair_seed(settings.seed, specs[i], specs[j])
    settings.say(f"{name}: {n} games, seed {pseed}")
    rdir = None if settings.records_dir is None else Path(settings.records_dir) / f"{labels[i]}-vs-{labels[j]}"
    t0 = time.perf_counter()
    result = run_tournament(
        [specs[k] for k in pair_order(specs, i, j)], settings.config, games=n, seed=pseed,
        workers=settings.workers, records_dir=rdir, progress=ticker, allow_pickle=settings.allow_pickle,
        batch_size=settings.batch_size, pool=pool,
    )
    return _pair_result(specs, i, j, pseed, tuple(result.games), time.perf_counter() - t0)


def _pair_result(
    specs: Sequence[str], a: int, b: int, seed: int, games: tuple[GameResult, ...], wall: float, reused_from: str = "",
) -> PairResult:
    """Ladder agents ``a < b``'s pair from its games (agent indices local to the pair, :func:`pair_order`)."""
    local = pair_order(specs, a, b)
    wins = dict(zip(local, (sum(1 for g in games if g.winning_agent == k) for k in range(2)), strict=True))
    return PairResult(
        a=a, b=b, seed=seed, games=len(games), wins_a=wins[a], wins_b=wins[b],
        draws=sum(1 for g in games if g.winning_agent is None), mean_turns=float(np.mean([g.turns for g in games])),
        wall_seconds=wall, game_results=games, reused_from=reused_from,
    )


class _Ticker:
    """The tournament's progress callback (games just finished) turned into throttled lines."""

    def __init__(self, name: str, games: int, total: int, before: int, say: Callable[[str], None]) -> None:
        self.name, self.games, self.total, self.before, self.say = name, games, total, before, say
        self.done = 0
        self.start = self.last = time.perf_counter()

    def __call__(self, finished: int) -> None:
        self.done += finished
        now = time.perf_counter()
        if finished == 0 or self.done >= self.games or now - self.last < PROGRESS_EVERY_S:
            return
        self.last = now
        rate = self.done / max(now - self.start, 1e-9)
        eta = (self.games - self.done) / rate
        self.say(
            f"{self.name}: {self.done}/{self.games} games, {rate:.1f} games/s, ETA {_duration(eta)} "
            f"(ladder: {self.before + self.done}/{self.total} games)"
        )


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _rate(specs: tuple[str, ...], labels: tuple[str, ...], pairs: list[PairResult]) -> tuple[Rating, ...]:
    """Pooled OpenSkill ratings: every pair's games, agents renumbered to ladder indices, merged by
    their relative position in their pair (ties in pair order), rated in that order."""
    keyed = []
    for number, p in enumerate(pairs):
        local = sorted((p.a, p.b), key=lambda k: specs[k])
        for g in p.game_results:
            seats = tuple(local[a] for a in g.seats)
            keyed.append(((Fraction(2 * g.index + 1, 2 * p.games), number), dataclasses.replace(g, seats=seats)))
    keyed.sort(key=lambda kg: kg[0])
    fitted = openskill_ratings(len(specs), tuple(g for _, g in keyed))
    out = []
    for i, (mu, sigma, ordinal) in enumerate(fitted):
        mine = [p for p in pairs if i in (p.a, p.b)]
        out.append(Rating(
            label=labels[i], spec=specs[i], mu=mu, sigma=sigma, ordinal=ordinal,
            games=sum(p.games for p in mine), wins=sum(p.wins(i) for p in mine),
        ))
    return tuple(out)


# ===================================================================== reuse
def _reused_pairs(
    folders: Sequence[str | os.PathLike],
    specs: tuple[str, ...],
    labels: tuple[str, ...],
    config: GameConfig,
    seed: int,
    counts: Mapping[tuple[int, int], int],
    allow_pickle: bool,
    batch_size: int,
    say: Callable[[str], None],
) -> dict[tuple[int, int], PairResult]:
    """The pairs of this ladder that the earlier ladders in ``folders`` played, checked (see :func:`run_ladder`)."""
    if isinstance(folders, (str, os.PathLike)):
        raise TypeError("reuse must be a sequence of folders, not one folder")
    index = {spec: k for k, spec in enumerate(specs)}
    found: dict[tuple[int, int], PairResult] = {}
    for folder in folders:
        prior = read_ladder(folder)
        if prior.config != config:
            raise ValueError(
                f"reuse {os.fspath(folder)}: that ladder was played on another game "
                f"({', '.join(config_flags(prior.config))}) than this one ({', '.join(config_flags(config))})"
            )
        for p in prior.pairs:
            a_spec, b_spec = prior.specs[p.a], prior.specs[p.b]
            if a_spec not in index or b_spec not in index:
                continue
            i, j = sorted((index[a_spec], index[b_spec]))
            if p.seed != pair_seed(seed, specs[i], specs[j]):
                continue  # another ladder seed: other deals
            what = f"the pair {labels[i]} vs {labels[j]}"
            if (i, j) in found:
                raise ValueError(f"reuse: {what} is in both {found[i, j].reused_from} and {os.fspath(folder)}")
            if p.games != counts[i, j]:
                raise ValueError(
                    f"reuse {os.fspath(folder)}: {what} played {p.games} games there and {counts[i, j]} in this "
                    f"ladder; give it {p.games} games (pair_games) to reuse them, or leave the folder out"
                )
            found[i, j] = _pair_result(specs, i, j, p.seed, p.game_results, p.wall_seconds, os.fspath(folder))
    per_deal = len(lineups(2, config))
    for (i, j), p in found.items():  # the same agents? their first deal must play the same games again
        say(f"reuse: replaying the first deal of {labels[i]} vs {labels[j]} from {p.reused_from}")
        check = run_tournament(
            [specs[k] for k in pair_order(specs, i, j)], config, games=per_deal, seed=p.seed, workers=1,
            allow_pickle=allow_pickle, batch_size=batch_size,
        )
        if tuple(check.games) != p.game_results[:per_deal]:
            raise ValueError(
                f"reuse {p.reused_from}: the first deal of {labels[i]} vs {labels[j]} plays differently now "
                "than in that ladder (an agent changed since: another default, another file under the same "
                "name?); leave the folder out to play the pair again"
            )
    return found


def read_ladder(folder: str | os.PathLike) -> LadderResult:
    """A ladder that :func:`write_ladder_outputs` wrote to ``folder``, with every pair's games
    (``ladder.json`` and ``games.csv``).

    Raises:
        ValueError: naming the file and what is wrong: a missing file, a file that is not a
            ladder's, a row that does not parse or does not agree with ``ladder.json``.
    """
    folder = Path(folder)
    path = folder / "ladder.json"
    try:
        data = json.loads(read_text_bounded(path, 16 * MIB, "ladder.json"))
    except FileReadError as exc:
        if not path.exists():
            raise ValueError(f"{folder}: no ladder.json (not a folder that evaluate.py --ladder wrote)") from None
        raise ValueError(str(exc)) from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path}: cannot be read as JSON ({exc})") from None
    try:
        result = LadderResult.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: not a ladder result ({type(exc).__name__}: {exc})") from None
    games = _read_ladder_games(folder / "games.csv", result)
    pairs = []
    for p in result.pairs:
        played = tuple(games.get((p.a, p.b), ()))
        what = f"{folder / 'games.csv'}: the pair {result.labels[p.a]} vs {result.labels[p.b]}"
        if [g.index for g in played] != list(range(p.games)):
            raise ValueError(f"{what} has {len(played)} games (indices in order), ladder.json says {p.games}")
        derived = _pair_result(result.specs, p.a, p.b, p.seed, played, p.wall_seconds)
        if (derived.wins_a, derived.wins_b) != (p.wins_a, p.wins_b):
            raise ValueError(f"{what}: its games' winners do not add up to the wins in ladder.json")
        pairs.append(dataclasses.replace(p, game_results=played))
    return dataclasses.replace(result, pairs=tuple(pairs))


def _read_ladder_games(path: Path, result: LadderResult) -> dict[tuple[int, int], list[GameResult]]:
    """The rows of a ladder's ``games.csv`` (:func:`write_ladder_games`) as games per pair."""
    config = result.config
    n = config.num_players
    header = _ladder_games_header(n)
    label_index = {label: k for k, label in enumerate(result.labels)}
    seeds = {(p.a, p.b): p.seed for p in result.pairs}
    out: dict[tuple[int, int], list[GameResult]] = {}
    if not path.exists():
        raise ValueError(f"{path.parent}: no games.csv beside ladder.json")
    check_readable(path, 4096 * MIB, "ladder games.csv")  # a regular file (never a FIFO or a device): else named
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            if next(reader, None) != header:
                raise ValueError(f"{path}: not a {n}-player ladder's games.csv (its columns: {', '.join(header)})")
            for line, row in enumerate(reader, 2):
                try:
                    key, game = _game_from_row(row, header, result, label_index, seeds)
                except ValueError as exc:
                    raise ValueError(f"{path}:{line}: {exc}") from None
                out.setdefault(key, []).append(game)
    except FileNotFoundError:
        raise ValueError(f"{path.parent}: no games.csv beside ladder.json") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: cannot be read ({exc})") from None
    return out


def _game_from_row(
    row: list[str], header: list[str], result: LadderResult, label_index: Mapping[str, int],
    seeds: Mapping[tuple[int, int], int],
) -> tuple[tuple[int, int], GameResult]:
    if len(row) != len(header):
        raise ValueError(f"{len(row)} columns, expected {len(header)}")
    cell = dict(zip(header, row, strict=True))
    try:
        a, b = sorted((label_index[cell["pair_a"]], label_index[cell["pair_b"]]))
    except KeyError as exc:
        raise ValueError(f"agent {exc.args[0]!r} is not in ladder.json ({', '.join(result.labels)})") from None
    if (a, b) not in seeds:
        raise ValueError(f"pair {cell['pair_a']} vs {cell['pair_b']} is not a pair of the ladder")
    if cell["pair_seed"] != str(seeds[a, b]):
        raise ValueError(f"pair_seed {cell['pair_seed']} is not the pair's seed in ladder.json, {seeds[a, b]}")
    local = [result.labels[k] for k in pair_order(result.specs, a, b)]
    return (a, b), parse_game_row(cell, local, result.config, agents="the pair")


# ===================================================================== outputs
def plot_ladder(result: LadderResult, path: str | os.PathLike) -> Path:
    """Heatmap of the pairwise matrix (rows and columns by rating): win rate, Wilson interval, games."""
    import matplotlib  # heavy: loaded only when a plot is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = result.order()
    k = len(order)
    grid = np.full((k, k), np.nan)
    for r, i in enumerate(order):
        for c, j in enumerate(order):
            if i != j:
                grid[r, c] = result.win_rate(i, j).rate
    size = 1.7 * k + 2.2
    fig, ax = plt.subplots(figsize=(size, size * 0.85), dpi=120)
    cmap = plt.get_cmap("RdBu").with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0)
    for r, i in enumerate(order):
        for c, j in enumerate(order):
            if i == j:
                continue
            w = result.win_rate(i, j)
            dark = abs(w.rate - 0.5) > 0.3
            ax.text(
                c, r, f"{100 * w.rate:.1f}%\n{100 * w.low:.1f}–{100 * w.high:.1f}\nn={w.games}",
                ha="center", va="center", fontsize=8, color="white" if dark else "black",
            )
    names = [result.labels[i] for i in order]
    ax.set_xticks(range(k), names, rotation=30, ha="right")
    ax.set_yticks(range(k), names)
    ax.set_xlabel("column agent")
    ax.set_ylabel("row agent")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="share of games won by the row agent")
    ax.set_title(
        "Row agent's win rate against the column agent\n(95% Wilson interval, games; draws count as not won)\n"
        + _wrap(result.describe(), 80),
        fontsize=8,
    )
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out


def _wrap(text: str, width: int) -> str:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def write_ladder_outputs(result: LadderResult, out_dir: str | os.PathLike, extra: Mapping[str, Any]) -> list[Path]:
    """Write ``ladder.json`` (:meth:`LadderResult.to_dict` plus ``extra``), ``ladder.md``,
    ``ladder.png`` and, when the pairs hold their games (a result just played, not one read back
    from JSON), ``games.csv``: every game of every pair (:func:`write_ladder_games`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_json_atomic(out / "ladder.json", {**result.to_dict(), **extra})]
    md = out / "ladder.md"
    md.write_text(result.to_markdown() + "\n", encoding="utf-8")
    paths.append(md)
    paths.append(plot_ladder(result, out / "ladder.png"))
    if any(p.game_results for p in result.pairs):
        paths.append(write_ladder_games(result, out / "games.csv"))
    return paths


def _ladder_games_header(num_players: int) -> list[str]:
    """The columns of a ladder's ``games.csv``: the pair, then a tournament's (:func:`games_header`)."""
    return ["pair_a", "pair_b", "pair_seed", *games_header(num_players)]


def write_ladder_games(result: LadderResult, path: str | os.PathLike) -> Path:
    """Every game of every pair as CSV: the pair's two labels and seed, then the columns of a
    tournament's ``games.csv`` (:func:`~skipbo_env.agents.report.games_header`). A pair's games
    replay from its seed with :func:`~skipbo_env.agents.tournament.run_tournament` (the two specs in
    sorted order), so two agents' games on the same deals can be matched row by row."""
    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(_ladder_games_header(result.config.num_players))
        for p in result.pairs:
            local = pair_order(result.specs, p.a, p.b)
            labels = [result.labels[k] for k in local]
            for g in p.game_results:
                writer.writerow([result.labels[p.a], result.labels[p.b], p.seed, *game_row(g, labels)])
    return path


def parse_pair_games(text: str, specs: Sequence[str]) -> tuple[tuple[str, str], int]:
    """``SPEC1:SPEC2=N`` (the CLI's ``--pair-games``) as ``((SPEC1, SPEC2), N)``; specs may hold
    colons themselves (``search:8:4``), so the split must leave two of the ladder's specs.

    Raises:
        ValueError: no ``=N``, N not an int, or no single split into two of ``specs``.
    """
    left, eq, count = text.rpartition("=")
    if not eq or not left:
        raise ValueError(f"--pair-games {text!r}: expected SPEC1:SPEC2=N")
    try:
        n = int(count)
    except ValueError:
        raise ValueError(f"--pair-games {text!r}: {count!r} is not a number of games") from None
    known = set(specs)
    splits = [
        (left[:m], left[m + 1 :]) for m, ch in enumerate(left)
        if ch == ":" and left[:m] in known and left[m + 1 :] in known
    ]
    if len(splits) != 1:
        raise ValueError(
            f"--pair-games {text!r}: expected two of the ladder's agents ({', '.join(specs)}) "
            "joined by ':'" + (" (ambiguous)" if splits else "")
        )
    return splits[0], n
