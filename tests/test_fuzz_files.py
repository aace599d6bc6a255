"""The file loaders under random and mutated input: only named errors come back.

Each loader a user reaches with a file (``load_agent`` on agent files, ``load_turn_net`` and
``load_value_net`` on network files, ``GameRecord.load`` on game records) gets random bytes and
valid files mutated by Hypothesis: bytes flipped, the file cut short, values of the safetensors
header (a tensor's dtype, shape or offsets, the description's fields) or of the record's JSON
replaced by other JSON values of any type. Every attempt either loads or raises
:class:`CheckpointError`, :class:`StateError`, :class:`FileReadError` or a ``ValueError`` whose
message names the file; a ``TypeError``, ``KeyError``, ``RecursionError`` or any other error is a
bug. The examples are derandomized and bounded (100 per test), so the module runs in about ten
seconds.
"""

from __future__ import annotations

import functools
import json
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skipbo_env.agents import CheckpointError, load_agent
from skipbo_env.agents.agentfile import policy_class, write_agent_file
from skipbo_env.agents.netfile import MLP
from skipbo_env.agents.turnnet import FEATURE_SIZE, load_turn_net, write_turn_net
from skipbo_env.agents.valuenet import load_value_net, write_value_net
from skipbo_env.encoding import observation_layout
from skipbo_env.files import FileReadError
from skipbo_env.records import GameRecord
from skipbo_env.rules import GameConfig, new_game
from skipbo_env.rules.errors import StateError

CONFIG = GameConfig()
FUZZ = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | st.floats(allow_nan=True)
    | st.text(max_size=12) | st.sampled_from(["F32", "BF16", "F8_E4M3", "F4", "U8", "I64", "relu", "scorer"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
"""Any JSON value (with NaN and integers past 64 bits), to put where the file holds another."""
RAW = ["9" * 5000, "[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000, "1e400", "-1e400", '"\\ud800"',
       "-0", "NaN", "Infinity"]
"""JSON texts Python's encoder never writes: a 5,000-digit integer, nesting past the recursion limit,
numbers out of float range, a lone surrogate."""
replacements = json_values | st.sampled_from(RAW).map(lambda text: _Raw(text))
DTYPE_BITS = {"F64": 64, "F32": 32, "F16": 16, "BF16": 16, "I64": 64, "U8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F4": 4}


class _Raw:
    """A JSON text to splice in as it is."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"_Raw({self.text[:20]!r}... {len(self.text)} chars)"


def _dumps(doc: Any) -> str:
    """``doc`` as JSON, each :class:`_Raw` spliced in as its text."""
    raws: list[str] = []

    def mark(value: Any) -> Any:
        if isinstance(value, _Raw):
            raws.append(value.text)
            return f"\0raw{len(raws) - 1}\0"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    text = json.dumps(mark(doc), allow_nan=True)
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\0raw{i}\0"), raw)
    return text


def _tiny_mlp(inputs: int) -> MLP:
    rng = np.random.default_rng(0)
    return MLP(np.zeros(inputs), np.ones(inputs), [(rng.normal(size=(4, inputs)), rng.normal(size=4)),
                                                   (rng.normal(size=(1, 4)), rng.normal(size=1))])


def valid(kind: str) -> bytes:
    """The bytes of a small valid file of ``kind`` (made once)."""
    return _valid_files()[kind]


@functools.cache
def _valid_files() -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        return _write_valid_files(Path(tmp))


def _write_valid_files(folder: Path) -> dict[str, bytes]:
    layout = observation_layout(CONFIG)
    policy = policy_class("mlp")(spaces.Box(layout.low, layout.high, dtype=np.float32), spaces.Discrete(125),
                                 lambda _: 0.0, net_arch=[8])
    agent = write_agent_file(folder / "agent.safetensors", policy, CONFIG,
                             {"source": "x.zip", "source_sha256": "0" * 64, "timesteps": None})
    turn = write_turn_net(folder / "turn.safetensors", _tiny_mlp(FEATURE_SIZE), CONFIG, {"test": True})
    value = write_value_net(folder / "value.safetensors", _tiny_mlp(layout.size), CONFIG, {"test": True})
    state = new_game(GameConfig(short_game=True), seed=1)
    recorder = GameRecord.start(state, ["a", "b"])
    for _ in range(40):
        move = state.legal_moves()[0]
        state.apply(move)
        recorder.add(move)
    record = recorder.record().save(folder / "game.json")
    return {kind: path.read_bytes() for kind, path in
            {"agent": agent, "turn": turn, "value": value, "record": record}.items()}


LOADERS: dict[str, Callable[[Path], Any]] = {
    "agent": lambda path: load_agent(str(path), CONFIG),
    "turn": lambda path: (load_turn_net(path), load_agent(str(path), CONFIG)),
    "value": load_value_net,
    "record": GameRecord.load,
}


def _only_named_errors(kind: str, path: Path, data: bytes) -> None:
    path.write_bytes(data)
    try:
        LOADERS[kind](path)
    except (CheckpointError, StateError, FileReadError):
        pass
    except ValueError as exc:
        assert str(path) in str(exc) or path.name in str(exc), f"{type(exc).__name__} without the file: {exc}"


# ======================================================================= mutations
def _flip(data: bytes, flips: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for at, mask in flips:
        out[at % len(out)] ^= mask
    return bytes(out)


def _split_safetensors(data: bytes) -> tuple[dict[str, Any], bytes]:
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), data[8 + n:]


def _join_safetensors(header: dict[str, Any], rest: bytes, raw: bool = False) -> bytes:
    text = (_dumps(header) if raw else json.dumps(header)).encode()
    return struct.pack("<Q", len(text)) + text + rest


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside nested dicts and lists (the root excluded)."""
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in items:
        out.append((*prefix, key))
        out += _paths(child, (*prefix, key))
    return out


def _replace(value: Any, path: tuple, new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _mutate_json(doc: Any, pick: int, new: Any) -> Any:
    paths = _paths(doc)
    if paths:
        _replace(doc, paths[pick % len(paths)], new)
    return doc


def _mutate_header(data: bytes, where: str, pick: int, new: Any) -> bytes:
    """``data`` (a safetensors file) with one value of its header, or of its description, replaced."""
    header, rest = _split_safetensors(data)
    if where == "tensors":
        tensors = {k: v for k, v in header.items() if k != "__metadata__"}
        _mutate_json(tensors, pick, new)
        header.update(tensors)
        return _join_safetensors(header, rest, raw=True)
    meta = header["__metadata__"]
    key = next(iter(meta))
    meta[key] = _dumps(_mutate_json(json.loads(meta[key]), pick, new))
    return _join_safetensors(header, rest)


def _retype(data: bytes, pick: int, dtype: str) -> bytes:
    """``data`` (a safetensors file) with one tensor declared as ``dtype``, its shape the one its bytes fill."""
    header, rest = _split_safetensors(data)
    names = sorted(k for k in header if k != "__metadata__")
    entry = header[names[pick % len(names)]]
    begin, end = entry["data_offsets"]
    entry.update(dtype=dtype, shape=[(end - begin) * 8 // DTYPE_BITS[dtype]])
    return _join_safetensors(header, rest)


KINDS = ["agent", "turn", "value", "record"]


# ======================================================================= properties
@pytest.mark.parametrize("kind", KINDS)
@FUZZ
@given(data=st.binary(max_size=2048) | st.builds(lambda n, h: struct.pack("<Q", n) + h,
                                                  st.integers(0, (1 << 64) - 1), st.binary(max_size=256)))
def test_random_bytes_give_named_errors(tmp_path, kind, data):
    _only_named_errors(kind, tmp_path / ("x.json" if kind == "record" else "x.safetensors"), data)


@pytest.mark.parametrize("kind", KINDS)
@FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(1, 255)), min_size=1, max_size=4),
       cut=st.none() | st.integers(0, 1 << 30))
def test_flipped_or_cut_files_give_named_errors(tmp_path, kind, flips, cut):
    data = _flip(valid(kind), flips)
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    _only_named_errors(kind, tmp_path / ("x.json" if kind == "record" else "x.safetensors"), data)


@pytest.mark.parametrize("kind", ["agent", "turn", "value"])
@FUZZ
@given(where=st.sampled_from(["tensors", "description"]), pick=st.integers(0, 1 << 16), new=replacements)
def test_changed_header_values_give_named_errors(tmp_path, kind, where, pick, new):
    _only_named_errors(kind, tmp_path / "x.safetensors", _mutate_header(valid(kind), where, pick, new))


@pytest.mark.parametrize("kind", ["agent", "turn", "value"])
@FUZZ
@given(pick=st.integers(0, 1 << 16), dtype=st.sampled_from(sorted(DTYPE_BITS)))
def test_tensors_of_other_dtypes_give_named_errors(tmp_path, kind, pick, dtype):
    _only_named_errors(kind, tmp_path / "x.safetensors", _retype(valid(kind), pick, dtype))


@FUZZ
@given(pick=st.integers(0, 1 << 16), new=replacements)
def test_changed_record_values_give_named_errors(tmp_path, pick, new):
    doc = _mutate_json(json.loads(valid("record")), pick, new)
    _only_named_errors("record", tmp_path / "x.json", _dumps(doc).encode())


@pytest.mark.parametrize("kind", KINDS)
def test_the_files_mutated_above_load_unchanged(tmp_path, kind):
    path = tmp_path / ("x.json" if kind == "record" else "x.safetensors")
    path.write_bytes(valid(kind))
    LOADERS[kind](path)
