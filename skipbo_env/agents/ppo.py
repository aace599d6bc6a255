"""PPOAgent: a trained MaskablePPO policy behind ``act(observation) -> int``.

The policy comes from an agent file (``.safetensors``, :mod:`.agentfile`: weights
and a JSON description, nothing pickled), or, only with ``allow_pickle=True``,
from an sb3-contrib ``MaskablePPO`` checkpoint (``.zip``), which is a pickle and
can run code when loaded.

torch and stable-baselines3 (the ``train`` extra) are imported only when a model is
loaded, so the scripted agents and the tournament never pay for them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..bots.protocol import AgentBase
from ..extras import missing_extra
from ..files import FileReadError, check_readable
from ..observations import DEFAULT_OBSERVATION
from ..rules import GameConfig
from .agentfile import NoOptimizer, check_observation, checkpoint_format, load_policy, pickle_refusal
from .modelfile import CheckpointError, check_spaces

MAX_CHECKPOINT = 4 << 30
"""Largest MaskablePPO checkpoint read (bytes)."""


def load_maskable_ppo(path: str | os.PathLike, config: GameConfig | None = None, *, play_only: bool = False,
                      **settings: Any) -> Any:
    """Load a ``MaskablePPO`` checkpoint (.zip) on the CPU; with ``config``, check it fits that game.

    ``play_only``: the model will only play (:class:`PPOAgent`): its policy is built without a torch
    optimizer (:class:`~skipbo_env.agents.agentfile.NoOptimizer`; the first torch optimizer a
    process builds costs it about a second), and the checkpoint's optimizer state is not kept.

    The checkpoint is a pickle: loading it runs whatever code the file holds. Call this only
    for files the caller made or was told to trust (a run's own checkpoints, or ``allow_pickle=True``
    given by the user); :class:`PPOAgent` and ``load_agent`` ask for that opt-in.

    ``settings`` replace attributes stored in the checkpoint (sb3 applies them
    before it builds the rollout buffer and schedules: a resumed run's PPO
    settings). This is the one MaskablePPO loader: agents, resume and export use it.

    Raises:
        CheckpointError: the file is missing, not a regular file, larger than
            :data:`MAX_CHECKPOINT`, is not a MaskablePPO checkpoint,
            or its observation/action sizes differ from the configuration's
            (the message names the file and both sizes).
    """
    path = Path(path)
    try:
        check_readable(path, MAX_CHECKPOINT, "checkpoint file")  # a FIFO would block sb3's reader
    except FileReadError as exc:
        raise CheckpointError(path, exc.problem) from None
    try:
        from sb3_contrib import MaskablePPO  # torch and sb3 load only with a checkpoint
    except ImportError as exc:
        raise missing_extra(exc, "train", "loading a PPO checkpoint") from exc
    try:
        model = (_play_only_class() if play_only else MaskablePPO).load(path, env=None, device="cpu", **settings)
    except Exception as exc:  # sb3 raises many kinds for a bad file (zip, pickle, key errors)
        raise CheckpointError(path, f"not a MaskablePPO checkpoint ({type(exc).__name__}: {exc})") from exc
    if config is not None:
        check_spaces(path, model.observation_space, model.action_space, config)
    return model


@functools.cache
def _play_only_class() -> Any:
    """``MaskablePPO`` whose policy is built with :class:`~skipbo_env.agents.agentfile.NoOptimizer`."""
    from sb3_contrib import MaskablePPO  # the train extra: load_maskable_ppo checked that it is there

    class PlayOnlyMaskablePPO(MaskablePPO):
        def _setup_model(self) -> None:
            self.policy_kwargs = {**self.policy_kwargs, "optimizer_class": NoOptimizer}
            super()._setup_model()

    return PlayOnlyMaskablePPO


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run a forward pass on one torch thread (the caller's setting is restored after).

    With several intra-op threads a row's result can depend on the other rows of its batch (the
    rows are split between threads, and the split changes the arithmetic): measured on a 2-core
    AMD EPYC, a tournament with one worker played other games in the engine (batches of many
    games) than in the rules-core loop; on one thread they are the same games
    (tests/test_engine_games.py), as in tournament workers, which run one thread each. One
    thread does not make a row's logits independent of the batch size in every case (a batch of
    one and one of 64 rows differ in the fifth significant digit), so exact ties between two
    actions' logits could still go either way.
    """
    import torch  # the train extra: a PPO model or a value network is loaded already

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class PPOAgent(AgentBase):
    """Plays the greedy (deterministic) action of a MaskablePPO policy among the legal ones.

    ``path`` is an agent file (``.safetensors``, see :mod:`.agentfile`), which is
    safe to load from anyone; or a ``MaskablePPO`` checkpoint (a ``.zip``), which is
    a pickle and is loaded only with ``allow_pickle=True`` (otherwise
    :class:`CheckpointError` says why). ``policy`` is the network; ``model`` the
    whole MaskablePPO of a checkpoint (``None`` for an agent file); ``description``
    the agent file's JSON (``None`` for a checkpoint). ``observation`` is the name of the observation
    the policy reads (the file's; a checkpoint is ``v1``'s); given ``observation=``, a policy trained on
    another is refused by name.

    ``act`` returns the legal action with the largest policy logit, the
    action ``model.predict(obs, action_masks=mask, deterministic=True)``
    picks, computed directly from the policy's modules (feature extractor,
    actor network, action head) without sb3's per-call bookkeeping; so the
    same observation always gives the same action, and :meth:`seed` (the
    protocol's default) changes nothing. The game loops batch its games into
    one :meth:`act_batch` call (``batched``).
    """

    name = "ppo"
    batched = True

    def __init__(self, path: str | os.PathLike, config: GameConfig, seed: int | None = None, *,
                 allow_pickle: bool = False, observation: str | None = None) -> None:
        self.path = Path(path)
        self.config = config
        self.model: Any = None
        self.description: dict[str, Any] | None = None
        self.observation: str = DEFAULT_OBSERVATION
        if not self.path.exists():
            raise CheckpointError(self.path, "no such checkpoint file")
        fmt = checkpoint_format(self.path)
        if fmt == "rllib":
            raise CheckpointError(self.path, "an RLlib checkpoint folder, not a MaskablePPO model (use load_agent)")
        if fmt == "sb3":
            if not allow_pickle:
                raise CheckpointError(self.path, pickle_refusal("a MaskablePPO checkpoint (.zip)"))
            if observation is not None:  # a checkpoint records no observation: it is v1's
                check_observation(self.path, {"observation": DEFAULT_OBSERVATION}, observation)
            self.model = load_maskable_ppo(self.path, config, play_only=True)
            self.policy = self.model.policy
        else:
            self.policy, self.description = load_policy(self.path, config, observation)
            self.observation = self.description["observation"]

    def act(self, observation: Mapping[str, Any]) -> int:
        return int(self.act_batch([observation])[0])

    def act_batch(self, observations: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """:meth:`act` for many observations in one forward pass (tournaments play many games at once).

        It takes every action's logit (the full pass), not the legal actions' alone as
        :meth:`greedy_actions` does: the batched engine and the rules-core loop batch a tournament's
        games differently, and their games must be the same (``tests/test_engine_games.py``). Measured
        on 2,325 positions of heuristic games with ``ppo-2p``, the full pass chose the same action
        whether a position came alone, in batches of 7 or all at once; the legal-actions form changed
        its choice in 3 near-ties, its rounding depending on how many pairs the batch holds."""
        try:
            vecs = np.stack([np.asarray(o["observation"], dtype=np.float32) for o in observations])
            masks = np.stack([np.asarray(o["action_mask"]) for o in observations]).astype(bool)
        except (KeyError, TypeError) as exc:
            raise ValueError("observation must be a dict with 'observation' and 'action_mask'") from exc
        if not masks.any(axis=1).all():
            raise ValueError("the action mask is all zeros: this seat is not to move")
        logits = self.logits(vecs).reshape(len(vecs), -1)
        logits[~masks] = -np.inf
        return logits.argmax(axis=1)

    def logits(self, vec: np.ndarray) -> np.ndarray:
        """The policy's action logits (before masking) for one observation vector (``(obs,)`` ->
        ``(actions,)``) or a batch (``(B, obs)`` -> ``(B, actions)``)."""
        import torch  # the train extra, loaded with the policy already

        policy = self.policy
        with torch.no_grad(), one_torch_thread():
            x = torch.as_tensor(vec, dtype=torch.float32)
            features = policy.extract_features(x.reshape(-1, x.shape[-1]), policy.pi_features_extractor)
            out = policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy().astype(np.float64)
        return out[0] if x.ndim == 1 else out

    def greedy_actions(self, vec: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """For a batch of observation vectors ``(B, obs)`` and their legal-action masks ``(B,
        actions)``: the legal action with the largest logit in each row, as :meth:`act_batch` picks.

        With the action-scoring network (``policy: scorer``) only the legal actions are scored
        (:meth:`~skipbo_env.nets.ActionScorer.pair_logits`, a fraction of the full
        forward pass's cost; equal logits up to float rounding, so a near-tie may go the other way);
        other networks compute every logit. Every row needs a legal action.
        """
        import torch  # the train extra, loaded with the policy already

        from ..nets import ActionScorer  # torch (the train extra), loaded with the policy already

        legal = np.asarray(masks) != 0
        if not legal.any(axis=1).all():
            raise ValueError("a row of the action masks is all zeros: that seat is not to move")
        extractor = self.policy.mlp_extractor
        if not isinstance(extractor, ActionScorer):
            logits = self.logits(vec).reshape(legal.shape)
        else:
            rows, acts = np.nonzero(legal)
            with torch.no_grad(), one_torch_thread():
                x = self.policy.extract_features(torch.as_tensor(vec, dtype=torch.float32),
                                                 self.policy.pi_features_extractor)
                pairs = extractor.pair_logits(x, torch.as_tensor(rows), torch.as_tensor(acts)).numpy()
            logits = np.full(legal.shape, -np.inf)
            logits[rows, acts] = pairs
        logits[~legal] = -np.inf
        return logits.argmax(axis=1)

    def __repr__(self) -> str:
        return f"PPOAgent({str(self.path)!r})"
