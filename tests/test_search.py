"""The search agent (skipbo_env.agents.search): legal moves, determinism, information
discipline (only the SeatView matters), its settings and the registry's spec parsing."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from support import assert_same_legal_demonstrations, choice_positions  # noqa: E402

from skipbo_env.agents import SearchAgent, SearchSettings, known_agents, load_agent, parse_search_spec  # noqa: E402
from skipbo_env.agents.search import opponent_styles, search_weights  # noqa: E402
from skipbo_env.bots.heuristic import default_weights  # noqa: E402
from skipbo_env.encoding import decode_action, observe  # noqa: E402
from skipbo_env.rules import GameConfig, GameState, new_game, sample_state  # noqa: E402


def _search(config: GameConfig, seed: int | None = None, **settings) -> SearchAgent:
    return SearchAgent(config, seed, SearchSettings(**settings))


def _play(config: GameConfig, agents, seed: int, limit: int = 100_000) -> tuple[GameState, list[int]]:
    state = new_game(config, seed=seed)
    actions = []
    while not state.is_over and len(actions) < limit:
        view = state.view(state.current)
        action = agents[state.current].act_view(view)
        move = decode_action(action, config)
        assert move in view.legal_moves()
        actions.append(action)
        state.apply(move)
    return state, actions


@pytest.mark.parametrize(
    "config",
    [
        GameConfig(),
        GameConfig(num_players=3, short_game=True),
        GameConfig(num_players=4, partner_game=True, short_game=True),
        GameConfig(num_players=6, short_game=True),
    ],
    ids=["2p", "3p-short", "4p-partner-short", "6p-short"],
)
def test_every_action_is_legal_over_full_games(config):
    agents = [_search(config, seed=s, worlds=2, candidates=3) for s in range(config.num_players)]
    state, _ = _play(config, agents, seed=1)
    assert state.is_over
    assert sum(a.searches for a in agents) > 0


def test_same_seed_same_decisions():
    config = GameConfig(short_game=True)
    a = [_search(config, seed=5, worlds=4, candidates=4) for _ in range(2)]
    b = [_search(config, seed=5, worlds=4, candidates=4) for _ in range(2)]
    _, first = _play(config, a, seed=3)
    _, second = _play(config, b, seed=3)
    assert first == second
    for agent in a:
        agent.seed(5)
    _, again = _play(config, a, seed=3)
    assert again == first


def _positions(config: GameConfig, count: int):
    """Positions where the mover has a real choice, from heuristic-vs-heuristic games."""
    return choice_positions(config, count, first_seed=100, games=50, max_stop=200)


def test_only_the_view_matters():
    """For a fixed position and sampling seed, rearranging the hidden cards (other hands, stocks
    below their tops, draw pile order) never changes the decision (R3, R4, R28)."""
    config = GameConfig()
    agent = _search(config, worlds=8, candidates=6)
    for state in _positions(config, 6):
        seat = state.current
        view = state.view(seat)
        decisions = set()
        for k in range(3):
            other = state if k == 0 else sample_state(view, np.random.default_rng(k))
            assert other.view(seat) == view and other.view(seat).completed_cards == view.completed_cards
            agent.seed(11)
            decisions.add(agent.act_view(other.view(seat)))
        assert len(decisions) == 1


def test_score_candidates_is_the_search_the_agent_plays():
    """score_candidates scores the candidates act_view compares: with the same seed, the best
    one's first move is the action act_view plays, and the candidates depend only on the view."""
    config = GameConfig()
    compared = 0
    for state in _positions(config, 6):
        view = state.view(state.current)
        scorer = _search(config, seed=3, worlds=8, candidates=6)
        paths, scores = scorer.score_candidates(view)
        assert len(paths) == len(scores) and all(path[0] in view.legal_moves() for path in paths)
        other_paths, _ = _search(config, seed=4, worlds=2, candidates=6).score_candidates(view)
        assert other_paths == paths
        if len(paths) > 1:
            compared += 1
            player = _search(config, seed=3, worlds=8, candidates=6)
            assert decode_action(player.act_view(view), config) == paths[int(np.argmax(scores))][0]
    assert compared > 0
    agent = _search(config, seed=0, worlds=2, candidates=2)
    state = new_game(config, seed=0)
    with pytest.raises(ValueError, match="not to move"):
        agent.score_candidates(state.view(1 - state.current))
    with pytest.raises(TypeError, match="SeatView"):
        agent.score_candidates(observe(state, state.current))


def test_act_needs_the_view():
    config = GameConfig()
    agent = _search(config, seed=0, worlds=2, candidates=2)
    state = new_game(config, seed=0)
    with pytest.raises(ValueError, match="act_view"):
        agent.act(observe(state, state.current))
    with pytest.raises(ValueError, match="not to move"):
        agent.act_view(state.view(1 - state.current))


def test_registry_specs():
    assert "search" in known_agents()
    config = GameConfig()
    agent = load_agent("search", config, seed=0)
    assert isinstance(agent, SearchAgent) and (agent.worlds, agent.candidates) == (64, 12)  # 2 players: 64 worlds
    assert parse_search_spec("search") == SearchSettings(worlds=None, candidates=12)  # None: the table's default
    agent = load_agent("search:3", config, seed=0)
    assert (agent.worlds, agent.candidates) == (3, 12)
    agent = load_agent("search:5:2", config, seed=0)
    assert (agent.worlds, agent.candidates) == (5, 2)
    assert parse_search_spec("search:7:4") == SearchSettings(worlds=7, candidates=4)
    for bad, match in [
        ("search:", r"worlds must be an int in 1\.\.4096, got ''"),
        ("search:0", r"worlds must be an int in 1\.\.4096, got '0'"),
        ("search:x", r"worlds must be an int"),
        ("search:-3", r"worlds must be an int"),
        ("search:4:0", r"candidates must be an int in 1\.\.64"),
        ("search:4:2:1", r"'search', 'search:W' or 'search:W:C'"),
        ("search:99999", r"worlds must be an int in 1\.\.4096"),
    ]:
        with pytest.raises(ValueError, match=match):
            load_agent(bad, config)
    with pytest.raises(ValueError, match="unknown agent 'searchy'"):
        load_agent("searchy", config)
    with pytest.raises(ValueError, match="worlds must be an int"):
        _search(config, worlds=0)


def test_reach_chance_matches_the_heuristic():
    """The engine's compiled reach chance of a seat's stock top, per game, equals
    bots.heuristic.reach_chance of what the seat holds (hand and discard-top numbers, wilds there)."""
    from skipbo_env.bots.heuristic import reach_chance
    from skipbo_env.vector import BatchEngine

    config = GameConfig()
    states = list(_positions(config, 12))
    eng = BatchEngine(config, len(states), seed=0)
    for j, state in enumerate(states):
        eng.load_state(j, state)
    for seat in range(2):
        got = eng.reach_chances(seat, 0.4)
        for r, state in enumerate(states):
            hand, tops = state.hands[seat], [pile[-1] for pile in state.discards[seat] if pile]
            numbers = frozenset([v for v in range(1, 13) if hand[v]] + [t for t in tops if t != 13])
            jokers = hand[13] + tops.count(13)
            top = state.stocks[seat][-1] if state.stocks[seat] else None
            building = tuple(len(pile) for pile in state.building)
            assert got[r] == pytest.approx(reach_chance(top, building, numbers, jokers, 0.4))
    with pytest.raises(ValueError, match="seat must be in 0..1"):
        eng.reach_chances(2, 0.4)


def test_other_weights_play_legal_moves():
    config = GameConfig(short_game=True)
    agents = [
        _search(config, seed=1, worlds=3, candidates=3, reach=0.5, reach_q=0.5, prior=1.0, win=10.0, discards=2),
        _search(config, seed=2, worlds=2, candidates=2, discards=1),
    ]
    state, _ = _play(config, agents, seed=4)
    assert state.is_over and agents[0].searches > 0


@pytest.mark.parametrize("rollout", ["greedy", "heuristic"])
def test_rollout_agents_play_legal_games(rollout):
    config = GameConfig(num_players=3, short_game=True)
    agents = [_search(config, seed=s, worlds=3, candidates=3, rollout=rollout) for s in range(3)]
    state, _ = _play(config, agents, seed=4)
    assert state.is_over
    assert agents[0].settings.rollout == rollout


@pytest.mark.parametrize(
    "config",
    [GameConfig(num_players=3, short_game=True), GameConfig(num_players=4, partner_game=True, short_game=True)],
    ids=["3p", "4p-partner"],
)
def test_opponent_styles_model_the_other_sides_in_the_rollouts(config):
    """World j plays the opponents with style j % 3 of ``opponent_styles``; the own side (the
    partner too) keeps the own weights; whole games stay legal and repeat for a seed."""
    from skipbo_env.vector.compiled_heuristic import weights_vector

    styles = opponent_styles(config)
    assert len(styles) == 3 and styles[0] == search_weights(config.num_players)

    def agents():
        return [_search(config, seed=s, worlds=4, candidates=3, opponent_weights=styles) if s == 0
                else load_agent("heuristic", config, seed=s) for s in range(config.num_players)]

    seated = agents()
    state, actions = _play(config, seated, seed=7)
    assert state.is_over and seated[0].searches > 0
    assert _play(config, agents(), seed=7)[1] == actions
    rows = seated[0]._plans.weights.reshape(-1, config.num_players, weights_vector(styles[0]).size)
    for game in range(rows.shape[0]):
        for seat in range(config.num_players):
            own = config.team(seat) == config.team(0)
            expected = seated[0].settings.weights if own else styles[game % 4 % 3]
            np.testing.assert_array_equal(rows[game, seat], weights_vector(expected))


def test_opponent_weights_must_be_a_tuple_of_weights():
    with pytest.raises(TypeError, match="opponent_weights must be a tuple of HeuristicWeights"):
        SearchSettings(opponent_weights=[default_weights(3)])
    with pytest.raises(TypeError, match="opponent_weights must be a tuple of HeuristicWeights"):
        SearchSettings(opponent_weights=({"danger": 1.0},))


def test_unknown_rollout_is_refused():
    with pytest.raises(ValueError, match="rollout must be one of greedy, heuristic"):
        _search(GameConfig(), rollout="random")


def test_default_horizon_and_bad_horizons():
    # no extra round at any table by default (docs/search.md); a longer one on request
    for config in (GameConfig(), GameConfig(num_players=3), GameConfig(num_players=4, partner_game=True)):
        assert _search(config, worlds=1, candidates=1).settings.horizon == 0
    assert _search(GameConfig(), worlds=1, candidates=1, horizon=1).settings.horizon == 1
    for bad in (-1, 9, 1.0, "1"):
        with pytest.raises(ValueError, match="horizon must be an int in 0..8"):
            _search(GameConfig(), horizon=bad)


def test_a_longer_horizon_plays_legal_games():
    config = GameConfig(short_game=True)
    agents = [_search(config, seed=s, worlds=2, candidates=3, horizon=2) for s in range(2)]
    state, _ = _play(config, agents, seed=6)
    assert state.is_over


def test_depth_defaults_to_every_other_seat_and_is_validated():
    # every other seat by default; the next seat alone at 6 players (docs/search.md)
    for n in (2, 3, 4, 5):
        assert _search(GameConfig(num_players=n), worlds=1, candidates=1).settings.depth == n - 1
    assert _search(GameConfig(num_players=6), worlds=1, candidates=1).settings.depth == 1
    assert _search(GameConfig(num_players=6, partner_game=True), worlds=1, candidates=1).settings.depth == 5
    config = GameConfig(num_players=6)
    assert _search(config, worlds=1, candidates=1, depth=2).settings.depth == 2
    assert _search(config, worlds=1, candidates=1, depth=0).settings.depth == 0  # scored when the own turn ends
    for bad in (-1, 6, 1.0, "1"):
        with pytest.raises(ValueError, match=r"depth must be an int in 0\.\.5"):
            _search(config, depth=bad)
    # stopping before the seat's next turn leaves nothing for a longer horizon or an agent's value
    # head to read (a value network reads any seat's turn start: tests/test_valuenet.py)
    with pytest.raises(ValueError, match="depth 2 stops before the seat's next turn: it needs horizon 0"):
        _search(config, depth=2, horizon=1)
    with pytest.raises(ValueError, match="an agent's value head cannot read the position"):
        _search(config, depth=2, value=1.0, value_net="unused.safetensors")


def test_worlds_default_by_table_and_explicit_worlds_win():
    # 64 worlds in the 2-player game, 32 at the other tables and in the partner games (docs/search.md)
    assert _search(GameConfig(), value=0.0, net_opponents=0.0).worlds == 64
    for config in (GameConfig(num_players=3), GameConfig(num_players=6), GameConfig(num_players=4, partner_game=True)):
        assert _search(config).worlds == 32
    assert _search(GameConfig(), worlds=8, value=0.0, net_opponents=0.0).worlds == 8
    # the network plays its share of the table's worlds: a quarter of 64
    assert _search(GameConfig(), value=0.0)._net_worlds == 16
    assert load_agent("search:32", GameConfig(), seed=0)._net_worlds == 8


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_a_shorter_depth_stops_the_simulations_after_that_many_seats(depth):
    """The simulations play the seat's turn and then ``depth`` other seats' turns: every world
    still running stops with seat ``me + depth + 1`` to move (depth 0: the next seat, none of whose
    turn is played); depth 5 plays up to the seat's next turn."""
    config = GameConfig(num_players=6, short_game=True)
    state, rng = new_game(config, seed=2), np.random.default_rng(0)
    while state.current != 2 or state.turn < 12:  # random play to a position some turns in, seat 2 to move
        moves = state.view(state.current).legal_moves()
        state.apply(moves[rng.integers(len(moves))])
    view = state.view(2)
    agent = _search(config, seed=0, worlds=4, candidates=3, depth=depth)
    paths = agent.score_candidates(view)[0][:3]
    assert len(paths) >= 2
    agent._simulate(view, paths)
    eng = agent._engine
    used = 4 * len(paths)
    running = ~eng.done[:used]
    assert running.any()
    assert (eng.current[:used][running] == (2 + depth + 1) % 6).all()
    full = _search(config, seed=0, worlds=4, candidates=3, depth=5)
    full._simulate(view, paths)
    running = ~full._engine.done[:used]
    assert (full._engine.current[:used][running] == 2).all()


def test_a_shorter_depth_plays_legal_games():
    config = GameConfig(num_players=4, short_game=True)
    agents = [_search(config, seed=s, worlds=2, candidates=3, depth=s % 4) for s in range(4)]
    state, _ = _play(config, agents, seed=3)
    assert state.is_over


def test_a_candidate_move_made_illegal_by_a_hidden_refill_hands_over_to_the_rollout():
    """R19: a pile completed during the turn is shuffled into the empty draw pile and refills the
    emptied hand, so the planner's "end turn" after the last hand card is not legal in the worlds;
    those worlds stop following the candidate instead of failing (seen in 6-player games)."""
    from conftest import state_dict

    from skipbo_env.rules import EndTurn, Play, Source

    config = GameConfig()
    state = GameState.from_dict(state_dict(2, hands={0: [11, 2, 3]}, discards={0: [[12]]}, building=(10, 1, 0, 0),
                                           rest=("discard", 1, 0)))
    view = state.view(0)
    assert view.draw_size == 0 and view.completed_size == 0
    path = (Play(Source.HAND, 0, card=11), Play(Source.DISCARD, 0, discard_pile=0), Play(Source.HAND, 1, card=2),
            Play(Source.HAND, 1, card=3), EndTurn())
    agent = _search(config, seed=0, worlds=4, candidates=2)
    race = agent._simulate(view, [path, path[:1]])
    assert race.shape == (2,) and np.isfinite(race).all()


def test_the_search_agent_teaches_its_own_decisions():
    """pretrain.teacher may be a search spec: its demonstrations are legal, seeded (the same with one
    or two worker processes) and differ from the heuristic's on the same deals."""
    from skipbo_env.training.pretrain import collect

    game = GameConfig(stock_size=5)
    one = collect(game, "search:2:2", {"heuristic": 1}, 3, seed=3, gamma=0.99, shaping=False, progress=False)
    two = collect(game, "search:2:2", {"heuristic": 1}, 3, seed=3, gamma=0.99, shaping=False, progress=False,
                  workers=2)
    assert one.games == 3
    planner = collect(game, "heuristic", {"heuristic": 1}, 3, seed=3, gamma=0.99, shaping=False, progress=False)
    assert_same_legal_demonstrations(one, two, planner)


def test_search_regret_benchmark_runs(tmp_path):
    """benchmarks/search_regret.py end to end on a tiny budget: its JSON, table and plot."""
    import json
    import subprocess
    import sys

    out, png = tmp_path / "regret.json", tmp_path / "regret.png"
    done = subprocess.run(
        [sys.executable, "benchmarks/search_regret.py", "--games", "1", "--worlds", "2", "4", "--oracle-worlds", "16",
         "--reps", "1", "--save", str(out), "--plot", str(png)],
        capture_output=True, text=True, check=True,
    )
    assert "| 4 worlds |" in done.stdout and "| heuristic (no simulation) |" in done.stdout
    result = json.loads(out.read_text())
    assert result["positions_compared"] > 0
    for row in result["rows"]:
        assert row["picks"] == result["positions_compared"] and row["regret"] >= 0 and 0 <= row["agreement"] <= 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = subprocess.run(
        [sys.executable, "benchmarks/search_regret.py", "--worlds", "0"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "worlds must be in 1.." in bad.stderr


def test_learned_value_option(tmp_path):
    from skipbo_env.agents import CheckpointError
    from skipbo_env.agents.registry import shipped_agent_path
    from skipbo_env.agents.search import DEFAULT_VALUE

    config = GameConfig()
    net = shipped_agent_path("ppo-2p")
    default = _search(config, worlds=2, candidates=2)
    assert default.settings.value == DEFAULT_VALUE > 0 and default.value_net == net  # the 2-player default
    three = GameConfig(num_players=3, short_game=True)
    assert _search(three, worlds=2, candidates=2).settings.value == 0.0  # no shipped network reads 3 players
    with pytest.raises(ValueError, match="no shipped network reads this table"):
        _search(three, value=1.0)
    with pytest.raises(ValueError, match="value must be a finite weight"):
        _search(config, value=-1.0)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a network")
    with pytest.raises(CheckpointError, match="bad.safetensors"):
        _search(config, value=1.0, value_net=bad)
    with pytest.raises(CheckpointError, match="observation shape"):
        _search(three, value=1.0, value_net=net)

    state = new_game(config, seed=2)
    view = state.view(state.current)
    plain = _search(config, seed=3, worlds=4, candidates=4, value=0.0)
    valued = _search(config, seed=3, worlds=4, candidates=4, value=40.0)
    paths, base = plain.score_candidates(view)
    same_paths, scores = valued.score_candidates(view)
    assert same_paths == paths and len(paths) > 1
    # same worlds (same seed): the scores differ by the value term alone, which varies by candidate
    assert np.ptp(scores - base) > 0
    # the value head reads the seat's observation at the horizon: a bounded estimate, 0 for ended games
    running = ~valued._engine.done
    values = valued._learned_value(running, view.seat)
    assert np.all(np.abs(values[running]) < 5.0) and np.all(values[~running] == 0.0)
    assert np.ptp(values[running]) > 0
    game, _ = _play(config, [valued, plain], seed=5, limit=60)
    assert valued.searches > 0


def test_network_opponents_option():
    """net_opponents: in that share of the worlds the shipped network plays the other seats' simulated turns."""
    from skipbo_env.agents.registry import shipped_agent_path
    from skipbo_env.agents.search import DEFAULT_NET_OPPONENTS

    config = GameConfig()
    default = _search(config, worlds=4, candidates=2)
    assert (
        default.settings.net_opponents == DEFAULT_NET_OPPONENTS > 0 and default._net_worlds == 1
    )  # the 2-player default
    assert _search(GameConfig(num_players=3), worlds=4, candidates=2).settings.net_opponents == 0.0  # no network for 3
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="net_opponents must be a share"):
            _search(config, net_opponents=bad)
    three = GameConfig(num_players=3, short_game=True)
    with pytest.raises(ValueError, match="net_opponents > 0 needs a network"):
        _search(three, net_opponents=0.5)
    both = _search(config, worlds=4, candidates=4, net_opponents=0.5)
    assert both.opponent_net == both.value_net == shipped_agent_path("ppo-2p") and both._net_worlds == 2
    assert both._opponent.policy is both._value_policy  # one file, loaded once

    state = new_game(config, seed=4)
    view = state.view(state.current)
    runs = {}
    for share in (0.0, 1.0, 1.0):
        agent = _search(config, seed=3, worlds=4, candidates=4, value=0.0, net_opponents=share)
        runs.setdefault(share, []).append(agent.score_candidates(view))
    (paths, heuristic), = runs[0.0]
    (paths1, net), (paths2, net_again) = runs[1.0]
    assert paths == paths1 == paths2 and len(paths) > 1
    assert np.array_equal(net, net_again)  # same seed, same scores
    assert not np.array_equal(net, heuristic)  # same worlds, other opponents: other futures
    agents = [_search(config, seed=s, worlds=2, candidates=3, net_opponents=1.0) for s in range(2)]
    _, actions = _play(config, agents, seed=6, limit=80)
    assert len(actions) == 80 and agents[0].searches > 0


def test_settings_are_validated_when_built_and_frozen():
    """SearchSettings rejects a bad value with an error naming the setting; the table-dependent
    defaults and checks apply when an agent resolves them for its game (for_table)."""
    import dataclasses

    for bad, match in [
        (dict(worlds=0), r"worlds must be an int in 1\.\.4096, got 0"),
        (dict(candidates=0), r"candidates must be an int in 1\.\.64"),
        (dict(discards=-1), r"discards must be an int in 0\.\.64"),
        (dict(prior=float("inf")), "prior must be a finite number"),
        (dict(reach_q=1.5), r"reach_q must be a chance in 0\.\.1"),
        (dict(value=float("nan")), "value must be a finite weight >= 0"),
        (dict(net_opponents=-0.5), r"net_opponents must be a share in 0\.\.1"),
    ]:
        with pytest.raises(ValueError, match=match):
            SearchSettings(**bad)
    settings = SearchSettings(worlds=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.worlds = 5
    six = settings.for_table(GameConfig(num_players=6))
    assert (six.worlds, six.depth, six.value, six.net_opponents) == (4, 1, 36.0, 0.0)
    with pytest.raises(TypeError, match="settings must be SearchSettings"):
        SearchAgent(GameConfig(), 0, {"worlds": 4})


def _to_move(config: GameConfig, seed: int, plies: int) -> GameState:
    """A game of the heuristic after ``plies`` moves (the positions vary: hands, discard piles)."""
    heuristic = [load_agent("heuristic", config, seed=s) for s in range(config.num_players)]
    state, _ = _play(config, heuristic, seed=seed, limit=plies)
    return state


def test_policy_turn_is_the_networks_greedy_moves_up_to_the_first_reveal():
    """policy_turn follows the network's most likely legal move (what PPOAgent plays, read on the
    exact view after each move) and stops at the first move whose outcome the seat cannot see."""
    pytest.importorskip("torch")
    from skipbo_env.agents.turns import keeps_turn_known, policy_turn, predict_view

    config = GameConfig(num_players=4)
    net = load_agent("ppo-4p", config)
    longest = 0
    for seed in range(6):
        state = _to_move(config, seed, 9 * seed)
        view = state.view(state.current)
        path = policy_turn(net, view)
        longest = max(longest, len(path))
        here = view
        for j, move in enumerate(path):
            world = sample_state(here, np.random.default_rng(j))  # any world: the moves before reveal nothing
            assert decode_action(net.act(observe(world, here.seat)), config) == move
            if j < len(path) - 1:
                assert keeps_turn_known(here, move)
                here = predict_view(here, move)
            else:
                assert not keeps_turn_known(here, move)
    assert longest > 1  # some positions had plays before the turn's revealing move


def test_path_log_probs_sum_the_networks_log_softmax_along_each_path():
    """path_log_probs: each path's moves' log-probabilities under the network (masked log-softmax
    at the exact view before each move), summed; shared prefixes give the same terms."""
    pytest.importorskip("torch")
    from skipbo_env.agents.turns import path_log_probs, predict_view
    from skipbo_env.encoding import action_mask, encode_action, encode_view

    config = GameConfig(num_players=3)
    net = load_agent("ppo-3p", config)
    agent = _search(config, 0, worlds=2, policy=0.0)
    checked = 0
    for seed in range(5):
        state = _to_move(config, seed, 7 * seed + 3)
        view = state.view(state.current)
        paths, _ = agent.score_candidates(view)
        got = path_log_probs(net, view, paths)
        for path, value in zip(paths, got, strict=True):
            want, here = 0.0, view
            for move in path:
                logits = net.logits(encode_view(here))
                legal = action_mask(here.legal_moves(), config).astype(bool)
                logits = np.where(legal, logits, -np.inf)
                want += logits[encode_action(move, config)] - np.log(np.exp(logits - logits.max()).sum()) - logits.max()
                here = predict_view(here, move)
                if here is None:
                    break
            assert value == pytest.approx(want, abs=1e-4)  # one batch against one position at a time (float32)
            assert value <= 0.0
            checked += 1
    assert checked > 10


def test_policy_option_weighs_candidates_by_the_network():
    """policy: the table's shipped network weighs each candidate by its log-probability; its own
    turn joins the candidates; an overwhelming weight plays the network's likeliest candidate."""
    pytest.importorskip("torch")
    from skipbo_env.agents.registry import shipped_agent_path
    from skipbo_env.agents.search import DEFAULT_POLICIES
    from skipbo_env.agents.turns import path_log_probs, policy_turn

    config = GameConfig(num_players=4)
    for players, net in ((3, "ppo-3p"), (4, "ppo-4p"), (6, "ppo-6p")):  # the defaults: the table's shipped network
        default = _search(GameConfig(num_players=players), worlds=2)
        assert default.settings.policy == DEFAULT_POLICIES[players] > 0
        assert default.policy_net == shipped_agent_path(net)
    for other in (GameConfig(), GameConfig(num_players=6, short_game=True), GameConfig(num_players=4, short_game=True),
                  GameConfig(num_players=3, stock_size=10), GameConfig(num_players=4, partner_game=True)):
        plain = _search(other, worlds=2, value=0.0)  # no default policy: other tables, the variants
        assert plain.settings.policy == 0.0 and plain._policy is None and plain.policy_net is None
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="policy must be a finite weight >= 0"):
            SearchSettings(policy=bad)
    with pytest.raises(ValueError, match="policy > 0 needs a network"):
        _search(GameConfig(num_players=5), policy=1.0)  # no shipped network plays 5 players
    with pytest.raises(ValueError, match="policy > 0 needs a network"):
        _search(GameConfig(num_players=4, partner_game=True), policy=1.0)
    weighted = _search(config, 3, worlds=4, policy=1.0)
    assert weighted.policy_net == shipped_agent_path("ppo-4p")

    plain = _search(config, 3, worlds=4, policy=0.0)
    joined = 0
    for seed in range(6):
        state = _to_move(config, seed, 5 * seed)
        view = state.view(state.current)
        plain_paths, base = plain.score_candidates(_fresh_seed(plain, view))
        paths, scores = weighted.score_candidates(_fresh_seed(weighted, view))
        own = policy_turn(weighted._policy, view)
        assert own in paths and paths[:len(plain_paths)] == plain_paths
        joined += len(paths) - len(plain_paths)
        if len(paths) > 1:  # same worlds (same seed): the scores differ by the policy term
            logp = path_log_probs(weighted._policy, view, paths)
            assert scores[:len(base)] - base == pytest.approx(logp[:len(base)], abs=1e-9)
    assert joined > 0  # the network's own turn was not always among the planner's
    overwhelming = _search(config, 4, worlds=2, policy=1e6)
    for seed in range(4):
        state = _to_move(config, seed, 11 * seed + 1)
        view = state.view(state.current)
        if len(view.legal_moves()) == 1:
            continue
        paths, _ = overwhelming.score_candidates(view)
        best = paths[int(np.argmax(path_log_probs(overwhelming._policy, view, paths)))]
        assert decode_action(overwhelming.act_view(view), config) == best[0]


def _fresh_seed(agent: SearchAgent, view):
    agent.seed(7)  # the same worlds for both agents
    return view
