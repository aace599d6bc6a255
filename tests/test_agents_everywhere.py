"""Every shipped agent, by name, wherever agents are accepted (docs/agents.md, "Every agent by name").

Each name the agent registry knows (the scripted ones of ``skipbo_env.bots.BOTS``, ``ppo-2p``,
``turn-2p``, ``search:W:C``; ``value-6p`` through the search at 6 players) sits as an opponent of
``SkipBo-v0`` and of the vector envs, and as a seat of a user-written PettingZoo loop driven by
``agent.act_view(env.unwrapped.seat_view(name))``, and plays whole games. The same seed plays the
same games. An agent made for another table is refused naming the entry, and the views handed to
opponents hold only what their seat sees (R3, R4).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from conftest import check_view_hides

import skipbo_env
from skipbo_env.agents import SHIPPED, SHIPPED_PLAYERS, NeedsViewError, load_agent
from skipbo_env.bots import BOTS, AgentBase
from skipbo_env.encoding import encode_view
from skipbo_env.rules import ConfigError, GameConfig, SeatView
from skipbo_env.single import SkipBoSingleEnv

pytest.importorskip("torch")  # the trained agents and the 2-player search need the train extra

SEARCH = "search:2:2"
"""A small search (2 worlds, 2 candidate turns): whole games in about a second."""
TWO_PLAYER_ONLY = tuple(name for name in SHIPPED if SHIPPED_PLAYERS[name] == 2)
"""The shipped networks for the 2-player classic game."""
WIDER = tuple(name for name in SHIPPED if SHIPPED_PLAYERS[name] > 2)
"""The shipped networks for larger tables (each plays one number of players)."""
AGENTS_2P = (*BOTS, *TWO_PLAYER_ONLY, SEARCH)


def play_single(env: gymnasium.Env, seed: int) -> list[tuple[float, float]]:
    """One whole game of ``env`` with a random learner seeded by ``seed``; (observation sum, reward) per step."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = []
    done = False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
        trace.append((float(obs.sum()), float(reward)))
        done = terminated or truncated
    assert "winners" in info
    return trace


# ------------------------------------------------------------ SkipBo-v0
@pytest.mark.parametrize("spec", AGENTS_2P)
def test_every_agent_is_a_skipbo_v0_opponent_by_name(spec):
    env = gymnasium.make("SkipBo-v0", num_players=2, opponents=spec)
    first = play_single(env, seed=5)
    assert first == play_single(env, seed=5)  # the env seeds its named opponents: same seed, same game


@pytest.mark.parametrize("name", WIDER)
def test_a_shipped_agent_for_a_larger_table_plays_there_by_name_and_only_there(name):
    players = SHIPPED_PLAYERS[name]
    env = gymnasium.make("SkipBo-v0", num_players=players, opponents=name)
    assert play_single(env, seed=5) == play_single(env, seed=5)
    pettingzoo = skipbo_env.env(num_players=players)
    pettingzoo.reset(seed=7)
    agent = load_agent(name, pettingzoo.unwrapped.config, seed=0)
    for seat in pettingzoo.agent_iter():
        _, _, terminated, truncated, _ = pettingzoo.last()
        pettingzoo.step(None if terminated or truncated else agent.act_view(pettingzoo.unwrapped.seat_view(seat)))
    assert pettingzoo.unwrapped.game.is_over
    with pytest.raises(ConfigError, match=rf"opponents\[0\]: .*'{name}' does not play this game \(it plays "
                                          rf"{players}-player games\): observation shape"):
        SkipBoSingleEnv(num_players=2, opponents=name)
    if players in (4, 6):  # the partner game at the same table is another game
        with pytest.raises(ValueError, match=r"partner_game=True"):
            load_agent(name, GameConfig(num_players=players, partner_game=True))


def test_every_shipped_agent_states_its_table():
    assert set(SHIPPED_PLAYERS) == set(SHIPPED)
    for name, players in SHIPPED_PLAYERS.items():
        load_agent(name, GameConfig(num_players=players))


def test_the_search_at_six_players_reads_value_6p():
    env = SkipBoSingleEnv(num_players=6, opponents="search:1:1")
    play_single(env, seed=1)
    assert {Path(agent.value_net).name for agent in env.opponents} == {"value_6p.safetensors"}


def test_an_agent_file_is_an_opponent_by_its_path():
    from skipbo_env.agents import shipped_agent_path

    path = shipped_agent_path("turn-2p")
    for spec in (path, str(path)):
        play_single(SkipBoSingleEnv(num_players=2, opponents=[spec]), seed=2)


@pytest.mark.parametrize(("spec", "why"), [
    ("ppo-2p", r"the shipped agent 'ppo-2p' does not play this game \(it plays 2-player games\): "
               r"observation shape .* \(4 players"),
    ("turn-2p", r"the turn network reads 2-player games without partners, not 4 players"),
])
def test_a_two_player_agent_at_a_four_player_table_is_refused_naming_the_entry(spec, why):
    with pytest.raises(ConfigError, match=r"opponents\[1\]: .*" + why):
        SkipBoSingleEnv(num_players=4, opponents=["greedy", spec, "random"])
    with pytest.raises(ConfigError, match=r"opponents\[0\]: .*" + why):
        gymnasium.make("SkipBo-v0", num_players=4, opponents=spec)


def test_names_that_are_no_agent_are_refused_naming_the_entry():
    with pytest.raises(ConfigError, match=r"opponents\[0\]: 'value-6p' is a shipped value network, not an agent"):
        SkipBoSingleEnv(num_players=6, opponents="value-6p")
    with pytest.raises(ConfigError, match=r"opponents\[1\]: unknown agent 'turn-3p'; known agents: .*turn-2p"):
        SkipBoSingleEnv(num_players=3, opponents=["greedy", "turn-3p"])
    with pytest.raises(ConfigError, match=r"opponents\[0\]: search agent spec 'search:0'"):
        SkipBoSingleEnv(num_players=2, opponents="search:0")


# ------------------------------------------------------------ vector envs
def play_vector(spec: str, seed: int, games: int = 2, players: int = 2) -> list[float]:
    """``games`` whole games of a 2-game SkipBoVectorEnv of ``players`` against ``spec``; a fingerprint per step."""
    from skipbo_env.vector import SkipBoVectorEnv

    envs = SkipBoVectorEnv(GameConfig(num_players=players), num_envs=2, opponents=spec, seed=seed)
    rng = np.random.default_rng(seed)
    obs, infos = envs.reset(seed=seed)
    trace, ended = [], 0
    while ended < games:
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in infos["action_mask"]])
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        ended += int((terminated | truncated).sum())
        trace.append(float(obs.sum() + rewards.sum()))
    return trace


@pytest.mark.parametrize("spec", AGENTS_2P)
def test_every_agent_is_a_vector_env_opponent_by_name(spec):
    pytest.importorskip("numba")
    assert play_vector(spec, seed=3) == play_vector(spec, seed=3)


@pytest.mark.parametrize("name", WIDER)
def test_a_shipped_agent_for_a_larger_table_is_a_vector_env_opponent_there(name):
    pytest.importorskip("numba")
    players = SHIPPED_PLAYERS[name]
    assert play_vector(name, seed=3, players=players) == play_vector(name, seed=3, players=players)


def test_the_sb3_vector_env_seats_agents_by_name():
    pytest.importorskip("numba")
    from skipbo_env.vector import make_vec_env

    venv = make_vec_env(GameConfig(num_players=2), 2, opponents=["turn-2p"], seed=0)
    venv.reset()
    ended = 0
    while ended < 2:
        actions = np.array([np.flatnonzero(mask)[-1] for mask in venv.action_masks()])
        venv.step_async(actions)
        _, _, dones, _ = venv.step_wait()
        ended += int(dones.sum())


def test_a_two_player_agent_in_a_four_player_vector_env_is_refused():
    pytest.importorskip("numba")
    from skipbo_env.vector.gym_env import make_vector_env

    with pytest.raises(ConfigError, match=r"opponents\[2\]: the turn network reads 2-player games"):
        make_vector_env(2, num_players=4, opponents=["greedy", "heuristic", "turn-2p"])


# ------------------------------------------------------------ a user's PettingZoo loop
@pytest.mark.parametrize("spec", AGENTS_2P)
def test_every_agent_plays_a_pettingzoo_loop_by_seat_view(spec):
    """The documented call, one per decision: ``agent.act_view(env.unwrapped.seat_view(name))``."""
    env = skipbo_env.env(num_players=2)
    env.reset(seed=7)
    config = env.unwrapped.config
    agents = {"player_0": load_agent(spec, config, seed=0), "player_1": load_agent("heuristic", config, seed=1)}
    decisions = 0
    for name in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(agents[name].act_view(env.unwrapped.seat_view(name)))
        decisions += 1
    game = env.unwrapped.game
    assert game.is_over and decisions == game.moves


@pytest.mark.parametrize("spec", ["turn-2p", SEARCH])
def test_a_view_agent_handed_an_observation_names_act_view_and_seat_view(spec):
    env = skipbo_env.env(num_players=2)
    env.reset(seed=0)
    agent = load_agent(spec, env.unwrapped.config, seed=0)
    observation, *_ = env.last()
    with pytest.raises(NeedsViewError, match=r"act_view\(view\).*seat_view\(agent\)"):
        agent.act(observation)
    with pytest.raises(ValueError):  # a ValueError, as before
        agent.act(observation)


# ------------------------------------------------------------ what an opponent is handed
class RecordingViewAgent(AgentBase):
    """A view-reading opponent that checks each view against the game in play, then plays its first legal move."""

    reads_view = True

    def __init__(self, game_of, learner_of) -> None:
        self.game_of, self.learner_of = game_of, learner_of
        self.rng = np.random.default_rng(0)
        self.views = 0

    def act_view(self, view: SeatView) -> int:
        game = self.game_of()
        assert isinstance(view, SeatView) and view.seat == game.current != self.learner_of()
        assert view == game.view(view.seat) and view.completed_cards == game.view(view.seat).completed_cards
        check_view_hides(game, view.seat, self.rng)  # the same view whatever the cards it cannot see
        self.views += 1
        return int(np.flatnonzero(encode_legal(view))[0])


class RecordingObservationAgent(AgentBase):
    """An observation-reading opponent that checks each observation is its seat's encoded view."""

    def __init__(self, game_of) -> None:
        self.game_of = game_of
        self.calls = 0

    def act(self, observation) -> int:
        game = self.game_of()
        assert np.array_equal(observation["observation"], encode_view(game.view(game.current)))
        self.calls += 1
        return int(np.flatnonzero(observation["action_mask"])[0])


def encode_legal(view: SeatView) -> np.ndarray:
    from skipbo_env.encoding import action_mask

    return action_mask(view.legal_moves(), view.config)


@pytest.mark.parametrize("fields", [{"num_players": 2}, {"num_players": 4, "partner_game": True}])
def test_skipbo_v0_hands_an_opponent_only_what_its_seat_sees(fields):
    env = SkipBoSingleEnv(**fields, learner_seat=0, turn_limit=40)
    viewer = RecordingViewAgent(lambda: env.aec.game, lambda: env.learner_seat)
    reader = RecordingObservationAgent(lambda: env.aec.game)
    others = fields["num_players"] - 1
    env.set_opponents([viewer if k % 2 == 0 else reader for k in range(others)])
    play_single(env, seed=4)
    assert viewer.views > 5 and (others == 1 or reader.calls > 5)


def test_the_vector_env_hands_an_opponent_only_what_its_seat_sees():
    pytest.importorskip("numba")
    from skipbo_env.vector import SkipBoVectorEnv

    envs = SkipBoVectorEnv(GameConfig(num_players=3, turn_limit=40), num_envs=2, learner_seat=0, seed=0)
    engine = envs.batch.engine
    games = {"row": 0}

    def game_of():
        return engine.to_state(games["row"])

    class Viewer(RecordingViewAgent):
        def act_view(self, view: SeatView) -> int:
            # the rows waiting are asked in order; find the game this view is of
            rows = [b for b in range(2) if not engine.done[b] and engine.current[b] == view.seat
                    and engine.to_state(b).view(view.seat) == view]
            assert rows, "the view handed over is no seat's view of a game in the batch"
            games["row"] = rows[0]
            return super().act_view(view)

    viewer = Viewer(game_of, lambda: 0)
    envs.batch.set_opponents([viewer, "greedy"])
    obs, infos = envs.reset(seed=1)
    ended = 0
    while ended < 2:
        obs, _, terminated, truncated, infos = envs.step(np.array([np.flatnonzero(m)[0] for m in infos["action_mask"]]))
        ended += int((terminated | truncated).sum())
    assert viewer.views > 5


# ------------------------------------------------------------ the core install
def run_without(modules: tuple[str, ...], code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where importing any of ``modules`` fails (as on a core install)."""
    block = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    return subprocess.run([sys.executable, "-c", block + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, OMP_NUM_THREADS="1"))


CORE_MISSING = ("torch", "safetensors", "stable_baselines3", "sb3_contrib", "numba")


def test_scripted_opponents_on_a_core_install_load_no_trained_agent():
    proc = run_without(CORE_MISSING, """
        import sys
        import numpy as np
        from skipbo_env.single import SkipBoSingleEnv
        env = SkipBoSingleEnv(num_players=3, opponents=["heuristic", "greedy"])
        obs, info = env.reset(seed=0)
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
        print(sorted(m for m in ("skipbo_env.agents", "skipbo_env.vector") if m in sys.modules))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("spec", ["ppo-2p", "turn-2p"])
def test_a_trained_opponent_on_a_core_install_names_the_train_extra(spec):
    proc = run_without(CORE_MISSING, f"""
        from skipbo_env.single import SkipBoSingleEnv
        from skipbo_env.extras import MissingExtraError
        try:
            SkipBoSingleEnv(num_players=2, opponents={spec!r})
        except MissingExtraError as exc:
            print(exc)
    """)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and "'train' extra" in lines[0] and "pip install 'skipbo-env[train]'" in lines[0]
