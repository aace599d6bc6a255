"""RLlibAgent: a policy trained by ``train_rllib.py`` behind ``act(observation) -> int``.

Needs the ``rllib`` extra (ray is imported when a checkpoint is loaded). It loads only the trained
RLModule from the checkpoint (no Ray cluster, no algorithm, no env runners), so ``evaluate.py`` and
the tournament can seat it next to scripted and SB3 agents.

An RLlib checkpoint holds pickles (the module's ``class_and_ctor_args.pkl``):
loading one can run any code its author put in it, so :class:`RLlibAgent`
refuses it unless the caller passes ``allow_pickle=True`` (files it made or trusts).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..bots.protocol import AgentBase
from ..encoding import num_actions, observation_layout
from ..rules import GameConfig
from .agentfile import pickle_refusal
from .modelfile import CheckpointError

LEARNER = "learner"
"""Module id of the trained policy (``train_rllib.py``)."""
META_FILE = "skipbo_rllib.json"
"""File written next to an RLlib checkpoint: env config, learner module id, opponents."""
MODULE_DIR = Path("learner_group") / "learner" / "rl_module"
"""Where the RLModules lie inside an RLlib algorithm checkpoint."""


def is_rllib_checkpoint(path: str | os.PathLike) -> bool:
    """True when ``path`` is a directory holding an RLlib algorithm checkpoint."""
    p = Path(path)
    return p.is_dir() and (p / "rllib_checkpoint.json").is_file()


class RLlibAgent(AgentBase):
    """Plays the most probable legal action of the trained masked-PPO module.

    ``act`` runs the module's inference pass on one observation and takes the
    arg-max of the logits over the legal actions only, so it is deterministic;
    :meth:`seed` (the protocol's default) changes nothing. The game loops ask
    :meth:`act` game by game (neither ``batched`` nor ``reads_view``).

    Raises:
        CheckpointError: ``checkpoint`` is not an RLlib checkpoint, is one but
            ``allow_pickle`` is not given (it holds pickles), lacks
            the module, or was trained for other observation/action sizes.
    """

    def __init__(
        self,
        checkpoint: str | os.PathLike,
        config: GameConfig,
        seed: int | None = None,
        module_id: str | None = None,
        *,
        allow_pickle: bool = False,
    ) -> None:
        self.path = Path(checkpoint).resolve()  # RLlib reads checkpoints by URI: a relative path has no scheme
        self.config = config
        if not is_rllib_checkpoint(self.path):
            raise CheckpointError(self.path, "not a directory holding an RLlib checkpoint")
        if not allow_pickle:
            raise CheckpointError(self.path, pickle_refusal("an RLlib checkpoint", exportable=False))
        import torch  # the rllib extra (ray, torch) loads only now
        from ray.rllib.core.rl_module import RLModule
        from ray.rllib.core.rl_module.torch import TorchRLModule

        meta_path = self.path / META_FILE
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        self.module_id = module_id or meta.get("module_id", LEARNER)
        module_path = self.path / MODULE_DIR / self.module_id
        if not module_path.is_dir():
            raise CheckpointError(self.path, f"no RLModule {self.module_id!r} under {MODULE_DIR}")
        try:
            module = RLModule.from_checkpoint(str(module_path))
        except Exception as exc:  # RLlib raises many kinds for a bad checkpoint
            raise CheckpointError(
                self.path, f"cannot load RLModule ({type(exc).__name__}: {exc})"
            ) from exc
        if not isinstance(module, TorchRLModule):
            raise CheckpointError(
                self.path, f"the RLModule is a {type(module).__name__}, not a torch module"
            )
        self.module = module
        self.module.eval()
        obs_spaces = getattr(self.module.observation_space, "spaces", None) or {}
        want_obs, want_actions = observation_layout(config).size, num_actions(config)
        got_obs = obs_spaces["observations"].shape if "observations" in obs_spaces else None
        got_actions = getattr(self.module.action_space, "n", None)
        if got_obs != (want_obs,) or got_actions != want_actions:
            raise CheckpointError(
                self.path,
                f"module spaces (observation {got_obs}, actions {got_actions}) do not match this game's "
                f"(({want_obs},), {want_actions}) ({config.num_players} players, "
                f"partner_game={config.partner_game})",
            )
        self._torch = torch

    def act(self, observation: Mapping[str, Any]) -> int:
        """The legal action with the highest logit; ``ValueError`` when no action is legal."""
        mask = np.asarray(observation["action_mask"])
        if not mask.any():
            raise ValueError("no legal action: the action mask is all zeros (is this seat to move?)")
        torch = self._torch
        vec = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32))[None]
        batch = {
            "obs": {"observations": vec, "action_mask": torch.as_tensor(mask, dtype=torch.float32)[None]}
        }
        with torch.no_grad():
            out = self.module.forward_inference(batch)
        logits = out["action_dist_inputs"][0].numpy().astype(np.float64)
        logits[mask == 0] = -np.inf
        return int(np.argmax(logits))
