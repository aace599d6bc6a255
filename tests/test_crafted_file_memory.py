"""Crafted model and record files of at most 2 MB: each is refused by name within 300 MB.

Runs ``benchmarks/bench_crafted_inputs.py --json``: every case (a FIFO, ``/dev/zero``, a file
declaring a network far larger than it holds, a sparse extra tensor, NaN, infinite or overflowing
weights, descriptions with unhashable, nested or 5,000-digit values, BF16 / F8 / F4 tensors) is
loaded in a child forked from a process that has imported the loaders, and its peak resident
memory is compared with a child that loads nothing. The bound is on that increase: importing
torch and sb3 alone takes about 175 MB of a child's resident memory, and that is not counted.
"""

from __future__ import annotations

import json
import subprocess
import sys

BOUND_MB = 300
NAMED = "CheckpointError", "StateError"
EXPECTED = {
    "agent-shipped": ("loaded", ""),
    "turn-shipped": ("loaded", ""),
    "value-shipped": ("loaded", ""),
    "record-dev-zero": ("StateError", "/dev/zero: is not a regular file"),
    "record-fifo": ("StateError", "game.json: is not a regular file"),
    "record-nested": ("StateError", "nested too deeply"),
    "record-many-lists": ("StateError", "record: must be an object"),
    "record-sparse-1g": ("StateError", "more than a game record can be"),
    "agent-fifo": ("CheckpointError", "x.safetensors: is not a regular file"),
    "agent-huge-scorer": ("CheckpointError", "tensor pad is U8"),
    "agent-huge-scorer-f32": ("CheckpointError", "the tensors are not the scorer network's"),
    "agent-sparse-pad": ("CheckpointError", "the tensors are not the mlp network's"),
    "agent-nan": ("CheckpointError", "holds NaN or infinite values"),
    "agent-inf": ("CheckpointError", "tensor value_net.bias holds NaN or infinite values"),
    "agent-huge-weights": ("CheckpointError", "logits on its game's opening position are not finite"),
    "agent-kind-list": ("CheckpointError", "unknown policy kind []"),
    "agent-activation-object": ("CheckpointError", "unknown activation {'a': 1}"),
    "agent-nested": ("CheckpointError", "agent description is not valid JSON (maximum recursion"),
    "agent-big-int": ("CheckpointError", "agent description is not valid JSON (Exceeds the limit"),
    "turn-sparse-extra": ("CheckpointError", "more than a turn-agent file can be"),
    "turn-sparse-extra-256m": ("CheckpointError", "'zzz.extra']; a network with hidden sizes"),
    "turn-tiny-std": ("CheckpointError", "would overflow to NaN"),
    "turn-nan": ("CheckpointError", "tensor layers.0.bias holds NaN or infinite values"),
    "turn-nested": ("CheckpointError", "description is not JSON (maximum recursion"),
    "turn-big-int": ("CheckpointError", "description is not JSON (Exceeds the limit"),
    "turn-bf16": ("CheckpointError", "tensor layers.0.weight is BF16[128, 308], expected float32"),
    "turn-f8": ("CheckpointError", "tensor layers.0.weight is F8_E4M3[128, 308]"),
    "turn-f4": ("CheckpointError", "tensor layers.0.weight is F4[128, 308]"),
    "turn-policy-list": ("CheckpointError", "hidden must be a list"),
    "value-huge-weights": ("CheckpointError", "would overflow to NaN"),
    "value-bf16": ("CheckpointError", "tensor mean is BF16[1175]"),
}


def test_each_crafted_file_is_refused_by_name_within_the_memory_bound():
    out = subprocess.run([sys.executable, "benchmarks/bench_crafted_inputs.py", "--json", "--bound", str(BOUND_MB)],
                         capture_output=True, text=True, timeout=900)
    results = {r.pop("case"): r for r in map(json.loads, out.stdout.splitlines())}
    assert set(results) == {"baseline", *EXPECTED}, out.stderr
    for case, (outcome, phrase) in EXPECTED.items():
        r = results[case]
        assert r["outcome"] == outcome and phrase in r.get("message", ""), (case, r)
        assert r["extra_mb"] is not None and r["extra_mb"] <= BOUND_MB, (case, r)
        assert r["size"] <= 2 << 20 or case == "record-dev-zero", (case, r)  # at most 2 MB on disk
    assert out.returncode == 0, out.stderr
