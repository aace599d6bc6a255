"""Peak memory and outcome of loading crafted files: agent files, turn and value files, game records.

Each case is a small hostile or broken file (at most 2 MB on disk) handed to the loader a user
would reach with it (``load_agent``, ``load_turn_net``, ``load_value_net``, ``GameRecord.load``).
The benchmark imports those loaders (torch, sb3, safetensors) once, then loads each case in a
child forked for it; a child's peak resident memory (``os.wait4``'s ``ru_maxrss``) is compared
with that of a baseline child that loads nothing, so the figure is what loading the file added.
Every case must end in a named error (the shipped files: load) within ``TIMEOUT_S`` seconds, and
add at most ``--bound`` MB (300).

    python benchmarks/bench_crafted_inputs.py            # every case, a table
    python benchmarks/bench_crafted_inputs.py --json     # one JSON object per case
    python benchmarks/bench_crafted_inputs.py agent-huge-scorer turn-nan   # some cases

A child may map at most 4 GiB more than the benchmark has mapped, so a loader that would read
until the kernel kills it fails with ``MemoryError`` instead.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads: no thread pool across the forks

import safetensors.numpy  # noqa: E402, F401  the loaders' modules, imported before the children fork
import sb3_contrib  # noqa: E402, F401
import torch  # noqa: E402, F401

from skipbo_env.agents import load_agent  # noqa: E402
from skipbo_env.agents.shipped import shipped_model_path  # noqa: E402
from skipbo_env.agents.turnnet import load_turn_net  # noqa: E402
from skipbo_env.agents.valuenet import load_value_net  # noqa: E402
from skipbo_env.records import GameRecord  # noqa: E402
from skipbo_env.rules import GameConfig  # noqa: E402

BOUND_MB = 300
"""Most a crafted file may add to the loader's peak memory (MB above the baseline)."""
TIMEOUT_S = 60
EXTRA_ADDRESS = 4 << 30
AGENT_KEY, TURN_KEY, VALUE_KEY = "skipbo_agent", "skipbo_turn_agent", "skipbo_value_net"

LOADERS: dict[str, Callable[[str], object]] = {
    "agent": lambda path: load_agent(path, GameConfig()),
    "turn": load_turn_net,
    "value": load_value_net,
    "record": GameRecord.load,
}
"""The loader of each kind of file."""


# ======================================================================= safetensors by hand
DTYPE_BITS = {"F64": 64, "F32": 32, "F16": 16, "BF16": 16, "I64": 64, "U8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F4": 4}


@dataclass
class Tensor:
    dtype: str
    shape: tuple[int, ...]
    data: bytes | None = None
    """The bytes; ``None`` for a sparse tensor (a hole in the file)."""

    @property
    def nbytes(self) -> int:
        return (int(np.prod(self.shape, dtype=np.int64)) * DTYPE_BITS[self.dtype] + 7) // 8


def write_safetensors(path: Path, tensors: dict[str, Tensor], metadata: dict[str, str] | None) -> Path:
    """A safetensors file written by hand (any dtype name, sparse tensors as holes)."""
    header: dict[str, object] = {} if metadata is None else {"__metadata__": metadata}
    at = 0
    for name, t in tensors.items():
        header[name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [at, at + t.nbytes]}
        at += t.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text)
        for t in tensors.values():
            if t.data is None:
                fh.seek(t.nbytes, os.SEEK_CUR)
            else:
                fh.write(t.data)
        fh.truncate(8 + len(text) + at)
    return path


def read_shipped(name: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    from safetensors import safe_open  # the train extra
    from safetensors.numpy import load_file

    path = shipped_model_path(name)
    with safe_open(str(path), "np") as f:
        metadata = dict(f.metadata())
    return load_file(str(path)), metadata


def f32(array: np.ndarray) -> Tensor:
    array = np.ascontiguousarray(array, np.float32)
    return Tensor("F32", array.shape, array.tobytes())


def mutated(path: Path, name: str, key: str, change_desc: Callable[[dict], object] | None = None,
            change_tensors: Callable[[dict[str, Tensor]], object] | None = None, raw: str | None = None) -> Path:
    """Shipped model ``name`` written again with its description (under ``key``) and/or tensors changed."""
    arrays, metadata = read_shipped(name)
    tensors = {k: f32(v) for k, v in arrays.items()}
    desc = json.loads(metadata[key])
    if change_desc is not None:
        change_desc(desc)
    if change_tensors is not None:
        change_tensors(tensors)
    return write_safetensors(path, tensors, {key: raw if raw is not None else json.dumps(desc)})


def _set(*keys: str, value: object) -> Callable[[dict], None]:
    def change(desc: dict) -> None:
        for k in keys[:-1]:
            desc = desc[k]
        desc[keys[-1]] = value
    return change


def _scaled(name: str, value: float) -> Callable[[dict[str, Tensor]], None]:
    def change(tensors: dict[str, Tensor]) -> None:
        t = tensors[name]
        tensors[name] = f32(np.full(t.shape, value, np.float32))
    return change


def _every(value: float) -> Callable[[dict[str, Tensor]], None]:
    def change(tensors: dict[str, Tensor]) -> None:
        for name, t in tensors.items():
            tensors[name] = f32(np.full(t.shape, value, np.float32))
    return change


def _dtype(name: str, dtype: str) -> Callable[[dict[str, Tensor]], None]:
    def change(tensors: dict[str, Tensor]) -> None:
        shape = tensors[name].shape
        probe = Tensor(dtype, shape)
        tensors[name] = Tensor(dtype, shape, b"\0" * probe.nbytes)
    return change


def _huge_scorer(folder: Path, dtype: str) -> Path:
    """A 1 MB agent file declaring a scorer layer a million wide, its bytes one padding tensor."""
    _, metadata = read_shipped("ppo-2p")
    desc = json.loads(metadata[AGENT_KEY])
    desc["policy"].update(scorer_arch=[1 << 20], context_arch=[1], value_arch=[1])
    pad = Tensor(dtype, (1_050_000 * 8 // DTYPE_BITS[dtype],))
    pad.data = b"\0" * pad.nbytes
    return write_safetensors(folder / f"huge-scorer-{dtype}.safetensors", {"pad": pad}, {AGENT_KEY: json.dumps(desc)})


def _sparse_pad(folder: Path) -> Path:
    """A 64 MiB agent file with a hole for its one tensor, declaring an MLP of about as many weights
    (16 million) under other names: a few KB on disk."""
    _, metadata = read_shipped("ppo-2p")
    desc = json.loads(metadata[AGENT_KEY])
    desc["policy"] = {"kind": "mlp", "activation": "relu", "net_arch": {"pi": [4096, 3500], "vf": [8]}}
    return write_safetensors(folder / "sparse-pad.safetensors", {"pad": Tensor("F32", ((64 << 20) // 4 - 1024,))},
                             {AGENT_KEY: json.dumps(desc)})


def _sparse_extra(folder: Path, size: int) -> Path:
    """The shipped turn network plus an extra tensor of ``size`` bytes that is a hole in the file."""
    arrays, metadata = read_shipped("turn-2p")
    tensors = {k: f32(v) for k, v in arrays.items()}
    tensors["zzz.extra"] = Tensor("U8", (size,))
    return write_safetensors(folder / f"sparse-extra-{size}.safetensors", tensors, metadata)


def _fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def cases(folder: Path) -> dict[str, tuple[str, Path | str]]:
    """Every crafted case by name: (the loader kind of :data:`LOADERS`, its file), built under ``folder``."""
    big = "9" * 5000
    out: dict[str, tuple[str, Path | str]] = {
        "agent-shipped": ("agent", str(shipped_model_path("ppo-2p"))),
        "turn-shipped": ("turn", str(shipped_model_path("turn-2p"))),
        "value-shipped": ("value", str(shipped_model_path("value-6p"))),
        "record-dev-zero": ("record", "/dev/zero"),
        "record-fifo": ("record", _fifo(folder, "game.json")),
        "record-nested": ("record", folder / "nested.json"),
        "record-many-lists": ("record", folder / "lists.json"),
        "record-sparse-1g": ("record", folder / "sparse.json"),
        "agent-fifo": ("agent", _fifo(folder, "x.safetensors")),
        "agent-huge-scorer": ("agent", _huge_scorer(folder, "U8")),
        "agent-huge-scorer-f32": ("agent", _huge_scorer(folder, "F32")),
        "agent-sparse-pad": ("agent", _sparse_pad(folder)),
        "agent-nan": ("agent", mutated(folder / "nan.safetensors", "ppo-2p", AGENT_KEY, change_tensors=_every(np.nan))),
        "agent-inf": ("agent", mutated(folder / "inf.safetensors", "ppo-2p", AGENT_KEY,
                                       change_tensors=_scaled("value_net.bias", np.inf))),
        "agent-huge-weights": ("agent", mutated(folder / "a3e38.safetensors", "ppo-2p", AGENT_KEY,
                                                change_tensors=_every(3e38))),
        "agent-kind-list": ("agent", mutated(folder / "kind.safetensors", "ppo-2p", AGENT_KEY,
                                             _set("policy", "kind", value=[]))),
        "agent-activation-object": ("agent", mutated(folder / "act.safetensors", "ppo-2p", AGENT_KEY,
                                                     _set("policy", "activation", value={"a": 1}))),
        "agent-nested": ("agent", mutated(folder / "anest.safetensors", "ppo-2p", AGENT_KEY, raw=_nested(30_000))),
        "agent-big-int": ("agent", mutated(folder / "abig.safetensors", "ppo-2p", AGENT_KEY,
                                           raw=json.dumps({"format": "skipbo-agent"})[:-1] + f', "n": {big}}}')),
        "turn-sparse-extra": ("turn", _sparse_extra(folder, 1 << 30)),
        "turn-sparse-extra-256m": ("turn", _sparse_extra(folder, 1 << 28)),
        "turn-tiny-std": ("turn", mutated(folder / "std.safetensors", "turn-2p", TURN_KEY,
                                          change_tensors=_scaled("std", 1e-45))),
        "turn-nan": ("turn", mutated(folder / "tnan.safetensors", "turn-2p", TURN_KEY,
                                     change_tensors=_scaled("layers.0.bias", np.nan))),
        "turn-nested": ("turn", mutated(folder / "tnest.safetensors", "turn-2p", TURN_KEY, raw=_nested(30_000))),
        "turn-bf16": ("turn", mutated(folder / "bf16.safetensors", "turn-2p", TURN_KEY,
                                      change_tensors=_dtype("layers.0.weight", "BF16"))),
        "turn-f8": ("turn", mutated(folder / "f8.safetensors", "turn-2p", TURN_KEY,
                                    change_tensors=_dtype("layers.0.weight", "F8_E4M3"))),
        "turn-f4": ("turn", mutated(folder / "f4.safetensors", "turn-2p", TURN_KEY,
                                    change_tensors=_dtype("layers.0.weight", "F4"))),
        "turn-policy-list": ("turn", mutated(folder / "tlist.safetensors", "turn-2p", TURN_KEY,
                                             _set("hidden", value=[[128], {"a": 1}]))),
        "value-huge-weights": ("value", mutated(folder / "vhuge.safetensors", "value-6p", VALUE_KEY,
                                                change_tensors=_every(3e38))),
        "value-bf16": ("value", mutated(folder / "vbf16.safetensors", "value-6p", VALUE_KEY,
                                        change_tensors=_dtype("mean", "BF16"))),
    }
    _, turn_meta = read_shipped("turn-2p")
    text = turn_meta[TURN_KEY]
    out["turn-big-int"] = ("turn", mutated(folder / "tbig.safetensors", "turn-2p", TURN_KEY,
                                           raw=text.replace('"hidden":', f'"n":{big},"hidden":', 1)))
    (folder / "nested.json").write_text(_nested(500_000))
    with open(folder / "sparse.json", "wb") as fh:
        fh.truncate(1 << 30)
    (folder / "lists.json").write_text("[" + ",".join(["[]"] * 600_000) + "]")
    return out


# ======================================================================= measuring
def _child(kind: str | None, path: str, out: int) -> None:
    """In the forked child: load ``path`` with ``kind``'s loader (``None``: nothing), write the outcome
    as JSON to the descriptor ``out``, exit."""
    pages = int(open("/proc/self/statm").read().split()[0])
    limit = pages * os.sysconf("SC_PAGE_SIZE") + EXTRA_ADDRESS
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        if kind is None:
            result = {"outcome": "baseline"}
        else:
            LOADERS[kind](path)
            result = {"outcome": "loaded"}
    except BaseException as exc:  # noqa: BLE001 - the outcome is what is measured
        result = {"outcome": type(exc).__name__, "message": str(exc)[:300]}
    os.write(out, json.dumps(result).encode())
    os._exit(0)


def run_child(kind: str | None, path: Path | str) -> dict:
    """The outcome of loading ``path`` with ``kind``'s loader in a forked child: ``outcome``
    (``loaded``, an error's class name, ``timeout``, ``exit N``), ``message``, ``peak_mb`` (the
    child's peak resident memory) and ``seconds``."""
    read, write = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _child(kind, str(path), write)
    os.close(write)
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - start > TIMEOUT_S:
            os.kill(pid, signal.SIGKILL)
            os.wait4(pid, 0)
            os.close(read)
            return {"outcome": "timeout", "message": f"still running after {TIMEOUT_S} s", "peak_mb": None,
                    "seconds": round(time.monotonic() - start, 1)}
        time.sleep(0.01)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    if data:
        result = json.loads(data)
    else:
        result = {"outcome": f"exit {os.waitstatus_to_exitcode(status)}", "message": ""}
    result["peak_mb"] = round(usage.ru_maxrss / 1024, 1)
    result["seconds"] = round(time.monotonic() - start, 1)
    return result


def measure(names: list[str] | None = None) -> dict[str, dict]:
    """Every case (or those named) built in a temporary folder and loaded in a subprocess; each
    result holds ``kind`` and ``extra_mb``, its peak above the baseline's."""
    with tempfile.TemporaryDirectory() as tmp:
        built = cases(Path(tmp))
        unknown = sorted(set(names or ()) - set(built))
        if unknown:
            raise SystemExit(f"unknown cases {unknown}; known: {', '.join(built)}")
        baseline = run_child(None, "")
        results = {"baseline": {**baseline, "kind": None, "size": 0, "extra_mb": 0.0}}
        for name, (kind, path) in built.items():
            if names and name not in names:
                continue
            result = run_child(kind, path)
            peak = result.get("peak_mb")
            result.update(kind=kind, size=_size(path),
                          extra_mb=None if peak is None else round(peak - baseline["peak_mb"], 1))
            results[name] = result
    return results


def _size(path: Path | str) -> int:
    """Bytes the file takes on disk (a sparse file's holes take none)."""
    try:
        info = os.stat(path)
    except OSError:
        return 0
    return min(info.st_size, info.st_blocks * 512) if os.path.isfile(path) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.add_argument("--bound", type=float, default=BOUND_MB, help="MB above the baseline a case may add")
    args = parser.parse_args(argv)
    results = measure(args.cases)
    over = []
    for name, r in results.items():
        if args.json:
            print(json.dumps({"case": name, **r}))
        else:
            extra = "-" if r["extra_mb"] is None else f"{r['extra_mb']:+.1f}"
            print(f"{name:26} {r['outcome']:18} peak {r.get('peak_mb')} MB ({extra}) {r['seconds']:5.1f} s  "
                  f"{(r.get('message') or '')[:110]}")
        if r["extra_mb"] is None or r["extra_mb"] > args.bound:
            over.append(name)
    if over:
        print(f"over {args.bound} MB above the baseline, or no figure: {', '.join(over)}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
