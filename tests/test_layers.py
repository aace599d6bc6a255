"""The package's import layers (pyproject.toml ``[tool.importlinter]``, docs/architecture.md).

Each check runs in a fresh interpreter (``sys.executable``), since what an
import loads depends on what was imported before it:

* ``import skipbo_env.rules`` loads no RL library (the rules core needs numpy
  only; .ci/check-rules-numpy-only proves it in a venv holding numpy alone);
* ``import skipbo_env`` loads neither Gymnasium nor PettingZoo, and the envs
  behind its lazy attributes load on first use;
* the ids ``SkipBo-v0`` and ``skipbo_v0`` resolve whichever of the package and
  the library is imported first;
* the import-linter contracts hold, and name every module of the package.
"""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import skipbo_env

REPO = Path(__file__).resolve().parent.parent

RL_LIBRARIES = (
    "gymnasium",
    "pettingzoo",
    "torch",
    "numba",
    "stable_baselines3",
    "sb3_contrib",
    "ray",
    "yaml",
    "matplotlib",
    "tqdm",
    "rich",
)


def run_python(code: str, timeout: float = 120) -> str:
    """Run ``code`` in a fresh interpreter from the repository root; fail with its output if it fails."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=path)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    return result.stdout


def loaded_after(statement: str, names: tuple[str, ...]) -> list[str]:
    """The ``names`` that are in ``sys.modules`` after running ``statement`` in a fresh interpreter."""
    out = run_python(
        f"""
        import sys
        {statement}
        print(",".join(sorted(n for n in {names!r} if n in sys.modules)))
        """
    )
    return [name for name in out.strip().split(",") if name]


def test_rules_loads_no_rl_library():
    assert loaded_after("import skipbo_env.rules", RL_LIBRARIES) == []


def test_package_import_loads_no_env_library_nor_env():
    names = ("gymnasium", "pettingzoo", "skipbo_env.aec", "skipbo_env.single", "skipbo_env.vector")
    assert loaded_after("import skipbo_env", names) == []


@pytest.mark.parametrize(
    "imports",
    ["import skipbo_env; import gymnasium", "import gymnasium; import skipbo_env", "import gymnasium"],
    ids=["package-first", "gymnasium-first", "module-prefixed-id"],
)
def test_gymnasium_make_in_either_import_order(imports):
    env_id = "skipbo_env:SkipBo-v0" if imports == "import gymnasium" else "SkipBo-v0"
    out = run_python(
        f"""
        {imports}
        import numpy as np
        env = gymnasium.make({env_id!r})
        obs, info = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        action = int(np.flatnonzero(info["action_mask"])[0])
        env.step(action)
        print(type(env.unwrapped).__module__)
        """
    )
    assert out.strip() == "skipbo_env.single"


@pytest.mark.parametrize(
    "imports",
    ["import skipbo_env.rules; import pettingzoo", "import pettingzoo; import skipbo_env"],
    ids=["package-first", "pettingzoo-first"],
)
def test_pettingzoo_make_in_either_import_order(imports):
    pettingzoo = pytest.importorskip("pettingzoo")
    if not hasattr(pettingzoo, "make"):
        pytest.skip("this PettingZoo has no registry (pettingzoo.make)")
    out = run_python(
        f"""
        {imports}
        env = pettingzoo.make("aec", "skipbo_v0")
        env.reset(seed=0)
        obs, reward, termination, truncation, info = env.last()
        env.step(env.action_space(env.agent_selection).sample(obs["action_mask"]))
        print(type(env.unwrapped).__module__)
        """
    )
    assert out.strip() == "skipbo_env.aec"


def test_lazy_attributes_resolve_on_first_use():
    out = run_python(
        """
        import sys
        import skipbo_env
        assert "skipbo_env.aec" not in sys.modules and "skipbo_env.single" not in sys.modules
        env, raw_env = skipbo_env.env, skipbo_env.raw_env
        aec = sys.modules["skipbo_env.aec"]
        assert env is aec.env and raw_env is aec.raw_env
        assert "skipbo_env.single" not in sys.modules
        from skipbo_env import skipbo_v0
        assert skipbo_v0 is aec
        from skipbo_env import SkipBoSingleEnv
        assert SkipBoSingleEnv is sys.modules["skipbo_env.single"].SkipBoSingleEnv
        assert skipbo_env.SkipBoSingleEnv is SkipBoSingleEnv
        try:
            skipbo_env.no_such_name
        except AttributeError:
            pass
        else:
            raise AssertionError("skipbo_env.no_such_name resolved")
        e = skipbo_env.env()
        e.reset(seed=0)
        print(type(e.unwrapped).__name__, e.agent_selection)
        """
    )
    assert out.split()[0] == "raw_env"


def _importlinter_config() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["importlinter"]


def test_layers_contract_names_every_module_of_the_package():
    """A new module of skipbo_env must be placed in a layer, or the layers contract would not check it."""
    config = _importlinter_config()
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    in_layers = {name.strip().strip("()") for layer in layers for name in layer.replace("|", ":").split(":")}
    modules = {f"skipbo_env.{m.name}" for m in pkgutil.iter_modules(skipbo_env.__path__)}
    assert modules - in_layers == set(), "modules of skipbo_env in no layer of the import-linter contract"
    assert in_layers - modules - {"agents"} == set(), "layers naming modules that do not exist"


def test_import_contracts_hold():
    pytest.importorskip("importlinter")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"lint-imports failed:\n{result.stdout}\n{result.stderr}"
    assert "0 broken" in result.stdout
