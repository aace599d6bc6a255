"""RLModules: RLlib's masking PPO module, and our scripted agents as fixed policies.

* :data:`MaskedPPOModule` is RLlib's own ``ActionMaskingTorchRLModule``
  (shipped in ``ray.rllib.examples``): PPO whose logits get ``log(mask)``
  added, so illegal actions have probability ~0 in sampling, greedy
  inference and the PPO loss.
* :class:`ScriptedRLModule` is what RLlib lacks: one of our scripted agents
  (``random``, ``greedy``, ``heuristic``) behind the RLModule API, so it can
  sit at a table as a policy that is never trained.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module import RLModule
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from ..bots import make_bot
from ..rules import GameConfig

MaskedPPOModule = ActionMaskingTorchRLModule
"""The trained module class (RLlib's action-masking PPO torch module)."""


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
