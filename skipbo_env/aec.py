"""PettingZoo AEC environment ``skipbo_v0`` (docs/environments.md).

A thin env over one :class:`~skipbo_env.rules.GameState`: legality from the rules, observations
and action ids from :mod:`skipbo_env.encoding`, rewards from the episode contract
(:mod:`skipbo_env.episode`), PettingZoo's bookkeeping in :meth:`raw_env.step`,
:meth:`raw_env.reset` and :meth:`raw_env._finish` only. Agents are ``player_0`` ..
``player_{n-1}``; a turn is several actions by the same agent. :class:`raw_env` raises on an
illegal action (``illegal_action="raise"``); :func:`env` ends the game with -1 for the
offender (``"lose"``), as PettingZoo's classic envs do.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from .deprecation import moved_names
from .draw import TableWindow, draw_table
from .encoding import action_mask, decode_action, num_actions
from .episode import (
    ILLEGAL_ACTION_REWARD,
    check_flag,
    check_illegal_action,
    shaping_reward,
    terminal_rewards,
)
from .observations import DEFAULT_OBSERVATION, observation_spec
from .render import render_table
from .rules import ConfigError, GameConfig, GameState, SeatView, new_game
from .state_vector import encode_state, state_layout

GAME_KEYS = tuple(f.name for f in dataclasses.fields(GameConfig))
"""Configuration keys that go to :class:`~skipbo_env.rules.GameConfig`."""

ENV_DEFAULTS: dict[str, Any] = {
    "render_mode": None, "reward_shaping": False, "render_full": False, "observation": DEFAULT_OBSERVATION,
}
"""Configuration keys of every env of the package, with their defaults."""
AEC_DEFAULTS: dict[str, Any] = {**ENV_DEFAULTS, "illegal_action": "raise"}
"""Configuration keys of the AEC env, with their defaults."""

RENDER_MODES = ("ansi", "human", "rgb_array")
"""``"ansi"``: text; ``"rgb_array"``: a frame (:mod:`skipbo_env.draw`); ``"human"``: the frame in a window."""
RENDER_FPS = 2
"""Frames per second of ``"human"`` windows and of videos made from ``"rgb_array"`` frames."""
RESET_OPTIONS = ("deck", "state")
"""Keys of ``reset(options=...)`` that the env acts on."""


# ------------------------------------------------------------------ config
def parse_config(config: Mapping[str, Any], env_defaults: Mapping[str, Any]) -> tuple[GameConfig, dict]:
    """Split keyword configuration into a :class:`GameConfig` and the env's own keys.

    ``env_defaults`` lists the env's keys with their defaults. An unknown key
    raises :class:`~skipbo_env.rules.ConfigError` naming it and the allowed
    keys; a bad game value raises the config's own error. The env's common
    keys (``render_mode``, ``reward_shaping``, ``render_full``, ``observation``) are checked here.
    """
    allowed = (*GAME_KEYS, *env_defaults)
    for key in config:
        if key not in allowed:
            hint = " (the game length is set by turn_limit)" if key == "max_cycles" else ""
            raise ConfigError(str(key), f"unknown key{hint}; allowed keys: {', '.join(allowed)}")
    game = GameConfig.from_dict({k: v for k, v in config.items() if k in GAME_KEYS})
    options = {k: config.get(k, default) for k, default in env_defaults.items()}
    mode = options.get("render_mode")
    if mode is not None and mode not in RENDER_MODES:
        raise ConfigError("render_mode", f"must be None or one of {RENDER_MODES}, got {mode!r}")
    for key in ("reward_shaping", "render_full"):
        if key in options:
            check_flag(key, options[key])
    if "observation" in options:
        observation_spec(options["observation"])  # an unknown name: ConfigError naming the known ones
    return game, options


def check_seed(seed: Any) -> int | None:
    """``seed`` as a non-negative ``int`` (numpy integers accepted), or ``None``."""
    if isinstance(seed, np.integer):
        seed = int(seed)
    if seed is not None and (type(seed) is not int or seed < 0):
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    return seed


def start_game(config: GameConfig, rng: np.random.Generator, options: Mapping[str, Any] | None) -> GameState:
    """The game a reset starts, from ``reset(options=...)``.

    ``{"deck": [...]}`` deals from that card order (last element on top),
    ``{"state": dict}`` loads a serialized state (its config must equal the
    env's and the game must not be over); without either the deck is
    shuffled. The game's own generator is seeded from ``rng`` in every case,
    so a seeded env replays the same sequence of games. Other keys are
    ignored with a warning (PettingZoo's ``api_test`` passes an arbitrary
    key to check that ``options`` is accepted).
    """
    deck = state = None
    if options is not None:
        if not isinstance(options, Mapping):
            raise TypeError(f"reset options must be a dict or None, got {type(options).__name__}")
        unknown = [repr(k) for k in options if k not in RESET_OPTIONS]
        if unknown:
            warnings.warn(
                f"reset options: ignoring unknown key(s) {', '.join(unknown)}; "
                f"the env acts on {', '.join(RESET_OPTIONS)}",
                UserWarning,
                stacklevel=3,
            )
        deck, state = options.get("deck"), options.get("state")
        if deck is not None and state is not None:
            raise ValueError("reset options: give 'deck' or 'state', not both")
    game_seed = int(rng.integers(2**63))
    if state is None:
        return new_game(config, seed=game_seed, deck=deck)
    game = GameState.from_dict(state)
    if game.config != config:
        ours, theirs = config.to_dict(), game.config.to_dict()
        diff = ", ".join(f"{k}={theirs[k]!r} (env: {ours[k]!r})" for k in ours if ours[k] != theirs[k])
        raise ValueError(f"reset options: the state's config differs from the env's: {diff}")
    if game.is_over:
        raise ValueError("reset options: the state's game is already over; an episode must start in play")
    return game


# --------------------------------------------------------------------- env
class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with direct reads of the attributes every step uses.

    The base wrapper reaches the env's attributes through its generic ``__getattr__``, about
    ten lookups per ``last()``/``step()``; these properties read them directly. Before
    ``reset`` the env has none of them, the property's ``AttributeError`` falls back to the
    base ``__getattr__``, and that raises PettingZoo's own "cannot be accessed before reset".
    """

    agent_selection = property(lambda self: self.env.agent_selection)
    agents = property(lambda self: self.env.agents)
    rewards = property(lambda self: self.env.rewards)
    terminations = property(lambda self: self.env.terminations)
    truncations = property(lambda self: self.env.truncations)
    infos = property(lambda self: self.env.infos)
    _cumulative_rewards = property(lambda self: self.env._cumulative_rewards)


def env(**config: Any) -> AECEnv:
    """The AEC env as PettingZoo's classic envs are: an illegal action ends the game, calls before
    ``reset`` fail.

    ``raw_env(illegal_action="lose", ...)`` in :class:`OrderEnforcing` (PettingZoo's
    ``OrderEnforcingWrapper``). ``illegal_action="lose"`` applies the rule of PettingZoo's
    ``TerminateIllegalWrapper(illegal_reward=-1)`` inside the env: the game ends, -1 to the
    offender and 0 to the others, every agent terminated and truncated, PettingZoo's warning.
    An action outside the action space raises ``ValueError`` (``AssertOutOfBoundsWrapper``
    failed an assertion). PettingZoo's three-wrapper stack cost more time per step than the
    env itself; tests/test_aec_fast.py plays the same actions, illegal ones included, through
    that stack and through this env and checks every ``last()`` agrees. Keywords: see
    :class:`raw_env`.
    """
    return OrderEnforcing(raw_env(**{"illegal_action": "lose", **config}))


class raw_env(AECEnv):
    """Skip-Bo as a PettingZoo AEC env, unwrapped.

    Keywords: every :class:`~skipbo_env.rules.GameConfig` field
    (``num_players``, ``stock_size``, ``short_game``, ``partner_game``,
    ``allow_wild_discard``, ``must_play_stock``, ``first_player``,
    ``turn_limit``, ``move_limit``) plus

    * ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the table
      as text), ``"rgb_array"`` (``render()`` returns a picture of the table,
      an ``np.uint8`` array ``(H, W, 3)`` drawn by
      :func:`skipbo_env.draw.draw_table`; needs ``pip install
      "skipbo-env[render]"``) or ``"human"`` (that picture in a window, see
      :class:`skipbo_env.draw.TableWindow`; every reset and step renders);
    * ``render_full``: ``False`` renders what the acting agent sees (its
      hand face up, every other hand face down), ``True`` renders every
      hand (for debugging, replays and videos);
    * ``reward_shaping``: see the module docstring;
    * ``illegal_action``: ``"raise"`` (default) or ``"lose"``, see the module docstring;
    * ``observation``: the name of the observation vector (:mod:`skipbo_env.observations`,
      default ``"v1"``); an unknown name raises :class:`~skipbo_env.rules.ConfigError`.

    Attributes:
        config: the game's :class:`GameConfig`.
        observation: the observation's name.
        state_space: the ``Box`` of :meth:`state` vectors (docs/state-vector.md).
        game: the current :class:`GameState` (``None`` before the first
            reset). Read it, never change it: moves go through :meth:`step`.
    """

    metadata = {
        "name": "skipbo_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": RENDER_FPS,
    }

    def __init__(self, **config: Any) -> None:
        super().__init__()
        self.config, options = parse_config(config, AEC_DEFAULTS)
        self.illegal_action: str = check_illegal_action(options["illegal_action"])
        self.render_mode: str | None = options["render_mode"]
        self.render_full: bool = options["render_full"]
        self.reward_shaping: bool = options["reward_shaping"]
        spec = observation_spec(options["observation"])
        self.observation: str = spec.name
        self._encode = spec.encode
        self._window: TableWindow | None = None
        n = self.config.num_players
        self.possible_agents = [f"player_{seat}" for seat in range(n)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        layout = spec.layout(self.config)
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(layout.low, layout.high, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (num_actions(self.config),), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(num_actions(self.config)) for agent in self.possible_agents}
        table = state_layout(self.config)
        self.state_space = spaces.Box(table.low, table.high, dtype=np.float32)
        self.game: GameState | None = None
        self._np_random: np.random.Generator | None = None
        self._no_moves = np.zeros(num_actions(self.config), dtype=np.int8)
        self._mask: np.ndarray | None = None
        self._mask_moves = -1

    # ------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ------------------------------------------------------------- API
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        """Start a game; see :func:`start_game` for ``options``.

        ``seed`` reseeds the env's generator; ``seed=None`` continues it (on
        the very first reset it is seeded from fresh entropy). Every game is
        dealt from the next draw of that generator, so ``reset(seed=s)`` then
        the same actions always give the same episode.
        """
        seed = check_seed(seed)
        if seed is not None or self._np_random is None:
            self._np_random = np.random.default_rng(seed)
        self.game = start_game(self.config, self._np_random, options)
        self._mask = None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = self._make_infos()
        self.agent_selection = self.possible_agents[self.game.current]
        self._skip_agent_selection = None
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 vector}`` of ``agent``'s seat.

        Equal to :func:`skipbo_env.encoding.observe` of the game: the vector of the seat's
        view (observation :attr:`observation`), and a mask that is all zeros unless the
        agent is to move (made once per decision from the rules' legal moves); both arrays are new.
        """
        seat = self._seat.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        game = self._require_game()
        if seat == game.current and not game.is_over:
            if self._mask is None or self._mask_moves != game.moves:
                self._mask = action_mask(game.legal_moves(), self.config)
                self._mask_moves = game.moves
            mask = self._mask.copy()
        else:
            mask = self._no_moves.copy()
        return {"observation": self._encode(game.view(seat)), "action_mask": mask}

    def state(self) -> np.ndarray:
        """The whole table as a float32 vector, for centralised critics (docs/state-vector.md).

        :func:`skipbo_env.state_vector.encode_state` of the game: every hand, stock and
        discard pile in absolute seats, hidden cards included, so never hand it to a seat's
        policy. It lies in :attr:`state_space`; the array is new.

        Raises:
            RuntimeError: called before ``reset``.
        """
        return encode_state(self._require_game())

    def seat_view(self, agent: str) -> SeatView:
        """What ``agent``'s seat sees of the game now: the rules' :class:`~skipbo_env.rules.SeatView`.

        The documented way to hand an agent that reads views (``reads_view``, such as
        ``turn-2p`` or ``search``) its decision input from a PettingZoo loop::

            action = agent.act_view(env.unwrapped.seat_view(name))

        It is :meth:`GameState.view <skipbo_env.rules.GameState.view>` of the agent's seat:
        the seat's own hand, every stock's top and size, every discard pile in full, the
        building piles, the completed pile's cards, the other hands' sizes; never a hidden
        card. :meth:`observe` encodes the same view as a vector. The view is a new frozen
        value; later steps do not change it.

        Raises:
            ValueError: ``agent`` is not one of ``possible_agents``.
            RuntimeError: called before ``reset``.
        """
        seat = self._seat.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        return self._require_game().view(seat)

    def step(self, action: int | None) -> None:
        """Apply ``agent_selection``'s action id; a dead agent must pass ``None``.

        Raises:
            IllegalMoveError: the move is not legal now; nothing changes.
            ValueError: ``action`` is not an action id of this game, or a
                dead agent's action is not ``None``.
            RuntimeError: called before ``reset`` or after every agent left.
        """
        game = self._require_game()
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        move = decode_action(action, self.config)
        if self.illegal_action == "lose" and not game.is_legal(move):
            self._lose_by_illegal_action(agent)
            return
        turn_before = game.turn
        game.apply(move)  # raises before anything changes when the move is illegal
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.rewards[agent] += shaping_reward(move, self.reward_shaping)
        if game.is_over:
            self._finish(self._seat[agent])
        else:
            self.agent_selection = self.possible_agents[game.current]
            if game.turn != turn_before:
                self.infos = self._make_infos()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        """The table as ``agent_selection`` sees it, or everything with ``render_full=True``:
        text (``"ansi"``), a frame (``"rgb_array"``) or ``None`` after showing the frame (``"human"``).

        Raises:
            ImportError: a picture is asked for and Pillow is not installed
                (``pip install "skipbo-env[render]"``).
        """
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        game = self._require_game()
        seat = None if self.render_full else self._seat[self.agent_selection]
        if self.render_mode == "ansi":
            return render_table(game, seat)
        frame = draw_table(game, seat)
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = TableWindow(title=f"Skip-Bo ({self.metadata['name']})", fps=RENDER_FPS)
        self._window.show(frame)
        return None

    def close(self) -> None:
        """Close the ``"human"`` window, if one is open."""
        if self._window is not None:
            self._window.close()
            self._window = None

    # ------------------------------------------------------------- helpers
    def _require_game(self) -> GameState:
        if self.game is None:
            raise RuntimeError("call reset() before using the env")
        return self.game

    def _make_infos(self) -> dict[str, dict]:
        """Public facts only: the turn counter, and at the end the winning agents."""
        game = self.game
        assert game is not None
        if not game.is_over:
            return {agent: {"turn": game.turn} for agent in self.agents}
        winners = [self.possible_agents[s] for s in game.winners]
        return {agent: {"turn": game.turn, "winners": list(winners)} for agent in self.agents}

    def _lose_by_illegal_action(self, agent: str) -> None:
        """``illegal_action="lose"``: PettingZoo's ``TerminateIllegalWrapper`` rule; the game is not changed."""
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = float(ILLEGAL_ACTION_REWARD)
        self._accumulate_rewards()
        self._deads_step_first()

    def _finish(self, mover: int) -> None:
        """The game just ended: terminal rewards, terminations or truncations, infos."""
        game = self.game
        assert game is not None
        if game.winner is not None:
            for agent, reward in zip(self.possible_agents, terminal_rewards(self.config, game.winner), strict=True):
                self.rewards[agent] += reward
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.truncations = dict.fromkeys(self.agents, True)
        self.infos = self._make_infos()
        self.agent_selection = self.possible_agents[(mover + 1) % self.config.num_players]


__getattr__ = moved_names(__name__, {"STOCK_CARD_REWARD": "skipbo_env.episode:STOCK_CARD_REWARD"})
