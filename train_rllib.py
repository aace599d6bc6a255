"""Train Skip-Bo agents with Ray RLlib: ``skipbo train-rllib`` as a script (the ``rllib`` extra).

``python train_rllib.py --help`` lists the options; docs/scaling.md shows runs on one machine and on a
cluster.
"""

from skipbo_env.rllib.trainer import main

if __name__ == "__main__":
    raise SystemExit(main())
