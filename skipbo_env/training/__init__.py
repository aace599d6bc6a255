"""Training MaskablePPO agents (``train.py``): a consumer of the envs and the agents.

:mod:`.settings` (read and written by :mod:`.settings_io`) is the configuration, :mod:`.commands`
the command line, :mod:`.run` the trainer, :mod:`.opponents` who the learner plays, :mod:`.envs`
the training environments, :mod:`.pretrain` behaviour cloning, :mod:`.checkpoints` and
:mod:`.resume` checkpoints, :mod:`.metrics` evaluations, :mod:`.policy` the scorer policy;
:mod:`.turn_recipe` and :mod:`.value_recipe` (settings in :mod:`.recipe_settings`) fit networks
through :mod:`.fitting` on :mod:`.shards`. Needs the ``train`` extra. See docs/training.md.
"""

from ..extras import require

require("train", "training (skipbo_env.training)",
        "torch", "stable_baselines3", "sb3_contrib", "yaml", "dacite", "tqdm", "matplotlib")
