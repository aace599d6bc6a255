"""Pictures of the table (skipbo_env/draw.py) and the envs' ``rgb_array`` and ``human`` modes.

The reference frames ``tests/golden/render_*.png`` are compared with a
tolerance (font rasterising may move a few pixels between Pillow versions).
After a deliberate change of the drawing, rewrite them with
``SKIPBO_UPDATE_RENDER_GOLDEN=1 pytest tests/test_render.py`` and look at them.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import sys
import types
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from conftest import KNOWN_POSITION as POSITION
from conftest import W, hidden_reshuffle, state_dict

import skipbo_env
from skipbo_env import draw
from skipbo_env.aec import raw_env
from skipbo_env.draw import Layout, card_colour, draw_state, draw_table, draw_view, frame_shape
from skipbo_env.rules import GameConfig, GameState, new_game
from skipbo_env.single import SkipBoSingleEnv

PIL = pytest.importorskip("PIL", reason='the render extra: pip install "skipbo-env[render]"')
from PIL import Image  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("SKIPBO_UPDATE_RENDER_GOLDEN") == "1"
MAX_MEAN_DIFF = 1.5
"""Mean absolute difference (0..255 per channel) allowed against a reference frame."""

BLUE, GREEN, RED = (draw.NUMBER_COLOURS[k] for k in ("blue", "green", "red"))



def known_state() -> GameState:
    return GameState.from_dict(state_dict(3, **POSITION))


def pixel(frame: np.ndarray, x: float, y: float) -> tuple[int, int, int]:
    return tuple(int(v) for v in frame[int(y), int(x)])


def near(colour, expected, tol: int = 12) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(colour, expected, strict=True))


def ink(frame: np.ndarray, box) -> tuple[int, int, int]:
    """A card's colour: its left border halfway down (number cards), which a wild card fills orange."""
    left, top, _, _ = box
    return pixel(frame, left + 1, top + 30)


def face(frame: np.ndarray, box) -> tuple[int, int, int]:
    """Just inside the top-right corner: white for number cards, orange for wild, blue for a back."""
    _, top, right, _ = box
    return pixel(frame, right - 8, top + 4)


def check_golden(frame: np.ndarray, name: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        Image.fromarray(frame).save(path)
    reference = np.asarray(Image.open(path).convert("RGB"))
    assert reference.shape == frame.shape
    diff = np.abs(reference.astype(np.int16) - frame.astype(np.int16)).mean()
    assert diff < MAX_MEAN_DIFF, (
        f"{name}: mean difference {diff:.2f} (set SKIPBO_UPDATE_RENDER_GOLDEN=1 after a deliberate change)"
    )


# ------------------------------------------------------------ frames from the envs
@pytest.mark.parametrize("num_players", [2, 3, 6])
def test_aec_frames_have_the_table_shape(num_players):
    env = skipbo_env.env(num_players=num_players, render_mode="rgb_array")
    env.reset(seed=num_players)
    shape = frame_shape(GameConfig(num_players=num_players))
    assert shape[1] == 800 and shape[0] % 16 == 0
    for _ in range(5):
        frame = env.render()
        assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == shape
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert "rgb_array" in env.metadata["render_modes"] and env.metadata["render_fps"] > 0


def test_single_env_frames_have_the_table_shape():
    env = gymnasium.make("SkipBo-v0", num_players=2, render_mode="rgb_array", opponents="greedy")
    obs, info = env.reset(seed=0)
    shape = frame_shape(GameConfig(num_players=2))
    for _ in range(5):
        frame = env.render()
        assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == shape
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if terminated or truncated:
            break
    assert env.metadata["render_fps"] == raw_env.metadata["render_fps"]


def test_single_env_renders_the_learners_view_and_the_full_table():
    state = state_dict(3, **POSITION)
    for full in (False, True):
        env = SkipBoSingleEnv(num_players=3, learner_seat=0, render_mode="rgb_array", render_full=full)
        env.reset(seed=0, options={"state": state})
        expected = draw_table(known_state(), None if full else 0)
        assert np.array_equal(env.render(), expected)


# ------------------------------------------------------------ a known position
def test_known_position_matches_the_reference_frames():
    state = state_dict(3, **POSITION)
    env = raw_env(num_players=3, render_mode="rgb_array")
    env.reset(options={"state": state})
    check_golden(env.render(), "render_view.png")
    full = raw_env(num_players=3, render_mode="rgb_array", render_full=True)
    full.reset(options={"state": state})
    check_golden(full.render(), "render_full.png")


def test_known_position_draws_each_card_in_its_colour():
    state = known_state()
    frame, lay = draw_table(state, 0), Layout(3)
    # seat 0's hand: 1 5 9 12 SB
    for slot, colour in enumerate((BLUE, GREEN, RED, RED)):
        assert near(ink(frame, lay.hand_box(0, slot)), colour), slot
        assert near(face(frame, lay.hand_box(0, slot)), draw.CARD_FACE)
    assert near(face(frame, lay.hand_box(0, 4)), draw.WILD_FACE)
    assert near(ink(frame, lay.hand_box(0, 4)), draw.WILD_INK)
    # building piles show 2, nothing, 6, 11
    assert near(ink(frame, lay.building_box(0)), BLUE)
    assert near(pixel(frame, *_centre(lay.building_box(1))), draw.FELT)
    assert near(ink(frame, lay.building_box(2)), GREEN)
    assert near(ink(frame, lay.building_box(3)), RED)
    # stock tops: 4, 8, SB
    assert near(ink(frame, lay.stock_box(0)), BLUE)
    assert near(ink(frame, lay.stock_box(1)), GREEN)
    assert near(face(frame, lay.stock_box(2)), draw.WILD_FACE)
    # seat 0's discard piles: [12, 10], [3], [], [SB]; the covered 12 shows its border above the 10
    assert near(ink(frame, lay.discard_card_box(0, 0, 1)), RED)
    assert near(pixel(frame, lay.discard_card_box(0, 0, 0)[0] + 1, lay.discard_card_box(0, 0, 0)[1] + 10), RED)
    assert near(ink(frame, lay.discard_card_box(0, 1, 0)), BLUE)
    assert near(face(frame, lay.discard_card_box(0, 3, 0)), draw.WILD_FACE)
    # seat 1's long pile 9 8 7 6 5 shows its top four cards, the 5 whole
    assert near(ink(frame, lay.discard_card_box(1, 1, 3)), GREEN)
    assert near(pixel(frame, lay.discard_card_box(1, 1, 0)[0] + 1, lay.discard_card_box(1, 1, 0)[1] + 10), GREEN)
    # the other hands are backs: 5 cards for seat 1, 3 for seat 2, then empty felt
    for slot in range(5):
        assert near(face(frame, lay.hand_box(1, slot)), draw.BACK)
    for slot in range(3):
        assert near(face(frame, lay.hand_box(2, slot)), draw.BACK)
    assert near(pixel(frame, *_centre(lay.hand_box(2, 3))), draw.FELT)
    # the draw pile is a back
    assert near(face(frame, lay.draw_pile_box), draw.BACK)


def test_full_table_shows_every_hand_face_up():
    frame, lay = draw_state(known_state()), Layout(3)
    for seat, colours in ((1, (BLUE, BLUE, GREEN, GREEN, RED)), (2, (BLUE, GREEN, RED))):
        for slot, colour in enumerate(colours):
            assert near(ink(frame, lay.hand_box(seat, slot)), colour), (seat, slot)
            assert near(face(frame, lay.hand_box(seat, slot)), draw.CARD_FACE)


def _centre(box):
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _inside(mask: np.ndarray, box) -> np.ndarray:
    left, top, right, bottom = box
    return mask[top:bottom, left:right]


def test_the_view_differs_from_the_full_table_only_where_cards_are_hidden():
    state, lay = known_state(), Layout(3)
    for seat in range(3):
        changed = np.any(draw_table(state, seat) != draw_table(state, None), axis=2)
        allowed = np.zeros_like(changed)
        left, top, right, bottom = lay.title_box
        allowed[top:bottom, left:right] = True
        for other in range(3):
            area = lay.hand_area(other)
            if other == seat:
                assert not _inside(changed, area).any(), "the seat's own hand is the same in both"
            else:
                assert _inside(changed, area).any(), f"seat {other}'s hand must be hidden from seat {seat}"
                allowed[area[1]:area[3], area[0]:area[2]] = True
        assert not (changed & ~allowed).any(), "the two frames differ outside the hidden hands and the title"


def test_the_view_frame_depends_on_nothing_the_seat_cannot_see(rng):
    state = known_state()
    for seat in range(3):
        other = hidden_reshuffle(state, seat, rng)
        assert other.hands != state.hands or other.draw_pile != state.draw_pile
        assert np.array_equal(draw_table(state, seat), draw_table(other, seat))
        assert np.array_equal(draw_view(state.view(seat)), draw_table(state, seat))


def test_game_over_and_partner_game_frames():
    config = GameConfig(num_players=4, partner_game=True, stock_size=2)
    state = new_game(config, seed=3)
    rng = np.random.default_rng(0)
    while not state.is_over:
        moves = state.legal_moves()
        state.apply(moves[rng.integers(len(moves))])
    frame = draw_table(state, 0)
    assert frame.shape == frame_shape(config)
    lay = Layout(4)
    for seat in state.winners:  # the winners' rows are framed in the highlight colour
        _, top, right, _ = lay.row_box(seat)
        assert near(pixel(frame, right - 40, top + 3), draw.HIGHLIGHT, tol=40)


def test_card_colours_follow_the_printed_deck():
    assert [card_colour(c) for c in (1, 4, 5, 8, 9, 12)] == [BLUE, BLUE, GREEN, GREEN, RED, RED]
    assert card_colour(W) == draw.WILD_FACE
    with pytest.raises(ValueError):
        card_colour(0)


# ------------------------------------------------------------ without Pillow
def test_a_picture_without_pillow_names_the_render_extra(monkeypatch):
    for name in [m for m in sys.modules if m == "PIL" or m.startswith("PIL.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "PIL", None)
    for env in (raw_env(render_mode="rgb_array"), SkipBoSingleEnv(render_mode="rgb_array")):
        env.reset(seed=0)
        with pytest.raises(ImportError, match=r"skipbo-env\[render\]"):
            env.render()
    text = raw_env(render_mode="ansi")
    text.reset(seed=0)
    assert isinstance(text.render(), str)  # text needs no Pillow


# ------------------------------------------------------------ human: a window
class FakeTk:
    """Stands in for tkinter: records what a window would show."""

    TclError = RuntimeError

    def __init__(self) -> None:
        self.roots: list[FakeTk.Tk] = []
        outer = self

        class Tk:
            def __init__(self) -> None:
                self.updates, self.destroyed, self.protocols = 0, False, {}
                outer.roots.append(self)

            def title(self, text):
                self.text = text

            def protocol(self, name, handler):
                self.protocols[name] = handler

            def update(self):
                self.updates += 1

            def destroy(self):
                self.destroyed = True

        class Label:
            def __init__(self, root):
                self.images = []

            def pack(self):
                pass

            def configure(self, image):
                self.images.append(image)

        self.Tk, self.Label = Tk, Label


@pytest.fixture
def fake_display(monkeypatch):
    tk = FakeTk()
    module = types.ModuleType("tkinter")
    module.Tk, module.Label, module.TclError = tk.Tk, tk.Label, tk.TclError
    image_tk = types.ModuleType("PIL.ImageTk")
    image_tk.PhotoImage = lambda image, master=None: ("photo", image.size)
    monkeypatch.setitem(sys.modules, "tkinter", module)
    monkeypatch.setitem(sys.modules, "PIL.ImageTk", image_tk)
    monkeypatch.setattr(PIL, "ImageTk", image_tk, raising=False)
    return tk


@pytest.mark.parametrize("make", [
    lambda: raw_env(num_players=3, render_mode="human"),
    lambda: SkipBoSingleEnv(num_players=3, render_mode="human", opponents="greedy"),
])
def test_human_mode_shows_frames_in_a_window(fake_display, make):
    env = make()
    env.metadata = {**env.metadata, "render_fps": 0}  # no pacing in tests
    env.reset(seed=0)  # renders
    (root,) = fake_display.roots
    assert root.updates == 1 and root.text.startswith("Skip-Bo")
    assert env.render() is None and root.updates == 2
    height, width, _ = frame_shape(env.config)
    assert env._window._label.images[-1] == ("photo", (width, height))
    clone = pickle.loads(pickle.dumps(env))  # a window does not travel; the copy opens its own
    assert clone._window._root is None
    env.close()
    assert root.destroyed and env._window is None
    env.close()  # twice is fine


def test_human_mode_without_a_display_warns_once_and_goes_on(monkeypatch):
    if sys.platform != "linux" or importlib.util.find_spec("tkinter") is None:
        pytest.skip("needs Linux Tk (no display without $DISPLAY)")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    env = raw_env(render_mode="human")
    with pytest.warns(UserWarning, match="rgb_array") as caught:
        env.reset(seed=0)
        obs = env.observe(env.agent_selection)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        assert env.render() is None
    assert len([w for w in caught if "cannot open a window" in str(w.message)]) == 1
    assert "no display" in env._window.unavailable
    env.close()


def test_human_mode_without_tkinter_warns(monkeypatch):
    monkeypatch.setitem(sys.modules, "tkinter", None)
    env = SkipBoSingleEnv(render_mode="human")
    with pytest.warns(UserWarning, match="no tkinter"):
        env.reset(seed=0)
    assert env.render() is None


def test_gymnasium_check_env_tries_every_render_mode_headless(monkeypatch):
    from gymnasium.utils.env_checker import check_env

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gymnasium.make("SkipBo-v0", illegal_action="lose").unwrapped)  # makes one env per mode


# ------------------------------------------------------------ the video recipe
def _example():
    from skipbo_env.recipes import record_video

    return record_video


def test_example_records_a_gymnasium_episode(tmp_path, capsys):
    path = _example().main(["--out", str(tmp_path), "--format", "gif", "--stock-size", "3", "--seed", "1"])
    assert path == tmp_path / "skipbo-episode-0.gif" and path.exists()
    with Image.open(path) as gif:
        assert gif.n_frames >= 2 and gif.size == (800, frame_shape(GameConfig(num_players=2))[0])
    assert "wrote" in capsys.readouterr().out


def test_example_records_a_pettingzoo_game(tmp_path):
    path = _example().main(["--out", str(tmp_path), "--pettingzoo", "--players", "3", "--stock-size", "2", "--full"])
    assert path == tmp_path / "skipbo-aec.gif"
    with Image.open(path) as gif:
        assert gif.n_frames >= 2 and gif.size == (800, frame_shape(GameConfig(num_players=3))[0])


def test_example_records_with_gymnasiums_record_video(tmp_path):
    pytest.importorskip("moviepy", reason='RecordVideo needs moviepy: pip install "gymnasium[other]"')
    out = tmp_path / "videos"  # RecordVideo makes the folder (and warns about one that exists)
    path = _example().main(["--out", str(out), "--format", "mp4", "--stock-size", "3"])
    assert path == out / "skipbo-episode-0.mp4" and path.stat().st_size > 0
