"""The action-scoring policy (ppo.policy: scorer): its features against the rules' own view of the table."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skipbo_env.agents.scorer import ScorerPolicy
from skipbo_env.encoding import decode_action, num_actions, observe
from skipbo_env.nets import ACTION_PIECES, ActionScorer, game_of_spaces
from skipbo_env.nets.scorer_features import KINDS
from skipbo_env.rules import WILD, Discard, GameConfig, Play, Source, new_game

OFFSETS = {}
_at = 0
for _name, _width in ACTION_PIECES:
    OFFSETS[_name] = slice(_at, _at + _width)
    _at += _width
CHAIN = {"gap": slice(0, 13), "cover": 13, "short": 14, "reachable": 15}


def scorer_for(config: GameConfig) -> ActionScorer:
    obs = observe(new_game(config, seed=0), 0)["observation"]
    return ActionScorer(obs.shape[0], num_actions(config), (32,), (16,), (32,), torch.nn.ReLU)


def slot(card: int | None) -> int:
    return 13 if card is None else 12 if card == WILD else card - 1


def chain(q: int, target: int | None, numbers: set[int], wilds: int) -> tuple[int, int, int, int]:
    """(gap class, cover, short, reachable) from a pile at q to a target card (test's own arithmetic)."""
    if target is None:
        return 12, 0, 0, 0
    if target == WILD:
        return 0, 0, 0, 1
    missing = [(q + i) % 12 + 1 for i in range((target - 1 - q) % 12)]
    cover = sum(1 for m in missing if m in numbers)
    short = max(0, len(missing) - cover - wilds)
    return len(missing), cover, short, int(short == 0)


def small_policy_and_positions(config: GameConfig, torch_seed: int) -> tuple[ScorerPolicy, torch.Tensor, np.ndarray]:
    """A small ScorerPolicy for the game (weights from ``torch_seed``), and the observations [300, obs] and
    legal-action masks [300, actions] of the first 300 decisions of two random games."""
    import gymnasium as gym

    from skipbo_env.bots import RandomAgent
    from skipbo_env.episode import decisions

    env = gym.make("SkipBo-v0", num_players=config.num_players, partner_game=config.partner_game)
    torch.manual_seed(torch_seed)
    policy = ScorerPolicy(env.observation_space, env.action_space, lambda _: 1e-4, context_arch=(32,),
                          scorer_arch=(16, 8), value_arch=(32,))
    steps = [d.observation for seed in range(2) for d in
             decisions(new_game(config, seed=seed), [RandomAgent(config, seed=s) for s in range(config.num_players)])]
    x = torch.as_tensor(np.array([o["observation"] for o in steps[:300]]))
    return policy, x, np.array([o["action_mask"] for o in steps[:300]]) != 0


def check_chain(row: np.ndarray, expected: tuple[int, int, int, int]) -> None:
    gap, cover, short, reach = expected
    assert np.argmax(row[CHAIN["gap"]]) == gap and row[CHAIN["gap"]].sum() == 1
    assert row[CHAIN["cover"]] == pytest.approx(cover / 12)
    assert row[CHAIN["short"]] == pytest.approx(short / 12)
    assert row[CHAIN["reachable"]] == reach


def check_decision(scorer: ActionScorer, state, config: GameConfig) -> int:
    seat = state.current
    view = state.view(seat)
    o = observe(state, seat)
    with torch.no_grad():
        feats = scorer.features(torch.as_tensor(o["observation"])[None])[0][0].numpy()
    n = config.num_players
    nxt = (seat + 1) % n
    mate = view.partner
    own_tops = view.discard_tops(seat)
    own_numbers = {c for c in view.hand if c != WILD} | {c for c in own_tops if c not in (None, WILD)}
    own_wilds = view.hand.count(WILD) + sum(c == WILD for c in own_tops)

    def seat_numbers(s):
        tops = view.discard_tops(s)
        return {c for c in tops if c not in (None, WILD)}, sum(c == WILD for c in tops)

    checked = 0
    for action in np.flatnonzero(o["action_mask"]):
        row = feats[action]
        move = decode_action(int(action), config)
        kind = "discard" if isinstance(move, Discard) else "end" if not isinstance(move, Play) else move.source
        assert np.argmax(row[OFFSETS["kind"]]) == KINDS.index(kind)
        if isinstance(move, Play):
            if move.source is Source.HAND:
                card = move.card
            elif move.source is Source.STOCK:
                card = view.stock_tops[seat]
            elif move.source is Source.DISCARD:
                card = own_tops[move.discard_pile]
            elif move.source is Source.PARTNER_STOCK:
                card = view.stock_tops[mate]
            else:
                card = view.discard_tops(mate)[move.discard_pile]
            assert np.argmax(row[OFFSETS["card"]]) == slot(card)
            p = view.building_values[move.build_pile]
            q = (p + 1) % 12
            assert np.argmax(row[OFFSETS["pile"]]) == p and np.argmax(row[OFFSETS["pile_after"]]) == q
            check_chain(row[OFFSETS["own_chain"]], chain(q, view.stock_tops[seat], own_numbers, own_wilds))
            check_chain(row[OFFSETS["next_chain"]], chain(q, view.stock_tops[nxt], *seat_numbers(nxt)))
            if mate is None:
                check_chain(row[OFFSETS["partner_chain"]], (12, 0, 0, 0))
            else:
                check_chain(row[OFFSETS["partner_chain"]], chain(q, view.stock_tops[mate], *seat_numbers(mate)))
            if move.source in (Source.DISCARD, Source.PARTNER_DISCARD):
                owner = seat if move.source is Source.DISCARD else mate
                pile = view.discard_piles[owner][move.discard_pile]
                second = pile[-2] if len(pile) >= 2 else None
                assert np.argmax(row[OFFSETS["source_second"]]) == slot(second)
                assert row[OFFSETS["source_size"]][0] == pytest.approx(len(pile) / 20)
            else:
                assert not row[OFFSETS["source_second"]].any()
            assert not row[OFFSETS["discard_top"]].any()
        else:
            assert not row[OFFSETS["pile"]].any() and not row[OFFSETS["own_chain"]].any()
        if isinstance(move, Discard):
            assert np.argmax(row[OFFSETS["card"]]) == slot(move.card)
            pile = view.discard_piles[seat][move.discard_pile]
            top = pile[-1] if pile else None
            assert np.argmax(row[OFFSETS["discard_top"]]) == slot(top)
            assert row[OFFSETS["discard_size"]][0] == pytest.approx(len(pile) / 20)
            relation = np.zeros(4)
            if top is None:
                relation[3] = 1
            elif move.card != WILD and top != WILD:
                relation[[move.card == top, move.card == top - 1, move.card == top + 1, False]] = 1
                relation[3] = 0
            assert row[OFFSETS["relation"]].tolist() == relation.tolist()
        if isinstance(move, Discard) or (isinstance(move, Play) and move.source is Source.HAND):
            card = move.card
            assert row[OFFSETS["hand_copies"]][0] == pytest.approx(view.hand.count(card) / 5)
            fits = card == WILD or any(card == v + 1 for v in view.building_values)
            assert row[OFFSETS["fits"]][0] == fits
            stock = view.stock_tops[seat]
            bridge = card != WILD and stock not in (None, WILD) and any(
                card in [(v + i) % 12 + 1 for i in range((stock - 1 - v) % 12)] for v in view.building_values)
            assert row[OFFSETS["bridge"]][0] == bridge
        else:
            assert row[OFFSETS["hand_copies"]][0] == 0
        checked += 1
    return checked


def test_pieces_cover_the_feature_row():
    scorer = scorer_for(GameConfig(num_players=2))
    assert scorer.action_in.in_features == sum(width for _, width in ACTION_PIECES)


@pytest.mark.parametrize("config", [GameConfig(num_players=2), GameConfig(num_players=3),
                                    GameConfig(num_players=4, partner_game=True)], ids=["2p", "3p", "4p-partner"])
def test_features_agree_with_the_seat_view(config):
    """Every legal action's feature row, at every decision of random games, against SeatView arithmetic."""
    scorer = scorer_for(config)
    rng = np.random.default_rng(7)
    checked = 0
    for game in range(2):
        state = new_game(config, seed=game)
        for _ in range(250):
            if state.is_over:
                break
            checked += check_decision(scorer, state, config)
            moves = state.legal_moves()
            state.apply(moves[rng.integers(len(moves))])
    assert checked > 1000


@pytest.mark.parametrize("players, partner", [(2, False), (5, False), (6, True)])
def test_policy_builds_acts_and_reloads(tmp_path, players, partner):
    """MaskablePPO with ScorerPolicy on any table: masked actions only; save/load gives the same logits."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import skipbo_env  # noqa: F401  (registers SkipBo-v0)

    env = gym.make("SkipBo-v0", num_players=players, partner_game=partner)
    model = MaskablePPO(ScorerPolicy, env, n_steps=32, batch_size=32, seed=0, device="cpu",
                        policy_kwargs={"context_arch": [32], "value_arch": [32], "scorer_arch": [16]})
    model.learn(32)
    obs, _ = env.reset(seed=1)
    mask = env.unwrapped.action_masks()
    action, _ = model.predict(obs, action_masks=mask, deterministic=True)
    assert mask[int(action)]
    model.save(tmp_path / "m.zip")
    again = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    x = torch.as_tensor(obs)[None]
    with torch.no_grad():
        assert torch.equal(model.policy.mlp_extractor.forward_actor(x), again.policy.mlp_extractor.forward_actor(x))
    assert again.policy.scorer_arch == (16,)


def test_game_of_spaces():
    assert game_of_spaces(435, 125) == GameConfig(num_players=2)
    assert game_of_spaces(805, 145) == GameConfig(num_players=4, partner_game=True)
    for obs_dim, actions in [(436, 125), (435, 130), (250, 125), (435, 145)]:
        with pytest.raises(ValueError, match="not a Skip-Bo table|partner"):
            game_of_spaces(obs_dim, actions)


def test_checkpoint_of_other_features_version_is_refused(tmp_path):
    """A scorer checkpoint records the feature version; other code refuses it rather than play differently."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import skipbo_env  # noqa: F401
    from agents import CheckpointError, PPOAgent
    from skipbo_env.nets import FEATURES_VERSION

    model = MaskablePPO(ScorerPolicy, gym.make("SkipBo-v0"), n_steps=32, batch_size=32, seed=0, device="cpu",
                        policy_kwargs={"context_arch": [8], "value_arch": [8], "scorer_arch": [8],
                                       "features_version": FEATURES_VERSION})
    model.save(tmp_path / "ok.zip")
    model.policy_kwargs["features_version"] = FEATURES_VERSION + 1  # as saved by other feature code
    model.save(tmp_path / "v2.zip")
    assert PPOAgent(tmp_path / "ok.zip", GameConfig(), allow_pickle=True).model.policy.scorer_arch == (8,)
    with pytest.raises(CheckpointError, match=f"features version {FEATURES_VERSION + 1}"):
        PPOAgent(tmp_path / "v2.zip", GameConfig(), allow_pickle=True)


@pytest.mark.parametrize(
    "config",
    [GameConfig(), GameConfig(num_players=3), GameConfig(num_players=4, partner_game=True)],
    ids=["2p", "3p", "4p-partner"],
)
def test_scorer_forward_equals_the_feature_row_reference(config):
    """The forward pass projects the per-state tables and sums them per action (one
    matmul) instead of building the [B, actions, 144] rows; same logits up to float rounding,
    and the same gradients."""
    import torch
    from torch import nn

    from skipbo_env.bots import RandomAgent
    from skipbo_env.encoding import num_actions, observation_layout
    from skipbo_env.episode import decisions
    from skipbo_env.nets import ActionScorer
    from skipbo_env.rules import new_game

    torch.manual_seed(0)
    scorer = ActionScorer(observation_layout(config).size, num_actions(config), (64,), (32, 16), (64,), nn.ReLU)
    obs = [d.observation["observation"] for seed in range(2) for d in
           decisions(new_game(config, seed=seed), [RandomAgent(config, seed=s) for s in range(config.num_players)])]
    x = torch.as_tensor(np.array(obs[:600]))
    action, context_in = scorer.features(x)  # the long way: the full feature rows, then the same layers
    fast, slow = scorer.forward_actor(x), scorer._logits(scorer.action_in(action), context_in)
    assert torch.allclose(fast, slow, atol=1e-5, rtol=1e-5)
    grads = []
    for out in (fast, slow):
        scorer.zero_grad()
        (out * torch.linspace(-1, 1, out.shape[-1])).sum().backward()
        grads.append(scorer.action_in.weight.grad.clone())
    assert torch.allclose(grads[0], grads[1], atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize(
    "config", [GameConfig(), GameConfig(num_players=4, partner_game=True)], ids=["2p", "4p-partner"]
)
def test_masked_policy_pass_gives_the_full_pass_distribution_and_gradients(config):
    """With action masks, ScorerPolicy scores only the legal actions (ActionScorer.masked_forward):
    PPO's values, log-probabilities, entropies and every parameter's gradient equal those of the
    full pass of the base class, and the rollouts' greedy actions are the same."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    policy, x, legal = small_policy_and_positions(config, torch_seed=2)
    masks = torch.as_tensor(legal)
    actions = torch.as_tensor([int(np.flatnonzero(m)[i % int(m.sum())]) for i, m in enumerate(masks.numpy())])
    outs = []
    for evaluate in (ScorerPolicy.evaluate_actions, MaskableActorCriticPolicy.evaluate_actions):
        policy.zero_grad()
        values, log_prob, entropy = evaluate(policy, x, actions, action_masks=masks)
        (values.square().mean() - log_prob.mean() - 0.1 * entropy.mean()).backward()
        outs.append(([values, log_prob, entropy], [p.grad.clone() for p in policy.parameters()]))
    (masked, masked_grads), (full, full_grads) = outs
    for a, b in zip(masked, full, strict=True):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-5)
    for (name, _), a, b in zip(policy.named_parameters(), masked_grads, full_grads, strict=True):
        if name != "mlp_extractor.scorer.1.bias":  # a shift of every logit: its true gradient is 0, both are noise
            assert torch.allclose(a, b, atol=1e-6, rtol=1e-4), name
    with torch.no_grad():
        fast, _, _ = policy.forward(x, deterministic=True, action_masks=masks)
        slow, _, _ = MaskableActorCriticPolicy.forward(policy, x, deterministic=True, action_masks=masks)
        probs = policy.get_distribution(x, action_masks=masks).distribution.probs
    assert masks[torch.arange(len(fast)), fast].all() and (fast == slow).float().mean() > 0.99
    assert torch.allclose(probs.sum(-1), torch.ones(len(x))) and (probs[~masks] < 1e-6).all()


@pytest.mark.parametrize(
    "config", [GameConfig(), GameConfig(num_players=4, partner_game=True)], ids=["2p", "4p-partner"]
)
def test_pair_logits_are_the_forward_pass_at_the_legal_actions(config):
    """The search's network opponents score only the legal actions (ActionScorer.pair_logits,
    PPOAgent.greedy_actions): the forward pass's logits at those entries and its greedy choice."""
    import torch
    from torch import nn

    from skipbo_env.bots import RandomAgent
    from skipbo_env.encoding import num_actions, observation_layout
    from skipbo_env.episode import decisions
    from skipbo_env.nets import ActionScorer
    from skipbo_env.rules import new_game

    torch.manual_seed(1)
    scorer = ActionScorer(observation_layout(config).size, num_actions(config), (64,), (32, 16), (64,), nn.ReLU)
    steps = [d.observation for seed in range(2) for d in
             decisions(new_game(config, seed=seed), [RandomAgent(config, seed=s) for s in range(config.num_players)])]
    x = torch.as_tensor(np.array([o["observation"] for o in steps[:400]]))
    masks = np.array([o["action_mask"] for o in steps[:400]]) != 0
    rows, acts = np.nonzero(masks)
    with torch.no_grad():
        full = scorer.forward_actor(x).numpy()
        pairs = scorer.pair_logits(x, torch.as_tensor(rows), torch.as_tensor(acts)).numpy()
    assert pairs.shape == (rows.size,) and np.allclose(pairs, full[rows, acts], atol=1e-5, rtol=1e-5)
    # the shipped agent: greedy_actions picks what act_batch picks
    if config == GameConfig():
        from skipbo_env.agents import PPOAgent
        from skipbo_env.agents.registry import shipped_agent_path

        agent = PPOAgent(shipped_agent_path("ppo-2p"), config)
        picked = agent.greedy_actions(x.numpy(), masks)
        assert masks[np.arange(len(picked)), picked].all()
        assert (picked == agent.act_batch(steps[:400])).all()
        with pytest.raises(ValueError, match="all zeros"):
            agent.greedy_actions(x.numpy()[:1], np.zeros((1, masks.shape[1]), bool))


@pytest.mark.parametrize(
    "config", [GameConfig(), GameConfig(num_players=4, partner_game=True)], ids=["2p", "4p-partner"]
)
def test_rollouts_and_updates_compute_sb3s_masked_distribution_bit_for_bit(config):
    """ScorerPolicy.forward with masks (what a rollout calls) draws its actions without sb3-contrib's
    distribution objects: the same actions from the same torch generator state, and the same
    log-probabilities and values, to the bit; greedy (deterministic) actions too. evaluate_actions
    (PPO's update) gives the same values, log-probabilities, entropies and gradients, to the bit."""
    policy, x, masks = small_policy_and_positions(config, torch_seed=3)
    with torch.no_grad():
        for deterministic in (False, True):
            torch.manual_seed(11)
            actions, values, log_prob = policy(x, deterministic=deterministic, action_masks=masks)
            torch.manual_seed(11)
            distribution, latent_vf = _sb3_distribution_and_value_input(policy, x, masks)
            expected = distribution.get_actions(deterministic=deterministic)
            assert torch.equal(actions, expected.reshape(-1))
            assert torch.equal(log_prob, distribution.log_prob(expected))
            assert torch.equal(values, policy.value_net(latent_vf))
            assert masks[np.arange(len(x)), actions.numpy()].all()
    # PPO's update: values, log-probabilities, entropies and every gradient, to the bit
    actions = torch.as_tensor([int(np.flatnonzero(m)[i % int(m.sum())]) for i, m in enumerate(masks)])
    outs = []
    for evaluate in (ScorerPolicy.evaluate_actions, _sb3_evaluate_actions):
        policy.zero_grad()
        values, log_prob, entropy = evaluate(policy, x, actions, masks)
        (values.square().mean() - (log_prob.exp() * values.squeeze(-1)).mean() - 0.1 * entropy.mean()).backward()
        outs.append([values, log_prob, entropy] + [p.grad.clone() for p in policy.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*outs, strict=True))


def _sb3_distribution_and_value_input(policy: ScorerPolicy, x: torch.Tensor, masks: np.ndarray):
    """sb3-contrib's masked distribution (``get_distribution``) and the value head's input."""
    return policy.get_distribution(x, masks), policy.mlp_extractor.value(policy._masked_logits(x, masks)[2])


def _sb3_evaluate_actions(policy: ScorerPolicy, x: torch.Tensor, actions: torch.Tensor, masks: np.ndarray):
    """evaluate_actions through sb3-contrib's masked distribution objects."""
    distribution, latent_vf = _sb3_distribution_and_value_input(policy, x, masks)
    return policy.value_net(latent_vf), distribution.log_prob(actions), distribution.entropy()


def test_an_agent_files_network_plays_only():
    """A policy rebuilt from an agent file carries no torch optimizer (building one costs a process
    about a second): its optimizer refuses to step."""
    from skipbo_env.agents import load_agent
    from skipbo_env.agents.agentfile import NoOptimizer

    agent = load_agent("ppo-2p", GameConfig())
    assert isinstance(agent.policy.optimizer, NoOptimizer)
    with pytest.raises(RuntimeError, match="play only"):
        agent.policy.optimizer.step()


@pytest.mark.parametrize(
    "config", [GameConfig(), GameConfig(num_players=4, partner_game=True)], ids=["2p", "4p-partner"]
)
def test_the_full_pass_sums_each_actions_rows_as_the_selection_product_does(config):
    """The full pass sums each action's projected table rows one by one in increasing row order
    instead of multiplying by the 0/1 selection matrix: the same numbers to the bit here (the
    product adds a row's terms in that order), so shipped agents play the games the documented
    tables were played with."""
    from skipbo_env.bots import RandomAgent
    from skipbo_env.episode import decisions
    from skipbo_env.rules import new_game

    scorer = scorer_for(config)
    steps = [d.observation for seed in range(2) for d in
             decisions(new_game(config, seed=seed), [RandomAgent(config, seed=s) for s in range(config.num_players)])]
    x = torch.as_tensor(np.array([o["observation"] for o in steps[:200]]))
    with torch.no_grad():
        st = scorer._state(x)
        projected, constant = scorer._projected(x, st)
        assert torch.equal(scorer._action_in(x, st), scorer.select @ projected + constant)

