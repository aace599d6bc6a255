"""The page in a real browser: Playwright driving Debian's headless Chromium (/usr/bin/chromium,
installed by .ci/setup-browser; Playwright's own browser download is never used).

A whole two-player game against the greedy agent played by clicking (and one drag), a
replay opened from a file and stepped forwards and backwards, a game of agents watched with
pause and step, and two people at one table each seeing only their own hand. Screenshots go
to the test's output folder (printed), and also to $SKIPBO_WEB_SCREENSHOTS when it is set.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (bash .ci/setup-browser installs it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing (bash .ci/setup-browser)")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from skipbo_env.web.app import WebApp  # noqa: E402
from skipbo_env.web.server import BackgroundServer  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 860}


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("web-screenshots")
    print(f"\nscreenshots in {folder}")
    yield folder
    extra = os.environ.get("SKIPBO_WEB_SCREENSHOTS")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        for png in folder.glob("*.png"):
            shutil.copy(png, Path(extra) / png.name)


@pytest.fixture(scope="module")
def server():
    web = WebApp()
    with BackgroundServer(web.app) as srv:
        srv.web = web
        yield srv


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with sync_api.sync_playwright() as p:
        profile = tmp_path_factory.mktemp("chromium-profile")
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=ARGS, headless=True, viewport=VIEWPORT, bypass_csp=True,
        )
        yield context
        context.close()


@pytest.fixture
def page(browser):
    pg = browser.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    pg.close()
    assert not errors, errors


def wait_state(page, *states, timeout=30_000):
    page.wait_for_function(
        "states => states.includes(document.body.dataset.state)", arg=list(states), timeout=timeout
    )
    return page.evaluate("document.body.dataset.state")


def choose(legal):
    def rank(m):
        return (m["source"] != "stock", m["target"] != "build", m["source"] == "hand" and m["card"] == "SB")
    return min(legal, key=rank)


def source_selector(m):
    if m["source"] == "hand":
        return f'#g-table [data-src="hand"][data-card="{m["card"]}"]'
    if m["source"] in ("discard", "partner_discard"):
        return f'#g-table [data-src="{m["source"]}"][data-pile="{m["from_pile"]}"]'
    return f'#g-table [data-src="{m["source"]}"]'


def target_selector(m):
    if m["target"] == "build":
        return f'#g-table [data-target="build"][data-pile="{m["pile"]}"]'
    return f'#g-table .fan[data-target="discard"][data-pile="{m["pile"]}"]'


def test_play_a_whole_game_against_greedy_by_clicking(server, page, shots):
    page.add_init_script("localStorage.setItem('pace', '0')")
    page.goto(server.url + "/")
    page.wait_for_selector("#f-seat-1")
    page.select_option("#f-players", "2")
    page.select_option("#f-seat-0", "human")
    page.select_option("#f-seat-1", "greedy")
    page.check("#f-short")
    page.fill("#f-seed", "12")
    page.screenshot(path=str(shots / "web_new.png"))
    page.click("#f-start")
    moves = 0
    dragged = selected_shot = False
    for _ in range(2000):
        if wait_state(page, "ready", "over") == "over":
            break
        legal = page.evaluate("window.skipbo.legal")
        m = choose(legal)
        if moves == 16:
            page.screenshot(path=str(shots / "web_play.png"), full_page=True)
        if m["target"] == "end":
            page.click("#end-turn")
        elif not dragged and m["source"] == "hand":
            page.drag_and_drop(source_selector(m), target_selector(m))  # HTML5 drag and drop
            dragged = True
        else:
            page.locator(source_selector(m)).first.click()
            if not selected_shot and m["target"] == "build" and moves > 4:
                page.screenshot(path=str(shots / "web_select.png"))
                selected_shot = True
            page.locator(target_selector(m)).first.click()
        wait_state(page, "busy", "ready", "over", "waiting")
        page.wait_for_function("window.skipbo.seen > 0 || document.body.dataset.state !== 'ready'")
        moves += 1
    assert wait_state(page, "over") == "over"
    status = page.text_content("#g-status")
    assert "game over" in status
    page.screenshot(path=str(shots / "web_over.png"), full_page=True)
    games = list(server.web.store._games.values())
    game = next(g for g in games if g.mode == "play" and g.labels == ["human", "greedy"] and g.seed == 12)
    assert game.state.is_over and game.state.config.short_game
    assert len(game.record().moves) >= moves
    assert page.is_visible("#next-game") != (max(game.scores) >= game.target)
    print(f"\nplayed {moves} moves by clicking; {status}")


def finished_record(server) -> dict:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        g = client.post("/api/games", json={"seats": ["heuristic", "greedy"], "short": True, "seed": 5}).json()
        while not client.get(f"/api/games/{g['game_id']}", params={"advance": 50}).json()["table"]["over"]:
            pass
        return client.get(f"/api/games/{g['game_id']}/record").json()


def test_replay_a_record_step_by_step(server, page, shots, tmp_path):
    record = finished_record(server)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    page.goto(server.url + "/#replay")
    page.set_input_files("#r-file", str(path))
    page.wait_for_selector("#r-player:not([hidden])")
    total = len(record["moves"])
    assert page.text_content("#r-pos") == f"0 / {total}"
    for _ in range(5):
        page.click("#r-next")
    assert page.evaluate("document.body.dataset.frame") == "5"
    page.click("#r-prev")
    assert page.evaluate("document.body.dataset.frame") == "4"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.body.dataset.frame") == "6"
    # every hand is shown in a replay
    assert page.locator("#r-table .seat .hand .card:not(.back)").count() >= 5
    middle = total // 2
    page.evaluate(f"document.getElementById('r-slider').value = {middle};"
                  "document.getElementById('r-slider').dispatchEvent(new Event('input'))")
    assert page.evaluate("document.body.dataset.frame") == str(middle)
    page.screenshot(path=str(shots / "web_replay.png"), full_page=True)
    page.click("#r-last")
    assert page.text_content("#r-pos") == f"{total} / {total}"
    assert "game over" in page.text_content("#r-status")
    page.keyboard.press("Home")
    assert page.evaluate("document.body.dataset.frame") == "0"
    # a file that is not a record gets a message, not a broken page
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    page.set_input_files("#r-file", str(bad))
    page.wait_for_selector("#message:not([hidden])")
    assert "not a game record" in page.text_content("#message")


def test_the_seat_lists_offer_each_shipped_network_at_its_own_table_only(server, page):
    from skipbo_env.agents import SHIPPED_PLAYERS

    page.goto(server.url + "/")
    page.wait_for_selector("#f-seat-1")
    for players in (2, 3, 4):
        page.select_option("#f-players", str(players))
        page.wait_for_selector(f"#f-seat-{players - 1}")
        offered = page.eval_on_selector_all("#f-seat-1 option", "opts => opts.map(o => o.value)")
        assert {"human", "greedy", "heuristic", "search"} <= set(offered)
        assert {n for n in SHIPPED_PLAYERS if n in offered} == {n for n, p in SHIPPED_PLAYERS.items() if p == players}
    page.select_option("#f-seat-1", "ppo-4p")
    page.select_option("#f-players", "3")  # a chosen network that does not fit the new table is dropped
    page.wait_for_selector("#f-seat-2")
    assert page.input_value("#f-seat-1") == "greedy"


def test_watch_agents_with_pause_and_step(server, page, shots):
    page.goto(server.url + "/")
    page.wait_for_selector("#f-seat-1")
    page.select_option("#f-players", "3")
    page.wait_for_selector("#f-seat-2")
    for s, name in enumerate(["heuristic", "greedy", "random"]):
        page.select_option(f"#f-seat-{s}", name)
    page.fill("#f-seed", "3")
    page.evaluate("document.getElementById('w-speed').value = 50")
    page.click("#f-start")
    page.wait_for_selector("#watch-controls:not([hidden])")
    page.wait_for_function("document.querySelectorAll('#log li').length >= 15", timeout=30_000)
    page.click("#w-play")  # pause
    wait_state(page, "paused")
    shown = page.locator("#log li").count()
    page.wait_for_timeout(300)
    assert page.locator("#log li").count() == shown  # paused: nothing moves
    page.click("#w-step")
    page.wait_for_function(f"document.querySelectorAll('#log li').length === {shown + 1}")
    assert page.locator("#g-table .seat").count() == 3
    page.screenshot(path=str(shots / "web_watch.png"), full_page=True)


def test_two_people_each_see_only_their_own_hand(server, browser, shots):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        g = client.post("/api/games", json={"seats": ["human", "human", "greedy", "greedy"], "partner": True,
                                            "seed": 2}).json()
    pages = []
    for link in g["links"]:
        pg = browser.new_page()
        pg.goto(server.url + link["url"])
        pages.append(pg)
    for pg, link in zip(pages, g["links"], strict=True):
        wait_state(pg, "ready", "waiting")
        faces = pg.locator('#g-table .seat .hand .card:not(.back)')
        seats = {faces.nth(i).evaluate("e => e.closest('.seat').dataset.seat") for i in range(faces.count())}
        assert seats <= {str(link["seat"])}  # a seat holds cards from the start of its turn
        if pg.evaluate("document.body.dataset.state") == "ready":
            assert seats == {str(link["seat"])}
    assert "ready" in {pg.evaluate("document.body.dataset.state") for pg in pages}  # one of them is to move
    for pg, link in zip(pages, g["links"], strict=True):  # partners sit opposite: seats 0 and 2, 1 and 3
        partner, other = (link["seat"] + 2) % 4, (link["seat"] + 1) % 4
        assert pg.text_content(f'#g-table .seat[data-seat="{partner}"] .name .tag') == "(partner)"
        assert pg.text_content(f'#g-table .seat[data-seat="{other}"] .name .tag').startswith("(team ")
    pages[0].screenshot(path=str(shots / "web_partner.png"), full_page=True)
    for pg in pages:
        pg.close()


def test_a_known_position_reads_as_at_the_terminal(server, page, shots, tmp_path):
    """Turns and piles counted from 1, as the terminal prints the same position
    (tests/test_display_consistency.py): the status, the pile numbers and a move's words and key."""
    from test_display_consistency import LABELS, WILD_FROM_PILE_4, known_state

    from skipbo_env.records import GameRecord

    recorder = GameRecord.start(known_state(), LABELS)
    recorder.add(WILD_FROM_PILE_4)
    path = tmp_path / "known.json"
    path.write_text(json.dumps(recorder.record().to_dict()))
    page.goto(server.url + "/#replay")
    page.set_input_files("#r-file", str(path))
    page.wait_for_selector("#r-player:not([hidden])")
    assert page.text_content("#r-status") == "turn 8: player_0 (human) to move"
    assert page.locator("#r-table .center .numbers span").all_text_contents() == ["1", "2", "3", "4"]
    seat0 = '#r-table .seat[data-seat="0"]'
    assert page.locator(f"{seat0} .numbers span").all_text_contents() == ["1", "2", "3", "4"]
    assert page.locator(f'{seat0} .fan[data-discard="3"] .card').last.get_attribute("data-face") == "SB"
    page.click("#r-next")
    assert page.text_content("#r-move") == (
        "move 1: player_0 (human) plays SB from discard pile 4 onto building pile 2 as 1 [d4>2]")
    assert page.locator('#r-table [data-building="1"]').get_attribute("data-face") == "1"
    page.screenshot(path=str(shots / "web_numbers.png"), full_page=True)
