"""Bad input gets a named error, never a crash, a hang or a silent wrong result.

Rules core, envs and records; the agent-file and training-run cases have
their own files (tests/test_agent_files.py, tests/test_train_errors.py).
"""

from __future__ import annotations

import io
import json
import os
import stat

import numpy as np
import pytest
from conftest import state_dict

from skipbo_env import play
from skipbo_env.records import MAX_LABEL, GameRecord, clean_label, write_bytes_atomic
from skipbo_env.rules import ConfigError, GameConfig, GameState, StateError, new_game
from skipbo_env.single import SkipBoSingleEnv
from skipbo_env.vector import make_vec_env


# ================================================================= state files
@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_state_version_must_be_the_int(version):
    data = new_game(GameConfig(), seed=1).to_dict()
    data["version"] = version
    with pytest.raises(StateError, match="version: unsupported version"):
        GameState.from_dict(data)


@pytest.mark.parametrize("inc", ["0", "2", str(2**127)])
def test_a_generator_state_with_an_even_increment_is_refused(inc):
    data = new_game(GameConfig(), seed=1).to_dict()
    data["rng"]["inc"] = inc
    with pytest.raises(StateError, match=r"rng.inc: must be odd"):
        GameState.from_dict(data)


def test_the_player_to_move_cannot_hold_nothing_while_the_draw_pile_has_cards():
    with pytest.raises(StateError, match=r"hands\[0\]: the player to move holds no card while the draw pile does"):
        GameState.from_dict(state_dict(2, current=0))
    GameState.from_dict(state_dict(2, current=0, hands={0: [4]}))  # a part-played hand is fine


def test_new_game_names_a_config_that_is_not_a_game_config():
    with pytest.raises(ConfigError, match="config: must be a GameConfig .*got dict"):
        new_game({"num_players": 2}, seed=0)


def test_legal_moves_cannot_be_changed_from_outside():
    state = new_game(GameConfig(), seed=2)
    legal = state.legal_moves()
    assert isinstance(legal, tuple)
    with pytest.raises(AttributeError):
        legal.append(legal[0])  # a tuple has no append
    assert state.legal_moves() is legal


# ====================================================================== envs
class Exploding:
    """An opponent that raises on its second decision."""

    def __init__(self) -> None:
        self.calls = 0

    def act(self, observation) -> int:
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("boom")
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_the_single_env_refuses_to_continue_after_an_opponent_raised():
    env = SkipBoSingleEnv(opponents=Exploding(), learner_seat=0, first_player=0)
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="boom"):
        for _ in range(200):
            discard = [a for a in np.flatnonzero(env.action_masks()) if a >= 72][0]
            env.step(int(discard))
    # the opponent's seat is half-played: no step may go on from here, whatever the action
    with pytest.raises(RuntimeError, match=r"stopped after an error \(RuntimeError: boom\): call reset"):
        env.step(0)
    env.opponents[0].calls = 10
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # a reset starts afresh


def test_the_learners_own_illegal_action_changes_nothing_and_may_be_retried():
    env = SkipBoSingleEnv(opponents="greedy")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    with pytest.raises(Exception, match="illegal move"):
        env.step(illegal)
    env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_a_batch_too_large_for_memory_is_refused_before_allocating():
    with pytest.raises(ValueError, match=r"10,000,000 games need about .* GiB .*use fewer games"):
        make_vec_env(GameConfig(), n_envs=10**7)


# =================================================================== records
def record_dict(players) -> dict:
    state = new_game(GameConfig(stock_size=2), seed=3)
    return {"format": "skipbo-record", "version": 1, "players": players, "initial_state": state.to_dict(),
            "moves": []}


def test_labels_cannot_drive_the_terminal():
    evil = "\x1b]0;pwned\x07\x1b[2J\rfake line\nmore" + "x" * 1_000_000
    record = GameRecord.from_dict(record_dict([evil, "greedy"]))
    label = record.players[0]
    assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in label)
    assert len(label) == MAX_LABEL and label.endswith("…")
    assert clean_label("heuristic") == "heuristic"


def test_replaying_an_evil_record_prints_no_control_characters(tmp_path):
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(record_dict(["\x1b[2J\x1b]0;title\x07" + "A" * 5000, "b\r\nc"])))
    out, err = io.StringIO(), io.StringIO()
    code = play.main(["--replay", str(path), "--auto", "--no-color", "--delay", "0"], stdout=out, stderr=err)
    assert code == 0
    text = out.getvalue()
    assert "\x1b" not in text and "\r" not in text and "\x07" not in text
    assert len(text) < 20_000


@pytest.mark.parametrize(
    "players, message",
    [(["only one"], "must be a list of 2 strings"), ("greedy", "must be a list of 2 strings"),
     ([1, 2], "must be a list of 2 strings")],
)
def test_bad_player_lists_are_named(players, message):
    with pytest.raises(StateError, match=f"record.players: {message}"):
        GameRecord.from_dict(record_dict(players))


def test_deeply_nested_json_is_a_named_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(StateError, match="nested too deeply"):
        GameRecord.load(path)
    out, err = io.StringIO(), io.StringIO()
    assert play.main(["--replay", str(path), "--no-color"], stdout=out, stderr=err) == 1
    assert "cannot replay" in err.getvalue() and "nested too deeply" in err.getvalue()


def test_atomic_writes_keep_the_usual_file_mode(tmp_path):
    old = os.umask(0o022)
    try:
        path = write_bytes_atomic(tmp_path / "out.json", b"{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temp file left


# ================================================================= evaluate.py
@pytest.mark.parametrize("flag", ["--out", "--save-records"])
def test_evaluate_refuses_an_output_path_that_is_a_file_before_playing(tmp_path, flag, capsys):
    import evaluate

    taken = tmp_path / "taken"
    taken.write_text("keep me")
    other = ["--out", str(tmp_path / "out")] if flag == "--save-records" else []
    with pytest.raises(SystemExit) as info:
        evaluate.main(["--agents", "heuristic", "greedy", "--games", "2000", "--workers", "1", "--no-progress",
                       flag, str(taken), *other])
    assert info.value.code == 2
    assert f"{flag} {taken}: exists and is not a folder" in capsys.readouterr().err
    assert taken.read_text() == "keep me" and not (tmp_path / "out").exists()
