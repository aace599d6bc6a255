"""The one game loop (skipbo_env/episode/loop.py): the seat to move decides, the rules check, the state applies.

A seat's agent is asked as its class declares (``reads_view``: ``act_view``; else ``act``;
``batched``: ``act_batch`` in the lockstep form); a seat without an agent takes its move from
outside (a person), and the loop waits there without raising anything.
"""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env.bots import AgentBase, make_bot
from skipbo_env.encoding import encode_action
from skipbo_env.episode import AgentError, Decision, GameLoop, decisions, play_batched
from skipbo_env.rules import GameConfig, new_game

CONFIG = GameConfig(stock_size=3)


def greedy(seat: int):
    return make_bot("greedy", CONFIG, seed=100 + seat)


class FirstLegal:
    """A user's agent with ``act`` only: the first legal action of the mask."""

    def __init__(self) -> None:
        self.calls = 0

    def act(self, observation):
        self.calls += 1
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_decisions_yield_before_applying_and_check_agents():
    state = new_game(CONFIG, seed=1)
    seen = 0
    for decision in decisions(state, [greedy(0), greedy(1)]):
        assert isinstance(decision, Decision)
        assert state.current == decision.seat and decision.move in state.legal_moves()
        seen += 1
    assert state.is_over and seen == state.moves

    class Masked:
        def act(self, observation):
            return int(np.flatnonzero(np.asarray(observation["action_mask"]) == 0)[0])

    state = new_game(CONFIG, seed=1)
    before = state.to_dict()
    with pytest.raises(AgentError, match=r"player_\d \(stubborn\) chose an illegal move"):
        next(decisions(state, [Masked(), Masked()], names=["stubborn", "stubborn"]))
    assert state.to_dict() == before

    class OutOfRange:
        def act(self, observation):
            return 999

    with pytest.raises(AgentError, match="chose action 999"):
        next(decisions(state, [OutOfRange(), OutOfRange()]))


def test_agents_are_asked_as_their_class_declares():
    class Reader(AgentBase):
        reads_view = True

        def __init__(self) -> None:
            self.views = 0

        def act(self, observation):  # pragma: no cover - a view reader is asked act_view
            raise AssertionError("a view reader is asked with the view")

        def act_view(self, view):
            self.views += 1
            return encode_action(view.legal_moves()[0], view.config)

    reader, user = Reader(), FirstLegal()
    state = new_game(CONFIG, seed=4)
    for _ in decisions(state, [reader, user]):
        pass
    assert reader.views > 0 and user.calls > 0 and reader.views + user.calls == state.moves


def test_a_seat_without_an_agent_waits_for_its_move_from_outside():
    state = new_game(CONFIG, seed=2)
    loop = GameLoop(state, [None, greedy(1)], names=["you", "greedy"])
    outside = 0
    while not loop.over:
        if loop.waiting:
            assert state.current == 0
            with pytest.raises(RuntimeError, match=r"player_0 \(you\) has no agent"):
                loop.decide()
            decision = loop.take(encode_action(state.legal_moves()[-1], CONFIG))
            outside += 1
        else:
            with pytest.raises(RuntimeError, match="moves by its agent"):
                loop.take(0)
            decision = loop.decide()
        assert decision.move in state.legal_moves()
        loop.apply(decision)
    assert outside > 0 and not loop.waiting
    with pytest.raises(RuntimeError, match="the game is over"):
        loop.take(0)


def test_a_move_from_outside_is_checked_like_an_agents():
    state = new_game(CONFIG, seed=2)
    loop = GameLoop(state, [None, None], names=["ann", "bob"])
    before = state.to_dict()
    illegal = next(a for a in range(len(loop.observation()["action_mask"]))
                   if not loop.observation()["action_mask"][a])
    with pytest.raises(AgentError, match=rf"player_{state.current} \(\w+\) chose an illegal move"):
        loop.take(illegal)
    assert state.to_dict() == before


def test_a_decision_applies_only_to_the_position_it_was_made_in():
    state = new_game(CONFIG, seed=3)
    loop = GameLoop(state, [greedy(0), greedy(1)])
    decision = loop.decide()
    loop.apply(decision)
    while state.current == decision.seat and not state.is_over:
        loop.apply(loop.decide())
    with pytest.raises(RuntimeError, match="not one of the game's current position"):
        loop.apply(decision)


def test_the_loop_needs_one_entry_per_seat():
    with pytest.raises(ValueError, match="needs one agent \\(or None\\) per seat, got 3"):
        GameLoop(new_game(CONFIG, seed=0), [None, None, None])
    with pytest.raises(TypeError, match="needs a method act"):
        GameLoop(new_game(CONFIG, seed=0), [object(), None])


class Batched(AgentBase):
    """A batched agent: the first legal action of every observation, counting its calls."""

    batched = True

    def __init__(self) -> None:
        self.batches: list[int] = []

    def act(self, observation):  # pragma: no cover - a batched agent is asked act_batch in lockstep
        raise AssertionError("asked act in lockstep")

    def act_batch(self, observations):
        self.batches.append(len(observations))
        return [int(np.flatnonzero(o["action_mask"])[0]) for o in observations]


def test_lockstep_games_equal_the_same_games_one_by_one():
    """One batched agent in many games gets one call per step for all of them; every game ends
    exactly as it does alone."""
    alone = []
    for seed in range(4):
        state = new_game(CONFIG, seed=seed)
        for _ in decisions(state, [FirstLegal(), greedy(1)]):
            pass
        alone.append(state.to_dict())
    net = Batched()
    loops = [GameLoop(new_game(CONFIG, seed=seed), [net, greedy(1)], game=f"game {seed}") for seed in range(4)]
    movers: list[int] = []
    play_batched(loops, on_move=lambda g, move: movers.append(loops[g].state.current))
    assert [loop.state.to_dict() for loop in loops] == alone
    assert len(movers) == sum(loop.state.moves for loop in loops)
    assert max(net.batches) > 1 and sum(net.batches) == movers.count(0)


def test_lockstep_errors_name_the_game_and_the_seat():
    class Wrong(Batched):
        def act_batch(self, observations):
            return [999 for _ in observations]

    loops = [GameLoop(new_game(CONFIG, seed=seed), [Wrong(), Wrong()], ["w", "w"], game=f"game {seed}")
             for seed in range(2)]
    with pytest.raises(AgentError, match=r"game 0: player_\d \(w\) chose action 999"):
        play_batched(loops)

    class Short(Batched):
        def act_batch(self, observations):
            return []

    with pytest.raises(AgentError, match="act_batch returned 0 actions for 2 games"):
        agent = Short()
        play_batched([GameLoop(new_game(CONFIG, seed=seed), [agent, agent]) for seed in range(2)])
