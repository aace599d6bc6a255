"""OpenSpiel state strings and parameters from someone else: data only, named errors.

A crafted string (OpenSpiel's pickled ``__dict__=`` form with a payload that writes a file) runs
no code through any entry point OpenSpiel offers for a Python game; bad parameters and corrupt
strings fail with an error naming the field. Hypothesis fuzzes both.
"""

from __future__ import annotations

import base64
import io
import pickle

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_openspiel import _midgame, play_random  # noqa: E402

import skipbo_env.openspiel  # noqa: E402,F401  (registers python_skipbo)
from skipbo_env.openspiel import SkipBoGame  # noqa: E402
from skipbo_env.rules import ConfigError, StateError  # noqa: E402


class _Payload:
    """Unpickling this creates ``path``: proof that code ran."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _pickled_form(marker) -> str:
    return "history=\nmove_number=0\n__dict__=" + base64.b64encode(pickle.dumps({"x": _Payload(str(marker))})).decode()


def _game_and_state(game_string: str, state_text: str) -> str:
    return f"# crafted\n[Meta]\nVersion: 1\n\n[Game]\n{game_string}\n[State]\n{state_text}"


@pytest.mark.parametrize("game_string", ["python_skipbo()", "python_skipbo(players=3)", "python_skipbo",
                                         " python_skipbo(players=2) "])
def test_a_crafted_state_string_runs_no_code(tmp_path, game_string):
    marker = tmp_path / "ran"
    game = pyspiel.load_game("python_skipbo")
    with pytest.raises(StateError, match="three lines"):
        game.deserialize_state(_pickled_form(marker))
    with pytest.raises((StateError, ValueError)):
        pyspiel.deserialize_game_and_state(_game_and_state(game_string, _pickled_form(marker)))
    assert not marker.exists()


def test_openspiels_pickled_path_is_refused_for_skipbo(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(ValueError, match="pickled form"):
        pyspiel.deserialize_game_and_state(_game_and_state("python_skipbo", _pickled_form(marker)))
    assert not marker.exists()


def test_other_games_deserialize_as_before():
    game = pyspiel.load_game("kuhn_poker")
    state = game.new_initial_state().child(0).child(1)
    again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1]
    assert str(again) == str(state)


class _Recorder(pickle.Unpickler):
    """Records every global a pickle asks for."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.asked: list[tuple[str, str]] = []

    def find_class(self, module, name):
        self.asked.append((module, name))
        return super().find_class(module, name)


def test_a_pickled_state_is_its_state_string():
    game, state = _midgame(2, {"players": 2})
    data = pickle.dumps(state)
    recorder = _Recorder(data)
    copy = recorder.load()
    assert recorder.asked == [("skipbo_env.openspiel.game", "_unpickle_state")]
    assert "__dict__=" not in data.decode("latin-1") and state.serialize().encode() in data
    assert str(copy) == str(state)
    assert str(pickle.loads(pickle.dumps(game))) == str(game)


def test_a_resampled_state_round_trips():
    game, state = _midgame(4, {"players": 3})
    rng = np.random.default_rng(0)
    sample = state.resample_from_infostate(state.current_player(), lambda: float(rng.random()))
    for _ in range(5):
        sample.apply_action(
            sample.legal_actions()[0] if not sample.is_chance_node() else sample.chance_outcomes()[0][0]
        )
    again = game.deserialize_state(sample.serialize())
    assert str(again) == str(sample) and again.history() == sample.history()
    assert again.information_state_string(1) == sample.information_state_string(1)
    play_random(again, rng)


@pytest.mark.parametrize(("text", "path"), [
    ("history=0:0\nmove_number=1\nskipbo=", "history[0]"),
    ("history=-1:99\nmove_number=1\nskipbo=", "history[0]"),
    ("history=x\nmove_number=0\nskipbo=", "history[0]"),
    ("history=\nmove_number=5\nskipbo=", "move_number"),
    ("history=\nmove_number=-1\nskipbo=", "move_number"),
    ("history=\nmove_number=0\nskipbo={", "skipbo"),
    ("history=\nmove_number=0\nskipbo=" + "[" * 5000, "skipbo"),
    ("history=\nmove_number=0\nskipbo={\"first\": 0}", "skipbo"),
    ("history=\nmove_number=0", "state"),
])
def test_corrupt_state_strings_name_the_field(text, path):
    game = pyspiel.load_game("python_skipbo")
    with pytest.raises(StateError) as error:
        game.deserialize_state(text)
    assert error.value.path == path


@pytest.mark.parametrize("key", ["move_limit", "turn_limit", "stock_size", "players", "first_player"])
@pytest.mark.parametrize("value", [2**31, 2**63, -(2**31) - 1])
def test_parameters_beyond_a_cpp_int_name_the_field(key, value):
    for make in (lambda: pyspiel.load_game("python_skipbo", {key: value}), lambda: SkipBoGame({key: value})):
        with pytest.raises(ConfigError) as error:
            make()
        assert error.value.field == key


def test_chance_outcomes_only_at_chance_nodes():
    game, state = _midgame(1, {"players": 2})
    with pytest.raises(ValueError, match="decision node"):
        state.chance_outcomes()
    play_random(state, np.random.default_rng(0))
    with pytest.raises(ValueError, match="terminal node"):
        state.chance_outcomes()


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_fuzzed_state_strings_fail_with_a_state_error(text):
    game = pyspiel.load_game("python_skipbo")
    try:
        state = game.deserialize_state(text)
    except StateError:
        return
    assert state.serialize() == text  # whatever is read is exactly a state string


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 130), max_size=40), st.integers(0, 45))
def test_fuzzed_histories_replay_or_name_the_entry(actions, move_number):
    game = pyspiel.load_game("python_skipbo", {"players": 2, "stock_size": 3})
    entries = ",".join(f"-1:{a}" if a < 13 else f"0:{a}" for a in actions)
    try:
        state = game.deserialize_state(f"history={entries}\nmove_number={move_number}\nskipbo=")
    except StateError as error:
        assert error.path.startswith("history[") or error.path == "move_number"
        return
    assert state.move_number() == move_number


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(skipbo_env.openspiel.game.PARAMETERS) + ["bogus"]),
                       st.one_of(st.integers(-(2**70), 2**70), st.booleans(), st.text(max_size=5)), max_size=4))
def test_fuzzed_parameters_load_or_raise_a_named_error(params):
    try:
        SkipBoGame(params)
    except (ConfigError, ValueError, TypeError):
        return

