"""Tournament output: a markdown table, JSON and CSV files and a PNG chart."""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..records import write_json_atomic
from ..rules import GameConfig
from .tournament import GameResult, TournamentResult


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def config_flags(cfg: GameConfig) -> list[str]:
    """The game's description for report lines: players, stock size, variant flags, turn limit."""
    flags = [f"{cfg.num_players} players", f"stock {cfg.stock_size}"]
    if cfg.partner_game:
        flags.append("partner game")
    if not cfg.allow_wild_discard:
        flags.append("no wild discards")
    if cfg.must_play_stock:
        flags.append("must play stock")
    flags.append(f"turn limit {cfg.turn_limit}")
    return flags


def describe_game(result: TournamentResult) -> str:
    """One line: players, variant flags, games, deals and seatings, seed."""
    flags = config_flags(result.config)
    return (
        f"{' vs '.join(result.labels)}: {', '.join(flags)}; {len(result.games)} games "
        f"({result.deals} deals x {len(result.lineups)} seatings), seed {result.seed}"
    )


def markdown(result: TournamentResult) -> str:
    """The tables printed by ``evaluate.py``: agents, head-to-head, game figures."""
    lines = [
        f"### {describe_game(result)}",
        "",
        "| agent | games | wins | win rate | 95% CI (Wilson) | fair share | OpenSkill mu ± sigma | "
        "ordinal | stock left when losing |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a in result.agents:
        left = "—" if a.stock_left_when_losing is None else f"{a.stock_left_when_losing:.1f}"
        lines.append(
            f"| {a.label} | {a.games} | {a.wins} | {_pct(a.win_rate)} | "
            f"{_pct(a.ci_low)} – {_pct(a.ci_high)} | {_pct(a.fair_share)} | "
            f"{a.rating_mu:.2f} ± {a.rating_sigma:.2f} | {a.rating_ordinal:.2f} | {left} |"
        )
    if len(result.labels) > 1:
        lines += ["", "Head-to-head (share of the games with both agents won by the row agent):", ""]
        lines.append("| | " + " | ".join(result.labels) + " |")
        lines.append("|---|" + "---:|" * len(result.labels))
        for label, row in zip(result.labels, result.head_to_head, strict=True):
            lines.append(f"| {label} | " + " | ".join(_pct(x) for x in row) + " |")
    seats = "; ".join(
        f"{a.label}: seats {list(a.seat_counts)}, first player in {a.first_player_games}"
        for a in result.agents
    )
    lines += [
        "",
        f"Mean game length {result.mean_turns:.1f} turns; truncated {_pct(result.truncation_rate)} "
        f"of games. Seating ({seats}).",
    ]
    return "\n".join(lines)


def write_outputs(result: TournamentResult, out_dir: str | os.PathLike, extra: dict[str, Any]) -> list[Path]:
    """Write ``results.json``, ``agents.csv``, ``games.csv`` and ``win_rates.png`` to ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_json_atomic(out / "results.json", {**result.summary(), **extra})]
    paths.append(_write_agents_csv(result, out / "agents.csv"))
    paths.append(_write_games_csv(result, out / "games.csv"))
    paths.append(plot_win_rates(result, out / "win_rates.png"))
    return paths


def _write_agents_csv(result: TournamentResult, path: Path) -> Path:
    fields = [
        "label", "spec", "games", "wins", "win_rate", "ci_low", "ci_high", "fair_share",
        "rating_mu", "rating_sigma", "rating_ordinal", "stock_left_when_losing", "first_player_games",
    ]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*fields, *(f"vs_{label}" for label in result.labels)])
        for a, row in zip(result.agents, result.head_to_head, strict=True):
            values = [getattr(a, f) for f in fields]
            writer.writerow([*values, *("" if x is None else x for x in row)])
    return path


def games_header(num_players: int) -> list[str]:
    """The columns of ``games.csv``: one row per game (:func:`game_row`)."""
    n = num_players
    return [
        "index", "deal", "lineup", *(f"seat{s}" for s in range(n)), "first_player",
        "winner_seat", "winner_agent", "truncated", "turns", *(f"stock_left{s}" for s in range(n)),
    ]


def game_row(g: GameResult, labels: Sequence[str]) -> list[Any]:
    """One game as a ``games.csv`` row; ``labels`` names the tournament's agents (``g.seats`` indexes it)."""
    win = g.winning_agent
    return [
        g.index, g.deal, g.lineup, *(labels[a] for a in g.seats), g.first_player,
        "" if g.winner is None else g.winner, "" if win is None else labels[win],
        int(g.truncated), g.turns, *g.stock_left,
    ]


def parse_game_row(
    cells: Mapping[str, str], labels: Sequence[str], config: GameConfig, agents: str = "the agents"
) -> GameResult:
    """One ``games.csv`` row back as a game, the inverse of :func:`game_row`: ``cells`` by column
    (:func:`games_header`), ``labels`` the agents that ``seats`` indexes (``agents`` names them in
    messages).

    Raises:
        ValueError: naming the column that does not parse or does not agree with the others.
    """
    n = config.num_players

    def number(column: str, low: int = 0, high: int | None = None) -> int:
        text = cells[column]
        if not (text.isascii() and text.isdigit()) or (high is not None and not low <= int(text) <= high):
            raise ValueError(f"{column} must be an int{f' in {low}..{high}' if high is not None else ''}, got {text!r}")
        return int(text)

    seat_labels = [cells[f"seat{s}"] for s in range(n)]
    if not set(seat_labels) <= set(labels):
        raise ValueError(f"seats {seat_labels} name an agent outside {agents} {list(labels)}")
    winner = None if cells["winner_seat"] == "" else number("winner_seat", 0, n - 1)
    if cells["winner_agent"] != ("" if winner is None else seat_labels[winner]):
        raise ValueError(f"winner_agent {cells['winner_agent']!r} is not the agent in winner_seat {winner}")
    return GameResult(
        index=number("index"), deal=number("deal"), lineup=number("lineup"),
        seats=tuple(list(labels).index(label) for label in seat_labels),
        first_player=number("first_player", 0, n - 1), winner=winner,
        winners=() if winner is None else config.team_seats(config.team(winner)),
        truncated=bool(number("truncated", 0, 1)), turns=number("turns"),
        stock_left=tuple(number(f"stock_left{s}") for s in range(n)),
    )


def _write_games_csv(result: TournamentResult, path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(games_header(result.config.num_players))
        for g in result.games:
            writer.writerow(game_row(g, result.labels))
    return path


def plot_win_rates(result: TournamentResult, path: str | os.PathLike) -> Path:
    """Bar chart of win rates with their Wilson intervals and each agent's fair share."""
    import matplotlib  # heavy: loaded only when a plot is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = result.agents
    xs = range(len(agents))
    rates = [a.win_rate for a in agents]
    err = [[max(0.0, a.win_rate - a.ci_low) for a in agents], [max(0.0, a.ci_high - a.win_rate) for a in agents]]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(agents) + 2), 4.0), dpi=120)
    ax.bar(xs, rates, yerr=err, capsize=6, color="#4c78a8", label="win rate (95% Wilson CI)")
    for x, a in zip(xs, agents, strict=True):
        ax.hlines(a.fair_share, x - 0.4, x + 0.4, colors="#e45756", linestyles="dashed",
                  label="fair share" if x == 0 else "_nolegend_")  # one legend entry for all the lines
        ax.text(x, a.ci_high + 0.02, f"{100 * a.win_rate:.1f}%", ha="center", fontsize=9)
    ax.set_xticks(list(xs), [a.label for a in agents])
    ax.set_ylim(0, 1.25)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("share of games won")
    ax.set_title(describe_game(result).replace(": ", "\n", 1).replace("; ", "\n"), fontsize=8)
    ax.legend(fontsize=8, loc="upper right", ncol=2)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
