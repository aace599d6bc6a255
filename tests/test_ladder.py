"""The round-robin ladder: pairs, seeds, pairwise win rates, pooled ratings, output, CLI."""

from __future__ import annotations

import csv
import json

import pytest

import evaluate  # the repository script (tests run from the repository root)
from skipbo_env.agents import ladder as ladder_module
from skipbo_env.agents.ladder import (
    LadderResult,
    pair_seed,
    parse_pair_games,
    read_ladder,
    run_ladder,
    write_ladder_outputs,
)
from skipbo_env.agents.tournament import run_tournament
from skipbo_env.rules import GameConfig

SHORT = GameConfig(short_game=True)
TRIO = ["random", "greedy", "heuristic"]


def untimed(data: dict) -> dict:
    """A ladder's JSON form without its wall times."""
    pairs = [{k: v for k, v in p.items() if k != "wall_seconds"} for p in data["pairs"]]
    return {k: v for k, v in data.items() if k != "wall_seconds"} | {"pairs": pairs}


@pytest.fixture(scope="module")
def trio():
    return run_ladder(TRIO, SHORT, games=20, seed=3, pair_games={("heuristic", "random"): 6})


def test_every_pair_once_with_its_game_count(trio):
    assert [(p.a, p.b) for p in trio.pairs] == [(0, 1), (0, 2), (1, 2)]
    assert [p.games for p in trio.pairs] == [20, 6, 20]  # the override, given in reverse order, applies
    for p in trio.pairs:
        assert len(p.game_results) == p.games
        assert {g.seats for g in p.game_results} == {(0, 1), (1, 0)}  # each pair is seat-balanced
    assert trio.games == 20 and trio.labels == tuple(TRIO)
    # every agent's totals are its pairs' totals
    assert [r.games for r in trio.ratings] == [26, 40, 26]
    assert sum(r.wins for r in trio.ratings) + sum(p.draws for p in trio.pairs) == 46


def test_pairwise_win_rates_are_complementary():
    """Draws (truncated games) count as not won: win(a, b) + win(b, a) + draws = 1, and a short
    turn limit makes sure there are draws to count."""
    result = run_ladder(["random", "greedy"], GameConfig(short_game=True, turn_limit=40), games=20, seed=0)
    (pair,) = result.pairs
    assert pair.draws > 0 and pair.wins_a + pair.wins_b + pair.draws == pair.games
    ab, ba = result.win_rate(0, 1), result.win_rate(1, 0)
    assert ab.wins + ba.wins + pair.draws == 20
    assert ab.rate + ba.rate + pair.draws / 20 == pytest.approx(1.0)
    assert ab.low <= ab.rate <= ab.high and ba.low <= ba.rate <= ba.high
    # the pair is played in sorted spec order: greedy (ladder agent 1) is the pair's agent 0
    assert ba.wins == sum(1 for g in pair.game_results if g.winning_agent == 0) == 4


def test_win_rate_matches_the_pairs_games(trio):
    for p in trio.pairs:
        for row, col in ((p.a, p.b), (p.b, p.a)):
            w = trio.win_rate(row, col)
            assert w.games == p.games and w.wins == p.wins(row)
    with pytest.raises(ValueError, match="no pair"):
        trio.pair(0, 0)


def test_same_seed_same_ladder_and_pairs_do_not_depend_on_the_others(trio):
    again = run_ladder(TRIO, SHORT, games=20, seed=3, pair_games={("random", "heuristic"): 6})
    assert again == trio  # wall times are not compared
    assert untimed(again.to_dict()) == untimed(trio.to_dict())
    other = run_ladder(TRIO, SHORT, games=20, seed=4, pair_games={("random", "heuristic"): 6})
    assert [p.game_results for p in other.pairs] != [p.game_results for p in trio.pairs]
    # A pair's games depend on the ladder seed and its two specs only: not on the other agents
    # nor on the order the agents are given in.
    alone = run_ladder(["heuristic", "greedy"], SHORT, games=20, seed=3)
    assert alone.pairs[0].game_results == trio.pair(1, 2).game_results
    assert alone.win_rate(0, 1) == trio.win_rate(2, 1)
    assert pair_seed(3, "heuristic", "greedy") == pair_seed(3, "greedy", "heuristic") == trio.pair(1, 2).seed
    # and they are the games of a plain tournament with that seed, specs in sorted order
    plain = run_tournament(["greedy", "heuristic"], SHORT, games=20, seed=trio.pair(1, 2).seed, workers=1)
    assert plain.games == trio.pair(1, 2).game_results


def test_results_do_not_depend_on_the_number_of_workers():
    one = run_ladder(["greedy", "random", "heuristic"], SHORT, games=8, seed=1, workers=1)
    two = run_ladder(["greedy", "random", "heuristic"], SHORT, games=8, seed=1, workers=2, batch_size=3)
    assert one == two


def test_ratings_order_and_fields(trio):
    by_label = {r.label: r for r in trio.ratings}
    assert by_label["greedy"].mu > by_label["random"].mu
    assert [trio.labels[i] for i in trio.order()] == ["heuristic", "greedy", "random"]
    for r in trio.ratings:
        assert r.ordinal == pytest.approx(r.mu - 3 * r.sigma)
        assert r.sigma < 25 / 3  # every agent played: less uncertain than the prior


def test_pooled_ratings_use_every_pair():
    """A pair's games move the ratings of its agents: the same pair with more games gives a
    smaller sigma to both of its agents and leaves the other pairs' games unchanged."""
    few = run_ladder(TRIO, SHORT, games=10, seed=0, pair_games={("greedy", "heuristic"): 2})
    many = run_ladder(TRIO, SHORT, games=10, seed=0, pair_games={("greedy", "heuristic"): 30})
    assert few.pair(0, 1) == many.pair(0, 1) and few.pair(0, 2) == many.pair(0, 2)
    for i in (1, 2):
        assert many.ratings[i].sigma < few.ratings[i].sigma
    assert many.ratings[0] != few.ratings[0]  # pooled and interleaved: random's rating moves too


def test_markdown_tables(trio):
    text = trio.to_markdown()
    assert "3 pairs, 20 or 6 games per pair, 46 games in all; seed 3" in text
    rows = [line for line in text.splitlines() if line.startswith("| 1 |") or line.startswith("| 3 |")]
    assert rows[0].startswith("| 1 | heuristic |") and rows[1].startswith("| 3 | random |")
    assert "| row vs column | heuristic | greedy | random |" in text
    w = trio.win_rate(2, 0)
    assert f"{100 * w.rate:.1f}% ({100 * w.low:.1f}–{100 * w.high:.1f}) n=6" in text
    assert "| random vs heuristic | 6 |" in text
    assert "counts as not won" in text


def test_json_round_trip(trio):
    data = json.loads(trio.to_json())
    assert data["win_rates"]["greedy"]["random"]["games"] == 20
    assert data["pairs"][1]["labels"] == ["random", "heuristic"] and "game_results" not in data["pairs"][1]
    back = LadderResult.from_dict(data)
    assert back.ratings == trio.ratings and back.to_markdown() == trio.to_markdown()
    assert back.win_rate(2, 1) == trio.win_rate(2, 1)


def test_progress_lines(monkeypatch):
    monkeypatch.setattr(ladder_module, "PROGRESS_EVERY_S", 0.0)
    lines: list[str] = []
    run_ladder(["greedy", "random"], SHORT, games=8, seed=0, progress=lines.append, batch_size=2)
    assert lines[0].startswith("pair 1/1 greedy vs random: 8 games, seed ")
    middle = lines[1:-1]
    assert middle and all("games/s, ETA" in line and "(ladder: " in line for line in middle)
    assert lines[-1].startswith("pair 1/1 greedy vs random: done, 8 games in ")
    assert "(ladder: 8/8 games)" in lines[-1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agents": ["greedy"]}, "at least two agents"),
        ({"agents": ["greedy", "random", "greedy"]}, "given more than once: greedy"),
        ({"games": 0}, "games must be a positive multiple of the 2 seatings"),
        ({"games": 5}, "games must be a positive multiple"),
        ({"agents": ["greedy", "nope"]}, "unknown agent 'nope'"),
        ({"config": GameConfig(num_players=3)}, "even number of seats"),
        ({"config": GameConfig(num_players=6, partner_game=True)}, "even number of teams"),
        ({"seed": -1}, "seed must be"),
        ({"workers": 0}, "workers must be"),
        ({"pair_games": {("greedy", "nope"): 4}}, "'nope', not an agent of the ladder"),
        ({"pair_games": {("greedy", "greedy"): 4}}, "with itself"),
        ({"pair_games": {("greedy", "random"): 3}}, r"pair_games\[\('greedy', 'random'\)\] must be"),
        ({"pair_games": {("greedy", "random"): 4, ("random", "greedy"): 6}}, "twice: 4 and 6"),
    ],
)
def test_bad_ladders_fail_before_any_game(kwargs, message, monkeypatch):
    def no_games(*args, **kw):
        raise AssertionError("a game was played")

    monkeypatch.setattr(ladder_module, "run_tournament", no_games)
    args = {"agents": ["greedy", "random"], "config": SHORT, "games": 4, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_ladder(**args)


def test_parse_pair_games():
    specs = ["search:8:4", "greedy", "search"]
    assert parse_pair_games("search:8:4:greedy=10", specs) == (("search:8:4", "greedy"), 10)
    assert parse_pair_games("greedy:search=4", specs) == (("greedy", "search"), 4)
    for bad, message in [("greedy:search", "expected SPEC1:SPEC2=N"), ("greedy:search=x", "not a number"),
                         ("greedy:random=4", "two of the ladder's agents")]:
        with pytest.raises(ValueError, match=message):
            parse_pair_games(bad, specs)


# ============================================================================ CLI
def test_cli_ladder_writes_tables_and_files(capsys, tmp_path):
    out = tmp_path / "out"
    code = evaluate.main(["--ladder", "greedy", "random", "heuristic", "--games", "6", "--short", "--seed", "2",
                          "--pair-games", "random:heuristic=2", "--workers", "1", "--out", str(out)])
    assert code == 0
    captured = capsys.readouterr()
    assert "| row vs column |" in captured.out and "Wall time" in captured.out
    assert "pair 3/3 random vs heuristic: 2 games" in captured.err
    data = json.loads((out / "ladder.json").read_text())
    assert [p["games"] for p in data["pairs"]] == [6, 6, 2]
    assert data["config"]["short_game"] is True and data["seed"] == 2 and data["workers"] == 1
    back = LadderResult.from_dict(data)
    assert (out / "ladder.md").read_text() == back.to_markdown() + "\n"
    assert (out / "ladder.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    direct = run_ladder(["greedy", "random", "heuristic"], SHORT, games=6, seed=2,
                        pair_games={("random", "heuristic"): 2})
    assert back.ratings == direct.ratings
    # games.csv: every game of every pair, its winner as the pair's counts say
    with open(out / "games.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 14
    for p in direct.pairs:
        a, b = direct.labels[p.a], direct.labels[p.b]
        mine = [r for r in rows if (r["pair_a"], r["pair_b"]) == (a, b)]
        assert len(mine) == p.games and {r["pair_seed"] for r in mine} == {str(p.seed)}
        assert sum(r["winner_agent"] == a for r in mine) == p.wins_a
        assert sum(r["winner_agent"] == b for r in mine) == p.wins_b
        assert sum(r["winner_agent"] == "" for r in mine) == p.draws
        assert all({r["seat0"], r["seat1"]} == {a, b} for r in mine)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ladder", "greedy", "nope", "--games", "2"], "unknown agent 'nope'"),
        (["--ladder", "greedy", "random", "--pair-games", "greedy:heuristic=2"], "two of the ladder's agents"),
        (["--ladder", "greedy", "random", "--pair-games", "greedy:random=2", "--pair-games", "random:greedy=4"],
         "twice with different counts"),
        (["--agents", "greedy", "random", "--pair-games", "greedy:random=2"], "--pair-games needs --ladder"),
        (["--agents", "greedy", "--ladder", "greedy", "random"], "not allowed with argument"),
        (["--games", "2"], "one of the arguments --agents --ladder is required"),
        (["--ladder", "greedy", "random", "--players", "3"], "even number of seats"),
    ],
)
def test_cli_ladder_errors(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main([*argv, "--workers", "1", "--no-progress", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# ========================================================================== reuse
@pytest.fixture(scope="module")
def pair_folder(tmp_path_factory):
    """An earlier ladder of one of the trio's pairs (greedy vs heuristic), as evaluate.py writes it."""
    folder = tmp_path_factory.mktemp("earlier")
    earlier = run_ladder(["heuristic", "greedy"], SHORT, games=20, seed=3)
    write_ladder_outputs(earlier, folder, {})
    return folder


def test_read_ladder_gives_back_the_ladder_with_its_games(trio, tmp_path):
    write_ladder_outputs(trio, tmp_path, {"workers": 1})
    back = read_ladder(tmp_path)
    assert back == trio  # pairs with every game, ratings, settings
    assert [p.game_results for p in back.pairs] == [p.game_results for p in trio.pairs]


def test_reused_pairs_give_the_ladder_that_playing_them_gives(trio, pair_folder):
    lines = []
    reused = run_ladder(TRIO, SHORT, games=20, seed=3, pair_games={("heuristic", "random"): 6},
                        reuse=[pair_folder], progress=lines.append)
    assert reused == trio  # the same pairs, games and ratings as the ladder that played everything
    assert [p.reused_from for p in reused.pairs] == ["", "", str(pair_folder)]
    assert any("greedy vs heuristic: 20 games reused from" in line for line in lines)
    assert any(line.startswith("reuse: replaying the first deal of greedy vs heuristic") for line in lines)
    assert "(reused)" in reused.to_markdown().splitlines()[-1]
    # another ladder seed means other deals: nothing to reuse, every pair is played
    other = run_ladder(["greedy", "heuristic"], SHORT, games=2, seed=4, reuse=[pair_folder])
    assert [p.reused_from for p in other.pairs] == [""]


def _copy(folder, tmp_path):
    import shutil

    return shutil.copytree(folder, tmp_path / "copy")


def _edit_games(folder, line, column, value):
    path = folder / "games.csv"
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    rows[line][rows[0].index(column)] = value
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)


def test_a_reused_pair_must_still_play_its_first_deal_the_same(pair_folder, tmp_path):
    changed = _copy(pair_folder, tmp_path)
    _edit_games(changed, 1, "turns", "999")  # as if an agent played differently when the folder was written
    with pytest.raises(ValueError, match="plays differently now"):
        run_ladder(TRIO, SHORT, games=20, seed=3, reuse=[changed])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ((1, "winner_agent", "random"), r"games.csv:2: winner_agent 'random' is not the agent"),
        ((3, "seat0", "random"), r"games.csv:4: seats .* name an agent outside the pair"),
        ((2, "pair_seed", "12"), r"games.csv:3: pair_seed 12 is not the pair's seed"),
        ((1, "index", "x"), r"games.csv:2: index must be an int"),
        ((5, "index", "6"), r"has 20 games \(indices in order\)"),
    ],
)
def test_a_corrupt_games_file_is_named(pair_folder, tmp_path, edit, message):
    broken = _copy(pair_folder, tmp_path)
    _edit_games(broken, *edit)
    with pytest.raises(ValueError, match=message):
        read_ladder(broken)


def test_reuse_errors(pair_folder, tmp_path):
    with pytest.raises(ValueError, match="no ladder.json"):
        run_ladder(TRIO, SHORT, games=20, seed=3, reuse=[tmp_path / "missing"])
    with pytest.raises(ValueError, match="played on another game"):
        run_ladder(["greedy", "heuristic"], GameConfig(), games=20, seed=3, reuse=[pair_folder])
    with pytest.raises(ValueError, match="played 20 games there and 4 in this ladder"):
        run_ladder(["greedy", "heuristic"], SHORT, games=4, seed=3, reuse=[pair_folder])
    with pytest.raises(ValueError, match="is in both"):
        run_ladder(["greedy", "heuristic"], SHORT, games=20, seed=3, reuse=[pair_folder, _copy(pair_folder, tmp_path)])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "ladder.json").write_text("{")
    with pytest.raises(ValueError, match="cannot be read as JSON"):
        read_ladder(tmp_path / "bad")
    (tmp_path / "bad" / "ladder.json").write_text("{}")
    with pytest.raises(ValueError, match="not a ladder result"):
        read_ladder(tmp_path / "bad")
    with pytest.raises(TypeError, match="sequence of folders"):
        run_ladder(TRIO, SHORT, games=20, seed=3, reuse=str(pair_folder))


def test_cli_ladder_reuse(pair_folder, capsys, tmp_path):
    out = tmp_path / "out"
    code = evaluate.main(["--ladder", "greedy", "heuristic", "--games", "20", "--short", "--seed", "3",
                          "--workers", "1", "--reuse", str(pair_folder), "--out", str(out)])
    assert code == 0
    captured = capsys.readouterr()
    assert "(reused)" in captured.out and "20 games reused from" in captured.err
    mine, earlier = read_ladder(out), read_ladder(pair_folder)  # the earlier ladder listed them the other way
    assert mine.specs == ("greedy", "heuristic") and earlier.specs == ("heuristic", "greedy")
    assert mine.pairs[0].game_results == earlier.pairs[0].game_results
    assert (mine.pairs[0].wins_a, mine.pairs[0].wins_b) == (earlier.pairs[0].wins_b, earlier.pairs[0].wins_a)
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", "greedy", "heuristic", "--reuse", str(pair_folder), "--out", str(tmp_path / "x")])
    assert "--reuse needs --ladder" in capsys.readouterr().err
