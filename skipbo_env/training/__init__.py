"""Training MaskablePPO agents (``train.py``): a consumer of the envs and the agents.

* :mod:`.settings`: the validated training configuration (YAML files in ``configs/``), read and
  written by :mod:`.settings_io`;
* :mod:`.commands`: the ``train.py`` / ``skipbo train`` command line;
* :mod:`.run`: the trainer, read top to bottom;
* :mod:`.opponents`: who the learner plays against (mixes, curriculum, self-play draws);
* :mod:`.envs`: the vectorised training environments;
* :mod:`.pretrain`: behaviour cloning and DAgger warm starts;
* :mod:`.checkpoints`, :mod:`.resume`: atomic checkpoints and what a resumed run may change;
* :mod:`.metrics`: evaluation rows, learning curves and the closing summary;
* :mod:`.policy`: the action-scoring MaskablePPO policy (``ppo.policy: scorer``);
* :mod:`.turn_recipe`, :mod:`.value_recipe`: the turn and value network recipes (their settings in
  :mod:`.recipe_settings`), fitted by the shared loop of :mod:`.fitting` on resumable data shards
  (:mod:`.shards`).

Importing this package needs the ``train`` extra (torch, stable-baselines3, PyYAML, ...): a
missing one is named in the error.
"""

from ..extras import require

require("train", "training (skipbo_env.training)", "torch", "stable_baselines3", "sb3_contrib", "yaml", "dacite", "tqdm", "matplotlib")
