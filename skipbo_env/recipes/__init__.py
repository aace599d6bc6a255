"""Training recipes that read top to bottom, one file each, on the package's public pieces.

:mod:`.cleanrl_ppo`: PPO in the style of CleanRL's single-file scripts, on the compiled vector env
(``SkipBo-v0``'s vector entry point) with the action-scoring network (:class:`skipbo_env.nets.ScorerNet`);
it writes an agent file that ``load_agent`` and ``skipbo evaluate`` play. Run it with
``python -m skipbo_env.recipes.cleanrl_ppo --help``.
"""
