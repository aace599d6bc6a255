"""RLModules: the action-scoring network, RLlib's masking MLP, and our scripted agents.

* :class:`ScorerRLModule`: :class:`skipbo_env.nets.ScorerNet` as a PPO module (the default).
* :data:`MaskedPPOModule`: RLlib's ``ActionMaskingTorchRLModule``, an MLP with masked logits.
* :class:`ScriptedRLModule`: a scripted agent (``random``, ``greedy``, ``heuristic``) as a fixed,
  never-trained policy at the table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Discrete
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module import RLModule
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from ..bots import make_bot
from ..nets import ScorerNet
from ..nets.scorer_net import DEFAULT_SIZES
from ..rules import GameConfig

SCORER_SIZES = ("context_arch", "scorer_arch", "value_arch")
"""The :class:`ScorerRLModule` ``model_config`` keys: ScorerNet's layer sizes (defaults: the shipped agents')."""

MaskedPPOModule = ActionMaskingTorchRLModule
"""The trained module class (RLlib's action-masking PPO torch module)."""


class ScorerRLModule(TorchRLModule, ValueFunctionAPI):
    """The action-scoring network (:class:`~skipbo_env.nets.ScorerNet`, attribute ``net``) as an RLlib
    PPO module: masked logits as the action distribution's inputs, the value head for the critic.

    Observations are the masking dict of :mod:`.env` (``observations``, ``action_mask``);
    ``model_config`` may set :data:`SCORER_SIZES`. A row with no legal action (an ended game's last
    observation, whose action RLlib never sends) has every action scored instead of raising.
    """

    def setup(self) -> None:
        given = self.model_config if isinstance(self.model_config, dict) else {}
        # RLlib adds its own keys
        sizes = {**DEFAULT_SIZES, **{k: tuple(v) for k, v in given.items() if k in SCORER_SIZES}}
        obs_space = getattr(self.observation_space, "spaces", {}).get("observations")
        if obs_space is None or not isinstance(self.action_space, Discrete):
            raise ValueError(f"ScorerRLModule needs the masking observation dict and Discrete actions, got "
                             f"{self.observation_space} and {self.action_space}")
        self.net = ScorerNet(obs_space.shape[0], int(self.action_space.n), sizes["context_arch"], sizes["scorer_arch"],
                             sizes["value_arch"])

    def _inputs(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        obs = batch[Columns.OBS]
        legal = obs["action_mask"] > 0
        return obs["observations"], legal | ~legal.any(dim=-1, keepdim=True)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, values = self.net(*self._inputs(batch))
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: values}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        """The values ``[B]``; ``embeddings`` are this module's own values from the same forward pass."""
        if embeddings is not None:
            return embeddings
        return self.net.value(batch[Columns.OBS]["observations"])


class ScriptedRLModule(RLModule):
    """A scripted agent of :mod:`skipbo_env.bots` as a fixed (untrained) RLModule.

    ``model_config``: ``{"agent": name, "game": GameConfig dict, "seed": int}``.
    Each forward pass hands every row's ``{"observation", "action_mask"}`` to
    the agent's ``act`` and returns the chosen ids as ``Columns.ACTIONS``; no
    action distribution is built, and the module has no weights.
    """

    def setup(self) -> None:
        cfg = self.model_config or {}
        if not isinstance(cfg, dict):
            raise ValueError(f"ScriptedRLModule needs model_config as a dict, got {type(cfg).__name__}")
        for key in ("agent", "game"):
            if key not in cfg:
                raise ValueError(f"ScriptedRLModule needs model_config[{key!r}]")
        self.agent_name = cfg["agent"]
        self.agent = make_bot(cfg["agent"], GameConfig.from_dict(cfg["game"]), seed=cfg.get("seed"))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        vecs = np.asarray(obs["observations"], dtype=np.float32)
        masks = np.asarray(obs["action_mask"]).astype(np.int8)
        actions = np.zeros(len(vecs), dtype=np.int64)
        for i, (vec, mask) in enumerate(zip(vecs, masks, strict=True)):
            if mask.any():  # a seat that is not to move (game over) gets a placeholder 0
                actions[i] = self.agent.act({"observation": vec, "action_mask": mask})
        return {Columns.ACTIONS: actions}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"the scripted module {self.agent_name!r} is never trained")

    def get_state(self, *args: Any, **kwargs: Any) -> dict:
        return {}

    def set_state(self, state: dict) -> None:
        return None
