"""Small numpy networks and their checked safetensors files (turn networks, value networks).

A network file holds the input standardization, the layers' weights and one JSON description
under its kind's header key; every field and tensor is checked, and a network whose outputs
could overflow float32 is refused (:meth:`MLP.activation_bound`). Every problem is a
:class:`~skipbo_env.agents.modelfile.CheckpointError` naming the file. :class:`NetKind` tells the
kinds apart (``turn-2p``'s :mod:`.turnnet`, ``value-6p``'s :mod:`.valuenet`). The format is in
docs/agents.md ("Network files").
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..extras import missing_extra
from ..files import FileReadError, read_prefix
from ..observations import DEFAULT_OBSERVATION
from ..records import write_bytes_atomic
from ..rules import GameConfig, SkipBoError
from .modelfile import CheckpointError, TensorHeader, read_header, short_repr

MAX_HIDDEN = 4096
MAX_LAYERS = 8
MAX_DESCRIPTION = 64 * 1024
MAX_FILE = 512 * 1024 * 1024
"""Largest network file read (bytes): a network of :data:`MAX_LAYERS` layers of :data:`MAX_HIDDEN`
units over the largest game's observation is under 500 MB."""
INPUT_BOUND = 1e4
"""Inputs within ``±INPUT_BOUND`` (far beyond an observation's values, 0 to about 10) ..."""
MAX_ACTIVATION = 1e30
"""... keep every layer's values under this (float32 overflows at 3.4e38); see :meth:`MLP.activation_bound`."""


@dataclass(frozen=True)
class NetKind:
    """One kind of network file: its names, versions and input size."""

    what: str
    """How messages name such a file (``"turn-agent file"``)."""
    format: str
    format_version: int
    metadata_key: str
    """Key of the description in the safetensors header's metadata."""
    inputs_field: str
    """The description's field for the version of the inputs' computation (``"features_version"``)."""
    inputs_version: int
    inputs: Callable[[GameConfig], int]
    """The input size for a game."""
    inputs_name: str
    """How messages name the inputs (``"turn features"``)."""
    observation: str | None = None
    """The observation the inputs are (a name of :mod:`skipbo_env.observations`), or ``None``."""

    @property
    def keys(self) -> tuple[str, ...]:
        return ("format", "format_version", self.inputs_field, "hidden", "game", "provenance")

    @property
    def optional_keys(self) -> tuple[str, ...]:
        return ("observation",) if self.observation is not None else ()


class MLP:
    """A standardized ReLU network in numpy: ``scores(X)`` for a batch of input rows (one output each)."""

    def __init__(self, mean: np.ndarray, std: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.mean = np.asarray(mean, np.float32)
        self.std = np.asarray(std, np.float32)
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]

    @property
    def hidden(self) -> list[int]:
        return [int(w.shape[0]) for w, _ in self.layers[:-1]]

    def scores(self, inputs: np.ndarray) -> np.ndarray:
        h = (np.asarray(inputs, np.float32) - self.mean) / self.std
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            h = h @ w.T + b
            if i < last:
                h = np.maximum(h, 0.0)
        return h[:, 0]

    def activation_bound(self, bound: float = INPUT_BOUND) -> float:
        """The largest magnitude any layer's output can reach for inputs within ``±bound``: interval
        arithmetic in float32, the network's own arithmetic (``inf`` when a bound overflows)."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            low, high = (np.float32(-bound) - self.mean) / self.std, (np.float32(bound) - self.mean) / self.std
            largest = 0.0
            last = len(self.layers) - 1
            for i, (w, b) in enumerate(self.layers):
                center, radius = w @ ((low + high) / 2) + b, np.abs(w) @ ((high - low) / 2)
                low, high = center - radius, center + radius
                peak = float(np.max(np.maximum(np.abs(low), np.abs(high))))
                if not np.isfinite(peak):  # overflowed (inf), or inf - inf (nan)
                    return float("inf")
                largest = max(largest, peak)
                if i < last:
                    low, high = np.maximum(low, 0.0), np.maximum(high, 0.0)
        return largest

    def tensors(self) -> dict[str, np.ndarray]:
        out = {"mean": self.mean, "std": self.std}
        for i, (w, b) in enumerate(self.layers):
            out[f"layers.{i}.weight"] = w
            out[f"layers.{i}.bias"] = b
        return out


def _safetensors(what: str) -> Any:
    """``safetensors.numpy`` (the train extra), or the error naming the extra that ``what`` needs."""
    try:
        import safetensors.numpy as st
    except ImportError as exc:
        raise missing_extra(exc, "train", what) from exc
    return st


def is_net_file(path: str | os.PathLike, kind: NetKind) -> bool:
    """True when ``path`` is a safetensors file whose header holds a description of ``kind``."""
    try:
        if read_prefix(path, 2, kind.what) == b"PK":
            return False  # a zip (sb3 checkpoint), never read as safetensors
        meta, _ = read_header(path, MAX_FILE, kind.what, "unreadable header")
    except (FileReadError, CheckpointError):
        return False
    return kind.metadata_key in meta


def _is_int(value: Any, want: int) -> bool:
    """``value`` is the integer ``want`` (``true`` and ``1.0`` are not ``1``)."""
    return type(value) is int and value == want


def parse_description(path: Path, text: Any, kind: NetKind) -> dict[str, Any]:
    """The checked description of ``kind``'s file ``path`` (see the module docstring)."""
    key = kind.metadata_key
    if not isinstance(text, str) or len(text) > MAX_DESCRIPTION:
        raise CheckpointError(path, f"the {key!r} description must be a JSON text under {MAX_DESCRIPTION} characters")
    try:
        desc = json.loads(text)
    except (ValueError, RecursionError) as exc:  # not JSON, nested too deeply, an integer too long
        raise CheckpointError(path, f"the {key!r} description is not JSON ({exc})") from None
    if not isinstance(desc, dict):
        raise CheckpointError(path, f"the {key!r} description must be a JSON object")
    missing = [k for k in kind.keys if k not in desc]
    unknown = sorted(k for k in desc if k not in kind.keys + kind.optional_keys)
    if missing or unknown:
        raise CheckpointError(path, f"the description misses {missing} / has unknown keys {unknown}")
    if desc["format"] != kind.format or not _is_int(desc["format_version"], kind.format_version):
        raise CheckpointError(
            path,
            f"format {short_repr(desc['format'])} version {short_repr(desc['format_version'])}; "
            f"this code reads "
            f"{kind.format!r} version {kind.format_version}",
        )
    if not _is_int(desc[kind.inputs_field], kind.inputs_version):
        raise CheckpointError(
            path,
            f"{kind.inputs_field} {short_repr(desc[kind.inputs_field])}: this code computes the "
            f"{kind.inputs_name} of version {kind.inputs_version}, and would read the file "
            "differently",
        )
    if kind.observation is not None:
        desc["observation"] = _observation(path, desc.get("observation", DEFAULT_OBSERVATION), kind)
    hidden = desc["hidden"]
    if (not isinstance(hidden, list) or not 1 <= len(hidden) <= MAX_LAYERS
            or any(type(h) is not int or not 1 <= h <= MAX_HIDDEN for h in hidden)):
        raise CheckpointError(path, f"hidden must be a list of 1..{MAX_LAYERS} layer sizes in 1..{MAX_HIDDEN}, "
                                    f"got {short_repr(hidden)}")
    try:
        desc["game"] = GameConfig.from_dict(desc["game"])
    except (SkipBoError, TypeError, ValueError) as exc:
        raise CheckpointError(path, f"bad game in the description: {exc}") from None
    return desc


def _observation(path: Path, name: Any, kind: NetKind) -> str:
    """``name`` if it is the observation ``kind``'s networks read; refused by name else."""
    if name != kind.observation:
        raise CheckpointError(path, f"trained on observation {short_repr(name)}, but this code's {kind.what}s read "
                                    f"observation {kind.observation!r}")
    return name


def _expected_shapes(inputs: int, hidden: list[int]) -> dict[str, tuple[int, ...]]:
    sizes = [inputs, *hidden, 1]
    out: dict[str, tuple[int, ...]] = {"mean": (inputs,), "std": (inputs,)}
    for i in range(len(sizes) - 1):
        out[f"layers.{i}.weight"] = (sizes[i + 1], sizes[i])
        out[f"layers.{i}.bias"] = (sizes[i + 1],)
    return out


def load_net(path: str | os.PathLike, kind: NetKind, config: GameConfig | None = None) -> tuple[MLP, dict[str, Any]]:
    """The network of ``kind``'s file ``path`` and its checked description.

    With ``config``, the file's game must be that one (:meth:`GameConfig.same_rules`). The header
    (description, tensor names, dtypes and shapes) is checked before any tensor is read. Raises
    :class:`CheckpointError` (naming the file) for a missing, unreadable or too large file or one
    that is not a regular file, a bad description, another game, tensors that are not exactly the
    network's (names, shapes, float32), or weights that are not finite, a ``std`` that is not
    positive, or values that can overflow (:meth:`MLP.activation_bound`).
    """
    path = Path(path)
    meta, stored = read_header(path, MAX_FILE, kind.what, "not a safetensors file (unreadable header)")
    if kind.metadata_key not in meta:
        raise CheckpointError(path, f"a safetensors file without the {kind.metadata_key!r} description in its "
                                    f"header: not a {kind.what}")
    desc = parse_description(path, meta[kind.metadata_key], kind)
    if config is not None and not desc["game"].same_rules(config):
        raise CheckpointError(path, f"made for {desc['game']}, not {config}")
    _check_stored(path, stored, _expected_shapes(kind.inputs(desc["game"]), desc["hidden"]), desc["hidden"])
    st = _safetensors(f"loading a {kind.what}")
    try:
        tensors = st.load_file(str(path))
    except Exception as exc:  # the file changed since its header was read
        raise CheckpointError(path, f"cannot read the tensors ({type(exc).__name__}: {exc})") from None
    for name in sorted(tensors):
        if not np.all(np.isfinite(tensors[name])):
            raise CheckpointError(path, f"tensor {name} holds NaN or infinite values")
    if not np.all(tensors["std"] > 0):
        raise CheckpointError(path, "tensor std must be positive")
    layers = [(tensors[f"layers.{i}.weight"], tensors[f"layers.{i}.bias"]) for i in range(len(desc["hidden"]) + 1)]
    net = MLP(tensors["mean"], tensors["std"], layers)
    bound = net.activation_bound()
    if not bound <= MAX_ACTIVATION:
        raise CheckpointError(path, f"the network's values reach {bound:.3g} for inputs within ±{INPUT_BOUND:g} "
                                    f"(at most {MAX_ACTIVATION:g}: its weights are too large or std too small), "
                                    "so its outputs would overflow to NaN")
    return net, desc


def _check_stored(path: Path, stored: TensorHeader, want: dict[str, tuple[int, ...]], hidden: list[int]) -> None:
    """Raise :class:`CheckpointError` unless the header's tensors are ``want``'s names and shapes, all float32."""
    if set(stored) != set(want):
        names = sorted(stored)
        shown = names[:12] + ([f"... ({len(names) - 12} more)"] if len(names) > 12 else [])
        raise CheckpointError(path, f"tensors {shown}; a network with hidden sizes {hidden} has {sorted(want)}")
    for name, shape in want.items():
        got_shape, got_dtype = stored[name]
        if got_dtype != "F32" or got_shape != shape:
            raise CheckpointError(path, f"tensor {name} is {got_dtype}{list(got_shape)}, expected float32 "
                                        f"(F32){list(shape)}")


def write_net(path: str | os.PathLike, kind: NetKind, net: MLP, game: GameConfig, provenance: dict[str, Any]) -> Path:
    """Write ``net`` as ``kind``'s file ``path`` (atomically; checked by the loader's rules first)."""
    path = Path(path)
    if path.suffix != ".safetensors":
        raise CheckpointError(path, f"a {kind.what}'s name must end in .safetensors")
    st = _safetensors(f"writing a {kind.what}")
    desc = {"format": kind.format, "format_version": kind.format_version, kind.inputs_field: kind.inputs_version,
            "hidden": net.hidden, "game": game.to_dict(), "provenance": provenance}
    if kind.observation is not None:
        desc["observation"] = kind.observation
    text = json.dumps(desc, sort_keys=True, separators=(",", ":"))
    parse_description(path, text, kind)
    tensors = {k: np.ascontiguousarray(v, np.float32) for k, v in net.tensors().items()}
    want = _expected_shapes(kind.inputs(game), net.hidden)
    bad = [k for k, shape in want.items() if k not in tensors or tensors[k].shape != shape]
    if bad or set(tensors) != set(want):
        raise CheckpointError(path, f"the network's tensors do not fit {kind.inputs(game)} inputs and hidden sizes "
                                    f"{net.hidden}: {bad}")
    return write_bytes_atomic(path, st.save(tensors, metadata={kind.metadata_key: text}))


__all__ = ["MLP", "NetKind", "is_net_file", "load_net", "parse_description", "write_net"]
