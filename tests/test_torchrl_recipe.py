"""skipbo_env.recipes.torchrl_ppo, TorchRL's PPO on SkipBo-v0 envs: the checks of every env recipe (support.py), and
the actor's draws respect the env's masks step after step of the batched env."""

from __future__ import annotations

import pytest
import torch
from support import TINY_ENV_RUN, EnvRecipeChecks

from skipbo_env.nets import MASKED_LOGIT
from skipbo_env.recipes.common import make_net

torchrl_ppo = pytest.importorskip("skipbo_env.recipes.torchrl_ppo", exc_type=ImportError)  # the torchrl extra


class TestTorchRLRecipe(EnvRecipeChecks):
    recipe = torchrl_ppo
    bad_settings = [({"opponents": ("self",)}, "opponents"), ({"gamma": 2.0}, "gamma"),
                    ({"eval_games": 3}, "eval_games"), ({"context_arch": ()}, "context_arch")]


def test_the_actor_draws_legal_actions_only():
    args = torchrl_ppo.parse_args(TINY_ENV_RUN)
    env = torchrl_ppo.make_env(args)
    actor, critic = torchrl_ppo.make_actor_critic(make_net(args))
    td = env.reset()
    torch.manual_seed(0)
    for _ in range(50):  # 50 steps of 8 games, each draw checked against its game's mask
        td = actor(td)
        mask = td["action_mask"]
        assert (td["logits"][~mask] == MASKED_LOGIT).all()
        assert mask.gather(-1, td["action"][:, None]).all()
        td = env.step_and_maybe_reset(td)[1]
    assert critic(td)["state_value"].shape == (8, 1)
