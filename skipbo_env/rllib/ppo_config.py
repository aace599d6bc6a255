"""PPO configuration for Skip-Bo on RLlib: modules, envs, seat mapping, checkpoints and agent files.

The module is ``"scorer"`` (default, :class:`~.modules.ScorerRLModule`) or ``"mlp"``. Self-play
(``opponents=()``) maps every seat of ``skipbo_v0`` to :data:`LEARNER`; against scripted agents,
``vector=True`` trains on ``SkipBo-v0``'s compiled vector env, otherwise one side per episode is
the learner and the others play ``scripted_<name>`` modules. :func:`save` writes the checkpoint,
:data:`META_FILE` and, for the scorer, ``agent.safetensors``. See docs/pipelines.md.
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from ..aec import GAME_KEYS
from ..agents.rllib_agent import LEARNER, META_FILE
from ..rules import GameConfig
from .env import register
from .modules import SCORER_SIZES, MaskedPPOModule, ScorerRLModule, ScriptedRLModule

SCRIPTED = ("random", "greedy", "heuristic")
MODULES = ("scorer", "mlp")
"""The trainable modules: the action-scoring network, RLlib's masking MLP."""
AGENT_FILE = "agent.safetensors"
"""The scorer module's agent file, written by :func:`save` beside the checkpoint."""


def game_config(env_config: Mapping[str, Any]) -> GameConfig:
    """The :class:`GameConfig` part of an env config (the env's own keys are ignored)."""
    return GameConfig.from_dict({k: v for k, v in env_config.items() if k in GAME_KEYS})


def learner_seats(config: GameConfig, episode_key: str) -> tuple[int, ...]:
    """The seats the learner plays in the episode ``episode_key``: one side, picked by a
    stable hash of the key (so every agent of one episode agrees)."""
    side = zlib.crc32(str(episode_key).encode()) % config.num_teams
    return config.team_seats(side)


def make_mapping_fn(config: GameConfig, opponents: Sequence[str]):
    """The ``policy_mapping_fn`` for :func:`build_ppo_config` (see the module doc)."""
    opponents = tuple(opponents)

    def mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        if not opponents:
            return LEARNER
        seat = int(str(agent_id).rsplit("_", 1)[1])
        ours = learner_seats(config, getattr(episode, "id_", ""))
        if seat in ours:
            return LEARNER
        others = [s for s in range(config.num_players) if s not in ours]
        return f"scripted_{opponents[others.index(seat) % len(opponents)]}"

    return mapping


def build_ppo_config(
    env_config: Mapping[str, Any] | None = None,
    *,
    opponents: Sequence[str] = (),
    module: str = "scorer",
    vector: bool = False,
    scorer_sizes: Mapping[str, Sequence[int]] | None = None,
    num_env_runners: int = 1,
    envs_per_runner: int = 1,
    cpus_per_runner: float = 1,
    train_batch_size: int = 4000,
    minibatch_size: int = 256,
    num_epochs: int = 4,
    lr: float = 3e-4,
    hidden: Sequence[int] = (256, 256),
    seed: int | None = 0,
) -> PPOConfig:
    """A new-API-stack ``PPOConfig`` training :func:`learner_id` on Skip-Bo (see the module doc).

    ``env_config`` goes to ``skipbo_env.env(**env_config)`` (with ``vector``: to the vector env, with
    ``opponents``). ``scorer_sizes`` sets the scorer's layer widths (:data:`~.modules.SCORER_SIZES`),
    ``hidden`` the MLP's. Each remote env runner reserves ``cpus_per_runner`` Ray CPUs, so on a cluster
    the runners fill the nodes' CPUs (see :func:`env_runner_nodes`). The PPO settings not named here
    are the CleanRL recipe's (discount 0.995, GAE 0.95, clip 0.2, entropy 0.01, value weight 0.5,
    gradient norm 0.5, no KL term). Raises ``ValueError`` for an unknown name or a non-positive size.
    """
    env_config = dict(env_config or {})
    config = game_config(env_config)
    _check_ppo_settings(opponents, module, vector, {
        "num_env_runners": num_env_runners + 1, "envs_per_runner": envs_per_runner,
        "train_batch_size": train_batch_size, "minibatch_size": minibatch_size, "num_epochs": num_epochs})
    if type(cpus_per_runner) not in (int, float) or not cpus_per_runner > 0:
        raise ValueError(f"cpus_per_runner must be a positive number, got {cpus_per_runner!r}")
    trained = _trained_spec(module, scorer_sizes, hidden)
    ppo = PPOConfig()
    if vector:
        seats = [opponents[i % len(opponents)] for i in range(config.num_players - 1)]  # from the learner's left
        ppo = (ppo.environment(register(vector=True), env_config={**env_config, "opponents": seats})
               .rl_module(rl_module_spec=trained))
    else:
        specs = {LEARNER: trained}
        for i, name in enumerate(dict.fromkeys(opponents)):
            specs[f"scripted_{name}"] = RLModuleSpec(
                module_class=ScriptedRLModule,
                model_config={"agent": name, "game": config.to_dict(), "seed": None if seed is None else seed + i},
            )
        ppo = (ppo.environment(register(), env_config=env_config)
               .multi_agent(policies=set(specs), policy_mapping_fn=make_mapping_fn(config, opponents),
                            policies_to_train=[LEARNER])
               .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs)))
    runners: dict[str, Any] = {  # RLlib annotates the CPUs as int; Ray reserves fractions too
        "num_env_runners": num_env_runners,
        "num_envs_per_env_runner": envs_per_runner,
        "num_cpus_per_env_runner": cpus_per_runner,
    }
    if vector:
        runners["gym_env_vectorize_mode"] = "vector_entry_point"
    return (
        ppo.env_runners(**runners)
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=lr, gamma=0.995, lambda_=0.95, clip_param=0.2, entropy_coeff=0.01,
                  vf_loss_coeff=0.5, grad_clip=0.5, use_kl_loss=False)
        .debugging(seed=seed)
    )


def _check_ppo_settings(opponents: Sequence[str], module: str, vector: bool, sizes: dict[str, Any]) -> None:
    bad = [o for o in opponents if o not in SCRIPTED]
    if bad:
        raise ValueError(f"unknown opponent(s) {bad}; scripted agents: {', '.join(SCRIPTED)}")
    if module not in MODULES:
        raise ValueError(f"unknown module {module!r}; modules: {', '.join(MODULES)}")
    if vector and not opponents:
        raise ValueError("the vector env plays scripted opponents: name them (self-play runs on skipbo_v0)")
    for name, value in sizes.items():
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int (num_env_runners may be 0), got {value!r}")


def _trained_spec(module: str, scorer_sizes: Mapping[str, Sequence[int]] | None, hidden: Sequence[int]) -> RLModuleSpec:
    if module == "mlp":
        return RLModuleSpec(module_class=MaskedPPOModule,
                            model_config=DefaultModelConfig(fcnet_hiddens=list(hidden), fcnet_activation="relu"))
    sizes = {k: list(v) for k, v in (scorer_sizes or {}).items()}
    unknown = sorted(set(sizes) - set(SCORER_SIZES))
    if unknown:
        raise ValueError(f"unknown scorer size(s) {unknown}; sizes: {', '.join(SCORER_SIZES)}")
    return RLModuleSpec(module_class=ScorerRLModule, model_config=sizes)


def learner_id(vector: bool) -> str:
    """The trained module's id: RLlib's single-agent ``default_policy`` on the vector env, else :data:`LEARNER`."""
    return DEFAULT_MODULE_ID if vector else LEARNER


def scorer_net_of(algo: Any, module_id: str) -> Any:
    """The learner's :class:`~skipbo_env.nets.ScorerNet` of a scorer run (a copy on the CPU, in eval
    mode); ``TypeError`` for another module."""
    import copy

    import torch

    module = algo.get_module(module_id)  # an env runner's copy: the class and the sizes
    if not isinstance(module, ScorerRLModule):
        raise TypeError(f"module {module_id!r} is a {type(module).__name__}, not the scorer")
    net = copy.deepcopy(module.net).cpu()
    weights = algo.learner_group.get_weights([module_id])[module_id]  # the learner's, newest
    net.load_state_dict({k[4:]: torch.as_tensor(v) for k, v in weights.items() if k.startswith("net.")})
    return net.eval()


def load_scorer_weights(algo: Any, module_id: str, net: Any) -> None:
    """Put ``net``'s weights (a ScorerNet of the module's sizes) into the learner and every env runner."""
    state = {f"net.{k}": v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    algo.learner_group.set_weights({module_id: state})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)


def _node_id(_runner: Any) -> str:
    return ray.get_runtime_context().get_node_id()


def env_runner_nodes(algo: Any) -> dict[str, int]:
    """How many of ``algo``'s remote env runners run on each Ray node: ``{node id: count}``
    (the ids ``ray list nodes`` shows); empty when the driver samples alone
    (``num_env_runners=0``)."""
    return dict(Counter(algo.env_runner_group.foreach_env_runner(_node_id, local_env_runner=False)))


def save(algo: Any, directory: str | Path, env_config: Mapping[str, Any], opponents: Sequence[str],
         module_id: str = LEARNER) -> Path:
    """Save ``algo`` to ``directory`` (RLlib checkpoint) plus :data:`META_FILE`, and for a scorer module
    :data:`AGENT_FILE`; return the directory."""
    directory = Path(directory).resolve()
    algo.save_to_path(str(directory))
    meta = {"env_config": dict(env_config), "module_id": module_id, "opponents": list(opponents)}
    (directory / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    try:
        net = scorer_net_of(algo, module_id)
    except TypeError:
        return directory  # the MLP: the checkpoint is its only form
    from ..agents.agentfile import write_scorer_net

    write_scorer_net(directory / AGENT_FILE, net, game_config(env_config), source=f"rllib:{directory.name}")
    return directory
