"""The plain-torch action-scoring network (skipbo_env.nets.ScorerNet): the SB3 policy's numbers, to the
bit, from the same weights; agent files in and out; bad inputs refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skipbo_env.agents import CheckpointError, load_agent
from skipbo_env.agents.agentfile import load_policy, load_scorer_net, write_scorer_net
from skipbo_env.agents.registry import shipped_agent_path
from skipbo_env.bots import RandomAgent
from skipbo_env.episode import decisions
from skipbo_env.nets import FEATURES_VERSION, MASKED_LOGIT, ScorerNet
from skipbo_env.rules import GameConfig, new_game


def positions(config: GameConfig, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Observation vectors and bool masks of the first ``count`` decisions of two random games."""
    steps = [d.observation for seed in range(2) for d in
             decisions(new_game(config, seed=seed), [RandomAgent(config, seed=s) for s in range(config.num_players)])]
    obs = torch.as_tensor(np.array([o["observation"] for o in steps[:count]]))
    return obs, torch.as_tensor(np.array([o["action_mask"] for o in steps[:count]]) != 0)


@pytest.mark.parametrize("name", ["ppo-2p-plus", "ppo-4p"])
def test_a_shipped_agents_weights_give_the_sb3_policys_numbers_to_the_bit(name):
    """load_scorer_net puts a shipped scorer agent's weights into a ScorerNet: the legal actions'
    logits and the values are those of the SB3 policy built from the same file, bit for bit, with
    and without masks; the illegal actions get MASKED_LOGIT."""
    net, desc = load_scorer_net(name)
    policy, _ = load_policy(shipped_agent_path(name))
    config = GameConfig.from_dict(desc["game"])
    obs, mask = positions(config, 300)
    assert not net.training and net.features_version == FEATURES_VERSION == desc["policy"]["features_version"]
    with torch.no_grad():
        logits, values = net(obs, mask)
        full, full_values = net(obs)
        scored, context_in = policy.mlp_extractor.masked_forward(obs, mask)
        expected_values = policy.value_net(policy.mlp_extractor.value(context_in)).squeeze(-1)
        assert torch.equal(logits[mask], scored[mask]) and (logits[~mask] == MASKED_LOGIT).all()
        assert torch.equal(values, expected_values)
        assert torch.equal(full, policy.mlp_extractor.forward_actor(obs))
        assert torch.equal(full_values, policy.value_net(policy.mlp_extractor.forward_critic(obs)).squeeze(-1))
        assert torch.equal(net.value(obs), full_values)
    dist = torch.distributions.Categorical(logits=logits)
    assert mask.gather(1, dist.sample()[:, None]).all()


def test_a_written_net_loads_as_an_agent_and_back_unchanged(tmp_path):
    """write_scorer_net writes an agent file that load_agent plays and load_scorer_net reads back,
    weight for weight; the provenance names the source, the steps and the weights' sha256."""
    config = GameConfig()
    torch.manual_seed(0)
    net = ScorerNet.for_game(config, context_arch=(32,), scorer_arch=(16, 8), value_arch=(32,))
    path = write_scorer_net(tmp_path / "net.safetensors", net, config, source="unit", timesteps=123)
    again, desc = load_scorer_net(path, config)
    assert desc["provenance"]["source"] == "unit" and desc["provenance"]["timesteps"] == 123
    assert len(desc["provenance"]["source_sha256"]) == 64
    assert again.state_dict().keys() == net.state_dict().keys()
    assert all(torch.equal(a, b) for a, b in zip(again.state_dict().values(), net.state_dict().values(), strict=True))
    agent = load_agent(str(path), config)
    obs, mask = positions(config, 50)
    picked = agent.act_batch(
        [{"observation": o.numpy(), "action_mask": m.numpy()} for o, m in zip(obs, mask, strict=True)]
    )
    with torch.no_grad():
        assert (np.asarray(picked) == net(obs, mask)[0].argmax(-1).numpy()).all()


def test_a_fresh_net_is_about_uniform_over_the_legal_actions():
    torch.manual_seed(0)
    net = ScorerNet.for_game(GameConfig(num_players=3))
    obs, mask = positions(GameConfig(num_players=3), 50)
    with torch.no_grad():
        logits, values = net(obs, mask)
    assert logits.shape == mask.shape and values.shape == (50,)
    assert logits[mask].abs().max() < 0.5


def test_bad_inputs_are_refused_by_name(tmp_path):
    config = GameConfig()
    net = ScorerNet.for_game(config, context_arch=(8,), scorer_arch=(8,), value_arch=(8,))
    obs, mask = positions(config, 4)
    with pytest.raises(ValueError, match="mask: expected shape"):
        net(obs, mask[:, :10])
    with pytest.raises(ValueError, match="mask: a row has no legal action"):
        net(obs, torch.zeros_like(mask))
    with pytest.raises(ValueError, match="scorer_arch: must be a non-empty list"):
        ScorerNet.for_game(config, scorer_arch=())
    with pytest.raises(ValueError, match="not a Skip-Bo table"):
        ScorerNet(436, 125)
    with pytest.raises(CheckpointError, match="name must end in .safetensors"):
        write_scorer_net(tmp_path / "net.pt", net, config, source="unit")
    with pytest.raises(CheckpointError, match="observation size 435 and action count 125 are not those"):
        write_scorer_net(tmp_path / "net.safetensors", net, GameConfig(num_players=3), source="unit")


def test_an_mlp_agent_file_is_not_a_scorer_net(tmp_path):
    from sb3_contrib import MaskablePPO
    from support import TinyEnv

    from skipbo_env.agents.agentfile import write_agent_file

    model = MaskablePPO("MlpPolicy", TinyEnv(GameConfig()), n_steps=8, batch_size=8, policy_kwargs={"net_arch": [8]},
                        seed=0, device="cpu")
    path = write_agent_file(tmp_path / "mlp.safetensors", model.policy, GameConfig(),
                            {"source": "m.zip", "source_sha256": "0" * 64, "timesteps": None})
    with pytest.raises(CheckpointError, match="a mlp agent file; a ScorerNet holds"):
        load_scorer_net(path)


def test_the_networks_old_names_warn_once():
    import skipbo_env.agents.scorer as old
    from skipbo_env.nets import ActionScorer

    with pytest.warns(DeprecationWarning, match="moved to skipbo_env.nets.ActionScorer"):
        assert old.ActionScorer is ActionScorer
    with pytest.raises(AttributeError):
        old.NoSuchName  # noqa: B018
