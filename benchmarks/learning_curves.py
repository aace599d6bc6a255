"""The learning curves of docs/benchmark.md: ``skipbo curves`` over the runs kept in ``docs/img``.

``--run NAME=PATH`` replaces them with other runs' ``metrics.csv`` (what ``skipbo curves`` does in an
installed package). Example::

    python benchmarks/learning_curves.py --out docs/img/benchmark_curves.png
    python benchmarks/learning_curves.py --run mine=runs/myrun/metrics.csv --against greedy
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skipbo_env.training.curves import main  # noqa: E402

IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
DEFAULT_RUNS = (
    ("quick (the README's main job)", IMG / "metrics_quick.csv"),
    ("default (ppo-2p)", IMG / "metrics_default.csv"),
    ("distill_2p", IMG / "metrics_distill_2p.csv"),
    ("fast_2p (from turn-2p)", IMG / "metrics_fast_2p.csv"),
    ("expert_2p (from ppo-2p)", IMG / "metrics_expert_2p.csv"),
    ("ppo_only (MLP)", IMG / "metrics_ppo_only.csv"),
    ("plus_2p (ppo-2p-plus)", IMG / "metrics_plus_2p.csv"),
    ("zero_2p (self-play, no teacher)", IMG / "metrics_zero_2p.csv"),
    ("sb3 defaults on SkipBo-v0", IMG / "metrics_sb3_default_2p.csv"),
    ("RLlib PPO, MLP (train_rllib.py)", IMG / "metrics_rllib_ppo_2p.csv"),
    ("RLlib scorer, two nodes (no teacher)", IMG / "metrics_rllib_scorer_2p.csv"),
    ("RLlib scorer from ppo-2p-plus, two nodes", IMG / "metrics_rllib_plus_2p.csv"),
    ("cleanrl_ppo (one file, no teacher)", IMG / "metrics_cleanrl_ppo_2p.csv"),
    ("tianshou_ppo (Tianshou, no teacher)", IMG / "metrics_tianshou_ppo_2p.csv"),
    ("torchrl_ppo (TorchRL, no teacher)", IMG / "metrics_torchrl_ppo_2p.csv"),
)



if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:], default_runs=DEFAULT_RUNS))
