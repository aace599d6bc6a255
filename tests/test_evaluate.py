"""Tournaments and ``evaluate.py``: seat balance, paired deals, determinism, output, CLI."""

from __future__ import annotations

import csv
import json

import pytest
from agents.tournament import lineups, run_tournament, seat_plan, wilson_interval

import evaluate  # the repository script (tests run from the repository root)
from skipbo_env.agents import known_agents
from skipbo_env.records import GameRecord
from skipbo_env.rules import GameConfig

SHORT = GameConfig(short_game=True)




@pytest.fixture(scope="module")
def small():
    return run_tournament(["heuristic", "greedy"], SHORT, games=12, seed=3, workers=1)


def test_small_tournament_counts_and_seat_balance(small):
    assert len(small.games) == 12 and small.deals == 6
    assert [g.index for g in small.games] == list(range(12))
    assert small.lineups == ((0, 1), (1, 0))
    for a in small.agents:
        assert a.games == 12
        assert a.seat_counts == (6, 6)  # every seat equally often
        assert a.first_player_games == 6  # the first player is balanced
        assert a.ci_low <= a.win_rate <= a.ci_high and a.fair_share == 0.5
    wins = sum(a.wins for a in small.agents)
    assert wins + sum(g.truncated for g in small.games) == 12
    assert small.head_to_head[0][1] == pytest.approx(small.agents[0].wins / 12)
    assert small.head_to_head[0][0] is None


def test_deals_are_paired(small):
    """Each deal is replayed with the seats swapped: same first seat and stocks, agents exchanged."""
    for deal in range(small.deals):
        a, b = small.games[2 * deal], small.games[2 * deal + 1]
        assert a.deal == b.deal == deal and (a.lineup, b.lineup) == (0, 1)
        assert a.first_player == b.first_player
        assert a.seats == tuple(reversed(b.seats))


def test_results_do_not_depend_on_the_number_of_workers(small):
    again = run_tournament(["heuristic", "greedy"], SHORT, games=12, seed=3, workers=2)
    assert again.games == small.games
    assert again.summary() == small.summary()
    other_seed = run_tournament(["heuristic", "greedy"], SHORT, games=12, seed=4, workers=1)
    assert other_seed.games != small.games


@pytest.mark.parametrize("specs", [("heuristic", "greedy"), ("ppo-2p", "heuristic"), ("random", "ppo-2p")])
def test_results_do_not_depend_on_the_batch_size(specs, tmp_path):
    """Games played many at once (a network deciding all its games in one forward
    pass) give exactly the games, records and summary of games played one at a time."""
    one = run_tournament(list(specs), SHORT, games=16, seed=5, workers=1, batch_size=1,
                         records_dir=tmp_path / "one")
    for batch, workers in ((16, 1), (5, 2)):
        many = run_tournament(list(specs), SHORT, games=16, seed=5, workers=workers, batch_size=batch,
                              records_dir=tmp_path / f"b{batch}")
        assert many.games == one.games
        assert many.summary() == one.summary()
        for game in range(16):
            name = f"game_{game:06d}.json"
            assert (tmp_path / f"b{batch}" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()


def test_batch_size_is_checked():
    with pytest.raises(ValueError, match="batch_size"):
        run_tournament(["heuristic", "greedy"], SHORT, games=2, workers=1, batch_size=0)


def test_agents_are_cycled_over_seats_and_teams():
    four = GameConfig(num_players=4)
    assert seat_plan(2, four) == [0, 1, 0, 1]
    assert lineups(2, four) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    assert lineups(3, GameConfig(num_players=3)) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert len(lineups(4, GameConfig(num_players=4))) == 4
    six_teams = GameConfig(num_players=6, partner_game=True)
    assert seat_plan(2, six_teams) == [0, 1, 0, 0, 1, 0]  # partners (i, i + 3) are the same agent
    for lineup in lineups(2, six_teams):
        assert all(lineup[s] == lineup[(s + 3) % 6] for s in range(6))
    with pytest.raises(ValueError, match="3 agents cannot share 2 teams"):
        seat_plan(3, GameConfig(num_players=4, partner_game=True))
    with pytest.raises(ValueError, match="3 agents cannot share 2 seats"):
        seat_plan(3, GameConfig())


def test_four_players_two_agents_and_partner_game():
    result = run_tournament(["greedy", "random"], GameConfig(num_players=4, short_game=True), games=4,
                            seed=1, workers=1)
    for a in result.agents:
        assert a.seat_counts == (2, 2, 2, 2) and a.fair_share == 0.5
    teams = run_tournament(["greedy", "random"], GameConfig(num_players=4, partner_game=True, short_game=True),
                           games=4, seed=1, workers=1)
    for g in teams.games:
        if g.winner is not None:
            assert len(g.winners) == 2 and {g.seats[s] for s in g.winners} == {g.winning_agent}


def test_three_agents_in_three_player_games():
    result = run_tournament(["heuristic", "greedy", "random"], GameConfig(num_players=3, short_game=True),
                            games=6, seed=0, workers=1)
    for a in result.agents:
        assert a.seat_counts == (2, 2, 2) and a.first_player_games == 2
        assert a.fair_share == pytest.approx(1 / 3)
    row = result.head_to_head[0]
    assert row[0] is None and all(0 <= x <= 1 for x in row[1:])


def test_same_agent_twice_gets_two_labels():
    result = run_tournament(["greedy", "greedy"], SHORT, games=2, seed=0, workers=1)
    assert result.labels == ("greedy#1", "greedy#2")


def test_bad_tournaments_fail_clearly():
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        run_tournament(["heuristic", "nope"], SHORT, games=2, workers=1)
    with pytest.raises(ValueError, match="multiple of the 2 seatings"):
        run_tournament(["heuristic", "greedy"], SHORT, games=3, workers=1)
    with pytest.raises(ValueError, match="workers must be"):
        run_tournament(["heuristic", "greedy"], SHORT, games=2, workers=0)
    with pytest.raises(ValueError, match="at least one agent"):
        run_tournament([], SHORT, games=2, workers=1)


def test_wilson_interval():
    low, high = wilson_interval(5, 10)
    assert (low, high) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_ratings_follow_the_results():
    result = run_tournament(["greedy", "random"], SHORT, games=10, seed=0, workers=1)
    greedy, rnd = result.agents
    assert greedy.wins > rnd.wins and greedy.rating_mu > rnd.rating_mu and greedy.rating_ordinal > rnd.rating_ordinal


# ============================================================================ CLI
def test_cli_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--agents" in out and "--games" in out and "--save-records" in out


def test_cli_bad_agent_name(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["--agents", "heuristic", "nope", "--games", "2", "--workers", "1", "--no-progress",
                       "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    assert f"unknown agent 'nope'; known agents: {', '.join(known_agents())}," in capsys.readouterr().err


def test_cli_bad_config(capsys):
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", "greedy", "--players", "3", "--partner"])
    assert "partner_game" in capsys.readouterr().err


def test_cli_writes_tables_files_and_records(capsys, tmp_path):
    out, records = tmp_path / "out", tmp_path / "records"
    code = evaluate.main(["--agents", "greedy", "random", "--games", "4", "--seed", "2", "--short",
                          "--workers", "1", "--out", str(out), "--save-records", str(records)])
    assert code == 0
    captured = capsys.readouterr()
    assert "| agent | games | wins | win rate | 95% CI (Wilson)" in captured.out
    assert "Head-to-head" in captured.out
    assert "game/s" in captured.err or "game]" in captured.err  # tqdm bar with its rate
    summary = json.loads((out / "results.json").read_text())
    assert summary["games"] == 4 and summary["config"]["short_game"] is True
    assert [a["label"] for a in summary["agents"]] == ["greedy", "random"]
    with open(out / "games.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4
    assert (out / "win_rates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out / "agents.csv", newline="") as fh:
        assert [r["label"] for r in csv.DictReader(fh)] == ["greedy", "random"]
    files = sorted(records.glob("game_*.json"))
    assert len(files) == 4
    for row, path in zip(rows, files, strict=True):
        record = GameRecord.load(path)  # replays the moves and checks the stored result
        final = record.final_state()
        assert str(final.winner if final.winner is not None else "") == row["winner_seat"]
        assert list(record.players) == [row["seat0"], row["seat1"]]


def test_report_handles_a_clean_sweep(tmp_path):
    """Win rates of exactly 0 and 1 (Wilson bounds 0 and 1) still chart and tabulate."""
    from agents.report import markdown, plot_win_rates
    from agents.tournament import GameResult, aggregate

    games = tuple(
        GameResult(index=i, deal=i // 2, lineup=i % 2, seats=((0, 1), (1, 0))[i % 2], first_player=0,
                   winner=((0, 1), (1, 0))[i % 2].index(0), winners=(((0, 1), (1, 0))[i % 2].index(0),),
                   truncated=False, turns=50, stock_left=(0, 7) if i % 2 == 0 else (7, 0))
        for i in range(6)
    )
    result = aggregate(("greedy", "random"), ("greedy", "random"), GameConfig(), 0, ((0, 1), (1, 0)), games)
    assert [a.wins for a in result.agents] == [6, 0]
    assert result.agents[0].ci_high == 1.0 and result.agents[1].ci_low == 0.0
    assert result.agents[1].stock_left_when_losing == 7.0 and result.agents[0].stock_left_when_losing is None
    assert plot_win_rates(result, tmp_path / "chart.png").stat().st_size > 1000
    assert "| greedy | 6 | 6 | 100.0% |" in markdown(result)


def test_default_output_folder_names_the_variant():
    name = evaluate.default_run_name(("heuristic", "greedy"), GameConfig(num_players=4, partner_game=True), 0)
    assert name == "heuristic-greedy-4p-partner-seed0"
    assert (
        evaluate.default_run_name(("a",), GameConfig(short_game=True, turn_limit=50), 3) == "a-2p-short-limit50-seed3"
    )
    assert evaluate.default_run_name(("a",), GameConfig(stock_size=12), 1) == "a-2p-stock12-seed1"
