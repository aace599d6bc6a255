"""PPO with its rollouts on a second core (``pipeline: true``).

A worker process owns the training games and a copy of the policy: it collects the next rollout
with the weights the learner sent while the learner runs the PPO updates on the last one, so
every rollout but the first is played by the policy one update older. The run stays
deterministic (fixed exchange order, seeded worker). See docs/training.md ("Rollouts on a
second core").
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.callbacks import BaseCallback

from ..agents.agentfile import NoOptimizer
from ..agents.executors import end_quickly
from .envs import make_vec_env
from .opponents import BatchedOpponents
from .settings import TrainConfig

__all__ = ["RolloutWorker", "WorkerError", "learn_pipelined"]


class WorkerError(RuntimeError):
    """The rollout worker failed; the message holds its traceback."""


@dataclass
class Rollout:
    """One rollout as the worker played it: per step and game, what sb3's buffer stores."""

    observations: np.ndarray  # (n_steps, n_envs, obs_dim) float32
    actions: np.ndarray  # (n_steps, n_envs) int64
    rewards: np.ndarray  # (n_steps, n_envs) float32, truncated games' last reward bootstrapped
    episode_starts: np.ndarray  # (n_steps, n_envs) bool
    values: np.ndarray  # (n_steps, n_envs) float32
    log_probs: np.ndarray  # (n_steps, n_envs) float32
    action_masks: np.ndarray  # (n_steps, n_envs, n_actions) bool
    last_values: np.ndarray  # (n_envs,) float32: the value of the observation after the last step
    last_dones: np.ndarray  # (n_envs,) bool
    episodes: list[dict[str, Any]]  # VecMonitor's "episode" entries of the games that ended


def _no_schedule(_progress: float) -> float:
    """The worker's policy copy never steps its optimizer."""
    return 0.0


def _policy_recipe(model: MaskablePPO) -> tuple[type, dict[str, Any]]:
    """The class and constructor arguments that rebuild ``model``'s policy in another process, to play."""
    kwargs = dict(model.policy._get_constructor_parameters())
    kwargs["lr_schedule"] = _no_schedule  # sb3 puts a bound method here: it would pickle the whole policy
    kwargs["optimizer_class"] = NoOptimizer  # the copy never steps
    return type(model.policy), kwargs


class RolloutWorker:
    """A process that plays the run's batched training games with a copy of the policy.

    Made before the model (it starts at once: imports, games, opponents), then :meth:`start` sends
    it the policy to build. :meth:`request` sends the policy's weights and the opponent draw weights
    and returns at once; :meth:`receive` waits for that rollout. One request at a time.
    """

    def __init__(self, cfg: TrainConfig, seed: int) -> None:
        ctx = get_context("spawn")  # the learner holds torch threads; a fork could inherit their locks
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(
            target=_worker_main, args=(child, cfg.to_dict(), seed),
            name="skipbo-rollout-worker", daemon=True)
        self._process.start()  # it imports and builds its games while the learner builds its model
        child.close()
        self._pending = False
        self._started = False

    def start(self, model: MaskablePPO) -> None:
        """Send the worker how to build its copy of ``model``'s policy (once, before any request)."""
        assert not self._started, "the worker builds its policy once"
        policy_class, policy_kwargs = _policy_recipe(model)
        self._conn.send(("policy", policy_class, policy_kwargs))
        self._started = True

    def request(self, policy: torch.nn.Module, weights: dict[str, float]) -> None:
        """Start the next rollout with ``policy``'s current weights (copied now) and these opponent weights."""
        assert self._started and not self._pending, "one rollout at a time, after start()"
        # A copy: torch sends tensors through a multiprocessing pipe as shared memory, so the worker
        # would otherwise read the live parameters while the learner's updates change them.
        state = {k: v.detach().clone() for k, v in policy.state_dict().items()}
        self._conn.send(("collect", state, dict(weights)))
        self._pending = True

    def receive(self) -> Rollout:
        """The requested rollout (waits for it). Raises :class:`WorkerError` if the worker failed or died."""
        assert self._pending, "no rollout requested"
        self._pending = False
        try:
            kind, payload = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise WorkerError(
                f"the rollout worker ended without its rollout (exit code {self._process.exitcode})"
            ) from exc
        if kind == "error":
            raise WorkerError(f"the rollout worker failed:\n{payload}")
        return payload

    def close(self) -> None:
        """Stop the worker (a rollout in flight is dropped). Closing twice does nothing."""
        if self._conn.closed:
            return
        try:
            self._conn.send(("stop", None, None))
        except (OSError, ValueError):
            pass
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._conn.close()


def _send(conn: Any, message: tuple[str, Any]) -> bool:
    """Send ``message`` to the learner; False when the learner is gone (the worker then ends)."""
    try:
        conn.send(message)
    except (OSError, ValueError):  # a closed pipe: the learner ended or was killed
        return False
    return True


def _worker_main(conn: Any, cfg_dict: dict[str, Any], seed: int) -> None:
    """The rollout worker's process: serve rollouts until told to stop or the learner is gone, then
    end at once (:func:`~skipbo_env.agents.executors.end_quickly`)."""
    _serve(conn, cfg_dict, seed)
    end_quickly(0)


def _serve(conn: Any, cfg_dict: dict[str, Any], seed: int) -> None:
    try:
        torch.set_num_threads(1)
        torch.manual_seed(seed)  # the actions the worker samples
        cfg = TrainConfig.from_dict(cfg_dict)
        venv = make_vec_env(cfg, {}, seed)
        opponents = BatchedOpponents(cfg, seed)
        try:
            kind, policy_class, policy_kwargs = conn.recv()
        except (EOFError, OSError):  # the learner ended before it built its model
            return
        if kind != "policy":
            return
        policy = policy_class(**policy_kwargs)
        policy.set_training_mode(False)
        obs = np.asarray(venv.reset())  # a Box observation space: one array
        starts = np.ones(venv.num_envs, dtype=bool)
    except BaseException:  # noqa: BLE001 - reported to the learner, which raises it
        _send(conn, ("error", traceback.format_exc()))
        return
    while True:
        try:
            kind, state, weights = conn.recv()
        except (EOFError, OSError):  # the learner ended or was killed
            return
        if kind != "collect":
            return
        try:
            policy.load_state_dict(state)
            opponents.draws.set_weights(weights)
            opponents.draw(venv)
            rollout, obs, starts = _collect(venv, policy, obs, starts, cfg.ppo.n_steps, cfg.ppo.gamma)
        except BaseException:  # noqa: BLE001
            _send(conn, ("error", traceback.format_exc()))
            return
        if not _send(conn, ("rollout", rollout)):
            return


def _collect(venv: Any, policy: Any, obs: np.ndarray, starts: np.ndarray, n_steps: int,
             gamma: float) -> tuple[Rollout, np.ndarray, np.ndarray]:
    """sb3-contrib's ``MaskablePPO.collect_rollouts`` without the buffer and callbacks."""
    n = venv.num_envs
    observations = np.empty((n_steps, n, *obs.shape[1:]), np.float32)
    actions = np.empty((n_steps, n), np.int64)
    rewards = np.empty((n_steps, n), np.float32)
    episode_starts = np.empty((n_steps, n), bool)
    values = np.empty((n_steps, n), np.float32)
    log_probs = np.empty((n_steps, n), np.float32)
    masks_out = np.empty((n_steps, n, int(venv.action_space.n)), bool)
    episodes: list[dict[str, Any]] = []
    dones = starts
    for step in range(n_steps):
        masks = get_action_masks(venv)
        with torch.no_grad():
            act, value, log_prob = policy(torch.as_tensor(obs), action_masks=masks)
        act_np = act.numpy()
        new_obs, reward, dones, infos = venv.step(act_np)
        reward = reward.astype(np.float32, copy=True)
        for i, done in enumerate(dones):
            info = infos[i]
            if done and info.get("terminal_observation") is not None and info.get("TimeLimit.truncated", False):
                terminal = torch.as_tensor(info["terminal_observation"]).reshape(1, -1)
                with torch.no_grad():
                    reward[i] += gamma * float(policy.predict_values(terminal)[0, 0])
            if "episode" in info:
                episodes.append(info["episode"])
        observations[step], actions[step], rewards[step] = obs, act_np, reward
        episode_starts[step], masks_out[step] = starts, masks
        values[step], log_probs[step] = value.numpy().reshape(-1), log_prob.numpy().reshape(-1)
        obs, starts = new_obs, dones
    with torch.no_grad():
        last = policy.predict_values(torch.as_tensor(obs)).numpy().reshape(-1).astype(np.float32)
    rollout = Rollout(observations, actions, rewards, episode_starts, values, log_probs, masks_out,
                      last, np.asarray(dones, bool), episodes)
    return rollout, obs, np.asarray(dones, bool)


def _fill_buffer(model: MaskablePPO, rollout: Rollout) -> None:
    """Put ``rollout`` in the model's buffer and compute its returns and advantages."""
    buffer = model.rollout_buffer
    buffer.reset()
    for t in range(rollout.actions.shape[0]):
        buffer.add(rollout.observations[t], rollout.actions[t].reshape(-1, 1), rollout.rewards[t],
                   rollout.episode_starts[t], torch.as_tensor(rollout.values[t]).reshape(-1, 1),
                   torch.as_tensor(rollout.log_probs[t]), action_masks=rollout.action_masks[t])
    buffer.compute_returns_and_advantage(last_values=torch.as_tensor(rollout.last_values).reshape(-1, 1),
                                         dones=rollout.last_dones)


def learn_pipelined(model: MaskablePPO, cfg: TrainConfig, seed: int, remaining: int, callback: BaseCallback,
                    weights: Callable[[], dict[str, float]], worker: RolloutWorker | None = None) -> None:
    """Train ``model`` for ``remaining`` more steps with a :class:`RolloutWorker` (see the module docstring).

    ``weights()`` gives the opponent draw weights in force (read at every request); ``callback`` sees
    one ``on_step`` per rollout, after the step count has grown by the rollout's size. ``worker``: one
    made earlier with ``RolloutWorker(cfg, seed)`` (its start-up then overlaps the caller's), not yet
    started; else one is made here. Either way it is closed on return.
    """
    if worker is None:
        worker = RolloutWorker(cfg, seed)
    try:
        total, callback = model._setup_learn(remaining, callback, reset_num_timesteps=False,
                                             tb_log_name="MaskablePPO")
        callback.on_training_start(locals(), globals())
        per_rollout = cfg.ppo.n_steps * cfg.n_envs
        rollouts = -(-(total - model.num_timesteps) // per_rollout)  # as many as the plain loop collects
        worker.start(model)
        requested, iteration = 1, 0
        worker.request(model.policy, weights())
        while iteration < rollouts:
            rollout = worker.receive()
            if requested < rollouts:  # the next rollout, played while this one trains the policy
                worker.request(model.policy, weights())
                requested += 1
            _fill_buffer(model, rollout)
            model.num_timesteps += per_rollout
            assert model.ep_info_buffer is not None  # made by _setup_learn
            model.ep_info_buffer.extend(rollout.episodes)
            iteration += 1
            if not callback.on_step():
                break
            model._update_current_progress_remaining(model.num_timesteps, total)
            model.dump_logs(iteration)
            model.train()
    finally:
        worker.close()
    callback.on_training_end()
