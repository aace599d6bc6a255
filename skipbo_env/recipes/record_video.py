"""Record a video of an agent's Skip-Bo game from ``render_mode="rgb_array"`` frames.

By default ``SkipBo-v0`` with Gymnasium's ``RecordVideo`` (an mp4, with moviepy) or
``RenderCollection`` and Pillow (a gif); ``--pettingzoo`` records a ``skipbo_v0`` AEC game with
every seat played by ``--agent``; ``--full`` shows every hand. Needs the ``render`` extra; runs
headless::

    python -m skipbo_env.recipes.record_video --out videos --agent heuristic --opponents greedy

See docs/environments.md ("Rendering").
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def make_agent(name: str, config, seed: int):
    """A scripted agent by name (``random``, ``greedy``, ``heuristic``), else any agent
    :func:`skipbo_env.agents.load_agent` knows (a shipped or exported model; needs the ``train`` extra)."""
    from skipbo_env.bots import BOTS, make_bot

    if name in BOTS:
        return make_bot(name, config, seed)
    from skipbo_env.agents import load_agent

    return load_agent(name, config, seed)


def save_gif(frames: Sequence[np.ndarray], path: Path, fps: float) -> Path:
    """Frames as an animated GIF (Pillow), ``fps`` frames a second, the last one held a little."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    images = [Image.fromarray(frame) for frame in frames]
    durations = [round(1000 / fps)] * len(images)
    durations[-1] = 3000
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0, optimize=False)
    return path


def record_gymnasium(args: argparse.Namespace, game: dict) -> Path:
    import gymnasium

    import skipbo_env  # noqa: F401 - registers SkipBo-v0

    env = gymnasium.make(
        "SkipBo-v0", render_mode="rgb_array", render_full=args.full, opponents=args.opponents, **game
    )
    fmt = args.format
    if fmt == "auto":
        fmt = "mp4" if importlib.util.find_spec("moviepy") else "gif"
    if fmt == "mp4":
        env = gymnasium.wrappers.RecordVideo(
            env, str(args.out), name_prefix="skipbo", episode_trigger=lambda episode: episode == 0
        )
    else:
        env = gymnasium.wrappers.RenderCollection(env)
    agent = make_agent(args.agent, env.get_wrapper_attr("config"), args.seed)
    obs, info = env.reset(seed=args.seed)
    done = False
    while not done:
        action = agent.act({"observation": obs, "action_mask": info["action_mask"]})
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    print(f"learner {info['learner']}: reward {reward}, winners {info.get('winners', [])}, turn {info['turn']}")
    if fmt == "mp4":
        env.close()  # RecordVideo writes the file on close
        return args.out / "skipbo-episode-0.mp4"
    frames: Any = env.render()  # RenderCollection: every frame since the reset
    env.close()
    return save_gif(frames, args.out / "skipbo-episode-0.gif", env.metadata["render_fps"])


def record_pettingzoo(args: argparse.Namespace, game: dict) -> Path:
    import skipbo_env

    env = skipbo_env.env(render_mode="rgb_array", render_full=args.full, **game)
    env.reset(seed=args.seed)
    config = env.unwrapped.config
    agents = {a: make_agent(args.agent, config, args.seed + k) for k, a in enumerate(env.possible_agents)}
    frames = [env.render()]
    for name in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)  # the game is over: each agent steps out
            continue
        env.step(agents[name].act(obs))
        frames.append(env.render())
    env.close()
    print(f"{len(frames)} frames")
    return save_gif(frames, args.out / "skipbo-aec.gif", env.metadata["render_fps"])


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("videos"), help="folder for the video")
    parser.add_argument("--agent", default="greedy", help="the recorded agent (a bot name or a load_agent spec)")
    parser.add_argument("--opponents", default="greedy", help="SkipBo-v0's opponents (a bot name)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--stock-size", type=int, default=None, help="cards per stock (default: the rules')")
    parser.add_argument("--turn-limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--full", action="store_true", help="show every hand, not just the agent's view")
    parser.add_argument("--pettingzoo", action="store_true", help="record an AEC game instead of SkipBo-v0")
    parser.add_argument(
        "--format", choices=("auto", "mp4", "gif"), default="auto",
        help="SkipBo-v0 only: mp4 (RecordVideo, needs moviepy) or gif; auto: mp4 when moviepy is installed",
    )
    args = parser.parse_args(argv)
    game = {"num_players": args.players}
    if args.stock_size is not None:
        game["stock_size"] = args.stock_size
    if args.turn_limit is not None:
        game["turn_limit"] = args.turn_limit
    path = record_pettingzoo(args, game) if args.pettingzoo else record_gymnasium(args, game)
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
