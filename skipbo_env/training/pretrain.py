"""Behaviour-cloning warm start: imitate a teacher before PPO.

With ``pretrain.teacher`` set, ``train.py`` first plays ``pretrain.games`` games with the teacher
in the learner's seat (through :func:`skipbo_env.episode.decisions`), records its observations,
masks and actions, and fits the fresh policy to them: cross-entropy on the teacher's action and
a value loss on the return it got. Teachers are the agents that decide from the seat's view
(:data:`TEACHERS`). See docs/training.md ("Behaviour cloning and DAgger").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from ..agents import load_agent
from ..agents.executors import run_chunks
from ..agents.search import SearchAgent
from ..agents.turnnet import TurnNetAgent
from ..bots import ScriptedAgent
from ..encoding import observation_layout
from ..episode import decisions, shaping_reward, terminal_rewards
from ..rules import ConfigError, GameConfig, new_game

TEACHERS = (ScriptedAgent, SearchAgent, TurnNetAgent)
"""The agent types that may teach: they decide from the seat's view, so they label the positions of
the DAgger games with ``act_view(state.view(seat))``."""


def check_teacher(spec: str, agent: object) -> None:
    """ConfigError naming ``pretrain.teacher`` unless ``agent`` (loaded from ``spec``) is one of :data:`TEACHERS`."""
    if not isinstance(agent, TEACHERS):
        raise ConfigError("pretrain.teacher", f"{spec!r} ({type(agent).__name__}) cannot teach: a teacher decides from "
                                              "the seat's view (a scripted agent, the search agent or turn-2p)")


@dataclass
class Demonstrations:
    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    wins: int
    games: int
    agreed: int = 0
    """Student decisions equal to the teacher's label (DAgger games only)."""

    def __add__(self, other: Demonstrations) -> Demonstrations:
        return Demonstrations(
            np.concatenate([self.obs, other.obs]), np.concatenate([self.masks, other.masks]),
            np.concatenate([self.actions, other.actions]), np.concatenate([self.returns, other.returns]),
            self.wins + other.wins, self.games + other.games, self.agreed + other.agreed,
        )


@dataclass(frozen=True)
class _Deal:
    """Everything one demonstration game needs, drawn in the parent so that workers do not matter."""

    learner: int
    seats: tuple[str, ...]
    agent_seeds: tuple[int, ...]
    deal_seed: int


def _play(game: GameConfig, teacher: str, deals: list[_Deal], student: str | None, gamma: float,
          shaping: bool) -> tuple[list[np.ndarray], list[np.ndarray], list[int], list[float], int, int]:
    """Play ``deals``; at the learner's seat the student (if any, else the teacher) moves and the teacher labels."""
    if student is not None:
        torch.set_num_threads(1)  # one process per core
    obs_list: list[np.ndarray] = []
    mask_list: list[np.ndarray] = []
    act_list: list[int] = []
    ret_list: list[float] = []
    wins = agreed = 0
    student_agent = None if student is None else load_agent(student, game, allow_pickle=True)  # the run's own model
    for deal in deals:
        agents = [load_agent(spec, game, seed) for spec, seed in zip(deal.seats, deal.agent_seeds, strict=True)]
        teacher_agent = agents[deal.learner]
        check_teacher(teacher, teacher_agent)
        if student_agent is not None:
            agents[deal.learner] = student_agent  # DAgger: the student moves, the teacher labels
        state = new_game(game, seed=deal.deal_seed)
        rewards: list[float] = []
        for decision in decisions(state, agents):
            if decision.seat == deal.learner:
                # the state still shows the decision's position until the loop resumes
                label = decision.action if student_agent is None else teacher_agent.act_view(state.view(decision.seat))
                obs_list.append(decision.observation["observation"])
                mask_list.append(decision.observation["action_mask"])
                act_list.append(label)
                agreed += decision.action == label if student_agent is not None else 0
                rewards.append(shaping_reward(decision.move, shaping))
        if not rewards:
            continue
        rewards[-1] += terminal_rewards(game, state.winner)[deal.learner]
        wins += deal.learner in state.winners
        ret, out = 0.0, []
        for r in reversed(rewards):
            ret = r + gamma * ret
            out.append(ret)
        ret_list.extend(reversed(out))
    return obs_list, mask_list, act_list, ret_list, wins, agreed


def _play_chunk(args: tuple) -> tuple[list[np.ndarray], list[np.ndarray], list[int], list[float], int, int]:
    return _play(*args)


def collect(
    game: GameConfig,
    teacher: str,
    opponents: dict[str, float],
    games: int,
    seed: int,
    gamma: float,
    shaping: bool,
    progress: bool = True,
    student: str | None = None,
    workers: int = 1,
    ray: str | None = None,
) -> Demonstrations:
    """Play ``games`` games with the learner in a random seat and record the teacher's decision at each of its turns.

    Without ``student`` the teacher itself moves at the learner's seat
    (behaviour cloning); with ``student`` (a checkpoint path) the student's
    policy moves and the teacher only labels the positions the student
    reaches (DAgger). The deals, seats and agent seeds are drawn from
    ``seed`` before any game is played and the games are concatenated in
    order, so the result does not depend on ``workers`` (processes; with ``ray``, Ray tasks on the
    cluster at that address play the chunks of games instead).
    """
    rng = np.random.default_rng(seed)
    specs = list(opponents)
    probs = np.asarray([opponents[s] for s in specs], dtype=np.float64)
    probs /= probs.sum()
    n = game.num_players
    deals = []
    for _ in range(games):
        learner = int(rng.integers(n))
        seats = tuple(teacher if s == learner else specs[rng.choice(len(specs), p=probs)] for s in range(n))
        agent_seeds = tuple(int(rng.integers(2**63)) for _ in range(n))
        deals.append(_Deal(learner, seats, agent_seeds, int(rng.integers(2**63))))
    chunk = 10
    chunks = [deals[i:i + chunk] for i in range(0, games, chunk)]
    desc = "pretrain: teacher games" if student is None else "pretrain: DAgger games"
    bar = tqdm(total=games, desc=desc, unit="game", disable=not progress)
    done = {}
    args = [(game, teacher, c, student, gamma, shaping) for c in chunks]
    for i, part in run_chunks(_play_chunk, args, None, workers, ray):
        done[i] = part
        bar.update(len(chunks[i]))
    bar.close()
    parts = [done[i] for i in range(len(chunks))]
    obs = [o for part in parts for o in part[0]]
    width = observation_layout(game).size
    return Demonstrations(
        np.asarray(obs, dtype=np.float32).reshape(-1, width),
        np.asarray([m for part in parts for m in part[1]], dtype=bool).reshape(len(obs), -1),
        np.asarray([a for part in parts for a in part[2]], dtype=np.int64),
        np.asarray([r for part in parts for r in part[3]], dtype=np.float32),
        sum(part[4] for part in parts), games, sum(part[5] for part in parts),
    )


def fit(model: Any, demos: Demonstrations, epochs: int, batch_size: int, learning_rate: float, seed: int,
        progress: bool = True) -> dict[str, float]:
    """Fit ``model.policy`` to the demonstrations; returns held-out accuracy and losses."""
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
            "heldout_value_mse": value_mse}
