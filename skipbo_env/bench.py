"""``skipbo bench``: quick throughput figures of this machine.

Random legal play, one process: moves per second of the rules core, steps per second of the
PettingZoo AEC env (``last()`` then ``step()``), and, with the ``fast`` extra, decisions per
second of the batched engine; each the best of ``--repeats`` timed runs. The detailed
benchmarks are in the repository's ``benchmarks/``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from .extras import HelpFormatter, docs_url
from .rules import ConfigError, GameConfig, new_game


def rules_moves(config: GameConfig, moves: int, seed: int) -> int:
    """Apply ``moves`` random legal moves on the rules core (new games as they end)."""
    rng = np.random.default_rng(seed)
    state, done = new_game(config, seed=seed), 0
    while done < moves:
        if state.is_over:
            state = new_game(config, seed=int(rng.integers(2**31)))
        legal = state.legal_moves()
        state.apply(legal[int(rng.integers(len(legal)))])
        done += 1
    return done


def aec_steps(config: GameConfig, steps: int, seed: int) -> int:
    """``steps`` AEC steps (``last()`` then a random legal action), resetting as games end."""
    from .aec import raw_env  # loads gymnasium and pettingzoo

    env = raw_env(**config.to_dict())
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.reset()
            continue
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return steps


def engine_decisions(config: GameConfig, steps: int, seed: int) -> int:
    """Decisions of the batched engine (256 games, random legal actions, autoreset)."""
    from .vector import BatchEngine  # needs the fast extra

    engine = BatchEngine(config, 256, seed=seed)
    for _ in range(steps):
        engine.step(engine.random_legal())
        engine.reset(engine.done)
    return steps * 256


def best_rate(run: Callable[[], int], repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        count = run()
        rates.append(count / (time.perf_counter() - start))
    return max(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="skipbo bench", formatter_class=HelpFormatter,
                                     description="Quick throughput figures of this machine: random legal play, "
                                                 "one process, the best of --repeats timed runs.",
                                     epilog=f"Measured figures of every interface: {docs_url('performance')}")
    parser.add_argument("--players", type=int, default=2, help="players per game, 2-6 (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per figure, best kept (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the random play (default 0)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    try:
        config = GameConfig(num_players=args.players)
    except ConfigError as exc:
        parser.error(f"--players: {exc}")
    rows = [
        ("rules core", "moves/s", lambda: rules_moves(config, 20_000, args.seed)),
        ("AEC env (skipbo_v0)", "steps/s", lambda: aec_steps(config, 10_000, args.seed)),
    ]
    try:
        import numba  # noqa: F401 - only to know whether the engine can run

        engine_decisions(config, 2, args.seed)  # compile (or load the cache) outside the timing
        rows.append(("batched engine (256 games)", "decisions/s", lambda: engine_decisions(config, 200, args.seed)))
    except ImportError:
        print("(batched engine skipped: it needs the 'fast' extra, pip install 'skipbo-env[fast]')")
    print(f"| what | rate ({args.players} players, random legal play, best of {args.repeats}) |")
    print("|---|---:|")
    for name, unit, run in rows:
        print(f"| {name} | {best_rate(run, args.repeats):,.0f} {unit} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
