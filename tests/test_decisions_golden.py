"""Every shipped agent's decisions stay as recorded (tests/golden/decisions.json).

Each case is a seeded tournament played by ``tests/golden/make_decisions.py``: the
winners, turns and stock left of every game on the path ``evaluate.py`` takes (the
batched engine where the agents allow it), and the SHA-256 of every game's moves on the
rules-layer game loop. A refactor that changes no behaviour leaves all of them as they
are; a change of an agent's play that is intended is regenerated and said so.
"""

from __future__ import annotations

import json

import pytest

from tests.golden.make_decisions import CASES, OUT, play_case

RECORDED = {case["name"]: case for case in json.loads(OUT.read_text())["cases"]}
REGENERATE = "regenerate with `python tests/golden/make_decisions.py` only if the change of play is intended"


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(case["name"] for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_agents_play_the_recorded_games(case):
    played = play_case(case)
    recorded = RECORDED[case["name"]]
    assert played["results"] == recorded["results"], f"{case['name']}: winners/turns/stock differ; {REGENERATE}"
    assert played["moves_sha256"] == recorded["moves_sha256"], f"{case['name']}: the moves differ; {REGENERATE}"
