"""Training MaskablePPO agents (``train.py``): a consumer of the envs and the agents.

* :mod:`.config`: the validated training configuration (YAML files in ``configs/``);
* :mod:`.run`: the trainer, read top to bottom;
* :mod:`.opponents`: who the learner plays against (mixes, curriculum, self-play draws);
* :mod:`.envs`: the vectorised training environments;
* :mod:`.pretrain`: behaviour cloning and DAgger warm starts;
* :mod:`.checkpoints`, :mod:`.resume`: atomic checkpoints and what a resumed run may change;
* :mod:`.metrics`: evaluation rows, learning curves and the closing summary;
* :mod:`.policy`: the action-scoring MaskablePPO policy (``ppo.policy: scorer``).

Importing this package loads nothing heavy; torch and stable-baselines3 load with
:mod:`.run`, :mod:`.policy` and :mod:`.pretrain`.
"""
