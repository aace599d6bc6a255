"""Behaviour-cloning warm start: imitate a scripted teacher before PPO.

With ``pretrain.teacher`` set, ``train.py`` first plays ``pretrain.games``
games in which the teacher holds the learner's seat against opponents drawn
from ``pretrain.opponents``, records the teacher's observation, mask and
action at each of its decisions, and fits the fresh MaskablePPO policy to
them: cross-entropy of the masked policy on the teacher's action, plus a
mean-squared error of the value head on the discounted return the teacher
actually got (the env's own rewards: ±1 at the end, the shaping reward per
stock card when ``reward_shaping`` is on). PPO then trains from that policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..aec import STOCK_CARD_REWARD
from ..encoding import decode_action, observe
from ..rules import GameConfig, Play, Source, new_game


@dataclass
class Demonstrations:
    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    wins: int
    games: int


def collect(
    game: GameConfig,
    teacher: str,
    opponents: dict[str, float],
    games: int,
    seed: int,
    gamma: float,
    shaping: bool,
    progress: bool = True,
) -> Demonstrations:
    """Play ``games`` games with ``teacher`` in a random seat and record its decisions."""
    from tqdm import tqdm

    from agents import make_agent

    rng = np.random.default_rng(seed)
    specs = list(opponents)
    probs = np.asarray([opponents[s] for s in specs], dtype=np.float64)
    probs /= probs.sum()
    obs_list, mask_list, act_list, ret_list = [], [], [], []
    wins = 0
    n = game.num_players
    for _ in tqdm(range(games), desc="pretrain: teacher games", unit="game", disable=not progress):
        learner = int(rng.integers(n))
        agents = [make_agent(teacher if s == learner else specs[rng.choice(len(specs), p=probs)], game,
                             seed=int(rng.integers(2**63))) for s in range(n)]
        state = new_game(game, seed=int(rng.integers(2**63)))
        rewards: list[float] = []
        while not state.is_over:
            seat = state.current
            o = observe(state, seat)
            action = agents[seat].act(o)
            move = decode_action(action, game)
            state.apply(move)
            if seat == learner:
                obs_list.append(o["observation"])
                mask_list.append(o["action_mask"])
                act_list.append(action)
                stock = isinstance(move, Play) and move.source in (Source.STOCK, Source.PARTNER_STOCK)
                rewards.append(STOCK_CARD_REWARD if (shaping and stock) else 0.0)
        if not rewards:
            continue
        if state.winner is not None:
            won = learner in state.winners
            wins += won
            rewards[-1] += 1.0 if won else -1.0
        ret, out = 0.0, []
        for r in reversed(rewards):
            ret = r + gamma * ret
            out.append(ret)
        ret_list.extend(reversed(out))
    return Demonstrations(
        np.asarray(obs_list, dtype=np.float32), np.asarray(mask_list, dtype=bool),
        np.asarray(act_list, dtype=np.int64), np.asarray(ret_list, dtype=np.float32), wins, games,
    )


def fit(model: Any, demos: Demonstrations, epochs: int, batch_size: int, learning_rate: float, seed: int,
        progress: bool = True) -> dict[str, float]:
    """Fit ``model.policy`` to the demonstrations; returns held-out accuracy and losses."""
    import torch
    from tqdm import tqdm

    policy = model.policy
    n = len(demos.actions)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    held = order[: max(1, n // 20)]
    train = order[len(held):]
    obs = torch.as_tensor(demos.obs)
    masks = torch.as_tensor(demos.masks)
    acts = torch.as_tensor(demos.actions)
    rets = torch.as_tensor(demos.returns)
    opt = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    torch.manual_seed(seed)
    policy.set_training_mode(True)
    steps = epochs * ((len(train) + batch_size - 1) // batch_size)
    bar = tqdm(total=steps, desc="pretrain: behaviour cloning", unit="batch", disable=not progress)
    for _ in range(epochs):
        perm = train[rng.permutation(len(train))]
        for start in range(0, len(perm), batch_size):
            idx = torch.as_tensor(perm[start:start + batch_size])
            values, log_prob, _ = policy.evaluate_actions(obs[idx], acts[idx], action_masks=masks[idx].numpy())
            loss = -log_prob.mean() + 0.5 * torch.nn.functional.mse_loss(values.flatten(), rets[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    bar.close()
    policy.set_training_mode(False)
    with torch.no_grad():
        idx = torch.as_tensor(held)
        dist = policy.get_distribution(obs[idx], action_masks=masks[idx].numpy())
        pred = dist.distribution.probs.argmax(dim=1)
        accuracy = float((pred == acts[idx]).float().mean())
        values, log_prob, _ = policy.evaluate_actions(obs[idx], acts[idx], action_masks=masks[idx].numpy())
        value_mse = float(torch.nn.functional.mse_loss(values.flatten(), rets[idx]))
    return {"samples": n, "heldout_accuracy": accuracy, "heldout_nll": float(-log_prob.mean()),
            "heldout_value_mse": value_mse, "teacher_win_rate": demos.wins / max(1, demos.games)}
