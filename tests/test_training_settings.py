"""The training settings' strict building from YAML data (skipbo_env.training.settings_io) and the
recipes' shared fitting loop (skipbo_env.training.fitting)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from skipbo_env.rules import ConfigError
from skipbo_env.training.fitting import FitPlan, fit_mlp, split_holdout
from skipbo_env.training.recipe_settings import TurnNetConfig, ValueNetConfig
from skipbo_env.training.settings import TrainConfig


@pytest.mark.parametrize(("data", "message"), [
    ({"threads": True}, "threads: must be an int, got True"),
    ({"seed": 1.5}, "seed: must be an int"),
    ({"reward_shaping": 1}, "reward_shaping: must be true or false"),
    ({"name": 5}, "name: must be a string"),
    ({"ppo": 5}, "ppo: must be a mapping, got int"),
    ({"eval": {"agents": "random"}}, "eval.agents: must be a list, got 'random'"),
    ({"ppo": {"net_arch": [64, "wide"]}}, "ppo.net_arch[1]: must be an int"),
    ({"ppo": {"learning_rate": "fast"}}, "ppo.learning_rate: must be a number, got 'fast'"),
    ({"ppo": {"learning_rate": True}}, "ppo.learning_rate: must be a number"),
    ({"ppo": {"activation": "gelu"}}, "ppo.activation: must be one of ['tanh', 'relu'], got 'gelu'"),
    ({"opponents": {"curriculum": [{"opponents": {"greedy": 1}, "bogus": 1}]}},
     "opponents.curriculum[0].bogus: unknown key"),
    ({"phases": [{"start": 5, "set": {}}, {"set": {}}]}, "phases[1].start: missing (this setting has no default)"),
    ({"eval": {"agents": ["greedy", 3]}}, "eval.agents[1]: must be a string, got 3"),
    ({"opponents": {"mix": {"greedy": "lots"}}}, "opponents.mix.greedy: must be a number, got 'lots'"),
    ({"game": {"num_players": 9}}, "game.num_players: must be in 2..6"),
    ({"game": {"colour": "red"}}, "game.colour: unknown key"),
    ({"game": []}, "game: must be a mapping, got list"),
])
def test_settings_refuse_wrong_types_naming_the_dotted_key(data, message):
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_dict(data)
    assert str(err.value).startswith(message), str(err.value)


def test_settings_convert_yaml_numbers_and_lists():
    cfg = TrainConfig.from_dict({"ppo": {"learning_rate": "1e-4", "clip_range": 1, "net_arch": [64, 32]},
                                 "opponents": {"mix": {"greedy": 2}}, "eval": {"agents": ["greedy"],
                                                                               "best_against": "greedy"}})
    assert cfg.ppo.learning_rate == 1e-4 and type(cfg.ppo.clip_range) is float
    assert cfg.ppo.net_arch == (64, 32) and cfg.eval.agents == ("greedy",)
    assert cfg.opponents.mix == {"greedy": 2.0} and type(cfg.opponents.mix["greedy"]) is float
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    turn = TurnNetConfig.from_dict({"labels": {"lineups": [["heuristic", "greedy"]]}})
    assert turn.labels.lineups == (("heuristic", "greedy"),)
    assert ValueNetConfig.from_dict(ValueNetConfig().to_dict()) == ValueNetConfig()


def test_holdout_takes_whole_games_and_refuses_holding_out_all():
    keys = np.repeat(np.arange(10), 3)
    val, train = split_holdout(keys, 0.3, np.random.default_rng(0))
    assert len(val) == 9 and len(train) == 21
    assert not set(keys[val]) & set(keys[train])
    val, train = split_holdout(keys, 0.0, np.random.default_rng(0))
    assert len(val) == 0 and len(train) == 30
    with pytest.raises(ConfigError, match="fit.holdout"):
        split_holdout(np.zeros(4, np.int64), 0.5, np.random.default_rng(0))


def test_fit_keeps_the_epoch_with_the_lowest_held_out_figure_and_logs_every_epoch(tmp_path):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    X = torch.from_numpy(rng.normal(size=(64, 3)).astype(np.float32))
    y = X.sum(1, keepdim=True)
    scores = iter([3.0, 1.0, 2.0])  # epoch 2 is best

    def batch_loss(net, idx):
        return ((net(X[idx]) - y[idx]) ** 2).mean(), len(idx)

    plan = FitPlan(3, (4,), epochs=3, batch_size=16, learning_rate=1e-2, weight_decay=0.0, seed=0,
                   keep="score", columns=(("score_column", "score"),))
    log = tmp_path / "fit.csv"
    fitted = fit_mlp(plan, np.arange(48), np.arange(48, 64), np.random.default_rng(2), batch_loss,
                     lambda net: {"score": next(scores)}, log, progress=False)
    assert fitted.epoch == 2 and fitted.figures == {"score": 1.0}
    assert [w.shape for w, _ in fitted.layers] == [(4, 3), (1, 4)]
    lines = log.read_text().splitlines()
    assert lines[0] == "epoch,seconds,train_loss,score_column" and [line.split(",")[-1] for line in lines[1:]] == [
        "3.0000", "1.0000", "2.0000"]
    last = fit_mlp(dataclasses.replace(plan, keep=None), np.arange(48), np.arange(0), np.random.default_rng(2),
                   batch_loss, lambda net: pytest.fail("no held-out rows"), None, progress=False)
    assert last.epoch == 3 and last.figures == {}
