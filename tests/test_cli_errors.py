"""The ``skipbo`` subcommands under careless use: every bad option is one ``error:`` line (exit 2)
naming the option, never a traceback; ``skipbo replay`` needs a file."""

from __future__ import annotations

import io

import pytest

from skipbo_env import cli


def one_error_line(capsys, prog: str) -> str:
    """The single stderr line of a refused command (argparse's ``prog: error: ...``)."""
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err, err
    last = err.splitlines()[-1]
    assert last.startswith(f"{prog}: error: "), err
    return last


@pytest.mark.parametrize(("argv", "message"), [
    (["--seed", "-1"], "--seed must be >= 0, got -1"),
    (["--players", *["greedy"] * 7], "num_players: must be in 2..6, got 7"),
    (["--partner"], "partner_game: needs 4 or 6 players"),
])
def test_demo_refuses_bad_options_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["demo", "--quiet", *argv])
    assert stop.value.code == 2
    assert message in one_error_line(capsys, "skipbo demo")


@pytest.mark.parametrize(("argv", "message"), [
    (["--repeats", "0"], "--repeats must be >= 1, got 0"),
    (["--seed", "-5"], "--seed must be >= 0, got -5"),
    (["--players", "9"], "num_players: must be in 2..6, got 9"),
])
def test_bench_refuses_bad_options_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["bench", *argv])
    assert stop.value.code == 2
    assert message in one_error_line(capsys, "skipbo bench")


@pytest.mark.parametrize("flag", ["--out", "--save-records"])
@pytest.mark.parametrize("folder", ["/proc/no-such-folder/x", "/etc/passwd/x"])
def test_evaluate_refuses_an_output_folder_it_cannot_make_before_playing(flag, folder, tmp_path, capsys, monkeypatch):
    from skipbo_env import evaluation

    def no_games(*args, **kwargs):
        raise AssertionError("no game is played when an output folder cannot be made")

    monkeypatch.setattr(evaluation, "run_tournament", no_games)
    outputs = {"--out": str(tmp_path / "out"), "--save-records": None, flag: folder}
    argv = ["evaluate", "--agents", "greedy", "random", "--games", "2", "--workers", "1", "--no-progress"]
    argv += [arg for name, value in outputs.items() if value is not None for arg in (name, value)]
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    line = one_error_line(capsys, "skipbo evaluate")
    assert f"{flag} {folder}: cannot make the folder" in line


def test_replay_without_a_file_says_a_file_is_needed(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    with pytest.raises(SystemExit) as stop:
        cli.main(["replay"])
    assert stop.value.code == 2
    assert "FILE" in one_error_line(capsys, "skipbo replay")
    assert "your move" not in capsys.readouterr().out  # no new game was started


def test_replay_takes_its_options_before_or_after_the_file(tmp_path, capsys):
    from skipbo_env.agents.tournament import run_tournament

    run_tournament(["greedy", "random"], games=2, seed=0, workers=1, records_dir=tmp_path)
    record = str(tmp_path / "game_000000.json")
    for argv in (["replay", record, "--auto", "--no-color", "--delay", "0"],
                 ["replay", "--auto", "--no-color", "--delay", "0", record]):
        assert cli.main(argv) == 0
        assert "end of the record" in capsys.readouterr().out
    assert cli.main(["replay", str(tmp_path / "missing.json"), "--auto"]) == 1
    assert "cannot replay" in capsys.readouterr().err


def test_the_commands_are_a_table_of_plain_functions():
    assert set(cli.COMMANDS) == {"train", "train-rllib", "evaluate", "curves", "play", "replay", "demo", "bench"}
    for command in cli.COMMANDS.values():
        assert callable(command.run) and command.help


def test_evaluate_leaves_no_folder_it_made_when_the_tournament_is_refused(tmp_path, capsys):
    out, records = tmp_path / "new" / "out", tmp_path / "new" / "out" / "records"
    kept = tmp_path / "kept"
    kept.mkdir()
    for folders in ((out, records), (kept, records)):
        with pytest.raises(SystemExit):
            cli.main(["evaluate", "--agents", "greedy", "nobody", "--games", "2", "--workers", "1", "--no-progress",
                      "--out", str(folders[0]), "--save-records", str(folders[1])])
        assert "unknown agent 'nobody'" in one_error_line(capsys, "skipbo evaluate")
    assert not (tmp_path / "new").exists() and kept.is_dir()  # a folder that was there before stays
