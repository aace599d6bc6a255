"""Agent files: a trained policy in a safetensors file that is safe to load, whoever made it.

The network's tensors, plus one JSON description under the header key ``skipbo_agent`` (format,
policy kind and sizes, the observation it was trained on, game, provenance), checked field by
field before anything is allocated; nothing is unpickled. docs/agents.md ("Agent files")
documents the format and the checks.
torch, safetensors and sb3 (the ``train`` extra) load only when a file is read or written.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from ..encoding import num_actions, observe
from ..extras import missing_extra
from ..files import FileReadError, read_prefix
from ..observations import DEFAULT_OBSERVATION, OBSERVATIONS
from ..records import write_bytes_atomic
from ..rules import GameConfig, SkipBoError, new_game
from .modelfile import CheckpointError, TensorHeader, check_spaces, read_header, short_repr
from .shipped import SHIPPED, shipped_agent_path

SUFFIX = ".safetensors"
"""The file name suffix of agent files."""
FORMAT = "skipbo-agent"
FORMAT_VERSION = 1
METADATA_KEY = "skipbo_agent"
"""Key of the description in the safetensors header's metadata."""
MAX_DESCRIPTION = 64 * 1024
"""Longest description accepted (characters); a real one is under 1 KiB."""
MAX_FILE = 256 * 1024 * 1024
"""Largest agent file read (bytes): 64 million float32 weights (the shipped agent is under 2 MB)."""

POLICY_KINDS = ("mlp", "scorer")
"""The policy kinds an agent file may hold; :func:`policy_class` names the class that rebuilds each."""
ACTIVATIONS: dict[str, str] = {
    "relu": "ReLU", "tanh": "Tanh", "elu": "ELU", "leaky_relu": "LeakyReLU", "gelu": "GELU", "silu": "SiLU",
}
"""Activation names of the description and their ``torch.nn`` classes."""
_POLICY_KEYS = {
    "mlp": ("kind", "activation", "net_arch"),
    "scorer": ("kind", "activation", "context_arch", "scorer_arch", "value_arch", "features_version"),
}
_TOP_KEYS = ("format", "format_version", "policy", "observation_size", "action_count", "game", "provenance")
_OPTIONAL_KEYS = ("observation",)
"""``observation``: the name of the observation the network was trained on; a file without it is ``v1``'s."""
_PROVENANCE_KEYS = ("source", "source_sha256", "timesteps")
_MAX_LAYERS, _MAX_WIDTH = 32, 1 << 20
_DTYPES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16", "int64": "I64"}


# ====================================================================== pickles
def checkpoint_format(path: str | os.PathLike) -> str:
    """``"rllib"`` (a folder holding ``rllib_checkpoint.json``), ``"sb3"`` (a zip file: what
    sb3's loader would unpickle, whatever its name) or ``"agent"`` (anything else: read as an
    agent file, which checks it). Decided by content, not by the name."""
    p = Path(path)
    if p.is_dir():
        return "rllib" if (p / "rllib_checkpoint.json").is_file() else "agent"
    try:
        head = read_prefix(p, 4, "model file")  # a FIFO or a device is refused, never waited on
    except FileReadError:
        return "agent"  # the agent file loader names the problem
    return "sb3" if head[:2] == b"PK" else "agent"


def pickle_refusal(what: str, exportable: bool = True) -> str:
    """The message that refuses a pickled checkpoint without the opt-in (``exportable``: it names
    ``skipbo train --export``, which converts MaskablePPO checkpoints)."""
    export = (f" To share a model, export it to a safe agent file: skipbo train --export MODEL OUT{SUFFIX} "
              "--allow-pickle" if exportable else "")
    return (
        f"{what} holds pickles, and loading a pickle can run any code its author put in it. "
        "Load it only if you made it or trust where it came from: pass allow_pickle=True "
        f"(--allow-pickle in skipbo evaluate, skipbo play and skipbo train --export).{export}"
    )


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ================================================================= description
def _keys(path: Path, where: str, data: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    if not isinstance(data, dict):
        raise CheckpointError(path, f"agent description: {where} must be an object, got {short_repr(data)}")
    missing = [k for k in required if k not in data]
    unknown = sorted(str(k) for k in data if k not in required and k not in optional)
    if missing or unknown:
        raise CheckpointError(path, f"agent description: {where} has missing keys {missing} and unknown keys "
                                    f"{unknown} (format version {FORMAT_VERSION} has {list(required + optional)})")
    return data


def _int(path: Path, where: str, value: Any, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise CheckpointError(path, f"agent description: {where} must be an integer in {low}..{high}, "
                                    f"got {short_repr(value)}")
    return value


def _arch(path: Path, where: str, value: Any, min_len: int) -> list[int]:
    if not isinstance(value, list) or not min_len <= len(value) <= _MAX_LAYERS:
        raise CheckpointError(path, f"agent description: {where} must be a list of {min_len}..{_MAX_LAYERS} "
                                    f"layer widths, got {short_repr(value)}")
    return [_int(path, f"{where}[{i}]", w, 1, _MAX_WIDTH) for i, w in enumerate(value)]


def parse_description(path: str | os.PathLike, text: Any) -> dict[str, Any]:
    """The checked description of the agent file ``path`` from its JSON ``text``.

    Raises:
        CheckpointError: not JSON, another format or version, an unknown
            policy kind or activation, a bad architecture, sizes that are not
            those of its game, or bad provenance; the message names the field.
    """
    path = Path(path)
    if not isinstance(text, str) or len(text) > MAX_DESCRIPTION:
        raise CheckpointError(path, f"agent description must be a JSON text of at most {MAX_DESCRIPTION} characters")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CheckpointError(path, f"agent description is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else data
        raise CheckpointError(path, f"agent description: format must be {FORMAT!r}, got {short_repr(got)}")
    _keys(path, "the description", data, _TOP_KEYS, _OPTIONAL_KEYS)
    if data["format_version"] != FORMAT_VERSION or type(data["format_version"]) is not int:
        raise CheckpointError(path, f"agent file format version {short_repr(data['format_version'])} is not "
                                    f"supported (this code reads version {FORMAT_VERSION})")
    data["observation"] = _observation_name(path, data.get("observation", DEFAULT_OBSERVATION))
    policy = data["policy"]
    kind = policy.get("kind") if isinstance(policy, dict) else None
    if kind not in POLICY_KINDS:
        raise CheckpointError(path, f"agent description: unknown policy kind {short_repr(kind)} "
                                    f"(known: {', '.join(POLICY_KINDS)})")
    _keys(path, f"policy ({kind})", policy, _POLICY_KEYS[kind])
    if not isinstance(policy["activation"], str) or policy["activation"] not in ACTIVATIONS:
        raise CheckpointError(path, f"agent description: unknown activation {short_repr(policy['activation'])} "
                                    f"(known: {', '.join(ACTIVATIONS)})")
    if kind == "mlp":
        arch = _keys(path, "policy.net_arch", policy["net_arch"], ("pi", "vf"))
        for side in ("pi", "vf"):
            _arch(path, f"policy.net_arch.{side}", arch[side], 0)
    else:
        for name in ("context_arch", "scorer_arch", "value_arch"):
            _arch(path, f"policy.{name}", policy[name], 1)
        _int(path, "policy.features_version", policy["features_version"], 1, 1 << 30)
    obs = _int(path, "observation_size", data["observation_size"], 1, 1 << 20)
    actions = _int(path, "action_count", data["action_count"], 1, 1 << 20)
    try:
        game = GameConfig.from_dict(data["game"])
    except (SkipBoError, TypeError, ValueError) as exc:
        raise CheckpointError(path, f"agent description: bad game configuration ({exc})") from None
    want_obs, want_actions = OBSERVATIONS[data["observation"]].layout(game).size, num_actions(game)
    if (obs, actions) != (want_obs, want_actions):
        raise CheckpointError(
            path, f"agent description: observation size {obs} and action count {actions} are not those of its "
                  f"game ({want_obs} and {want_actions} for {game.num_players} players, "
                  f"partner_game={game.partner_game}, observation {data['observation']!r})")
    prov = _keys(path, "provenance", data["provenance"], _PROVENANCE_KEYS, ("created",))
    if not isinstance(prov["source"], str) or not 0 < len(prov["source"]) <= 255:
        raise CheckpointError(path, f"agent description: provenance.source must be a file name, "
                                    f"got {short_repr(prov['source'])}")
    sha = prov["source_sha256"]
    if not isinstance(sha, str) or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise CheckpointError(path, f"agent description: provenance.source_sha256 must be 64 lowercase hex digits, "
                                    f"got {short_repr(sha)}")
    if prov["timesteps"] is not None:
        _int(path, "provenance.timesteps", prov["timesteps"], 0, 1 << 62)
    if "created" in prov and (not isinstance(prov["created"], str) or len(prov["created"]) > 64):
        raise CheckpointError(path, f"agent description: provenance.created must be a date text, "
                                    f"got {short_repr(prov['created'])}")
    return data


def _observation_name(path: Path, name: Any) -> str:
    """The description's observation name, if this code computes that observation (refused by name)."""
    if not isinstance(name, str) or name not in OBSERVATIONS:
        raise CheckpointError(path, f"trained on observation {short_repr(name)}, which this code does not compute "
                                    f"(it computes {', '.join(repr(k) for k in OBSERVATIONS)})")
    return name


def check_observation(path: str | os.PathLike, desc: dict[str, Any], observation: str,
                      reader: str = "the env's observation") -> None:
    """Refuse, by name, a network trained on another observation than ``observation`` (``reader``'s)."""
    trained = desc.get("observation", DEFAULT_OBSERVATION)
    if trained != observation:
        raise CheckpointError(path, f"trained on observation {trained!r}, but {reader} is {observation!r}")


def declared_tensors(desc: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The names and shapes of the parameters of the network a checked description declares,
    computed from its sizes (nothing is built): sb3's ``MlpExtractor`` and heads for ``mlp``,
    :func:`~skipbo_env.nets.scorer_tensor_shapes` and sb3's value head for ``scorer``."""
    obs, actions, policy = desc["observation_size"], desc["action_count"], desc["policy"]
    out: dict[str, tuple[int, ...]] = {}
    if policy["kind"] == "scorer":
        from ..nets import scorer_tensor_shapes  # the train extra (torch), checked by load_policy

        inner = scorer_tensor_shapes(obs, tuple(policy["context_arch"]), tuple(policy["scorer_arch"]),
                                     tuple(policy["value_arch"]))
        out.update({f"mlp_extractor.{name}": shape for name, shape in inner.items()})
        latent_vf = policy["value_arch"][-1]
    else:
        latent: dict[str, int] = {}
        for side, net in (("pi", "policy_net"), ("vf", "value_net")):
            sizes = [obs, *policy["net_arch"][side]]
            for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):  # Linear at even indices
                out[f"mlp_extractor.{net}.{2 * i}.weight"], out[f"mlp_extractor.{net}.{2 * i}.bias"] = (b, a), (b,)
            latent[side] = sizes[-1]
        out["action_net.weight"], out["action_net.bias"] = (actions, latent["pi"]), (actions,)
        latent_vf = latent["vf"]
    out["value_net.weight"], out["value_net.bias"] = (1, latent_vf), (1,)
    return out


# ===================================================================== loading
def policy_class(kind: str) -> type:
    """The class whose constructor rebuilds a policy of ``kind`` (one of :data:`POLICY_KINDS`): a
    fixed table, never a name read from a file."""
    if kind == "mlp":
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # the train extra (sb3)

        return MaskableActorCriticPolicy
    if kind == "scorer":
        from .scorer import ScorerPolicy  # the train extra (torch, sb3)

        return ScorerPolicy
    raise ValueError(f"unknown policy kind {kind!r} (known: {', '.join(POLICY_KINDS)})")


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _no_learning(progress_remaining: float) -> float:
    """The learning-rate schedule of a rebuilt policy: it only plays."""
    return 0.0


class NoOptimizer:
    """The ``optimizer_class`` of a policy that only plays (an agent file's network, a rollout
    worker's copy): sb3 builds ``optimizer_class(parameters, lr=...)`` with every policy, and the
    first torch optimizer a process builds imports ``torch._dynamo`` (about a second). This one
    holds nothing and cannot step; train a rebuilt policy's weights in a MaskablePPO of its own
    (``init_from`` in a training config)."""

    def __init__(self, params: Any, **settings: Any) -> None:
        del params, settings

    def step(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("this policy was rebuilt to play only; it has no optimizer")

    zero_grad = step

    def load_state_dict(self, state: Any, strict: bool = True) -> None:
        """A checkpoint's optimizer state, loaded with a model that will only play: not kept
        (sb3's loader calls this with ``strict``, as it calls a module's)."""
        del state, strict


def _build_policy(path: Path, desc: dict[str, Any]) -> Any:
    """The policy network the description declares, with freshly initialised weights."""
    import torch  # the train extra: load_policy checked that it is there

    kind, policy = desc["policy"]["kind"], desc["policy"]
    cls = policy_class(kind)
    kwargs: dict[str, Any] = {"activation_fn": getattr(torch.nn, ACTIVATIONS[policy["activation"]]),
                              "optimizer_class": NoOptimizer}
    if kind == "mlp":
        kwargs["net_arch"] = {"pi": list(policy["net_arch"]["pi"]), "vf": list(policy["net_arch"]["vf"])}
    else:
        from ..nets import FEATURES_VERSION as have  # the train extra (torch), loaded by policy_class
        from ..nets import SCORER_OBSERVATION

        check_observation(path, desc, SCORER_OBSERVATION, "the observation the scorer's features read")
        if policy["features_version"] != have:
            raise CheckpointError(path, f"this agent's scorer policy was trained on features version "
                                        f"{policy['features_version']}; this code computes version {have}")
        kwargs.update(context_arch=tuple(policy["context_arch"]), scorer_arch=tuple(policy["scorer_arch"]),
                      value_arch=tuple(policy["value_arch"]), features_version=policy["features_version"])
    layout = OBSERVATIONS[desc.get("observation", DEFAULT_OBSERVATION)].layout(GameConfig.from_dict(desc["game"]))
    obs_space = spaces.Box(layout.low, layout.high, dtype=np.float32)
    action_space = spaces.Discrete(desc["action_count"])
    try:
        with torch.random.fork_rng(devices=[]):  # the initial weights are replaced: leave the caller's RNG alone
            return cls(obs_space, action_space, _no_learning, **kwargs)
    except Exception as exc:  # a constructor refusing the architecture
        raise CheckpointError(path, f"cannot build the {kind} policy ({type(exc).__name__}: {exc})") from exc


def _names(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def load_policy(path: str | os.PathLike, config: GameConfig | None = None,
                observation: str | None = None) -> tuple[Any, dict[str, Any]]:
    """The policy network of the agent file ``path`` on the CPU, in eval mode, and its description.
    It plays only (its ``optimizer`` is a :class:`NoOptimizer`): to train the weights further, give
    the file as a training config's ``init_from``.

    With ``config``, the policy's sizes must be that game's; with ``observation`` (an observation
    name), the file must have been trained on it (checked by name, before any size). Nothing is
    unpickled, and nothing is allocated or read before the header was checked (see the module docstring).

    Raises:
        CheckpointError: the file is missing, not a regular file, too large, not a safetensors
            file, holds no or a bad description, does not fit ``config`` or ``observation``, its
            tensors are not exactly the network's parameters (the message names them), or its
            weights or outputs are not finite.
    """
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(path, "a folder, not an agent file")
    try:  # the train extra (torch, safetensors)
        import torch
        from safetensors.torch import load_file
    except ImportError as exc:
        raise missing_extra(exc, "train", "loading a trained agent") from exc
    metadata, stored = read_header(path, MAX_FILE, "agent file", f"not an agent file ({SUFFIX}) nor a MaskablePPO "
                                                                  "checkpoint (.zip): unreadable safetensors header")
    if METADATA_KEY not in metadata:
        raise CheckpointError(path, f"a safetensors file without the {METADATA_KEY!r} description in its header "
                                    "(agent files are written by skipbo train --export)")
    desc = parse_description(path, metadata[METADATA_KEY])
    if observation is not None:
        check_observation(path, desc, observation)
    if config is not None:
        check_spaces(path, spaces.Box(0.0, 1.0, (desc["observation_size"],), np.float32),
                     spaces.Discrete(desc["action_count"]), config)
    _check_declared(path, desc, stored)
    policy = _build_policy(path, desc)
    built = {name: (tuple(t.shape), _DTYPES.get(str(t.dtype).removeprefix("torch."), str(t.dtype)))
             for name, t in policy.state_dict().items()}
    _check_stored(path, desc["policy"]["kind"], stored, built)  # the built network is the declared one
    try:
        tensors = load_file(str(path), device="cpu")
        with torch.no_grad():
            policy.load_state_dict(tensors, strict=True)
    except Exception as exc:  # the file changed since its header was read
        raise CheckpointError(path, f"cannot load the tensors ({type(exc).__name__}: {exc})") from exc
    for name in sorted(tensors):
        if not bool(torch.isfinite(tensors[name]).all()):
            raise CheckpointError(path, f"tensor {name} holds NaN or infinite values")
    policy.set_training_mode(False)
    _check_outputs(path, policy, desc)
    return policy, desc


def _check_declared(path: Path, desc: dict[str, Any], stored: TensorHeader) -> None:
    """Before the network is built: every stored tensor is float32, the file holds at least as many
    numbers as the declared network has weights, and the stored tensors are the declared network's
    (:func:`declared_tensors`), so that building it allocates no more than the file holds."""
    for name, (shape, dtype) in sorted(stored.items()):
        if dtype != "F32":
            raise CheckpointError(path, f"tensor {name} is {dtype} of shape {shape}; agent files hold F32 tensors")
    declared = declared_tensors(desc)
    _check_names(path, desc["policy"]["kind"], stored, declared)
    held = sum(int(np.prod(shape, dtype=np.int64)) for shape, _ in stored.values())
    needed = sum(int(np.prod(shape, dtype=np.int64)) for shape in declared.values())
    if needed > held:
        raise CheckpointError(path, f"the declared network needs at least {needed} weights; the file holds {held}")
    _check_stored(path, desc["policy"]["kind"], stored, {name: (shape, "F32") for name, shape in declared.items()})


def _check_names(path: Path, kind: str, stored: TensorHeader, wanted: dict[str, Any]) -> None:
    """The header's tensors have exactly ``wanted``'s names."""
    missing = sorted(set(wanted) - set(stored))
    extra = sorted(set(stored) - set(wanted))
    if missing or extra:
        raise CheckpointError(path, f"the tensors are not the {kind} network's: "
                                    f"missing {_names(missing) or 'none'}; unexpected {_names(extra) or 'none'}")


def _check_stored(path: Path, kind: str, stored: TensorHeader, wanted: TensorHeader) -> None:
    """The header's tensors are exactly ``wanted``: names, shapes and dtypes."""
    _check_names(path, kind, stored, wanted)
    for name, (shape, dtype) in wanted.items():
        if stored[name] != (shape, dtype):
            got_shape, got_dtype = stored[name]
            raise CheckpointError(path, f"tensor {name} is {got_dtype} of shape {got_shape}; "
                                        f"the network needs {dtype} of shape {shape}")


def _check_outputs(path: Path, policy: Any, desc: dict[str, Any]) -> None:
    """The policy's logits and value are finite on the opening position of its game, seen from every seat
    (finite weights can still overflow: weights near 3e38 give infinite logits)."""
    import torch  # the train extra, loaded with the policy already

    game = GameConfig.from_dict(desc["game"])
    state = new_game(game, seed=0)
    obs = torch.as_tensor(np.stack([observe(state, seat, observation=desc["observation"])["observation"]
                                    for seat in range(game.num_players)]))
    with torch.no_grad():
        latent_pi = policy.mlp_extractor.forward_actor(policy.extract_features(obs, policy.pi_features_extractor))
        latent_vf = policy.mlp_extractor.forward_critic(policy.extract_features(obs, policy.vf_features_extractor))
        outputs = {"logits": policy.action_net(latent_pi), "value": policy.value_net(latent_vf)}
    for name, out in outputs.items():
        if not bool(torch.isfinite(out).all()):
            raise CheckpointError(path, f"the policy's {name} on its game's opening position are not finite "
                                        "(NaN or infinite): its weights are out of range")


# ===================================================================== writing
def describe_policy(path: str | os.PathLike, policy: Any) -> dict[str, Any]:
    """The ``policy`` section of the description of a MaskablePPO policy network.

    Raises:
        CheckpointError: a policy class, feature extractor or activation the
            format cannot rebuild (``path`` names the file being written).
    """
    path = Path(path)
    classes = {kind: policy_class(kind) for kind in POLICY_KINDS}
    kind = next((kind for kind, cls in classes.items() if type(policy) is cls), None)
    if kind is None:
        raise CheckpointError(path, f"cannot write a {_class_name(type(policy))} policy: agent files hold "
                                    f"{' or '.join(_class_name(cls) for cls in classes.values())}")
    params = policy._get_constructor_parameters()  # sb3's own record of the constructor's arguments
    out: dict[str, Any] = {"kind": kind, "activation": _activation_name(path, params["activation_fn"])}
    if kind == "mlp":
        extractor = params.get("features_extractor_class")
        if getattr(extractor, "__name__", None) != "FlattenExtractor" or params.get("features_extractor_kwargs"):
            raise CheckpointError(path, f"cannot write a policy with features extractor {extractor!r} "
                                        "(agent files rebuild sb3's FlattenExtractor)")
        arch = params["net_arch"]
        if isinstance(arch, dict):
            out["net_arch"] = {"pi": [int(w) for w in arch.get("pi", [])], "vf": [int(w) for w in arch.get("vf", [])]}
        else:
            out["net_arch"] = {"pi": [int(w) for w in arch], "vf": [int(w) for w in arch]}
    else:
        for key in ("context_arch", "scorer_arch", "value_arch"):
            out[key] = [int(w) for w in params[key]]
        out["features_version"] = int(params["features_version"])
    return out


def _activation_name(path: Path, activation: Any) -> str:
    """The description's name of a ``torch.nn`` activation class (:data:`ACTIVATIONS`)."""
    by_class: dict[object, str] = {v: k for k, v in ACTIVATIONS.items()}  # looked up by any __name__, or None
    name = by_class.get(getattr(activation, "__name__", None))
    if name is None or getattr(activation, "__module__", "").split(".")[0] != "torch":
        raise CheckpointError(
            path, f"cannot write activation {activation!r} (agent files know {', '.join(ACTIVATIONS)})"
        )
    return name


def write_agent_file(
    path: str | os.PathLike, policy: Any, game: GameConfig, provenance: dict[str, Any], *,
    observation: str = DEFAULT_OBSERVATION,
) -> Path:
    """Write ``policy`` (a MaskablePPO policy network) as the agent file ``path``, atomically.

    ``provenance`` is the description's ``provenance`` object (``source``,
    ``source_sha256``, ``timesteps``, optional ``created``); ``observation`` is the name of the
    observation the policy was trained on. The description is checked by the loader's own rules
    before anything is written.

    Raises:
        CheckpointError: ``path`` does not end in ``.safetensors``, the policy
            cannot be described, or its sizes are not those of ``game``.
    """
    path = Path(path)
    obs_shape = getattr(policy.observation_space, "shape", None)
    n = getattr(policy.action_space, "n", None)
    if obs_shape is None or len(obs_shape) != 1 or n is None:
        raise CheckpointError(path, f"cannot write a policy over {policy.observation_space} and {policy.action_space}")
    return _write(path, describe_policy(path, policy), (observation, int(obs_shape[0]), int(n)), game,
                  provenance, policy.state_dict())


def _write(path: Path, policy: dict[str, Any], inputs: tuple[str, int, int], game: GameConfig,
           provenance: dict[str, Any], state: dict[str, Any]) -> Path:
    """Write the agent file of a network (its ``policy`` section; ``inputs``: its observation's name and
    size and its action count; its tensors ``state`` under the file's names), atomically, after
    checking the description and the tensors by the loader's own rules."""
    if path.suffix != SUFFIX:
        raise CheckpointError(path, f"an agent file's name must end in {SUFFIX}")
    import torch  # the train extra (torch, safetensors)
    from safetensors.torch import save

    desc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "policy": policy,
        "observation": inputs[0],
        "observation_size": inputs[1],
        "action_count": inputs[2],
        "game": game.to_dict(),
        "provenance": dict(provenance),
    }
    text = json.dumps(desc, sort_keys=True, separators=(",", ":"))
    parse_description(path, text)  # never write a file the loader would refuse
    with torch.no_grad():
        tensors = {name: t.detach().to("cpu").contiguous().clone() for name, t in state.items()}
    held = {name: (tuple(t.shape), _DTYPES.get(str(t.dtype).removeprefix("torch."), str(t.dtype)))
            for name, t in tensors.items()}
    _check_stored(path, policy["kind"], held, {name: (shape, "F32") for name, shape in declared_tensors(desc).items()})
    return write_bytes_atomic(path, save(tensors, metadata={METADATA_KEY: text}))


# ====================================================== the plain-torch network
SCORER_NET_NAMES = (("mlp_extractor.", "body."), ("value_net.", "value_head."))
"""A scorer agent file's tensor names (those of the SB3 policy) and :class:`~skipbo_env.nets.ScorerNet`'s:
(file prefix, network prefix) pairs."""


def _renamed(state: dict[str, Any], pairs: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """``state`` with each name's prefix ``old`` replaced by ``new`` (pairs of ``(old, new)``)."""
    out = {}
    for name, tensor in state.items():
        old, new = next(((o, n) for o, n in pairs if name.startswith(o)), ("", ""))
        out[new + name[len(old):]] = tensor
    return out


def load_scorer_net(source: str | os.PathLike, config: GameConfig | None = None) -> tuple[Any, dict[str, Any]]:
    """The weights of a scorer agent file in a plain-torch :class:`~skipbo_env.nets.ScorerNet` (on the
    CPU, in eval mode), and the file's description: to play, or to train further in any loop.

    ``source`` is the file's path or a shipped agent's name whose file holds a scorer network
    (``ppo-2p``, ``ppo-2p-plus``, ``ppo-3p``, ``ppo-4p``, ``ppo-6p``). The file is checked as
    :func:`load_policy` checks it (nothing is unpickled); with ``config``, its sizes must be that game's.

    Raises:
        CheckpointError: what :func:`load_policy` raises, or a file of another kind (``mlp``).
    """
    import torch  # the train extra: load_policy checks that it is there

    path = shipped_agent_path(source) if isinstance(source, str) and source in SHIPPED else Path(source)
    policy, desc = load_policy(path, config)
    spec = desc["policy"]
    if spec["kind"] != "scorer":
        raise CheckpointError(path, f"a {spec['kind']} agent file; a ScorerNet holds the weights of scorer files")
    from ..nets import ScorerNet  # the train extra (torch)

    with torch.random.fork_rng(devices=[]):  # the initial weights are replaced: leave the caller's RNG alone
        net = ScorerNet(desc["observation_size"], desc["action_count"], tuple(spec["context_arch"]),
                        tuple(spec["scorer_arch"]), tuple(spec["value_arch"]),
                        getattr(torch.nn, ACTIVATIONS[spec["activation"]]))
    net.load_state_dict(_renamed(policy.state_dict(), SCORER_NET_NAMES), strict=True)
    return net.eval(), desc


def write_scorer_net(path: str | os.PathLike, net: Any, game: GameConfig, *, source: str,
                     timesteps: int | None = None, created: str | None = None) -> Path:
    """Write a :class:`~skipbo_env.nets.ScorerNet` as a scorer agent file (atomically), which
    ``load_agent``, ``skipbo evaluate`` and :func:`load_scorer_net` read.

    ``source`` (a name, such as the run's) and ``timesteps`` (the steps it was trained) go into the
    provenance with the sha256 of the weights (the safetensors bytes of its tensors alone);
    ``created``, a date text, only when given.

    Raises:
        CheckpointError: ``path`` does not end in ``.safetensors``, an activation the format does not
            know, sizes that are not those of ``game``, or a network that is not a ScorerNet's.
    """
    from safetensors.torch import save  # the train extra (torch, safetensors)

    path = Path(path)
    policy = {"kind": "scorer", "activation": _activation_name(path, net.activation),
              "context_arch": list(net.context_arch), "scorer_arch": list(net.scorer_arch),
              "value_arch": list(net.value_arch), "features_version": int(net.features_version)}
    state = _renamed(net.state_dict(), tuple((new, old) for old, new in SCORER_NET_NAMES))
    weights = {name: t.detach().to("cpu").contiguous() for name, t in sorted(state.items())}
    provenance: dict[str, Any] = {"source": source, "source_sha256": hashlib.sha256(save(weights)).hexdigest(),
                                  "timesteps": timesteps}
    if created is not None:
        provenance["created"] = created
    from ..nets import SCORER_OBSERVATION  # the train extra (torch), loaded with the network

    return _write(path, policy, (SCORER_OBSERVATION, int(net.obs_dim), int(net.n_actions)), game, provenance, state)
