"""Gymnasium single-agent env ``SkipBo-v0``: one learner against configured opponents.

The env drives a :class:`skipbo_env.aec.raw_env`, so rules, observation, action table and rewards
come from the same place; the other seats are played inside ``reset`` and ``step``. The
observation is the learner's flat float32 vector; the mask is :meth:`SkipBoSingleEnv.action_masks`
(what ``MaskablePPO`` calls) and ``info["action_mask"]``. The reward is the learner's own, summed
since its last action. An illegal action raises (``"raise"``, default) or ends the episode with
-1 (``"lose"``, what env checkers need). See docs/environments.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .aec import AEC_DEFAULTS, RENDER_FPS, RENDER_MODES, check_seed, parse_config, raw_env
from .bots import AgentBase
from .deprecation import moved_names
from .draw import TableWindow, draw_table
from .encoding import num_actions
from .episode import (
    ILLEGAL_ACTION_REWARD,
    MAX_REDEALS,
    GameLoop,
    check_illegal_action,
    check_learner_seat,
    load_opponent,
    opponent_specs,
    redeal_error,
)
from .observations import observation_spec
from .render import render_table
from .rules import GameState, IllegalMoveError

SINGLE_DEFAULTS: dict[str, Any] = {
    **AEC_DEFAULTS,  # render_mode, reward_shaping, render_full, illegal_action ("raise")
    "opponents": "random",
    "learner_seat": None,
}
"""The env's own configuration keys with their defaults (game keys come on top)."""


class SkipBoSingleEnv(gymnasium.Env):
    """Skip-Bo for one learner; every other seat is played by an opponent.

    Keywords: every :class:`~skipbo_env.rules.GameConfig` field, the AEC
    env's ``render_mode``, ``render_full``, ``reward_shaping`` and ``observation`` (the
    observation's name, default ``"v1"``; an opponent's network file trained on another is
    refused by name), and

    * ``opponents``: one spec per other seat, listed from the learner's left
      (the seat after the learner first; in the partner game entry
      ``n/2 - 1`` is the learner's partner), or a single spec for all. A spec
      is an agent name or file that :func:`skipbo_env.agents.load_agent` knows
      (``"random"``, ``"greedy"``, ``"heuristic"``, ``"ppo-2p"``, ``"turn-2p"``,
      ``"search"``, ``"search:W:C"``, the path of an agent file; built by
      :func:`skipbo_env.episode.load_opponent` and reseeded from the env's generator
      on every reset) or any object with ``act(observation) -> int`` (used as
      given; it owns its randomness). An agent that reads views (``reads_view``)
      is asked with its seat's :class:`~skipbo_env.rules.SeatView`, any other with
      its seat's observation dict. Default ``"random"``.
    * ``learner_seat``: the learner's seat, or ``None`` (default) for a
      random seat each episode, drawn from the env's generator.
    * ``illegal_action``: ``"raise"`` or ``"lose"``, see the module docstring.

    Rendering (``render_mode`` ``"ansi"``: text; ``"rgb_array"``: an
    ``np.uint8`` frame ``(H, W, 3)`` for Gymnasium's ``RecordVideo``, drawn by
    :func:`skipbo_env.draw.draw_table` and needing ``pip install
    "skipbo-env[render]"``; ``"human"``: that frame in a window after every
    reset and step) shows the table as the learner sees it: its own hand face
    up, the other hands face down. ``render_full=True`` shows every hand.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}

    def __init__(self, **config: Any) -> None:
        game_config, options = parse_config(config, SINGLE_DEFAULTS)
        self.config = game_config
        self.render_mode: str | None = options["render_mode"]
        self.render_full: bool = options["render_full"]
        self.reward_shaping: bool = options["reward_shaping"]
        self._window: TableWindow | None = None
        self.illegal_action: str = check_illegal_action(options["illegal_action"])
        self.learner_seat_config: int | None = check_learner_seat(options["learner_seat"], game_config)
        self.observation: str = options["observation"]
        self.set_opponents(options["opponents"])
        self.aec = raw_env(**game_config.to_dict(), reward_shaping=self.reward_shaping, observation=self.observation)
        layout = observation_spec(self.observation).layout(game_config)
        self.observation_space = spaces.Box(layout.low, layout.high, dtype=np.float32)
        self.action_space = spaces.Discrete(num_actions(game_config))
        self.learner_seat: int | None = None
        self._opponent_at: dict[int, AgentBase] = {}
        self._mask: np.ndarray | None = None
        self._over = True
        self._redeals = 0
        self._failure: str | None = None
        """Set when an error left a game half-played: :meth:`step` refuses until the next reset."""

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None):
        """Deal (or load, see :func:`skipbo_env.aec.start_game`) and play opponents up to the learner's turn.

        Draws from the env's generator, in this order: the learner's seat
        (when not fixed), one seed per named opponent, the game. A game that
        ends before the learner's first move (tiny stocks or turn limits) is
        dealt again from the next draws, at most :data:`MAX_REDEALS` times;
        ``info["redeals"]`` counts them (the episode contract's redeal cap). With a ``deck`` or ``state`` option
        there is nothing to re-deal, and such a game raises ``ValueError``.
        """
        super().reset(seed=check_seed(seed))
        self._failure = None
        try:
            return self._deal(options)
        except BaseException as exc:
            self._stop(exc)
            raise

    def _deal(self, options: Mapping[str, Any] | None):
        rng = self.np_random
        n = self.config.num_players
        self._redeals = 0
        while True:
            seat = self.learner_seat_config
            self.learner_seat = int(rng.integers(n)) if seat is None else seat
            self._seed_opponents(rng)
            self.aec.reset(seed=int(rng.integers(2**63)), options=options)
            self._play_opponents()
            if not self._game.is_over:
                break
            if options is not None and ("deck" in options or "state" in options):
                raise ValueError("reset options: the given game ends before the learner's first move")
            self._redeals += 1
            if self._redeals > MAX_REDEALS:
                raise redeal_error()
        self._over = False
        obs = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, self._info()

    def step(self, action: int):
        """Play the learner's action, then every opponent turn until the learner moves again.

        Raises:
            IllegalMoveError: an illegal action with ``illegal_action="raise"``; nothing changes.
            ValueError: ``action`` is not an action id of this game.
            RuntimeError: called before ``reset`` or after the episode ended,
                or an opponent chose an illegal action. After any error other than the
                learner's own illegal or malformed action (which change nothing), the env
                refuses every step until :meth:`reset`.
        """
        if self._failure is not None:
            raise RuntimeError(f"the env stopped after an error ({self._failure}): call reset()")
        if self._over:
            raise RuntimeError("the episode is over (or never started): call reset()")
        learner = self.aec.possible_agents[self._learner]
        try:
            self.aec.step(action)
        except IllegalMoveError:
            if self.illegal_action == "raise":
                raise
            gymnasium.logger.warn(
                f"illegal action {action!r}: the episode ends and the learner loses (illegal_action='lose')"
            )
            self._over = True
            return self._observe(), ILLEGAL_ACTION_REWARD, True, False, self._info(illegal_action=True)
        try:  # the learner's move is applied: an error from here on leaves the game mid-turn
            reward = float(self.aec.rewards[learner])
            reward += self._play_opponents()
            terminated = bool(self.aec.terminations[learner])
            truncated = bool(self.aec.truncations[learner])
            self._over = terminated or truncated
            obs = self._observe()
            if self.render_mode == "human":
                self.render()
            return obs, reward, terminated, truncated, self._info()
        except BaseException as exc:
            self._stop(exc)
            raise

    def set_opponents(self, specs: Any) -> None:
        """Replace the opponents (same forms as the ``opponents`` keyword); applies from the next reset.

        Training uses it to draw new opponents each episode (see skipbo_env/training/envs.py).
        """
        specs = opponent_specs(specs, self.config)
        self.opponents: list[AgentBase] = [
            s if isinstance(s, AgentBase) else load_opponent(s, self.config, i, observation=self.observation)
            for i, s in enumerate(specs)
        ]
        self._opponent_names = [None if isinstance(s, AgentBase) else str(s) for s in specs]

    def _current_mask(self) -> np.ndarray:
        """The learner's int8 mask as of the last observation (all zeros once the episode is over)."""
        if self._mask is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._mask

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions (all False once the episode is over)."""
        return self._current_mask().astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The table as the learner sees it, or everything with ``render_full=True``:
        text (``"ansi"``), a frame (``"rgb_array"``) or ``None`` after showing the frame (``"human"``).

        Raises:
            ImportError: a picture is asked for and Pillow is not installed
                (``pip install "skipbo-env[render]"``).
        """
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.aec.game is None:
            raise RuntimeError("call reset() before render()")
        seat = None if self.render_full else self.learner_seat
        if self.render_mode == "ansi":
            return render_table(self.aec.game, seat)
        frame = draw_table(self.aec.game, seat)
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = TableWindow(title="Skip-Bo (SkipBo-v0)", fps=self.metadata["render_fps"])
        self._window.show(frame)
        return None

    def close(self) -> None:
        """Close the ``"human"`` window, if one is open."""
        if self._window is not None:
            self._window.close()
            self._window = None

    # -------------------------------------------------------------- helpers
    @property
    def _game(self) -> GameState:
        """The game in play (after the first reset)."""
        game = self.aec.game
        if game is None:
            raise RuntimeError("call reset() first")
        return game

    @property
    def _learner(self) -> int:
        """The learner's seat in the game in play (after the first reset)."""
        if self.learner_seat is None:
            raise RuntimeError("call reset() first")
        return self.learner_seat

    def _stop(self, exc: BaseException) -> None:
        """An error left the game mid-turn (an opponent raised, an illegal opponent action, ...):
        the episode cannot go on, and :meth:`step` says so until :meth:`reset`."""
        self._over = True
        self._failure = f"{type(exc).__name__}: {exc}"

    def _seed_opponents(self, rng: np.random.Generator) -> None:
        """Seat the opponents from the learner's left and reseed the named ones."""
        n = self.config.num_players
        self._opponent_at = {}
        for k, (agent, name) in enumerate(zip(self.opponents, self._opponent_names, strict=True)):
            self._opponent_at[(self._learner + 1 + k) % n] = agent
            if name is not None:
                agent.seed(int(rng.integers(2**63)))

    def _play_opponents(self) -> float:
        """Opponents' actions until the learner is to move or the game ends; the learner's reward meanwhile."""
        aec, game = self.aec, self._game
        learner = aec.possible_agents[self._learner]
        reward = 0.0
        loop = GameLoop(game, [self._opponent_at.get(seat) for seat in range(self.config.num_players)])
        while not game.is_over and aec.agent_selection != learner:
            agent = aec.agent_selection
            opponent = loop.agent()
            action = loop.ask()  # the seat's view or its observation, as the agent declares
            try:
                aec.step(action)
            except (IllegalMoveError, ValueError) as exc:
                raise RuntimeError(f"opponent {opponent!r} playing {agent} chose action {action!r}: {exc}") from exc
            reward += aec.rewards[learner]
        return reward

    def _observe(self) -> np.ndarray:
        """The learner's vector; keeps its mask (all zeros once the episode is over)."""
        obs = self.aec.observe(self.aec.possible_agents[self._learner])
        self._mask = np.zeros_like(obs["action_mask"]) if self._over else obs["action_mask"]
        return obs["observation"]

    def _info(self, illegal_action: bool = False) -> dict[str, Any]:
        """Public facts: learner seat, turn, the mask, re-deals; winners at the end."""
        game = self._game
        info: dict[str, Any] = {
            "learner": self.aec.possible_agents[self._learner],
            "turn": game.turn,
            "action_mask": self._current_mask().copy(),
            "redeals": self._redeals,
        }
        if game.is_over:
            info["winners"] = [self.aec.possible_agents[s] for s in game.winners]
        if illegal_action:
            info["illegal_action"] = True
        return info


__getattr__ = moved_names(__name__, {"ILLEGAL_ACTION_MODES": "skipbo_env.episode:ILLEGAL_ACTION_MODES"})
