"""skipbo_env.recipes.tianshou_ppo, Tianshou's PPO on SkipBo-v0 envs: in a tiny run every action sent is legal and the
agent file plays; the actor gives illegal actions no probability; a seed repeats its run; bad settings are named."""

from __future__ import annotations

import numpy as np
import pytest
from support import TINY_ENV_RUN, check_env_recipe_run, check_recipe_command

pytest.importorskip("tianshou")

import torch  # noqa: E402
from tianshou.data import Batch  # noqa: E402

from skipbo_env.nets import MASKED_LOGIT  # noqa: E402
from skipbo_env.recipes import tianshou_ppo as recipe  # noqa: E402
from skipbo_env.recipes.common import make_net  # noqa: E402
from skipbo_env.recipes.tianshou_ppo import Args, ScorerActor, make_envs, parse_args, train  # noqa: E402
from skipbo_env.rules import ConfigError  # noqa: E402

TINY = TINY_ENV_RUN


def test_a_tiny_run_sends_legal_actions_only_and_writes_an_agent_file_that_plays(tmp_path, monkeypatch):
    check_env_recipe_run(recipe, TINY, tmp_path, monkeypatch)


def test_the_actor_gives_illegal_actions_no_probability():
    args = parse_args(TINY)
    envs = make_envs(args)
    obs = envs.reset()[0]
    actor = ScorerActor(make_net(args))
    masks = np.stack([o["mask"] for o in obs])
    batch = Batch(obs=np.stack([o["obs"] for o in obs]), mask=masks)
    torch.manual_seed(0)
    for _ in range(20):
        logits, _ = actor(batch)
        assert (logits[~torch.as_tensor(masks, dtype=torch.bool)] == MASKED_LOGIT).all()
        drawn = torch.distributions.Categorical(logits=logits).sample((50,))
        assert masks[np.arange(len(masks))[None, :], drawn.numpy()].all()


def test_the_same_seed_gives_the_same_run(tmp_path):
    paths = [train(parse_args([*TINY, "--runs-dir", str(tmp_path / str(i))])) for i in range(2)]
    assert paths[0].read_bytes() == paths[1].read_bytes()


@pytest.mark.parametrize("changes, field", [
    ({"opponents": ("greedy", "self")}, "opponents"), ({"num_minibatches": 3}, "num_minibatches"),
    ({"learning_rate": 0.0}, "learning_rate"), ({"name": "a/b"}, "name"),
])
def test_bad_settings_are_refused_naming_the_field(changes, field):
    with pytest.raises(ConfigError) as info:
        Args(**changes)
    assert info.value.field == field


def test_an_existing_run_folder_is_refused_and_help_lists_every_field(tmp_path, capsys):
    check_recipe_command(recipe, TINY, tmp_path, capsys)
