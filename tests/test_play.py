"""The terminal program (skipbo_env.play, skipbo_env.human): keys, table, scripted sessions, replay."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from conftest import make_state

from agents import make_agent
from skipbo_env import human, play
from skipbo_env.encoding import decode_action, encode_action, observe
from skipbo_env.human import (
    HumanPlayer,
    MoveKeyError,
    QuitGame,
    Terminal,
    describe_move,
    move_key,
    parse_key,
    table_lines,
    table_of_state,
    table_of_view,
)
from skipbo_env.records import GameRecord
from skipbo_env.rules import (
    ALL_MOVES,
    END_TURN,
    WILD,
    Discard,
    GameConfig,
    GameState,
    Play,
    Source,
    new_game,
)


# ---------------------------------------------------------------- helpers
def plain(lines) -> str:
    """The text a plain terminal prints for table/moves lines."""
    return "\n".join("".join(s if isinstance(s, str) else s[0] for s in line) for line in lines)


def run(argv, lines=(), stdin=None):
    """Run the program with plain output and no pauses; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    if stdin is None:
        stdin = io.StringIO("".join(line + "\n" for line in lines))
    elif callable(stdin):
        stdin = stdin(out)
    code = play.main([*argv, "--no-color", "--delay", "0"], stdin=stdin, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


class FirstKeyInput(io.TextIOBase):
    """Standard input of a person who always types the first legal move key the program listed."""

    def __init__(self, out: io.StringIO, limit: int = 3000) -> None:
        self.out, self.limit, self.count = out, limit, 0

    def readline(self, size: int = -1) -> str:
        self.count += 1
        if self.count > self.limit:
            return ""  # a runaway loop ends as end of input, and the test's asserts fail
        text = self.out.getvalue()
        listing = text[text.rindex("your moves:"):].splitlines()
        return listing[1].split(": ", 1)[1].split()[0] + "\n"


class InterruptInput(io.TextIOBase):
    def readline(self, size: int = -1) -> str:
        raise KeyboardInterrupt


def hide_reshuffle(state: GameState, seat: int, seed: int) -> GameState:
    """A copy where every card ``seat`` cannot see (draw pile, other hands, stocks below the top)
    is dealt again at random among the same places."""
    other = state.copy()
    rng = np.random.default_rng(seed)
    others = [s for s in range(state.config.num_players) if s != seat]
    pool = list(other.draw_pile) + [c for s in others for c in other.hand_cards(s)]
    pool += [c for stock in other.stocks for c in stock[:-1]]
    rng.shuffle(pool)
    other.draw_pile, pool = pool[: len(state.draw_pile)], pool[len(state.draw_pile):]
    for s in others:
        counts = [0] * (WILD + 1)
        for card in pool[: state.hand_size(s)]:
            counts[card] += 1
        other.hands[s], pool = counts, pool[state.hand_size(s):]
    for s, stock in enumerate(state.stocks):
        if stock:
            other.stocks[s], pool = pool[: len(stock) - 1] + [stock[-1]], pool[len(stock) - 1:]
    assert not pool
    return other


# ---------------------------------------------------------------- move keys
def test_every_move_key_parses_back_to_its_move():
    keys = [move_key(m) for m in ALL_MOVES]
    assert len(set(keys)) == len(ALL_MOVES)
    for move, key in zip(ALL_MOVES, keys, strict=True):
        assert parse_key(key) is move, key


def test_move_keys_examples_and_spellings():
    assert move_key(Play(Source.HAND, 1, card=5)) == "h5>2"
    assert move_key(Play(Source.HAND, 0, card=WILD)) == "hSB>1"
    assert move_key(Play(Source.DISCARD, 0, discard_pile=1)) == "d2>1"
    assert move_key(Play(Source.PARTNER_DISCARD, 1, discard_pile=2)) == "pd3>2"
    assert move_key(Discard(7, 3)) == "x7>4"
    assert move_key(END_TURN) == "e"
    for text in ("hW>1", "hsb>1", " H SB > 1 ", "hw>1"):
        assert parse_key(text) == Play(Source.HAND, 0, card=WILD)
    assert parse_key("S>3") == Play(Source.STOCK, 2)
    assert parse_key("ps>1") == Play(Source.PARTNER_STOCK, 0)
    assert parse_key("x12>2") == Discard(12, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no move typed"),
        ("h5", "needs '>'"),
        ("x5", "needs '>'"),
        ("h0>1", "1 to 12 or SB"),
        ("h13>1", "1 to 12 or SB"),
        ("h>1", "got nothing"),
        ("h5>5", "building piles are numbered 1 to 4, got 5"),
        ("s>0", "building piles are numbered 1 to 4, got 0"),
        ("d5>1", "discard piles are numbered 1 to 4, got 5"),
        ("x5>", "discard piles are numbered 1 to 4, got nothing"),
        ("z1>1", "unknown source"),
        ("e2", "needs '>'"),
    ],
)
def test_malformed_keys_are_rejected_with_a_reason(text, message):
    with pytest.raises(MoveKeyError, match=message):
        parse_key(text)


# ---------------------------------------------------------------- the table
def test_seat_table_shows_nothing_hidden():
    """The person's table depends only on what the seat may see (R3, R28)."""
    labels = ["human", "greedy", "random"]
    state = new_game(GameConfig(num_players=3), seed=11)
    for _ in range(40):  # some discards and plays so piles are not empty
        state.apply(state.legal_moves()[-1] if state.turn % 2 else state.legal_moves()[0])
    for seat in range(3):
        text = plain(table_lines(table_of_view(state.view(seat), labels)))
        for k in range(5):
            other = hide_reshuffle(state, seat, k)
            assert other.to_dict() != state.to_dict()
            assert plain(table_lines(table_of_view(other.view(seat), labels))) == text
        # the full-information table does show the other hands
        assert plain(table_lines(table_of_state(state, labels))) != plain(
            table_lines(table_of_state(hide_reshuffle(state, seat, 0), labels))
        )


def test_seat_table_contents():
    state = make_state(
        2, hands={0: [1, 5, 7, 9, WILD]}, stocks={0: [3, 6], 1: [2, 4, 8]}, building=(4, 0, 11, 0),
        discards={1: [[3, 5, 9], [], [], [WILD]]}, current=0,
    )
    text = plain(table_lines(table_of_view(state.view(0), ["human", "greedy"])))
    assert "== turn 1: your move ==" in text
    assert "1:[4] 2:[-] 3:[11] 4:[-]" in text
    assert "player_1 greedy" in text and "stock 8 (3 left)  hand 0" in text
    assert "discards  1: 3 5 9  2: -  3: -  4: SB" in text
    assert "player_0 human (you)  stock 6 (2 left)  hand 5" in text
    assert "your hand  1 5 7 9 SB" in text


def test_describe_move_names_cards_wilds_and_completed_piles():
    state = make_state(2, hands={0: [5, 12, WILD]}, stocks={0: [6]}, building=(4, 0, 11, 0), current=0)
    view = state.view(1)  # any seat's view: only public facts are used
    assert describe_move(Play(Source.HAND, 0, card=5), view, 0) == "plays 5 from hand onto building pile 1"
    assert describe_move(Play(Source.HAND, 1, card=WILD), view, 0) == (
        "plays SB from hand onto building pile 2 as 1")
    assert describe_move(Play(Source.HAND, 2, card=12), view, 0).endswith("pile complete, set aside")
    assert describe_move(Play(Source.STOCK, 0), view, 0) == "plays 6 from stock onto building pile 1"
    assert describe_move(Discard(12, 3), view, 0) == "discards 12 onto discard pile 4 (turn ends)"
    state = make_state(4, partner_game=True, hands={1: [2]}, stocks={3: [7, 5]}, building=(4, 0, 0, 11),
                       discards={1: [[], [9, 1]], 3: [[], [], [12]]}, current=1)
    view = state.view(0)
    assert describe_move(Play(Source.DISCARD, 1, discard_pile=1), view, 1) == (
        "plays 1 from discard pile 2 onto building pile 2")
    assert describe_move(Play(Source.PARTNER_STOCK, 0), view, 1) == (
        "plays 5 from partner's stock onto building pile 1")
    assert describe_move(Play(Source.PARTNER_DISCARD, 3, discard_pile=2), view, 1) == (
        "plays 12 from partner's discard pile 3 onto building pile 4 - pile complete, set aside")


def test_colour_only_when_asked():
    out = io.StringIO()
    Terminal(io.StringIO(), out, color=True).line(human.card_segment(5), " ", human.card_segment(WILD))
    assert "\x1b[" in out.getvalue() and "5" in out.getvalue()
    out = io.StringIO()
    Terminal(io.StringIO(), out, color=False).line(human.card_segment(5))
    assert out.getvalue() == "5\n"


# ---------------------------------------------------------------- the person's player
def test_partner_moves_by_key():
    """R27: the partner's stock and discard tops are offered as ps/pd keys and accepted."""
    state = make_state(
        4, partner_game=True, hands={0: [5, 6, 7, 8, 9]}, stocks={0: [9], 2: [1]},
        discards={2: [[3], [1], [], []]}, current=0,
    )
    out = io.StringIO()
    player = HumanPlayer(Terminal(io.StringIO("pd1>1\npd2>1\n"), out), ["human", "a", "b", "c"])
    assert player(state.view(0)) == Play(Source.PARTNER_DISCARD, 0, discard_pile=1)
    text = out.getvalue()
    assert "player_2 b (partner)" in text
    assert "partner's stock: ps>1 ps>2 ps>3 ps>4" in text
    assert "partner's discard piles: pd2>1 pd2>2 pd2>3 pd2>4" in text
    assert "'pd1>1' is not legal now: building pile 1 needs a 1, the card is a 3" in text


def test_illegal_moves_are_explained_and_asked_again():
    state = make_state(2, hands={0: [2, 5]}, stocks={0: [7]}, building=(1, 0, 0, 0), current=0)
    out = io.StringIO()
    script = "h4>1\nh5>1\ns>1\nd1>1\ne\n\nt\nh2>1\n"
    player = HumanPlayer(Terminal(io.StringIO(script), out), ["human", "greedy"])
    assert player(state.view(0)) == Play(Source.HAND, 0, card=2)
    text = out.getvalue()
    assert "'h4>1' is not legal now: your hand holds no 4" in text
    assert "'h5>1' is not legal now: building pile 1 needs a 2, the card is a 5" in text
    assert "'s>1' is not legal now: building pile 1 needs a 2, the card is a 7" in text
    assert "'d1>1' is not legal now: your discard pile 1 is empty" in text
    assert "'e' is not legal now: your hand still holds 2 card(s)" in text
    assert text.count("your moves:") == 3  # shown first, again on an empty line and with the table (t)
    assert text.count("== turn 1: your move ==") == 2


def test_quit_and_end_of_input_raise_quit_game():
    state = new_game(GameConfig(), seed=0)
    for script, reason in (("q\n", "quit"), ("", "end of input"), ("zz\n", "end of input")):
        player = HumanPlayer(Terminal(io.StringIO(script), io.StringIO()), ["a", "b"])
        with pytest.raises(QuitGame) as info:
            player(state.view(state.current))
        assert info.value.reason == reason


# ---------------------------------------------------------------- sessions through main()
def test_scripted_session_with_invalid_input_then_eof():
    code, out, err = run(["--seed", "3", "--short"], ["zz", "h13>1", "e", "ps>1", "?", "x5", "h5>9"])
    assert code == 0 and err == ""
    assert out.startswith("Skip-Bo, 2 players, stocks of 10, seed 3.\n"
                          "You are player_0; opponents: player_1 (")
    assert "! 'zz': a move key needs '>'" in out
    assert "! 'h13>1': the card must be 1 to 12 or SB (W) for a wild, got 13" in out
    assert "! 'e' is not legal now: your hand still holds 5 card(s)" in out
    assert "! 'ps>1' is not legal now: there is no partner in this game" in out
    assert "Move keys (piles are numbered 1 to 4" in out
    assert "! 'h5>9': building piles are numbered 1 to 4, got 9" in out
    assert re.search(r"^player_1 \(\w+\): (plays|discards) ", out, re.M)  # the opponent's first turn
    assert out.rstrip().endswith("end of input: the game was left unfinished after 1 move")
    assert "\x1b[" not in out


def test_quit_saves_the_unfinished_game(tmp_path):
    path = tmp_path / "left.json"
    code, out, _ = run(["--seed", "4", "--opponents", "random", "--save", str(path)], ["q"])
    assert code == 0
    assert "quit: the game was left unfinished" in out and f"game saved to {path}" in out
    record = GameRecord.load(path)
    assert record.players == ("human", "random")
    assert not record.final_state().is_over
    assert GameState.from_dict(record.initial_state).to_dict() == new_game(GameConfig(), seed=4).to_dict()


def test_ctrl_c_ends_cleanly(tmp_path):
    path = tmp_path / "g.json"
    code, out, err = run(["--seed", "2", "--save", str(path)], stdin=InterruptInput())
    assert code == 0 and err == ""
    assert "interrupted: the game was left unfinished" in out
    GameRecord.load(path)
    code, out, _ = run(["--replay", str(path)], stdin=InterruptInput())
    assert code == 0 and out.rstrip().endswith("interrupted")


def test_same_seed_same_session():
    script = ["?", "t", "q"]
    assert run(["--seed", "9", "--opponents", "random"], script) == run(
        ["--seed", "9", "--opponents", "random"], script
    )


def test_opponent_moves_pause_between_each(monkeypatch):
    sleeps = []
    monkeypatch.setattr(human.time, "sleep", sleeps.append)
    out, err = io.StringIO(), io.StringIO()
    stdin = io.StringIO("q\n")
    seat = (new_game(GameConfig(num_players=3), seed=1).current + 2) % 3  # both opponents move first
    code = play.main(["--seed", "1", "--players", "3", "--seat", str(seat), "--delay", "0.25", "--no-color"],
                     stdin=stdin, stdout=out, stderr=err)
    assert code == 0
    opponent_lines = [line for line in out.getvalue().splitlines() if re.match(r"player_\d \(\w+\): ", line)]
    assert len(opponent_lines) >= 2
    assert sleeps == [0.25] * len(opponent_lines)


def _first_key_game(tmp_path, argv):
    path = tmp_path / "game.json"
    code, out, err = run([*argv, "--save", str(path)], stdin=FirstKeyInput)
    assert (code, err) == (0, "")
    record = GameRecord.load(path)
    return out, record


def test_full_game_first_legal_key_then_replay_reaches_the_same_final_state(tmp_path):
    out, record = _first_key_game(tmp_path, ["--short", "--seed", "5"])
    final = record.final_state()
    assert final.is_over and final.winner is not None
    assert "== game over in turn " in out and "points: " in out
    assert "! " not in out  # every key the program listed was accepted
    assert re.search(r"^your move> (\S+)\nyou: (plays|discards) ", out, re.M)
    labels = list(record.players)
    assert plain(table_lines(table_of_state(final, labels, me=0))) in out
    # replay through main (--auto) prints the same final position
    code, replay_out, _ = run(["--replay", str(tmp_path / "game.json"), "--auto"])
    assert code == 0
    assert plain(table_lines(table_of_state(final, labels))) in replay_out
    assert f"end of the record after {len(record.moves)} moves: the game is over" in replay_out
    # and the replay function ends in exactly the recorded final state
    state = play.replay_game(record, Terminal(io.StringIO(), io.StringIO()), auto=True)
    assert state.to_dict() == final.to_dict()


def test_full_partner_game_first_legal_key(tmp_path):
    out, record = _first_key_game(tmp_path, ["--short", "--seed", "8", "--partner", "--opponents", "greedy"])
    final = record.final_state()
    assert final.config.partner_game and final.config.num_players == 4
    assert final.is_over
    assert "player_2 greedy (partner)" in out
    assert record.players == ("human", "greedy", "greedy", "greedy")


def test_replay_steps_on_enter(tmp_path):
    _, record = _first_key_game(tmp_path, ["--short", "--seed", "6", "--opponents", "random"])
    code, out, _ = run(["--replay", str(tmp_path / "game.json")], ["", "", "huh", "t", "q"])
    assert code == 0
    assert out.startswith("replay: 2 players: player_0 (human), player_1 (random); ")
    assert "move 1: " in out and "move 2: " in out
    assert "! 'huh': press Enter for the next move" in out
    # after "t" the rest of turn is played, then the prompt comes back; "q" stops there
    first_turn_moves = next(i for i, (s, _) in enumerate(record.replay()) if s.turn > 0)
    assert f"move {max(first_turn_moves, 3)}: " in out
    assert "end of the record" not in out
    code, out, _ = run(["--replay", str(tmp_path / "game.json")], [""])  # then end of input
    assert code == 0 and "move 1: " in out and "move 2: " not in out


def test_replay_of_a_record_written_by_agents(tmp_path):
    """Records written outside the program (as evaluate.py does) replay to their final state."""
    config = GameConfig(num_players=3, short_game=True)
    state = new_game(config, seed=21)
    agents = [make_agent(name, config, seed=i) for i, name in enumerate(["greedy", "random", "greedy"])]
    recorder = GameRecord.start(state, ["greedy", "random", "greedy"])
    while not state.is_over:
        move = decode_action(agents[state.current].act(observe(state, state.current)), config)
        assert encode_action(move, config) >= 0
        state.apply(move)
        recorder.add(move)
    path = recorder.record().save(tmp_path / "eval.json")
    code, out, _ = run(["--replay", str(path), "--auto"])
    assert code == 0
    assert plain(table_lines(table_of_state(state, ["greedy", "random", "greedy"]))) in out
    assert out.count("move ") >= len(recorder.moves)


# ---------------------------------------------------------------- bad options and files
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seat", "2"], "--seat must be in 0..1"),
        (["--players", "4", "--opponents", "greedy", "random"], "4 players need 1 or 3 opponents, got 2"),
        (["--partner", "--players", "3"], "partner_game: needs 4 or 6 players"),
        (["--players", "7"], "num_players: must be in 2..6"),
        (["--opponents", "nosuch"], "cannot load 'nosuch'"),
        (["--delay", "-1"], "--delay must be >= 0"),
        (["--seed", "-3"], "--seed must be >= 0"),
        (["--auto"], "--auto only applies to --replay"),
        (["--replay", "x.json", "--seed", "3"], "--seed do(es) not apply"),
    ],
)
def test_bad_options_exit_2_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        play.main([*argv, "--no-color"], stdin=io.StringIO(), stdout=io.StringIO())
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_unreadable_records_return_1(tmp_path):
    code, _, err = run(["--replay", str(tmp_path / "missing.json")])
    assert code == 1 and "cannot replay" in err and "missing.json" in err
    _, record = _first_key_game(tmp_path, ["--short", "--seed", "5"])
    data = record.to_dict()
    data["moves"] = data["moves"][1:]  # no longer replays legally (or no longer matches the result)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, out, err = run(["--replay", str(bad)])
    assert code == 1 and "cannot replay" in err and out == ""


def test_an_agent_choosing_an_illegal_action_is_reported(monkeypatch):
    class Stubborn:
        def act(self, observation):
            return int(np.flatnonzero(np.asarray(observation["action_mask"]) == 0)[0])

    monkeypatch.setattr(play, "load_agent", lambda spec, config, seed, allow_pickle=False: Stubborn())
    first = new_game(GameConfig(num_players=3), seed=0).current
    code, out, err = run(["--seed", "0", "--players", "3", "--seat", str((first + 1) % 3)])
    assert code == 1 and "chose an illegal move" in err


def test_checkpoint_paths_get_short_labels():
    assert play.agent_label("greedy") == "greedy"
    assert play.agent_label("runs/ppo/final.zip") == "final"
    assert play.agent_seed(3, 1) == play.agent_seed(3, 1) != play.agent_seed(3, 2)
    # the seeds of earlier releases: a seeded game deals and plays as before
    assert play.agent_seed(3, 1) == int(np.random.SeedSequence([3, 1]).generate_state(1)[0])


def test_opponents_come_from_the_agents_loader(monkeypatch, tmp_path):
    calls = []

    def loader(spec, cfg, seed, allow_pickle=False):
        calls.append((spec, seed, allow_pickle))
        return make_agent("greedy", cfg, seed)

    monkeypatch.setattr(play, "load_agent", loader)
    code, _, _ = run(["--seed", "4", "--opponents", "runs/x.safetensors", "--short"], lines=["q"])
    assert code == 0
    assert calls == [("runs/x.safetensors", play.agent_seed(4, 1), False)]
    code, _, _ = run(["--seed", "4", "--opponents", "runs/x.zip", "--short", "--allow-pickle"], lines=["q"])
    assert code == 0 and calls[-1] == ("runs/x.zip", play.agent_seed(4, 1), True)


def test_status_lines_of_a_truncated_and_a_won_game():
    state = new_game(GameConfig(turn_limit=2, first_player=0), seed=3)
    labels = ["human", "greedy"]
    assert human.status_text(state, labels, me=0) == "turn 1: your move"
    assert human.status_text(state, labels, me=1) == "turn 1: player_0 (human) to move"
    while not state.is_over:
        state.apply(next(m for m in state.legal_moves() if isinstance(m, Discard)))
    assert human.status_text(state, labels) == "game over: no winner after 2 turns, truncated at the turn limit (2)"
    won = make_state(2, stocks={0: [], 1: [4]}, winner=0, turn=5)
    assert human.status_text(won, labels, me=0) == "game over in turn 6: you won"
    assert human.status_text(won.view(1), labels, me=1) == "game over in turn 6: player_0 (human) won"
