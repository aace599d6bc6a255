"""``ScorerPolicy``: the action-scoring network (:mod:`skipbo_env.nets`) as a MaskablePPO policy.

A thin adapter: sb3 builds the network's body (:class:`~skipbo_env.nets.ActionScorer`, as its
``mlp_extractor``) and its own value head (``value_net``), so a checkpoint's and an agent file's
tensors are named ``mlp_extractor.*`` and ``value_net.*``; with action masks the forward pass scores
the legal actions only and computes sb3-contrib's masked distribution itself (the same numbers, to the
bit, ``tests/test_policy.py``). ``docs/training.md`` describes the network; ``ppo.policy: scorer``
selects it in a training config. An agent file of kind ``scorer`` is rebuilt from this class
(:mod:`.agentfile`); :mod:`skipbo_env.training.policy` keeps the class's name for the pickled
checkpoints that name it there. Needs the ``train`` extra (torch, sb3-contrib).
"""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from .. import nets
from ..deprecation import moved_names


class Extractor(nets.ActionScorer):
    """:class:`~skipbo_env.nets.ActionScorer` as sb3's ``mlp_extractor``: sb3 reads the sizes of the
    two latents (one logit per action; the value head's input)."""

    @property
    def latent_dim_pi(self) -> int:
        return self.n_actions

    @property
    def latent_dim_vf(self) -> int:
        last = self.value[-2]
        assert isinstance(last, nn.Linear)  # the value MLP ends in Linear, activation
        return last.out_features


class ScorerPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy whose logits come from :class:`~skipbo_env.nets.ActionScorer` (no final dense
    action layer); its value head is sb3's ``value_net``."""

    # sb3 declares MlpExtractor; any module with latent_dim_pi/vf and forward_actor/critic serves
    mlp_extractor: Extractor  # type: ignore[assignment]

    def __init__(self, observation_space, action_space, lr_schedule, context_arch=(256,), scorer_arch=(64, 32),
                 value_arch=(256, 256), activation_fn: type[nn.Module] = nn.ReLU,
                 features_version: int = nets.FEATURES_VERSION, **kwargs):
        if features_version != nets.FEATURES_VERSION:
            raise ValueError(f"this checkpoint's scorer policy was trained on features version {features_version}; "
                             f"this code computes version {nets.FEATURES_VERSION}")
        self.context_arch = tuple(context_arch)
        self.scorer_arch = tuple(scorer_arch)
        self.value_arch = tuple(value_arch)
        super().__init__(observation_space, action_space, lr_schedule, activation_fn=activation_fn, **kwargs)

    def _build_mlp_extractor(self) -> None:
        obs_space, action_space = self.observation_space, self.action_space
        if not isinstance(obs_space, spaces.Box) or not isinstance(action_space, spaces.Discrete):
            raise TypeError(f"the scorer policy reads a Box observation and a Discrete action space, "
                            f"not {obs_space} and {action_space}")
        self.mlp_extractor = Extractor(
            int(np.prod(obs_space.shape)), int(action_space.n), self.context_arch,
            self.scorer_arch, self.value_arch, self.activation_fn,
        )

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the scorer's output already is one logit per action
        self.mlp_extractor.init_output_layer()
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]  # a concrete optimizer (Adam): it takes lr
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _masked_logits(self, obs: torch.Tensor, action_masks) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """(logits [B, actions] with only the legal actions scored
        (:meth:`~skipbo_env.nets.ActionScorer.masked_forward`), the mask as a bool tensor, the value
        input), or None without masks or where the features are not shared (then the caller takes the
        base class's path)."""
        if action_masks is None:
            return None
        features = self.extract_features(obs)
        if isinstance(features, tuple):
            return None
        mask = torch.as_tensor(action_masks, dtype=torch.bool, device=features.device).reshape(features.shape[0], -1)
        logits, context_in = self.mlp_extractor.masked_forward(features, mask)
        return logits, mask, context_in

    def forward(self, obs, deterministic: bool = False, action_masks=None):
        """Actions, values and log-probabilities; with masks, only the legal actions are scored.

        With masks, the action is drawn as sb3-contrib's masked distribution draws it, with the same
        tensor operations in the same order (so the same numbers and the same draws from torch's
        generator), without building its distribution objects (each checks its arguments: about a
        sixth of a rollout step's cost); ``tests/test_policy.py`` compares the two."""
        scored = self._scored(obs, action_masks)
        if scored is None:
            return super().forward(obs, deterministic, action_masks)
        log_p, _, context_in = scored
        probs = torch.softmax(log_p, dim=-1)
        if deterministic:
            actions = torch.argmax(probs, dim=1)
        else:
            actions = torch.multinomial(probs, 1, True).T.reshape(-1)
        log_prob = log_p.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        return actions, self.value_net(self.mlp_extractor.value(context_in)), log_prob

    def evaluate_actions(self, obs, actions, action_masks=None):
        """Values, log-probabilities and entropies (PPO's update); with masks, only the legal actions
        are scored, and the log-probabilities and entropies are sb3-contrib's masked distribution's,
        computed with its tensor operations in its order (the same numbers and gradients, to the
        bit, ``tests/test_policy.py``) without building the distribution objects."""
        scored = self._scored(obs, action_masks)
        if scored is None:
            return super().evaluate_actions(obs, actions, action_masks)
        log_p, mask, context_in = scored
        values = self.value_net(self.mlp_extractor.value(context_in))
        log_prob = log_p.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)
        p_log_p = torch.where(mask, log_p * torch.softmax(log_p, dim=-1), torch.tensor(0.0, device=log_p.device))
        return values, log_prob, -p_log_p.sum(-1)

    def _scored(self, obs: torch.Tensor, action_masks) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """(log-probabilities [B, actions], mask, value input) from :meth:`_masked_logits`, or None.
        The log-probabilities are those of sb3-contrib's ``MaskableCategorical``:
        its constructor normalises the logits, ``apply_masking`` puts -1e8 on the illegal actions
        of the normalised logits, and ``Categorical`` normalises again."""
        scored = self._masked_logits(obs, action_masks)
        if scored is None:
            return None
        logits, mask, context_in = scored
        first = logits - logits.logsumexp(dim=-1, keepdim=True)
        masked = torch.where(mask, first, torch.tensor(-1e8, dtype=first.dtype, device=first.device))
        return masked - masked.logsumexp(dim=-1, keepdim=True), mask, context_in

    def get_distribution(self, obs, action_masks=None):
        """The action distribution; with masks, only the legal actions are scored."""
        scored = self._masked_logits(obs, action_masks)
        if scored is None:
            return super().get_distribution(obs, action_masks)
        logits, mask, _ = scored
        distribution = self._get_action_dist_from_latent(logits)
        distribution.apply_masking(mask)
        return distribution

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data.update(context_arch=self.context_arch, scorer_arch=self.scorer_arch, value_arch=self.value_arch,
                    features_version=nets.FEATURES_VERSION)
        return data


__getattr__ = moved_names(__name__, {name: f"skipbo_env.nets:{name}" for name in (
    "ACTION_PIECES", "FEATURES_VERSION", "ActionScorer", "game_of_spaces", "scorer_tensor_shapes")})
