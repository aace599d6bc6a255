"""configs/sb3_default_2p.yaml: the out-of-the-box baseline of docs/benchmark.md (MaskablePPO with
sb3's own defaults on the plain single-agent env) keeps those defaults and runs end to end."""

from __future__ import annotations

import csv
import inspect
from pathlib import Path

from skipbo_env.training.settings import TrainConfig

RECIPE = Path(__file__).resolve().parents[1] / "configs" / "sb3_default_2p.yaml"


def test_the_recipe_keeps_every_maskableppo_default():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from torch import nn

    recipe = TrainConfig.from_yaml(RECIPE)
    defaults = {name: p.default for name, p in inspect.signature(MaskablePPO.__init__).parameters.items()}
    for key in ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range",
                "ent_coef", "vf_coef", "max_grad_norm"):
        assert getattr(recipe.ppo, key) == defaults[key], key
    policy_defaults = inspect.signature(MaskableActorCriticPolicy.__init__).parameters
    assert policy_defaults["activation_fn"].default is nn.Tanh and recipe.ppo.activation == "tanh"
    assert recipe.ppo.policy == "mlp" and recipe.ppo.net_arch == (64, 64)  # MlpPolicy's default layers
    # one plain SkipBo-v0 env against the yardstick, its own rewards, nothing learned beforehand
    assert (recipe.vec_env, recipe.n_envs, recipe.reward_shaping) == ("dummy", 1, False)
    assert recipe.pretrain.teacher is None and recipe.opponents.mix == {"heuristic": 1.0}


def test_the_recipe_runs_at_small_scale(tmp_path):
    from skipbo_env.training.run import train as run_training

    data = TrainConfig.from_yaml(RECIPE).to_dict()
    data.update(runs_dir=str(tmp_path), total_timesteps=128, checkpoint_every=128)
    data["ppo"].update(n_steps=64, batch_size=32, n_epochs=2)
    data["eval"].update(every=64, games=2)
    assert run_training(TrainConfig.from_dict(data), progress=False)["timesteps"] == 128
    with open(tmp_path / "sb3_default_2p" / "metrics.csv", newline="") as fh:
        assert [(int(r["timesteps"]), r["opponent"]) for r in csv.DictReader(fh)] == [
            (64, "heuristic"),
            (128, "heuristic"),
        ]
