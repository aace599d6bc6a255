"""The package's import layers (pyproject.toml ``[tool.importlinter]``, docs/architecture.md).

Each check runs in a fresh interpreter (``sys.executable``), since what an
import loads depends on what was imported before it:

* ``import skipbo_env.rules`` loads no training library (the rules core needs
  numpy only; .ci/check-rules-numpy-only proves it in a venv holding numpy
  alone). Where Gymnasium and PettingZoo are installed, ``import skipbo_env``
  registers its ids with them (tests/test_registration.py checks every import
  order), so those two are loaded;
* ``import skipbo_env`` loads none of the envs: the modules behind its lazy
  attributes load on first use;
* the import-linter contracts hold, and name every module of the package.
"""

from __future__ import annotations

import ast
import os
import pkgutil
import re
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


def test_rules_loads_no_training_library():
    registering = ("gymnasium", "pettingzoo")
    training = tuple(name for name in RL_LIBRARIES if name not in registering)
    assert loaded_after("import skipbo_env.rules", training) == []


def test_package_import_loads_no_env():
    names = ("skipbo_env.aec", "skipbo_env.single", "skipbo_env.vector")
    assert loaded_after("import skipbo_env", names) == []


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
            "import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(no_cache=True, no_logo=True))",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"lint-imports failed:\n{result.stdout}\n{result.stderr}"
    assert "0 broken" in result.stdout


# ------------------------------------------------------------------ the shape of the code
PACKAGE = REPO / "skipbo_env"
MAX_FUNCTION_LINES = 80


def _sources(root: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _is_compiled(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A numba kernel (``@njit``/``@jit``/``@nb.njit(...)``): its body must stay one function."""
    return any("jit" in ast.unparse(d) for d in node.decorator_list)


def test_functions_fit_on_a_screen():
    """No function of the package is longer than MAX_FUNCTION_LINES lines, numba kernels aside."""
    long = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not _is_compiled(node):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == [], "functions to split by concept:\n" + "\n".join(long)


def test_agents_are_asked_through_declared_capabilities():
    """Callers use the agent protocol's declared flags (bots/protocol.py), never probe an agent for methods."""
    probe = re.compile(r"\b(hasattr|getattr)\(\s*\w*agent\w*\s*,")
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in _sources()
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if probe.search(line)
    ]
    assert found == []


def _local_modules(path: Path) -> set[str]:
    """The modules of skipbo_env that ``path`` imports anywhere (module level or inside functions)."""
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts[:-1]) if rel.name == "__init__" else list(rel.parts)
    package = parts if rel.name == "__init__" else parts[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("skipbo_env"))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if module.startswith("skipbo_env"):
                found.add(module)
                found.update(f"{module}.{a.name}" for a in node.names)
    return found


def test_no_import_circle_between_modules():
    """No two modules of the package import each other, directly or around a circle (a package's
    ``__init__`` re-exporting its own modules is not an edge back)."""
    files = {".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): p for p in _sources()}
    edges = {name: {m for m in _local_modules(path) if m in files and m != name and not name.startswith(m + ".")
                    and not (path.name == "__init__.py" and m.startswith(name + "."))}
             for name, path in files.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for name in sorted(files):
        if name not in index:
            visit(name)
    assert circles == [], f"import circles: {circles}"


def test_product_code_and_user_docs_carry_no_history():
    """Code, tests and user docs say what the code does now; the measurement log is docs/research/."""
    pattern = re.compile(r"\b(issue|[Rr]ound) " + r"[0-9]+")
    places = [*_sources(), *_sources(REPO / "tests"), *_sources(REPO / "agents"),
              REPO / "README.md", REPO / "CHANGELOG.md",
              *(p for p in (REPO / "docs").rglob("*.md") if "research" not in p.relative_to(REPO / "docs").parts),
              *(PACKAGE / "models").glob("*.md")]
    found = [f"{p.relative_to(REPO)}:{n}" for p in places
             for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == [], "history outside docs/research/: " + ", ".join(found)


def test_module_names_are_unique_across_the_package():
    """A module's name says its role: no two modules of the package share a file name."""
    names: dict[str, list[str]] = {}
    for path in _sources():
        if path.name not in ("__init__.py", "__main__.py"):
            names.setdefault(path.stem, []).append(str(path.relative_to(REPO)))
    assert {k: v for k, v in names.items() if len(v) > 1} == {}


MAX_MODULE_DOCSTRING_LINES = 10


def _docstring_problem(path: Path) -> str | None:
    doc = ast.get_docstring(ast.parse(path.read_text(), str(path)), clean=True)
    if not doc:
        return "no module docstring"
    lines = doc.splitlines()
    if len(lines) > 1 and lines[1].strip() and not lines[0].rstrip().endswith("."):
        return "the first line is not a one-line summary (end it, or leave a blank line after it)"
    if len(lines) > MAX_MODULE_DOCSTRING_LINES:
        return f"{len(lines)} lines (at most {MAX_MODULE_DOCSTRING_LINES}; the rest belongs in docs/)"
    return None


def test_module_docstrings_are_short_summaries():
    """Every module says what it is in a one-line summary, then at most a few lines; essays go to docs/."""
    modules = [*_sources(), *_sources(REPO / "agents"),
               *(REPO / name for name in ("train.py", "evaluate.py", "train_rllib.py"))]
    problems = []
    for path in modules:
        name = str(path.relative_to(REPO))
        problem = _docstring_problem(path)
        if problem:
            problems.append(f"{name}: {problem}")
    assert problems == [], "module docstrings to shorten:\n" + "\n".join(problems)
