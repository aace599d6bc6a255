"""skipbo_env.recipes.tianshou_ppo, Tianshou's PPO on SkipBo-v0 envs: the checks of every env recipe (a tiny run
sends legal actions only and writes an agent file that plays; a seed repeats its run; bad settings are named), and
the actor gives illegal actions no probability."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support import TINY_ENV_RUN, EnvRecipeChecks

from skipbo_env.nets import MASKED_LOGIT
from skipbo_env.recipes.common import make_net

tianshou_ppo = pytest.importorskip("skipbo_env.recipes.tianshou_ppo", exc_type=ImportError)  # the tianshou extra


class TestTianshouRecipe(EnvRecipeChecks):
    recipe = tianshou_ppo
    bad_settings = [({"opponents": ("greedy", "self")}, "opponents"), ({"num_minibatches": 3}, "num_minibatches"),
                    ({"learning_rate": 0.0}, "learning_rate"), ({"name": "a/b"}, "name")]


def test_the_actor_gives_illegal_actions_no_probability():
    from tianshou.data import Batch

    args = tianshou_ppo.parse_args(TINY_ENV_RUN)
    observations = tianshou_ppo.make_envs(args).reset()[0]
    masks = np.stack([o["mask"] for o in observations])
    batch = Batch(obs=np.stack([o["obs"] for o in observations]), mask=masks)
    actor = tianshou_ppo.ScorerActor(make_net(args))
    torch.manual_seed(0)
    for _ in range(20):
        logits, _ = actor(batch)
        assert (logits[~torch.as_tensor(masks, dtype=torch.bool)] == MASKED_LOGIT).all()
        drawn = torch.distributions.Categorical(logits=logits).sample((50,))
        assert masks[np.arange(len(masks))[None, :], drawn.numpy()].all()
