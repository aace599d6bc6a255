"""What people read counts the same way everywhere: turns and piles from 1, partners called partners,
and one seed deals one game at the terminal, in the demo and in the browser.

One known position (3 seats, seat 0 to move in the rules' turn 7, i.e. the eighth turn) is shown
by every output a person reads: the text tables (:mod:`skipbo_env.render`), the pictures
(:mod:`skipbo_env.draw`), the terminal (:mod:`skipbo_env.human`), the browser's JSON
(:mod:`skipbo_env.web.tables`) and the demo. Machine formats (action ids, move dicts, JSON
states, records) keep counting from 0.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from conftest import KNOWN_POSITION as POSITION
from conftest import state_dict

from skipbo_env import demo, draw, play
from skipbo_env.agents import derive_seed, load_agent
from skipbo_env.episode import decisions
from skipbo_env.human import describe_move, move_key, seating_text, table_lines, table_of_state, table_of_view
from skipbo_env.records import GameRecord
from skipbo_env.render import game_status, render_table, seat_tag, turn_number
from skipbo_env.rules import Discard, GameConfig, GameState, Play, Source, move_to_dict, new_game

LABELS = ["human", "greedy", "random"]
PILES = "building piles 1:[2]  2:[-]  3:[6]  4:[11]"
SEAT0_DISCARDS = "discards 1: 12 10  2: 3  3: -  4: SB"
# seat 0's discard pile 1 (0-based 0) onto building pile 2 (0-based 1): the top 10 cannot go there,
# so take a move that is legal: the wild on discard pile 4 (0-based 3) onto building pile 2.
WILD_FROM_PILE_4 = Play(Source.DISCARD, 1, discard_pile=3)


def known_state() -> GameState:
    return GameState.from_dict(state_dict(3, **POSITION))


def plain(lines) -> list[str]:
    return ["".join(s if isinstance(s, str) else s[0] for s in line) for line in lines]


def partner_state() -> GameState:
    return new_game(GameConfig(num_players=4, partner_game=True, first_player=0), seed=3)


# ------------------------------------------------------------------ text tables (render.py)
def test_text_tables_count_turns_and_piles_from_one():
    full = render_table(known_state()).splitlines()
    assert full[1] == "turn 8: player_0 to move"
    assert full[2].startswith(PILES + "   draw pile")
    assert full[3].endswith(SEAT0_DISCARDS)
    view = render_table(known_state(), 1).splitlines()
    assert view[1] == "turn 8: player_0 to move" and view[2].startswith(PILES)
    assert view[5] == "player_0: stock 4 (2 left), hand 5, " + SEAT0_DISCARDS


def test_text_tables_call_the_partner_a_partner():
    view = render_table(partner_state(), 0).splitlines()
    rows = [line.split(":")[0] for line in view if ": stock" in line]
    assert rows == ["player_0 (you)", "player_1 (team 2)", "player_2 (partner)", "player_3 (team 2)"]
    full = [line.split(":")[0] for line in render_table(partner_state()).splitlines() if line.startswith("player_")]
    assert full == ["player_0 (team 1)", "player_1 (team 2)", "player_2 (team 1)", "player_3 (team 2)"]


def test_game_status_at_the_end_names_the_last_turn_played():
    config = GameConfig(turn_limit=50)
    assert game_status(config, 0, 0, None, False) == "turn 1: player_0 to move"
    assert game_status(config, 1, 33, 1, False) == "turn 34: game over, player_1 won"
    # R23: the counter stands at the limit after the last turn; turn 50 was the last one played
    assert turn_number(config, 50) == 50
    assert game_status(config, 0, 50, None, True) == "turn 50: game over, truncated at the turn limit (50)"
    # the move limit can stop a game inside a turn: that turn is the last one
    assert game_status(config, 0, 12, None, True) == "turn 13: game over, truncated at the move limit (20000)"


# ------------------------------------------------------------------ pictures (draw.py)
def drawn_texts(monkeypatch, frame_of) -> list[str]:
    pytest.importorskip("PIL", reason='the render extra: pip install "skipbo-env[render]"')
    texts: list[str] = []
    paint = draw._text
    monkeypatch.setattr(draw, "_text", lambda d, xy, text, *a, **k: (texts.append(text), paint(d, xy, text, *a, **k)))
    frame_of()
    return texts


def test_pictures_count_turns_from_one(monkeypatch):
    texts = drawn_texts(monkeypatch, lambda: draw.draw_state(known_state()))
    assert texts[0] == "turn 8: player_0 to move"


def test_pictures_call_the_partner_a_partner(monkeypatch):
    state = partner_state()
    texts = drawn_texts(monkeypatch, lambda: draw.draw_view(state.view(0)))
    names = [t for t in texts if t.startswith("player_") and not t.endswith("'s view")]
    assert names[0] == "player_0  (team 1, to move)" and names[2] == "player_2  (partner)"
    assert names[1] == "player_1  (team 2)" and names[3] == "player_3  (team 2)"


# ------------------------------------------------------------------ the terminal (human.py)
def test_terminal_counts_turns_and_piles_from_one():
    state = known_state()
    lines = plain(table_lines(table_of_view(state.view(0), LABELS)))
    assert lines[0] == "== turn 8: your move =="
    assert lines[1].startswith("building piles  1:[2] 2:[-] 3:[6] 4:[11]")
    assert lines[-2].strip() == "discards  1: 12 10  2: 3  3: -  4: SB"
    assert move_key(WILD_FROM_PILE_4) == "d4>2"
    assert describe_move(WILD_FROM_PILE_4, state.view(0), 0) == "plays SB from discard pile 4 onto building pile 2 as 1"
    assert describe_move(Discard(9, 0), state.view(0), 0) == "discards 9 onto discard pile 1 (turn ends)"


def test_terminal_calls_the_partner_a_partner():
    state = partner_state()
    labels = ["human", "greedy", "greedy", "greedy"]
    rows = [line for line in plain(table_lines(table_of_view(state.view(0), labels))) if line.startswith("player_")]
    assert [r.split("  ")[0].strip() for r in rows] == [
        "player_1 greedy (team 2)", "player_2 greedy (partner)", "player_3 greedy (team 2)", "player_0 human (you)"]
    full = [line for line in plain(table_lines(table_of_state(state, labels, me=0))) if line.startswith("player_")]
    assert "(partner)" in full[2] and "(you)" in full[0]
    assert seating_text(state.config, 0, labels) == (
        "You are player_0; partner: player_2 (greedy); opponents: player_1 (greedy), player_3 (greedy).")
    assert seating_text(GameConfig(), 0, ["human", "heuristic"]) == "You are player_0; opponents: player_1 (heuristic)."


# ------------------------------------------------------------------ the browser (web/tables.py)
def test_browser_tables_count_turns_and_piles_from_one():
    pytest.importorskip("starlette")
    from skipbo_env.web.tables import full_table, legal_json, seat_table

    state = known_state()
    assert full_table(state, LABELS)["status"] == "turn 8: player_0 (human) to move"
    table = seat_table(state.view(0), LABELS)
    assert table["status"] == "turn 8: your move"
    assert table["turn"] == 7  # the JSON keeps the rules' 0-based counter; the page shows the status
    move = next(m for m in legal_json(state.view(0)) if m["key"] == "d4>2")
    assert move["text"] == "plays SB from discard pile 4 onto building pile 2 as 1"
    assert (move["from_pile"], move["pile"]) == (3, 1)  # machine fields stay 0-based
    assert move_to_dict(WILD_FROM_PILE_4)["discard_pile"] == 3


def test_browser_calls_the_partner_a_partner():
    pytest.importorskip("starlette")
    from skipbo_env.web.tables import full_table, seat_table

    state = partner_state()
    labels = ["human", "greedy", "greedy", "greedy"]
    assert [s["tag"] for s in seat_table(state.view(0), labels)["seats"]] == ["you", "team 2", "partner", "team 2"]
    assert [s["tag"] for s in full_table(state, labels)["seats"]] == ["team 1", "team 2", "team 1", "team 2"]
    assert [seat_tag(state.config, s, 1) for s in range(4)] == ["team 1", "you", "team 1", "partner"]


# ------------------------------------------------------------------ the demo
def test_demo_turns_agree_from_first_to_last(capsys):
    assert demo.main(["--seed", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "turn 1: player_0 to move" or out[1] == "turn 1: player_1 to move"
    played = [int(m.group(1)) for line in out if (m := re.match(r"turn +(\d+) player_\d: ", line))]
    assert played == list(range(1, len(played) + 1))
    final = next(line for line in out if "game over" in line)
    assert final.startswith(f"turn {played[-1]}: game over")
    moves = " ".join(line for line in out if re.match(r"turn +\d+ player_", line))
    piles = {int(p) for p in re.findall(r"(?:building|discard) pile (\d)", moves)}
    assert piles == {1, 2, 3, 4}


def test_demo_seats_any_agent_by_name(capsys):
    assert demo.main(["--players", "heuristic", "random", "--quiet", "--seed", "2", "--short"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Skip-Bo: player_0=heuristic, player_1=random, seed 2\n")
    with pytest.raises(SystemExit):
        demo.main(["--players", "no-such-agent", "greedy"])
    err = capsys.readouterr().err
    assert "skipbo demo: error: --players: cannot load 'no-such-agent': unknown agent" in err


# ------------------------------------------------------------------ one seed, one game
def terminal_record(tmp_path, seed: int, opponent: str) -> GameRecord:
    path = tmp_path / "terminal.json"
    out, err = io.StringIO(), io.StringIO()
    code = play.main(["--seed", str(seed), "--opponents", opponent, "--save", str(path), "--no-color", "--delay", "0"],
                     stdin=io.StringIO("q\n"), stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return GameRecord.load(path)


def test_the_same_seed_deals_the_same_game_at_the_terminal_and_in_the_browser(tmp_path):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from skipbo_env.web.app import WebApp

    web = WebApp()
    client = TestClient(web.app)
    for seed in (7, 8):
        r = client.post("/api/games", json={"seats": ["human", "heuristic"], "seed": seed})
        assert r.status_code == 200, r.text
        browser = web.store.get(r.json()["game_id"]).record()
        terminal = terminal_record(tmp_path, seed, "heuristic")
        assert browser.initial_state == terminal.initial_state == new_game(GameConfig(), seed=seed).to_dict()
        # the agent's seed comes from the same seed too: the same moves until the person's first turn
        assert browser.moves == terminal.moves


def test_the_browser_plays_the_demos_game_for_the_same_seed():
    """Watch mode with two agents plays the game ``skipbo demo --seed S`` prints (deal and agents)."""
    pytest.importorskip("starlette")
    from skipbo_env.web.matches import WebGame

    config = GameConfig(short_game=True)
    game = WebGame(config, ["greedy", "random"], lambda spec, cfg, seed: load_agent(spec, cfg, seed), seed=5)
    while not game.state.is_over:
        game.advance(50)
    state = new_game(config, seed=5)
    agents = [load_agent(name, config, derive_seed(5, s, bits=32)) for s, name in enumerate(["greedy", "random"])]
    moves = [d.move for d in decisions(state, agents)]
    assert list(game.record().moves) == moves


def test_later_games_of_a_match_pass_the_deal_left():
    pytest.importorskip("starlette")
    from skipbo_env.web.matches import match_deal

    config = GameConfig(num_players=3, short_game=True)
    first = match_deal(config, 11, 0)
    assert first.to_dict() == new_game(config, seed=11).to_dict()
    later = [match_deal(config, 11, g, first.current) for g in (1, 2, 3)]
    assert [s.current for s in later] == [(first.current + g) % 3 for g in (1, 2, 3)]
    assert len({str(np.asarray(s.to_dict()["stocks"], dtype=object)) for s in later}) == 3
    with pytest.raises(ValueError, match="needs the first game's first player"):
        match_deal(config, 11, 1)
