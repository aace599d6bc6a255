"""Agent files: loading an agent never runs code.

* A crafted MaskablePPO zip whose ``data`` JSON holds a pickle payload is refused by every
  entry point without the opt-in (``load_agent``, ``PPOAgent``, ``run_tournament``,
  ``evaluate.py``, terminal play, ``train.py --export``) and its payload does not run; with the
  opt-in the payload does run (so the refusals are meaningful). An RLlib folder is refused too.
* The safe agent file (``.safetensors``, :mod:`skipbo_env.agents.agentfile`) plays move for move,
  logit for logit, like the checkpoint it was exported from, for both policy kinds.
* Corrupt or hostile agent files each give a :class:`CheckpointError` naming the problem.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from agents.tournament import run_tournament
from support import TinyEnv

import evaluate  # the repository script (tests run from the repository root)
import train
from agents import CheckpointError, PPOAgent, agent_label, is_checkpoint_spec, load_agent, make_agent
from skipbo_env import play
from skipbo_env.agents.agentfile import METADATA_KEY, file_sha256, load_policy
from skipbo_env.encoding import num_actions, observation_layout, observe
from skipbo_env.episode import decisions
from skipbo_env.rules import GameConfig, new_game


def _save_model(path: Path, config: GameConfig, policy: str, seed: int = 1) -> Path:
    """A small MaskablePPO checkpoint with weights shaken so that its choices differ from position to position."""
    import torch
    from sb3_contrib import MaskablePPO

    from skipbo_env.agents.scorer import ScorerPolicy

    kwargs = ({"net_arch": [16, 8]} if policy == "mlp"
              else {"context_arch": [16], "value_arch": [16], "scorer_arch": [8]})
    model = MaskablePPO("MlpPolicy" if policy == "mlp" else ScorerPolicy, TinyEnv(config), n_steps=8, batch_size=8,
                        policy_kwargs=kwargs, seed=seed, device="cpu")
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(torch.randn_like(p))
    model.save(path)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny 2-player MlpPolicy checkpoint and its agent file."""
    folder = tmp_path_factory.mktemp("tiny")
    src = _save_model(folder / "tiny.zip", GameConfig(), "mlp")
    out = folder / "tiny.safetensors"
    assert train.main(["--export", str(src), str(out), "--allow-pickle"]) == 0
    return src, out


# ======================================================================= pickles
class _Payload:
    """Unpickling this writes ``marker``: what a hostile model file would do instead."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('the payload ran')",))


def _crafted_zip(src: Path, dst: Path, marker: Path) -> Path:
    """``src`` (a real checkpoint) with a pickled payload in its ``data`` JSON, as sb3 stores objects."""
    with zipfile.ZipFile(src) as fin, zipfile.ZipFile(dst, "w") as fout:
        for info in fin.infolist():
            raw = fin.read(info)
            if info.filename == "data":
                data = json.loads(raw)
                data["hidden"] = {":type:": "<class 'object'>",
                                  ":serialized:": base64.b64encode(pickle.dumps(_Payload(marker))).decode()}
                raw = json.dumps(data).encode()
            fout.writestr(info.filename, raw)
    return dst


@pytest.fixture
def evil(tiny, tmp_path):
    marker = tmp_path / "payload_ran"
    return _crafted_zip(tiny[0], tmp_path / "evil.zip", marker), marker


def test_a_crafted_zip_is_refused_by_every_entry_point_without_the_opt_in(evil, tmp_path, capsys):
    path, marker = evil
    config = GameConfig()
    renamed = tmp_path / "evil.safetensors"  # the name does not matter: the content decides
    renamed.write_bytes(path.read_bytes())
    for spec in (path, renamed):
        with pytest.raises(CheckpointError, match=r"holds pickles.*allow_pickle=True"):
            load_agent(str(spec), config)
        with pytest.raises(CheckpointError, match="holds pickles"):
            PPOAgent(spec, config)
    with pytest.raises(CheckpointError, match="holds pickles"):
        run_tournament([str(path), "greedy"], config, games=2, seed=0, workers=1)
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["--agents", str(path), "greedy", "--games", "2", "--workers", "1", "--no-progress",
                       "--out", str(tmp_path / "eval")])
    assert exit_info.value.code == 2 and "--allow-pickle" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        play.main(["--opponents", str(path), "--seed", "1"], stdin=io.StringIO("q\n"), stdout=io.StringIO(),
                  stderr=io.StringIO())
    assert exit_info.value.code == 2 and "holds pickles" in capsys.readouterr().err
    out = tmp_path / "out.safetensors"
    assert train.main(["--export", str(path), str(out)]) == 2
    assert "--allow-pickle" in capsys.readouterr().err and not out.exists()
    assert not marker.exists()
    assert not (tmp_path / "eval" / "results.json").exists()  # evaluate made its folder, then refused


def test_with_the_opt_in_the_payload_runs(evil):
    """Proof that the crafted file is hostile: loaded as a pickle, it runs its code (and still plays)."""
    path, marker = evil
    agent = load_agent(str(path), GameConfig(), allow_pickle=True)
    assert marker.read_text() == "the payload ran"
    state = new_game(GameConfig(), seed=0)
    obs = next(decisions(state, [agent, agent])).observation
    assert obs["action_mask"][agent.act(obs)] == 1


def test_the_opt_in_flags_load_pickled_checkpoints(tiny, tmp_path, capsys):
    src, _ = tiny
    code = evaluate.main(["--agents", str(src), "greedy", "--games", "2", "--workers", "1", "--no-progress",
                          "--short", "--turn-limit", "20", "--allow-pickle", "--out", str(tmp_path / "eval")])
    assert code == 0 and (tmp_path / "eval" / "results.json").is_file()
    code = play.main(["--opponents", str(src), "--seed", "1", "--short", "--allow-pickle", "--delay", "0"],
                     stdin=io.StringIO("q\n"), stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    with pytest.raises(SystemExit):  # a replay loads no agent: the flag does not apply
        play.main(["--replay", str(tmp_path / "x.json"), "--allow-pickle"], stdout=io.StringIO())
    assert "--allow-pickle do(es) not apply" in capsys.readouterr().err
    assert train.main(["--allow-pickle"]) == 2  # training loads only its own checkpoints: no flag needed


def test_an_rllib_folder_is_refused_without_the_opt_in(tmp_path, capsys):
    folder = tmp_path / "rllib_run"
    folder.mkdir()
    (folder / "rllib_checkpoint.json").write_text("{}")
    (folder / "class_and_ctor_args.pkl").write_bytes(pickle.dumps(_Payload(tmp_path / "ran")))
    with pytest.raises(CheckpointError, match=r"an RLlib checkpoint holds pickles"):
        load_agent(str(folder), GameConfig())
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", str(folder), "greedy", "--games", "2", "--workers", "1", "--no-progress"])
    assert "--allow-pickle" in capsys.readouterr().err
    assert not (tmp_path / "ran").exists()


def test_loading_an_agent_file_unpickles_nothing(tiny, monkeypatch):
    """Every way to unpickle (pickle, cloudpickle, torch.load) and to open a zip is a tripwire."""
    import cloudpickle
    import torch

    _, out = tiny

    def tripwire(*args, **kwargs):
        raise AssertionError("an agent file load tried to unpickle")

    for module, name in [(pickle, "loads"), (pickle, "load"), (pickle, "Unpickler"), (cloudpickle, "loads"),
                         (cloudpickle, "load"), (torch, "load"), (zipfile, "ZipFile")]:
        monkeypatch.setattr(module, name, tripwire)
    agent = load_agent(str(out), GameConfig())
    assert isinstance(agent, PPOAgent) and agent.model is None and agent.description["policy"]["kind"] == "mlp"


# ================================================================ move for move
def _positions_agree(reference, candidate, config: GameConfig, want: int) -> int:
    """Play ``reference`` against the heuristic until ``want`` positions were seen; at every
    position (both seats) both agents give the same logits, bit for bit, and the same action."""
    seen = game = 0
    while seen < want:
        state = new_game(config, seed=game)
        agents = [reference] + [make_agent("heuristic", config, seed=game)] * (config.num_players - 1)
        seats = agents[game % 2:] + agents[: game % 2]
        for d in decisions(state, seats):
            vec = d.observation["observation"]
            np.testing.assert_array_equal(candidate.logits(vec), reference.logits(vec))
            if seats[d.seat] is reference:  # the action it just chose in the game
                assert candidate.act(d.observation) == d.action
            seen += 1
        game += 1
    return seen


@pytest.mark.parametrize("policy, config, positions", [
    ("mlp", GameConfig(), 2000),
    ("scorer", GameConfig(), 2000),
    ("scorer", GameConfig(num_players=4, partner_game=True, short_game=True), 600),
], ids=["mlp-2p", "scorer-2p", "scorer-4p-partner"])
def test_an_exported_agent_file_plays_like_its_checkpoint(tmp_path, policy, config, positions):
    src = _save_model(tmp_path / "model.zip", config, policy, seed=3)
    out = tmp_path / "agent.safetensors"
    assert train.main(["--export", str(src), str(out), "--allow-pickle"]) == 0
    reference, safe = PPOAgent(src, config, allow_pickle=True), load_agent(str(out), config)
    desc = safe.description
    assert desc["policy"]["kind"] == policy and desc["observation_size"] == observation_layout(config).size
    assert desc["action_count"] == num_actions(config)
    assert GameConfig.from_dict(desc["game"]).num_players == config.num_players  # the standard game of its sizes
    assert desc["provenance"] == {"source": "model.zip", "source_sha256": file_sha256(src), "timesteps": 0}
    assert _positions_agree(reference, safe, config, positions) >= positions


@pytest.mark.parametrize("policy", ["mlp", "scorer"])
def test_a_checkpoint_loaded_to_play_has_the_checkpoints_weights_and_no_optimizer(tmp_path, policy):
    """PPOAgent loads a .zip to play: no torch optimizer is built (it would cost the process about a
    second), and the policy's weights are the checkpoint's, as a full MaskablePPO load gives them."""
    import torch

    from skipbo_env.agents.agentfile import NoOptimizer
    from skipbo_env.agents.ppo import load_maskable_ppo

    src = _save_model(tmp_path / "model.zip", GameConfig(), policy, seed=4)
    agent, full = PPOAgent(src, GameConfig(), allow_pickle=True), load_maskable_ppo(src)
    assert isinstance(agent.policy.optimizer, NoOptimizer)
    assert isinstance(full.policy.optimizer, torch.optim.Adam)
    mine, theirs = agent.policy.state_dict(), full.policy.state_dict()
    assert mine.keys() == theirs.keys() and all(torch.equal(mine[k], theirs[k]) for k in mine)


def test_a_checkpoint_naming_the_scorer_policy_by_its_training_module_path_loads(tmp_path, monkeypatch):
    """Checkpoints pickled while the scorer policy lived in skipbo_env.training.policy name its class there."""
    import skipbo_env.training.policy as training_policy
    from skipbo_env.agents.scorer import ScorerPolicy

    config = GameConfig()
    monkeypatch.setattr(ScorerPolicy, "__module__", training_policy.__name__)  # pickled by that name
    src = _save_model(tmp_path / "old.zip", config, "scorer")
    monkeypatch.undo()
    with zipfile.ZipFile(src) as archive:
        pickled = base64.b64decode(json.loads(archive.read("data"))["policy_class"][":serialized:"])
    assert b"skipbo_env.training.policy" in pickled and b"skipbo_env.agents.scorer" not in pickled
    agent = PPOAgent(src, config, allow_pickle=True)
    assert type(agent.policy) is ScorerPolicy
    state = new_game(config, 2)
    obs = observe(state, state.current)
    assert obs["action_mask"][agent.act(obs)] == 1


def test_agent_files_are_named_like_checkpoints(tiny):
    _, out = tiny
    assert is_checkpoint_spec("agent.safetensors") and agent_label(str(out)) == "tiny"
    result = run_tournament([str(out), "greedy"], GameConfig(short_game=True, turn_limit=20), games=2, seed=0,
                            workers=1)
    assert result.labels == ("tiny", "greedy")


def test_export_refuses_bad_names_and_inputs(tiny, tmp_path, capsys):
    src, out = tiny
    zip_out = tmp_path / "agent.zip"
    assert train.main(["--export", str(src), str(zip_out), "--allow-pickle"]) == 2
    assert ".safetensors" in capsys.readouterr().err and not zip_out.exists()
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"junk")
    for model, problem in [(tmp_path / "none.zip", "no such model file"), (junk, "not a MaskablePPO checkpoint"),
                           (out, "already is an agent file")]:
        assert train.main(["--export", str(model), str(tmp_path / "x.safetensors"), "--allow-pickle"]) == 2
        assert problem in capsys.readouterr().err
    assert not (tmp_path / "x.safetensors").exists()


# ================================================================ corrupt files
def _rewrite(src: Path, dst: Path, tensors=None, meta=None, raw_meta=None) -> Path:
    """``src`` written again with its tensors and/or description changed."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    with safe_open(str(src), "pt") as f:
        desc = json.loads(f.metadata()[METADATA_KEY])
    data = load_file(str(src))
    if tensors is not None:
        tensors(data)
    if meta is not None:
        meta(desc)
    text = json.dumps(desc) if raw_meta is None else raw_meta
    save_file(data, str(dst), metadata=None if text is False else {METADATA_KEY: text})
    return dst


def _set(path: tuple[str, ...], value):
    def change(desc):
        d = desc
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value
    return change


def _drop(key):
    return lambda d: d.pop(key)


CORRUPT = {
    "bad-json": ({"raw_meta": "{not json"}, r"not valid JSON"),
    "deep-json": ({"raw_meta": "[" * 100_000 + "]" * 100_000}, r"at most 65536 characters|not valid JSON"),
    "nested-json": ({"raw_meta": "[" * 20_000 + "]" * 20_000}, r"not valid JSON|format must be"),
    "no-description": ({"raw_meta": False}, r"without the 'skipbo_agent' description"),
    "other-format": ({"meta": _set(("format",), "pytorch")}, r"format must be 'skipbo-agent'"),
    "format-version": ({"meta": _set(("format_version",), 2)}, r"format version 2 is not supported"),
    "unknown-kind": ({"meta": _set(("policy", "kind"), "transformer")}, r"unknown policy kind 'transformer'"),
    "unknown-activation": ({"meta": _set(("policy", "activation"), "os.system")}, r"unknown activation 'os.system'"),
    "activation-list": ({"meta": _set(("policy", "activation"), ["relu"])}, r"unknown activation \['relu'\]"),
    "activation-object": ({"meta": _set(("policy", "activation"), {"a": 1})}, r"unknown activation \{'a': 1\}"),
    "kind-list": ({"meta": _set(("policy", "kind"), [])}, r"unknown policy kind \[\]"),
    "kind-object": ({"meta": _set(("policy", "kind"), {"a": []})}, r"unknown policy kind \{'a': \[\]\}"),
    "5000-digit-integer": ({"raw_meta": '{"format": "skipbo-agent", "format_version": ' + "9" * 5000 + "}"},
                           r"not valid JSON \(Exceeds the limit"),
    "format-version-true": ({"meta": _set(("format_version",), True)}, r"format version True is not supported"),
    "bad-arch": ({"meta": _set(("policy", "net_arch", "pi"), [16, "8"])}, r"net_arch\.pi\[1\] must be an integer"),
    "huge-arch": ({"meta": _set(("policy", "net_arch", "pi"), [1 << 20, 1 << 20])},
                  r"declared network needs at least \d+ weights; the file holds \d+"),
    "obs-size-of-another-game": ({"meta": _set(("observation_size",), 436)},
                                 r"observation size 436 and action count 125 are not those of its game \(435 and 125"),
    "unknown-observation": ({"meta": _set(("observation",), "v2")},
                            r"trained on observation 'v2', which this code does not compute \(it computes 'v1'\)"),
    "observation-not-a-name": ({"meta": _set(("observation",), ["v1"])}, r"trained on observation \['v1'\]"),
    "bool-size": ({"meta": _set(("action_count",), True)}, r"action_count must be an integer"),
    "bad-game": ({"meta": _set(("game", "num_players"), 9)}, r"bad game configuration"),
    "unknown-key": ({"meta": _set(("code",), "print(1)")}, r"unknown keys \['code'\]"),
    "missing-key": ({"meta": _drop("provenance")}, r"missing keys \['provenance'\]"),
    "bad-sha": ({"meta": _set(("provenance", "source_sha256"), "xyz")}, r"source_sha256 must be 64"),
    "wrong-shape": ({"tensors": lambda t: t.update({"action_net.weight": t["action_net.weight"].T.contiguous()})},
                    r"tensor action_net\.weight is F32 of shape \(8, 125\); the network needs F32 of shape \(125, 8\)"),
    "wrong-dtype": ({"tensors": lambda t: t.update({"action_net.bias": t["action_net.bias"].double()})},
                    r"tensor action_net\.bias is F64"),
    "bf16-tensor": ({"tensors": lambda t: t.update({"action_net.bias": t["action_net.bias"].bfloat16()})},
                    r"tensor action_net\.bias is BF16 of shape \(125,\); agent files hold F32 tensors"),
    "u8-padding": ({"tensors": lambda t: t.update({"pad": t["action_net.bias"].to(torch.uint8)})},
                   r"tensor pad is U8"),
    "nan-weights": ({"tensors": lambda t: t["action_net.weight"].fill_(float("nan"))},
                    r"tensor action_net\.weight holds NaN or infinite values"),
    "inf-bias": ({"tensors": lambda t: t["value_net.bias"].fill_(float("inf"))},
                 r"tensor value_net\.bias holds NaN or infinite values"),
    "overflowing-weights": ({"tensors": lambda t: [v.fill_(3e38) for v in t.values()]},
                            r"the policy's logits on its game's opening position are not finite"),
    "missing-tensor": ({"tensors": lambda t: t.pop("action_net.bias")}, r"missing action_net\.bias; unexpected none"),
    "extra-tensor": ({"tensors": lambda t: t.update({"hook.weight": t["action_net.bias"].clone()})},
                     r"missing none; unexpected hook\.weight"),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_a_corrupt_agent_file_gives_a_named_error(tiny, tmp_path, case):
    changes, problem = CORRUPT[case]
    path = _rewrite(tiny[1], tmp_path / f"{case}.safetensors", **changes)
    with pytest.raises(CheckpointError, match=problem) as info:
        load_agent(str(path), GameConfig())
    assert info.value.path == str(path)


def test_files_that_are_no_agent_files(tiny, tmp_path):
    _, out = tiny
    cases = {"text.safetensors": b"hello, not tensors", "empty.safetensors": b"",
             "truncated.safetensors": out.read_bytes()[: out.stat().st_size // 2]}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(CheckpointError, match=r"not an agent file \(\.safetensors\) nor a MaskablePPO checkpoint"):
            load_agent(str(tmp_path / name), GameConfig())
    with pytest.raises(CheckpointError, match="a folder, not an agent file"):
        load_agent(tmp_path, GameConfig())
    with pytest.raises(CheckpointError, match="no such checkpoint file"):
        load_agent(str(tmp_path / "gone.safetensors"), GameConfig())


def test_an_agent_file_for_another_game_or_feature_version_is_refused(tiny, tmp_path):
    _, out = tiny
    with pytest.raises(CheckpointError, match=r"observation shape \(435,\) does not match this game's \(805,\)"):
        load_agent(str(out), GameConfig(num_players=4))
    src = _save_model(tmp_path / "scorer.zip", GameConfig(), "scorer")
    scorer = tmp_path / "scorer.safetensors"
    assert train.main(["--export", str(src), str(scorer), "--allow-pickle"]) == 0
    other = _rewrite(scorer, tmp_path / "v9.safetensors", meta=_set(("policy", "features_version"), 9))
    with pytest.raises(CheckpointError, match="trained on features version 9"):
        load_policy(other)


# ================================================================ hostile agent files
def _scorer_claiming_a_million_wide_layer(tiny, tmp_path) -> Path:
    """A 1 MB agent file whose description declares a scorer layer 2**20 wide (its action_in alone
    would be 151 million weights), holding tensors of the declared names: one float32 padding
    tensor in place of action_in's weights, one number for each of the others."""
    from safetensors.torch import save_file

    from skipbo_env.agents.agentfile import declared_tensors

    desc = load_policy(tiny[1])[1]
    desc["policy"] = {"kind": "scorer", "activation": "relu", "context_arch": [1], "scorer_arch": [1 << 20],
                      "value_arch": [1], "features_version": 1}
    tensors = {name: torch.zeros(1) for name in declared_tensors(desc)}
    tensors["mlp_extractor.action_in.weight"] = torch.zeros(262_500)
    path = tmp_path / "huge.safetensors"
    save_file(tensors, str(path), metadata={METADATA_KEY: json.dumps(desc)})
    return path


def test_a_declared_network_larger_than_the_file_is_refused_before_it_is_built(tiny, tmp_path, monkeypatch):
    import skipbo_env.agents.agentfile as agentfile

    path = _scorer_claiming_a_million_wide_layer(tiny, tmp_path)

    def tripwire(*args):
        raise AssertionError("the declared network was built")

    monkeypatch.setattr(agentfile, "_build_policy", tripwire)
    with pytest.raises(CheckpointError,
                       match=r"declared network needs at least 15\d{7} weights; the file holds 2625\d\d"):
        load_agent(str(path), GameConfig())


def test_tensor_names_dtypes_and_shapes_are_checked_before_any_tensor_is_read(tiny, tmp_path, monkeypatch):
    import safetensors.torch

    bad = _rewrite(tiny[1], tmp_path / "extra.safetensors",
                   tensors=lambda t: t.update({"hook.weight": torch.zeros(1000)}))

    def tripwire(*args, **kwargs):
        raise AssertionError("tensors were read")

    monkeypatch.setattr(safetensors.torch, "load_file", tripwire)
    with pytest.raises(CheckpointError, match="unexpected hook.weight"):
        load_agent(str(bad), GameConfig())


def test_a_fifo_named_like_an_agent_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "x.safetensors"
    os.mkfifo(fifo)
    code = ("from skipbo_env.agents import load_agent, CheckpointError\nfrom skipbo_env.rules import GameConfig\n"
            f"try: load_agent({str(fifo)!r}, GameConfig())\nexcept CheckpointError as e: print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert f"{fifo}: is not a regular file" in out.stdout, out.stderr
    from skipbo_env.agents.ppo import load_maskable_ppo

    with pytest.raises(CheckpointError, match="is not a regular file"):  # the trusted-checkpoint loader too
        load_maskable_ppo(fifo)


def test_a_too_large_agent_file_is_refused_from_its_size(tmp_path):
    from skipbo_env.agents.agentfile import MAX_FILE

    path = tmp_path / "sparse.safetensors"
    with open(path, "wb") as fh:
        fh.truncate(MAX_FILE + 1)
    with pytest.raises(CheckpointError, match="more than an agent file can be"):
        load_agent(str(path), GameConfig())


# ================================================================ network files (turn and value)
def _shipped(name: str) -> Path:
    from skipbo_env.agents.shipped import shipped_model_path

    return shipped_model_path(name)


def _with_header(src: Path, dst: Path, change) -> Path:
    """``src`` (a safetensors file) written again with its header JSON passed through ``change``;
    ``extra`` bytes of a hole appended when ``change`` returns a count."""
    import struct

    data = src.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    hole = change(header) or 0
    text = json.dumps(header).encode()
    with open(dst, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text + data[8 + n:])
        fh.truncate(fh.tell() + hole)
    return dst


def _retype(name: str, dtype: str, bits: int):
    def change(header):
        begin, end = header[name]["data_offsets"]
        header[name].update(dtype=dtype, shape=[(end - begin) * 8 // bits])
    return change


def _description(key: str, text: str):
    def change(header):
        header["__metadata__"][key] = text
    return change


def _extra_hole(size: int):
    def change(header):
        end = max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__")
        header["zzz.extra"] = {"dtype": "U8", "shape": [size], "data_offsets": [end, end + size]}
        return size
    return change


TURN, VALUE = "skipbo_turn_agent", "skipbo_value_net"
BAD_NET_FILES = {
    "bf16": ("turn-2p", _retype("layers.0.weight", "BF16", 16), r"tensor layers\.0\.weight is BF16\[78848\]"),
    "f8": ("turn-2p", _retype("layers.0.weight", "F8_E4M3", 8), r"is F8_E4M3\[157696\], expected float32"),
    "f4": ("value-6p", _retype("mean", "F4", 4), r"tensor mean is F4\[9400\], expected float32"),
    "nested": ("turn-2p", _description(TURN, "[" * 30_000 + "]" * 30_000),
               r"description is not JSON \(maximum recursion"),
    "5000-digit": ("value-6p", _description(VALUE, '{"format": ' + "9" * 5000 + "}"),
                   r"description is not JSON \(Exceeds"),
    "hidden-objects": ("turn-2p", _description(TURN, json.dumps({
        "format": "skipbo-turn-agent", "format_version": 1, "features_version": 1, "hidden": [[128], {"a": 1}],
        "game": {}, "provenance": {}})), r"hidden must be a list of 1\.\.8 layer sizes"),
    "extra-tensor-hole": ("turn-2p", _extra_hole(64 << 20), r"tensors \['layers\.0\.bias'.*'zzz\.extra'\]; a network"),
}


@pytest.mark.parametrize("case", list(BAD_NET_FILES))
def test_a_bad_network_file_is_refused_by_name_before_its_tensors_are_read(tmp_path, monkeypatch, case):
    import safetensors.numpy

    from skipbo_env.agents.turnnet import load_turn_net
    from skipbo_env.agents.valuenet import load_value_net

    shipped, change, problem = BAD_NET_FILES[case]
    path = _with_header(_shipped(shipped), tmp_path / f"{case}.safetensors", change)

    def tripwire(*args, **kwargs):
        raise AssertionError("tensors were read")

    monkeypatch.setattr(safetensors.numpy, "load_file", tripwire)
    with pytest.raises(CheckpointError, match=problem) as info:
        (load_turn_net if shipped == "turn-2p" else load_value_net)(path)
    assert info.value.path == str(path)


@pytest.mark.parametrize(("shipped", "change", "problem"), [
    ("turn-2p", lambda t: {**t, "std": np.full_like(t["std"], 1e-45)}, r"values reach inf .* overflow to NaN"),
    ("value-6p", lambda t: {k: np.full_like(v, 3e38) for k, v in t.items()}, r"values reach .* overflow to NaN"),
    ("value-6p", lambda t: {**t, "layers.2.bias": np.full_like(t["layers.2.bias"], 1e31)}, r"values reach 1e\+31"),
], ids=["tiny-std", "huge-weights", "huge-output"])
def test_a_network_whose_outputs_can_overflow_is_refused(tmp_path, shipped, change, problem):
    from support import rewrite_net_file

    from skipbo_env.agents.turnnet import load_turn_net
    from skipbo_env.agents.valuenet import load_value_net

    key = TURN if shipped == "turn-2p" else VALUE
    path = rewrite_net_file(_shipped(shipped), tmp_path / "bad.safetensors", key, tensors=change)
    with pytest.raises(CheckpointError, match=problem):
        (load_turn_net if shipped == "turn-2p" else load_value_net)(path)


def test_a_network_file_that_is_a_fifo_or_too_large_is_refused_at_once(tmp_path):
    from skipbo_env.agents.netfile import MAX_FILE
    from skipbo_env.agents.turnnet import load_turn_net

    fifo = tmp_path / "x.safetensors"
    os.mkfifo(fifo)
    with pytest.raises(CheckpointError, match="is not a regular file"):
        load_turn_net(fifo)
    big = tmp_path / "big.safetensors"
    with open(big, "wb") as fh:
        fh.truncate(MAX_FILE + 1)
    with pytest.raises(CheckpointError, match="more than a turn-agent file can be"):
        load_turn_net(big)


def test_the_shipped_networks_are_well_within_the_overflow_bound():
    from skipbo_env.agents.netfile import MAX_ACTIVATION
    from skipbo_env.agents.turnnet import load_turn_net
    from skipbo_env.agents.valuenet import load_value_net

    assert load_turn_net(_shipped("turn-2p"))[0].activation_bound() < MAX_ACTIVATION / 1e20
    assert load_value_net(_shipped("value-6p")).net.activation_bound() < MAX_ACTIVATION / 1e20


@pytest.mark.parametrize(("policy", "config"), [
    ({"kind": "mlp", "activation": "tanh", "net_arch": {"pi": [16, 8], "vf": [4]}}, GameConfig()),
    ({"kind": "mlp", "activation": "relu", "net_arch": {"pi": [], "vf": []}}, GameConfig(num_players=3)),
    ({"kind": "scorer", "activation": "relu", "context_arch": [16], "scorer_arch": [8],
      "value_arch": [16, 4], "features_version": 1}, GameConfig()),
    ({"kind": "scorer", "activation": "elu", "context_arch": [8, 8, 4], "scorer_arch": [8, 6, 3],
      "value_arch": [5], "features_version": 1}, GameConfig(num_players=4, partner_game=True)),
], ids=["mlp", "mlp-no-hidden", "scorer", "scorer-deep-partner"])
def test_the_declared_tensors_are_the_built_networks_parameters(policy, config):
    """The names and shapes a file must hold, computed before anything is built, are those of the network."""
    from skipbo_env.agents.agentfile import _build_policy, declared_tensors

    desc = {"observation_size": observation_layout(config).size, "action_count": num_actions(config),
            "policy": policy, "game": config.to_dict()}
    built = _build_policy(Path("x.safetensors"), desc)
    assert declared_tensors(desc) == {name: tuple(t.shape) for name, t in built.state_dict().items()}


# ========================================================== named observations
def _fake_v2(monkeypatch):
    """Register observation ``v2``: v1's encoding under another name (same sizes), so that only the
    name tells the two apart."""
    from skipbo_env.observations import OBSERVATIONS, Observation, v1

    monkeypatch.setitem(OBSERVATIONS, "v2", Observation("v2", v1.observation_layout, v1.encode_view,
                                                        v1.decode_observation))


def test_an_agent_file_records_its_observation_and_one_without_it_is_v1(tiny, tmp_path):
    from safetensors import safe_open

    with safe_open(str(tiny[1]), "pt") as f:
        assert json.loads(f.metadata()[METADATA_KEY])["observation"] == "v1"
    old = _rewrite(tiny[1], tmp_path / "old.safetensors", meta=lambda d: d.pop("observation"))
    agent = load_agent(str(old), GameConfig())
    assert agent.observation == "v1" and agent.description["observation"] == "v1"
    state = new_game(GameConfig(), seed=0)
    obs = observe(state, state.current)
    assert agent.act(obs) == load_agent(str(tiny[1]), GameConfig()).act(obs)


def test_an_agent_file_of_another_observation_is_refused_by_name_not_size(tiny, tmp_path, monkeypatch):
    _fake_v2(monkeypatch)
    v2_file = _rewrite(tiny[1], tmp_path / "v2.safetensors", meta=_set(("observation",), "v2"))
    assert PPOAgent(v2_file, GameConfig()).observation == "v2"  # its sizes fit the game: only the name differs
    with pytest.raises(CheckpointError, match=r"trained on observation 'v2', but the env's observation is 'v1'"):
        load_agent(str(v2_file), GameConfig())
    with pytest.raises(CheckpointError, match=r"trained on observation 'v2', but the env's observation is 'v1'"):
        load_policy(v2_file, GameConfig(), observation="v1")
    assert load_agent(str(v2_file), GameConfig(), observation="v2").observation == "v2"


def test_an_env_refuses_an_opponent_trained_on_another_observation(tiny, monkeypatch):
    from skipbo_env.rules import ConfigError
    from skipbo_env.single import SkipBoSingleEnv

    _fake_v2(monkeypatch)
    with pytest.raises(ConfigError, match=r"opponents\[0\].*trained on observation 'v1', but the env's observation "
                                          r"is 'v2'"):
        SkipBoSingleEnv(opponents=str(tiny[1]), observation="v2")
    with pytest.raises(ConfigError, match=r"trained on observation 'v1', but the env's observation is 'v2'"):
        SkipBoSingleEnv(opponents="ppo-2p", observation="v2")
    env = SkipBoSingleEnv(opponents="turn-2p", observation="v2")  # a turn agent reads views, not vectors
    assert env.observation == "v2" and env.aec.observation == "v2"
