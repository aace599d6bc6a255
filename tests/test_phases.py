"""A phase schedule in the config: one command instead of a chain of resumes."""

from __future__ import annotations

import csv

import pytest
from support import tiny_config

from skipbo_env.rules import ConfigError
from skipbo_env.training.checkpoints import load_latest
from skipbo_env.training.run import train as run_training
from skipbo_env.training.settings import TrainConfig

PHASES = [
    {"start": 128, "set": {"opponents.mix": {"greedy": 1}, "ppo.learning_rate": 1.0e-4}},
    {"start": 256, "set": {"ppo.ent_coef": 0.05, "eval.games": 6}},
]


def test_at_applies_the_phases_in_force():
    cfg = TrainConfig.from_dict(tiny_config(".", total_timesteps=384, phases=PHASES))
    assert cfg.at(0).opponents.mix == {"random": 1.0, "greedy": 1.0} and cfg.at(0).phases == ()
    assert cfg.at(128).opponents.mix == {"greedy": 1.0} and cfg.at(128).ppo.learning_rate == 1.0e-4
    later = cfg.at(300)
    assert (later.ppo.learning_rate, later.ppo.ent_coef, later.eval.games) == (1.0e-4, 0.05, 6)
    assert [cfg.phase_end(t) for t in (0, 127, 128, 256, 300)] == [128, 128, 256, 384, 384]


def test_a_phase_may_switch_the_pipeline_the_self_play_schedule_and_the_eval_workers():
    data = tiny_config(".", total_timesteps=384, vec_env="batched", phases=[
        {"start": 128, "set": {"pipeline": True, "eval.workers": 2, "opponents.selfplay_weight": 0.5,
                               "opponents.selfplay_pool": 3, "opponents.selfplay_every": 64}}])
    cfg = TrainConfig.from_dict(data)
    later = cfg.at(128)
    assert not cfg.at(0).pipeline and later.pipeline and later.eval.workers == 2
    assert (later.opponents.selfplay_weight, later.opponents.selfplay_pool, later.opponents.selfplay_every) == (
        0.5,
        3,
        64,
    )


@pytest.mark.parametrize("phases, field", [
    ([{"start": 128, "set": {"game.num_players": 3}}], "phases[].set.game.num_players"),
    ([{"start": 128, "set": {"ppo.n_steps": 32}}], "phases[].set.ppo.n_steps"),
    ([{"start": 256, "set": {}}, {"start": 128, "set": {}}], "phases"),
    ([{"start": 0, "set": {}}], "phases[].start"),
    ([{"start": 128, "set": {"ppo.learning_rate": -1}}], "phases[0] (ppo.learning_rate)"),
    ([{"start": 128, "set": {"opponents.mix": {"nobody": 1}}}], "phases[0] (opponents)"),
    ([{"start": 128}], "phases[0].set"),
])
def test_bad_phases_are_refused_naming_the_setting(phases, field):
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_dict(tiny_config(".", total_timesteps=384, phases=phases))
    assert err.value.field.startswith(field)


def test_a_phased_run_trains_each_phase_with_its_settings(tmp_path):
    cfg = TrainConfig.from_dict(tiny_config(tmp_path, total_timesteps=384, phases=PHASES))
    result = run_training(cfg, progress=False)
    run = tmp_path / "tiny"
    assert result["timesteps"] == 384
    model_file, state = load_latest(run)
    assert state.timesteps == 384
    saved = TrainConfig.from_yaml(run / "config.yaml", complete=True)
    assert saved == cfg  # the run's config keeps its phases, not the last phase's settings
    with open(run / "metrics.csv", newline="") as fh:
        games = {(int(r["timesteps"]), int(r["games"])) for r in csv.DictReader(fh)}
    assert (128, 4) in games and (384, 6) in games  # the second phase evaluates with 6 games
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(run / "checkpoints" / model_file.name, device="cpu")
    assert model.learning_rate == pytest.approx(1.0e-4) and model.ent_coef == pytest.approx(0.05)


def test_a_phased_run_is_deterministic(tmp_path):
    results = []
    for name in ("a", "b"):
        cfg = TrainConfig.from_dict(tiny_config(tmp_path, name=name, total_timesteps=384, phases=PHASES))
        run_training(cfg, progress=False)
        model_file, _ = load_latest(tmp_path / name)
        results.append((tmp_path / name / "metrics.csv").read_text().split("\n"))
    strip = [
        [",".join(c for i, c in enumerate(row.split(",")) if i != 1) for row in r] for r in results
    ]  # no wall time
    assert strip[0] == strip[1]


def test_the_shipped_recipe_runs_its_phases_at_small_scale(tmp_path):
    """configs/default.yaml (the ppo-2p recipe) with its phases moved to small step counts and a tiny
    network: cloning, then every phase with the recipe's own settings, in one call."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    recipe = TrainConfig.from_yaml(root / "configs" / "default.yaml")
    assert [p.start for p in recipe.phases] == [1_500_000, 3_000_000] and recipe.total_timesteps == 4_500_000
    assert recipe.at(3_000_000).opponents.mix == {"greedy": 1.0, "heuristic": 4.0}
    assert recipe.at(3_000_000).ppo.learning_rate == 1.0e-4
    data = recipe.to_dict()
    data.update(runs_dir=str(tmp_path), total_timesteps=384, n_envs=2, checkpoint_every=128, threads=1)
    data["game"].update(stock_size=5, turn_limit=120)
    data["ppo"].update(n_steps=64, batch_size=64, n_epochs=1, net_arch=[32], scorer_arch=[16, 8])
    data["eval"].update(every=128, games=4, workers=1)
    data["pretrain"].update(games=4, epochs=1, dagger_rounds=1, dagger_games=2, workers=1, batch_size=64)
    data["phases"] = [dict(p, start=s) for p, s in zip(data["phases"], (128, 256), strict=True)]
    data["phases"][0]["set"]["eval.games"] = 6
    result = run_training(TrainConfig.from_dict(data), progress=False)
    assert result["timesteps"] == 384
    with open(tmp_path / "default" / "metrics.csv", newline="") as fh:
        evaluated = sorted({int(r["timesteps"]) for r in csv.DictReader(fh)})
    assert evaluated == [0, 128, 256, 384]


def test_the_plus_recipe_runs_its_stretches_at_small_scale(tmp_path):
    """configs/plus_2p.yaml (ppo-2p-plus's recipe) with its phases moved to small step counts and a tiny
    network, on the classic game turn-2p plays: cloning of turn-2p, the fast loop with the pipeline,
    a stretch against the heuristic and the learner's own snapshots, then greedy and the heuristic
    at a smaller step size."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    recipe = TrainConfig.from_yaml(root / "configs" / "plus_2p.yaml")
    assert [p.start for p in recipe.phases] == [3_000_000, 12_000_000, 20_000_000, 24_000_000]
    assert recipe.at(0).pipeline and recipe.pretrain.teacher == "turn-2p"
    league = recipe.at(20_000_000)
    assert league.opponents.mix == {"heuristic": 1.0} and league.opponents.selfplay_weight == 0.3
    assert not league.pipeline and league.ppo.learning_rate == 1.0e-4
    last = recipe.at(24_000_000)
    assert last.opponents.selfplay_weight == 0.0 and last.ppo.learning_rate == 5.0e-5
    data = recipe.to_dict()
    data.update(runs_dir=str(tmp_path), total_timesteps=640, n_envs=2, checkpoint_every=128, threads=1)
    data["ppo"].update(n_steps=64, batch_size=64, net_arch=[32], scorer_arch=[16, 8])
    data["eval"].update(every=128, games=4, workers=1)
    data["pretrain"].update(games=2, epochs=1, dagger_games=2, workers=1, batch_size=64)
    data["phases"] = [dict(p, start=s) for p, s in zip(data["phases"], (128, 256, 384, 512), strict=True)]
    data["phases"][2]["set"].update({"eval.every": 128, "opponents.selfplay_every": 64})
    data["phases"][3]["set"]["eval.every"] = 128
    data["opponents"]["selfplay_every"] = 64  # the schedule's first mark, as 100k is for the full run
    result = run_training(TrainConfig.from_dict(data), progress=False)
    assert result["timesteps"] == 640
    _, state = load_latest(tmp_path / "plus_2p")
    assert [Path(p).name for p in state.pool] == [
        f"snapshot_{s:010d}.zip" for s in (386, 448, 512)
    ]  # self-play stretch
    with open(tmp_path / "plus_2p" / "metrics.csv", newline="") as fh:
        evaluated = sorted({int(r["timesteps"]) for r in csv.DictReader(fh)})
    assert evaluated == [0, 128, 256, 384, 512, 640]


@pytest.mark.parametrize("name, rounds", [("distill_2p", 1), ("expert_2p", 2)])
def test_the_search_recipes_run_at_small_scale(tmp_path, name, rounds):
    """configs/distill_2p.yaml and configs/expert_2p.yaml (the search agent distilled
    into a network, from random weights or from ppo-2p's): cloning of the search agent's decisions,
    the DAgger rounds it labels, then PPO, in one call, with a small search and short games (the
    expert recipe keeps ppo-2p's network, whose weights it starts from)."""
    pytest.importorskip("numba")
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    recipe = TrainConfig.from_yaml(root / "configs" / f"{name}.yaml")
    assert recipe.pretrain.teacher == "search:16" and recipe.pretrain.dagger_rounds == rounds
    data = recipe.to_dict()
    data.update(runs_dir=str(tmp_path), total_timesteps=128, n_envs=2, checkpoint_every=128, threads=1)
    data["game"].update(stock_size=5, turn_limit=120)
    data["ppo"].update(n_steps=64, batch_size=64, n_epochs=1)
    if recipe.init_from is None:
        data["ppo"].update(net_arch=[32], scorer_arch=[16, 8])
    data["eval"].update(every=128, games=4, workers=1)
    data["pretrain"].update(teacher="search:2:2", games=3, epochs=1, dagger_games=2, workers=1, batch_size=64)
    result = run_training(TrainConfig.from_dict(data), progress=False)
    assert result["timesteps"] == 128
    stats = json.loads((tmp_path / name / "pretrain.json").read_text())
    assert [r["round"] for r in stats["rounds"]] == list(range(rounds + 1))
    assert stats["rounds"][-1]["samples"] > stats["rounds"][0]["samples"] > 0
