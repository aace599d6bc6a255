"""Registration of ``SkipBo-v0`` and ``skipbo_v0`` (skipbo_env/registration.py, docs/environments.md).

What an import registers depends on what was imported before it, so each supported import order
runs in a fresh interpreter (``sys.executable``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import gymnasium
import pettingzoo
import pytest

import skipbo_env
from skipbo_env.registration import GYMNASIUM_ID, PETTINGZOO_REGISTRY_KEY, register_installed

REPO = Path(__file__).resolve().parent.parent


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter from the repository root; fail with its output if it fails."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=path)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=env, capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    return result.stdout


GYMNASIUM_ORDERS = {
    "package-first": ("import skipbo_env\nimport gymnasium", "SkipBo-v0"),
    "gymnasium-first": ("import gymnasium\nimport skipbo_env", "SkipBo-v0"),
    "rules-first": ("import skipbo_env.rules\nimport gymnasium", "SkipBo-v0"),
    "register-envs": ("import gymnasium\nimport skipbo_env\ngymnasium.register_envs(skipbo_env)", "SkipBo-v0"),
    "module-id-only": ("import gymnasium", "skipbo_env:SkipBo-v0"),
    "module-id-after-package": ("import skipbo_env\nimport gymnasium", "skipbo_env:SkipBo-v0"),
}


@pytest.mark.parametrize("name", list(GYMNASIUM_ORDERS))
def test_gymnasium_make_in_every_supported_order(name):
    imports, env_id = GYMNASIUM_ORDERS[name]
    out = run_python(
        f"""
        {textwrap.indent(imports, " " * 8).strip()}
        import numpy as np
        env = gymnasium.make({env_id!r}, num_players=3, opponents="greedy")
        obs, info = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
        envs = gymnasium.make_vec({env_id!r}, num_envs=2, vectorization_mode="vector_entry_point")
        envs.reset(seed=0)
        print(env.spec.id, type(env.unwrapped).__module__, env.unwrapped.illegal_action, type(envs).__name__)
        """
    )
    assert out.split() == ["SkipBo-v0", "skipbo_env.single", "lose", "SkipBoVectorEnv"]


PETTINGZOO_ORDERS = {
    "package-first": "import skipbo_env\nimport pettingzoo",
    "pettingzoo-first": "import pettingzoo\nimport skipbo_env",
    "rules-first": "import skipbo_env.rules\nimport pettingzoo",
}


@pytest.mark.parametrize("name", list(PETTINGZOO_ORDERS))
def test_pettingzoo_make_in_every_supported_order(name):
    out = run_python(
        f"""
        {textwrap.indent(PETTINGZOO_ORDERS[name], " " * 8).strip()}
        env = pettingzoo.make("aec", "skipbo_v0", num_players=3)
        env.reset(seed=0)
        obs, reward, termination, truncation, info = env.last()
        env.step(env.action_space(env.agent_selection).sample(obs["action_mask"]))
        print(type(env.unwrapped).__module__, env.unwrapped.illegal_action)
        """
    )
    assert out.split() == ["skipbo_env.aec", "lose"]


def test_pettingzoo_without_the_package_does_not_know_the_id():
    """PettingZoo's registry has no module-prefixed ids: ``import skipbo_env`` (or a submodule) must come first."""
    out = run_python(
        """
        import pettingzoo
        from pettingzoo.env_registry.exceptions import NameNotFound
        try:
            pettingzoo.make("aec", "skipbo_v0")
        except NameNotFound:
            print("NameNotFound")
        """
    )
    assert out.strip() == "NameNotFound"


def test_import_installs_no_hook_and_loads_no_env_module():
    out = run_python(
        """
        import sys
        finders = list(sys.meta_path)
        import skipbo_env
        assert sys.meta_path == finders, sys.meta_path
        loaded = [m for m in ("gymnasium", "pettingzoo", "skipbo_env.aec", "skipbo_env.single", "skipbo_env.vector")
                  if m in sys.modules]
        print(*loaded)
        """
    )
    assert out.split() == ["gymnasium", "pettingzoo"]


def test_without_the_libraries_the_package_imports_and_registers_nothing():
    """``sys.modules[name] = None`` makes a library unimportable, as if it were not installed."""
    out = run_python(
        """
        import sys
        sys.modules["gymnasium"] = sys.modules["pettingzoo"] = None
        import skipbo_env
        from skipbo_env.registration import register_installed
        from skipbo_env.rules import GameConfig, new_game
        state = new_game(GameConfig(num_players=2, stock_size=3), seed=0)
        while not state.is_over:
            state.apply(state.legal_moves()[0])
        print(register_installed() == (), state.is_over)
        """
    )
    assert out.split() == ["True", "True"]


def test_registering_again_changes_nothing():
    gym_spec = gymnasium.spec(GYMNASIUM_ID)
    pz_spec = pettingzoo.aec_registry[PETTINGZOO_REGISTRY_KEY]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo warns when an id is registered over
        assert register_installed() == ("gymnasium", "pettingzoo")
    assert gymnasium.spec(GYMNASIUM_ID) is gym_spec
    assert pettingzoo.aec_registry[PETTINGZOO_REGISTRY_KEY] is pz_spec
    assert gym_spec.kwargs == {"illegal_action": "lose"}
    assert gym_spec.entry_point == "skipbo_env.single:SkipBoSingleEnv"
    assert pz_spec.entry_point == "skipbo_env.aec:env"
    assert skipbo_env.GYMNASIUM_ID == "SkipBo-v0" and skipbo_env.PETTINGZOO_ID == "skipbo_v0"
