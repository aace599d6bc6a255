"""The TorchRL recipe (skipbo_env.recipes.torchrl_ppo): a tiny run writes an agent file that load_agent
plays with legal moves, its actor never sends an illegal action, and the same seed repeats the run."""

from __future__ import annotations

import pytest
from support import TINY_ENV_RUN, check_env_recipe_run, check_recipe_command

pytest.importorskip("torchrl")

import torch  # noqa: E402

from skipbo_env.nets import MASKED_LOGIT  # noqa: E402
from skipbo_env.recipes import torchrl_ppo as recipe  # noqa: E402
from skipbo_env.recipes.common import make_net  # noqa: E402
from skipbo_env.recipes.torchrl_ppo import Args, make_actor_critic, make_env, parse_args, train  # noqa: E402
from skipbo_env.rules import ConfigError  # noqa: E402

TINY = TINY_ENV_RUN


def test_a_tiny_run_sends_legal_actions_only_and_writes_an_agent_file_that_plays(tmp_path, monkeypatch):
    check_env_recipe_run(recipe, TINY, tmp_path, monkeypatch)


def test_the_actor_draws_legal_actions_only():
    args = parse_args(TINY)
    env = make_env(args)
    actor, critic = make_actor_critic(make_net(args))
    td = env.reset()
    torch.manual_seed(0)
    for _ in range(50):  # the actor's draws over many steps of the batched env, each checked against its mask
        td = actor(td)
        mask = td["action_mask"]
        assert (td["logits"][~mask] == MASKED_LOGIT).all()
        assert mask.gather(-1, td["action"][:, None]).all()
        td = env.step_and_maybe_reset(td)[1]
    assert critic(td)["state_value"].shape == (8, 1)


def test_the_same_seed_gives_the_same_run(tmp_path):
    paths = [train(parse_args([*TINY, "--runs-dir", str(tmp_path / str(i))])) for i in range(2)]
    assert paths[0].read_bytes() == paths[1].read_bytes()


@pytest.mark.parametrize("changes, field", [
    ({"opponents": ("self",)}, "opponents"), ({"num_minibatches": 3}, "num_minibatches"),
    ({"gamma": 2.0}, "gamma"), ({"eval_games": 3}, "eval_games"),
])
def test_bad_settings_are_refused_naming_the_field(changes, field):
    with pytest.raises(ConfigError) as info:
        Args(**changes)
    assert info.value.field == field


def test_an_existing_run_folder_is_refused_and_help_lists_every_field(tmp_path, capsys):
    check_recipe_command(recipe, TINY, tmp_path, capsys)
