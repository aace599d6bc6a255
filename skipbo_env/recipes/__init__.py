"""Recipes that read top to bottom, one file each, on the package's public pieces
(``python -m skipbo_env.recipes.NAME --help`` lists a recipe's settings).

The PPO recipes train the action-scoring network (:class:`skipbo_env.nets.ScorerNet`) in one RL
library's own API each, with the legal-action masks respected, and write an agent file that
``load_agent`` and ``skipbo evaluate`` play:

* :mod:`.cleanrl_ppo`: PPO written out in the style of CleanRL's single-file scripts, on the compiled
  vector env (``SkipBo-v0``'s vector entry point), scripted or self-play opponents;
* :mod:`.tianshou_ppo`: Tianshou 2's PPO, collector and trainer on ``SkipBo-v0`` envs (the ``tianshou`` extra);
* :mod:`.torchrl_ppo`: TorchRL's Gymnasium wrapper, collector, GAE and clipped PPO loss on ``SkipBo-v0`` envs
  (the ``torchrl`` extra);
* :mod:`.common`: what they share (the settings, the command line, the run folder, evaluations and
  progress lines).

:mod:`.openspiel_ismcts` plays OpenSpiel's search bots against the package's agents (the ``openspiel`` extra).
"""
