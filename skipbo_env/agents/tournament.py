"""Seat-balanced tournaments between agents, with paired deals (used by ``evaluate.py``).

Every deal is played in every distinct rotation of the seating, every seed comes from the game's
index, and games run in the batched engine or the rules-layer loop with the same moves, so results
are the same for any ``workers`` and ``batch_size``. docs/baselines.md ("How a tournament is
played") describes the layout.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..bots import AgentBase
from ..episode import GameLoop, play_batched
from ..extras import missing_extra
from ..records import GameRecord, GameRecorder
from ..rules import GameConfig, Move, new_game
from .executors import ChunkRunner, InProcess, open_runner
from .registry import agent_label, derive_seed, load_agent

try:
    from openskill.models import PlackettLuce
except ImportError as exc:
    raise missing_extra(exc, "train", "tournaments (skipbo_env.agents.tournament)") from exc

Z95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal."""


# ====================================================================== layout
def seat_plan(num_agents: int, config: GameConfig) -> list[int]:
    """Agent index per seat before rotation: agents cycled over seats (over teams in the partner game)."""
    sides = config.num_teams
    if not 1 <= num_agents <= sides:
        what = "teams" if config.partner_game else "seats"
        raise ValueError(
            f"{num_agents} agents cannot share {sides} {what}: give between 1 and {sides} agents "
            f"(agents are cycled over the {what})"
        )
    return [config.team(s) % num_agents for s in range(config.num_players)]


def lineups(num_agents: int, config: GameConfig) -> list[tuple[int, ...]]:
    """The distinct cyclic rotations of :func:`seat_plan`, in rotation order (agent index per seat)."""
    base = seat_plan(num_agents, config)
    n = config.num_players
    out: list[tuple[int, ...]] = []
    for r in range(n):
        lineup = tuple(base[(s + r) % n] for s in range(n))
        if lineup not in out:
            out.append(lineup)
    return out


def deal_seed(seed: int, deal: int) -> int:
    """The :func:`new_game` seed of one deal."""
    return derive_seed(seed, deal, 0)


def agent_seed(seed: int, deal: int, lineup: int, seat: int) -> int:
    """The seed of the agent in ``seat`` for one game."""
    return derive_seed(seed, deal, 1, lineup, seat)


# ===================================================================== results
@dataclass(frozen=True)
class GameResult:
    """One finished game."""

    index: int
    deal: int
    lineup: int
    seats: tuple[int, ...]
    """Agent index per seat."""
    first_player: int
    winner: int | None
    """The winning seat (R22), ``None`` when truncated (R23)."""
    winners: tuple[int, ...]
    """Winning seats: the winner and, in the partner game, the partner."""
    truncated: bool
    turns: int
    stock_left: tuple[int, ...]
    """Cards left in each seat's stock at the end."""

    @property
    def winning_agent(self) -> int | None:
        return None if self.winner is None else self.seats[self.winner]


@dataclass(frozen=True)
class AgentSummary:
    """Aggregate figures of one agent over the tournament."""

    label: str
    spec: str
    games: int
    wins: int
    win_rate: float
    ci_low: float
    ci_high: float
    fair_share: float
    """The win rate if every seat were equally strong: the agent's share of the sides."""
    stock_left_when_losing: float | None
    """Mean cards left in the agent's stocks (per seat) in games another agent won."""
    seat_counts: tuple[int, ...]
    """Games played in each seat."""
    first_player_games: int
    """Games in which one of the agent's seats moved first."""
    rating_mu: float
    rating_sigma: float
    rating_ordinal: float


@dataclass(frozen=True)
class TournamentResult:
    """Everything a tournament produced; :meth:`summary` is the JSON form."""

    specs: tuple[str, ...]
    labels: tuple[str, ...]
    config: GameConfig
    seed: int
    deals: int
    lineups: tuple[tuple[int, ...], ...]
    games: tuple[GameResult, ...]
    agents: tuple[AgentSummary, ...]
    head_to_head: tuple[tuple[float | None, ...], ...]
    """``[a][b]``: share of the games with both agents that ``a`` won (``None`` on the diagonal)."""
    mean_turns: float
    truncation_rate: float

    def summary(self) -> dict[str, Any]:
        """JSON-safe summary (per-agent figures, head-to-head, game figures, settings)."""
        return {
            "agents": [dataclasses.asdict(a) for a in self.agents],
            "head_to_head": {
                self.labels[a]: {
                    self.labels[b]: self.head_to_head[a][b] for b in range(len(self.labels)) if b != a
                }
                for a in range(len(self.labels))
            },
            "games": len(self.games),
            "deals": self.deals,
            "lineups": [[self.labels[i] for i in lineup] for lineup in self.lineups],
            "mean_turns": self.mean_turns,
            "truncation_rate": self.truncation_rate,
            "seed": self.seed,
            "config": self.config.to_dict(),
            "specs": list(self.specs),
        }


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (95% by default); (0, 1) for no trials."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


# ===================================================================== playing
DEFAULT_BATCH = 64
"""Games in flight per worker: a network agent decides all of its games of a step in one forward pass."""

_WORKER_AGENTS: dict[tuple, AgentBase] = {}
"""Agents built in this process: one shared object per spec for batched agents (``batched``,
stateless between decisions), one object per (spec, seat, slot of the batch) for the others,
reseeded per game. Built once per tournament."""


def _agent(spec: str, config: GameConfig, seat: int, slot: int, allow_pickle: bool) -> AgentBase:
    shared = _WORKER_AGENTS.get((spec, config))
    if shared is not None:
        return shared
    key = (spec, config, seat, slot)
    agent = _WORKER_AGENTS.get(key)
    if agent is None:
        agent = load_agent(spec, config, seed=None, allow_pickle=allow_pickle)
        _WORKER_AGENTS[(spec, config) if agent.batched else key] = agent
    return agent


def play_tournament_games(
    specs: tuple[str, ...],
    labels: tuple[str, ...],
    config: GameConfig,
    seed: int,
    indices: Sequence[int],
    plan: tuple[tuple[int, ...], ...],
    records_dir: str | None,
    allow_pickle: bool = False,
) -> list[GameResult]:
    """Play games ``indices`` of the tournament all at once and return their results (saving
    their records if asked): in the batched engine where the agents allow it, else on the rules
    layer through the batched game loop (:func:`skipbo_env.episode.play_batched`).

    Every game is dealt from its own seed and every agent of a game is seeded from the game's
    own seeds, and a batched agent decides each game from that game's observation alone, so a
    game's moves do not depend on which other games share its batch.
    """
    engine = None if records_dir else _engine_games()
    if engine is not None and all(
        spec in engine.IN_ENGINE or _agent(spec, config, 0, 0, allow_pickle).batched for spec in specs
    ):
        return _play_in_engine(engine, specs, labels, config, seed, indices, plan, allow_pickle)
    loops: list[GameLoop] = []
    recorders: list[GameRecorder | None] = []
    for slot, index in enumerate(indices):
        deal, lineup = divmod(index, len(plan))
        seats = plan[lineup]
        agents = [_agent(specs[a], config, seat, slot, allow_pickle) for seat, a in enumerate(seats)]
        for seat, agent in enumerate(agents):
            agent.seed(agent_seed(seed, deal, lineup, seat))
        state = new_game(config, deal_seed(seed, deal))
        names = [labels[a] for a in seats]
        loops.append(GameLoop(state, agents, names, game=f"game {slot}"))
        recorders.append(GameRecord.start(state, names) if records_dir else None)
    firsts = [loop.state.current for loop in loops]

    def record(g: int, move: Move) -> None:
        recorder = recorders[g]
        if recorder is not None:
            recorder.add(move)

    play_batched(loops, on_move=record if records_dir else None)
    results = []
    for slot, index in enumerate(indices):
        recorder = recorders[slot]
        if recorder is not None:
            assert records_dir  # a recorder is started only when records_dir is given
            recorder.record().save(Path(records_dir) / f"game_{index:06d}.json")
        results.append(_result(index, plan, firsts[slot], loops[slot].state))
    return results


def _engine_games() -> Any:
    """:mod:`skipbo_env.vector.engine_games` when numba is installed, else ``None``."""
    try:
        from ..vector import engine_games  # the fast extra (numba)
    except ImportError:
        return None
    return engine_games


def _play_in_engine(
    games: Any,
    specs: tuple[str, ...],
    labels: tuple[str, ...],
    config: GameConfig,
    seed: int,
    indices: Sequence[int],
    plan: tuple[tuple[int, ...], ...],
    allow_pickle: bool,
) -> list[GameResult]:
    """:func:`play_tournament_games` in the batched engine (:func:`skipbo_env.vector.engine_games.play_engine_games`):
    scripted seats replayed in compiled code from the seeds their Python agents would get, the
    others batched agents. The same games as the rules-core loop, much faster. ``games`` is
    :mod:`skipbo_env.vector.engine_games`."""
    states, kinds, seeds, outside, names = [], [], [], [], []
    for index in indices:
        deal, lineup = divmod(index, len(plan))
        seats = plan[lineup]
        states.append(new_game(config, deal_seed(seed, deal)))
        kinds.append([games.IN_ENGINE.get(specs[a], games.OUTSIDE) for a in seats])
        seeds.append([agent_seed(seed, deal, lineup, seat) for seat in range(len(seats))])
        outside.append([None if specs[a] in games.IN_ENGINE else _agent(specs[a], config, seat, 0, allow_pickle)
                        for seat, a in enumerate(seats)])
        names.append([labels[a] for a in seats])
    finals = games.play_engine_games(states, kinds, seeds, outside, names)
    return [
        _result(index, plan, start.current, final)
        for index, start, final in zip(indices, states, finals, strict=True)
    ]


def _result(index: int, plan: tuple[tuple[int, ...], ...], first_player: int, state: Any) -> GameResult:
    deal, lineup = divmod(index, len(plan))
    return GameResult(
        index=index,
        deal=deal,
        lineup=lineup,
        seats=plan[lineup],
        first_player=first_player,
        winner=state.winner,
        winners=tuple(state.winners),
        truncated=state.truncated,
        turns=state.turn,
        stock_left=tuple(len(s) for s in state.stocks),
    )


def _play_chunk(args: tuple) -> list[GameResult]:
    specs, labels, config, seed, indices, plan, records_dir, allow_pickle = args
    return play_tournament_games(specs, labels, config, seed, list(indices), plan, records_dir, allow_pickle)


def run_tournament(
    agents: Sequence[str | os.PathLike],
    config: GameConfig | None = None,
    games: int = 2000,
    seed: int = 0,
    workers: int | None = None,
    records_dir: str | os.PathLike | None = None,
    progress: Callable[[int], None] | None = None,
    allow_pickle: bool = False,
    batch_size: int = DEFAULT_BATCH,
    pool: ChunkRunner | None = None,
    ray: str | None = None,
    check_agents: bool = True,
) -> TournamentResult:
    """Play a seat-balanced, deal-paired tournament and aggregate it.

    Args:
        agents: agent specs: names from :data:`skipbo_env.agents.AGENTS` or model
            file paths (see :func:`~skipbo_env.agents.load_agent`); at most one per seat (per team in the partner
            game), cycled over the seats when fewer. A spec given twice is
            two participants (labelled ``name#1``, ``name#2``).
        config: the game (default ``GameConfig()``).
        games: total games; must be a positive multiple of the number of
            lineups (see the module docstring) so that every deal is played
            in every lineup.
        seed: the tournament seed; same seed, same games and results.
        workers: processes; ``None`` uses every core (with ``ray``, every CPU of the cluster),
            ``1`` plays in this process. The games are split into chunks of at most
            ``batch_size`` games, of even sizes, a multiple of ``workers`` of them
            (:func:`chunk_ranges`).
        records_dir: if given, one :class:`skipbo_env.records.GameRecord`
            JSON per game is written there as ``game_NNNNNN.json``.
        progress: called with 0 once the arguments are checked and the games
            start, then with the number of games just finished (e.g. a tqdm
            bar's ``update``).
        allow_pickle: also load pickled checkpoints (MaskablePPO ``.zip``, RLlib
            folders), which can run code when loaded: only for files the caller
            made or trusts (a training run's own evaluation models).
        batch_size: games played at once by each worker (a network agent decides
            all of them in one forward pass per step); results do not depend on it.
        pool: play in this runner's workers (a :class:`~skipbo_env.agents.executors.ChunkRunner`
            from :func:`~skipbo_env.agents.executors.open_runner`, kept by a training run across
            its evaluations) instead of starting new ones; ``workers`` (default: the runner's
            width) still sets how the games are split.
        ray: play the chunks as Ray tasks on the cluster at this address (``auto``, ``HOST:PORT``;
            the ``ray`` extra) instead of local processes. Agent files and ``records_dir`` must be
            reachable at the same paths on every node.
        check_agents: load every agent once in this process before any game starts
            (:func:`check_agent_specs`), so that a bad spec fails at once (default). ``False`` leaves
            the loading to the workers (a bad agent fails there, with the same error): for a caller
            that checked the specs itself and plays the tournament from a second thread beside
            torch work (building a network draws on torch's global generator).

    Raises:
        ValueError: bad agents (unknown name, bad checkpoint), too many agents
            for the seats, or a game count that does not fit the lineups.
    """
    config = config if config is not None else GameConfig()
    specs = tuple(os.fspath(a) for a in agents)
    plan = _check_tournament(specs, config, games, seed, batch_size)
    if workers is not None and (type(workers) is not int or workers < 1):
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if check_agents:
        check_agent_specs(specs, config, allow_pickle)
    labels = participant_labels(specs)
    rdir = None
    if records_dir is not None:
        Path(records_dir).mkdir(parents=True, exist_ok=True)
        rdir = os.fspath(records_dir)
    with contextlib.ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(open_runner(workers or os.cpu_count() or 1, ray))
        if progress is not None:
            progress(0)
        tasks = [(specs, labels, config, seed, indices, plan, rdir, allow_pickle)
                 for indices in chunk_ranges(games, workers or pool.width, batch_size)]
        results = _play_tasks(tasks, pool, progress)
    return aggregate(specs, labels, config, seed, plan, tuple(results[i] for i in range(games)))


def chunk_ranges(games: int, width: int, batch_size: int) -> list[range]:
    """The game indices ``0..games-1`` cut into chunks of at most ``batch_size`` games for ``width``
    workers: a multiple of ``width`` chunks (when there are enough games), sizes differing by at most
    one, so that the workers finish together (64, 64, 64, 8 would leave one worker idle for most of
    its second chunk; 50, 50, 50, 50 does not). Results do not depend on the cut."""
    rounds = -(-games // (width * batch_size))
    count = min(games, width * rounds)
    size, extra = divmod(games, count)
    out, start = [], 0
    for i in range(count):
        stop = start + size + (i < extra)
        out.append(range(start, stop))
        start = stop
    return out


def warm_up(config: GameConfig) -> None:
    """Load in this process what a tournament of a network against scripted agents loads first:
    torch and sb3 (the network's policy classes, where the ``train`` extra is installed) and the
    compiled game and planner kernels (one deal of greedy against the heuristic). A training run's
    evaluation workers run it before their first evaluation
    (:meth:`~skipbo_env.agents.executors.ChunkRunner.prepare`)."""
    try:
        import sb3_contrib  # noqa: F401 - imported for its cost, see above
    except ImportError:  # scripted agents only: nothing more to load
        pass
    run_tournament(["greedy", "heuristic"], config, games=len(lineups(2, config)), seed=0, workers=1)


def check_agent_specs(specs: Sequence[str], config: GameConfig, allow_pickle: bool = False) -> None:
    """Load each distinct agent of ``specs`` once in this process (what :func:`run_tournament` does
    before any game starts): a bad spec raises here, before any process starts."""
    for spec in dict.fromkeys(specs):
        load_agent(spec, config, seed=None, allow_pickle=allow_pickle)


MAX_GAMES = 10**8
"""Most games one tournament plays (each keeps a result row in memory)."""
MAX_BATCH = 65536
"""Most games a worker plays at once."""


def _check_tournament(
    specs: tuple[str, ...], config: GameConfig, games: Any, seed: Any, batch_size: Any
) -> tuple[tuple[int, ...], ...]:
    """The lineups of a tournament whose settings are valid; else ValueError naming the setting."""
    if not specs:
        raise ValueError("give at least one agent")
    plan = tuple(lineups(len(specs), config))
    if type(games) is not int or not 1 <= games <= MAX_GAMES or games % len(plan):
        raise ValueError(
            f"games must be a positive multiple of the {len(plan)} seatings played per deal "
            f"({len(specs)} agents, {config.num_players} players), at most {MAX_GAMES}, got {games!r}"
        )
    if type(seed) is not int or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an int in 0..2**63-1, got {seed!r}")
    if type(batch_size) is not int or not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"batch_size must be an int in 1..{MAX_BATCH}, got {batch_size!r}")
    return plan


def _play_tasks(
    tasks: list[tuple], runner: ChunkRunner, progress: Callable[[int], None] | None
) -> dict[int, GameResult]:
    """Every game of ``tasks`` (chunks of :func:`play_tournament_games` arguments) by index, played
    by ``runner``; a game played twice (a chunk run again after its node died) is an error."""
    if isinstance(runner, InProcess):
        _WORKER_AGENTS.clear()  # a checkpoint file may have changed since the last call
    results: dict[int, GameResult] = {}
    for _, done in runner.run(_play_chunk, tasks):
        for res in done:
            if res.index in results:
                raise RuntimeError(f"game {res.index} came back twice")
            results[res.index] = res
        if progress is not None:
            progress(len(done))
    return results


def participant_labels(specs: tuple[str, ...]) -> tuple[str, ...]:
    """Report labels of the participants: agent labels, ``#1``, ``#2`` ... for a spec given twice."""
    base = [agent_label(s) for s in specs]
    out = []
    for i, label in enumerate(base):
        if base.count(label) > 1:
            label = f"{label}#{base[: i + 1].count(label)}"
        out.append(label)
    return tuple(out)


# ================================================================= aggregation
def aggregate(
    specs: tuple[str, ...],
    labels: tuple[str, ...],
    config: GameConfig,
    seed: int,
    plan: tuple[tuple[int, ...], ...],
    games: tuple[GameResult, ...],
) -> TournamentResult:
    """Per-agent figures, head-to-head shares and OpenSkill ratings, in game order."""
    k = len(specs)
    ratings = openskill_ratings(k, games)
    sides_of = [{config.team(s) for s, a in enumerate(plan[0]) if a == i} for i in range(k)]
    summaries = []
    for i in range(k):
        played = [g for g in games if i in g.seats]
        wins = sum(1 for g in played if g.winning_agent == i)
        lost = [g for g in played if g.winner is not None and g.winning_agent != i]
        left = [g.stock_left[s] for g in lost for s, a in enumerate(g.seats) if a == i]
        low, high = wilson_interval(wins, len(played))
        mu, sigma, ordinal = ratings[i]
        summaries.append(
            AgentSummary(
                label=labels[i],
                spec=specs[i],
                games=len(played),
                wins=wins,
                win_rate=wins / len(played) if played else 0.0,
                ci_low=low,
                ci_high=high,
                fair_share=len(sides_of[i]) / config.num_teams,
                stock_left_when_losing=float(np.mean(left)) if left else None,
                seat_counts=tuple(sum(1 for g in played if g.seats[s] == i) for s in range(config.num_players)),
                first_player_games=sum(1 for g in played if g.seats[g.first_player] == i),
                rating_mu=mu,
                rating_sigma=sigma,
                rating_ordinal=ordinal,
            )
        )
    h2h: list[list[float | None]] = []
    for a in range(k):
        row: list[float | None] = []
        for b in range(k):
            both = [g for g in games if a in g.seats and b in g.seats] if a != b else []
            row.append(sum(1 for g in both if g.winning_agent == a) / len(both) if both else None)
        h2h.append(row)
    return TournamentResult(
        specs=specs,
        labels=labels,
        config=config,
        seed=seed,
        deals=len(games) // len(plan),
        lineups=plan,
        games=games,
        agents=tuple(summaries),
        head_to_head=tuple(tuple(r) for r in h2h),
        mean_turns=float(np.mean([g.turns for g in games])),
        truncation_rate=sum(1 for g in games if g.truncated) / len(games),
    )


def openskill_ratings(k: int, games: tuple[GameResult, ...]) -> list[tuple[float, float, float]]:
    """OpenSkill (Plackett-Luce) rating per agent, updated game by game in game order.

    Each agent is one team per game; the winner ranks first and every other
    agent shares second place; a truncated game is a draw among all.
    """
    model = PlackettLuce()
    ratings = [model.rating(name=str(i)) for i in range(k)]
    for g in games:
        present = sorted(set(g.seats))
        if len(present) < 2:
            continue
        teams = [[ratings[i]] for i in present]
        winner = g.winning_agent
        ranks: list[float] = [1 if (winner is None or i == winner) else 2 for i in present]
        new = model.rate(teams, ranks=ranks)
        for i, team in zip(present, new, strict=True):
            ratings[i] = team[0]
    return [(float(r.mu), float(r.sigma), float(r.ordinal())) for r in ratings]
