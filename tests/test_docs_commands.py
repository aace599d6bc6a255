"""The user docs name only commands an installed package has, with options those commands take.

The user pages are README.md and docs/*.md but the developer pages (``tests/doc_commands.py``).
``.ci/check-wheel`` runs the same check against a wheel installed outside the repository.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from doc_commands import REPO_MARK, Command, doc_commands, package_programs, user_pages

from skipbo_env import cli

REPO = Path(__file__).resolve().parents[1]
COMMANDS = doc_commands(REPO)


def test_the_user_pages_have_commands_to_check():
    programs = {c.program() for c in COMMANDS}
    assert len(COMMANDS) > 50
    assert {("skipbo", "train"), ("skipbo", "evaluate"), ("skipbo", "train-rllib")} <= programs


def test_repository_scripts_and_tests_run_only_in_blocks_marked_for_a_clone():
    """A pip user cannot run ``python train.py`` or ``pytest tests/...``: such a block starts with the mark."""
    unmarked = [c.where for c in COMMANDS if c.program()[0] in ("script", "pytest") and not c.in_clone]
    assert not unmarked, f"mark these blocks with {REPO_MARK!r} or use skipbo/python -m forms:\n" + "\n".join(unmarked)


def test_scripts_the_docs_name_exist_in_the_repository():
    missing = [c.where for c in COMMANDS if c.program()[0] == "script" and not (REPO / c.program()[1]).is_file()]
    assert not missing, missing


def test_no_user_page_tells_a_pip_user_to_run_a_repository_script_inline():
    """Outside marked blocks too: ``python train.py`` and friends are ``skipbo ...`` for a pip user."""
    pattern = re.compile(r"(?<![\w/.])python (train|evaluate|train_rllib)\.py|examples/")
    found = []
    for page in user_pages(REPO):
        in_clone = False
        for number, line in enumerate(page.read_text().splitlines(), 1):
            in_clone = (in_clone or line.strip() == REPO_MARK) and not line.strip().startswith("```")
            if pattern.search(line) and not in_clone:
                found.append(f"{page.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not found, "\n".join(found)


def test_skipbo_subcommands_the_docs_run_exist():
    unknown = [c.where for c in COMMANDS if c.program()[0] == "skipbo" and c.program()[1] not in ("", *cli.COMMANDS)]
    assert not unknown, unknown


def test_python_m_modules_the_docs_run_are_in_the_package():
    import importlib.util

    modules = {c.program()[1] for c in COMMANDS if c.program()[0] == "python -m" and not c.in_clone}
    outside = sorted(m for m in modules if not m.startswith("skipbo_env") and m not in ("venv", "pip"))
    assert not outside, outside
    assert all(importlib.util.find_spec(m) is not None for m in modules if m.startswith("skipbo_env"))


def _help(program: tuple[str, ...]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        if program[0] == "skipbo":
            cli.COMMANDS[program[1]].run(["--help"])
        else:
            import runpy
            import sys

            old = sys.argv
            sys.argv = [program[1], "--help"]
            try:
                runpy.run_module(program[1], run_name="__main__")
            finally:
                sys.argv = old
    return out.getvalue()


@pytest.mark.parametrize("program", sorted(p for p in package_programs(COMMANDS) if p[0] in ("skipbo", "python -m")
                                          and p != ("skipbo", "")), ids=" ".join)
def test_every_option_the_docs_pass_is_in_the_commands_help(program):
    if program == ("skipbo", "train-rllib"):
        pytest.importorskip("ray.rllib")
    if program[1].startswith("skipbo_env.recipes.") and program[1].split(".")[-1] in ("tianshou_ppo", "torchrl_ppo"):
        pytest.importorskip(program[1].split(".")[-1].split("_")[0])
    if program[1] == "skipbo_env.recipes.openspiel_ismcts":
        pytest.importorskip("pyspiel")
    text = _help(program)
    options = package_programs(COMMANDS)[program]
    missing = sorted(o for o in options if o not in text)
    assert not missing, f"{' '.join(program)}: the docs pass {missing}; its --help does not list them"


def test_the_parser_reads_a_block_as_a_user_would_type_it():
    lines = ["OMP_NUM_THREADS=1 skipbo train --config quick \\", "    --total_timesteps 64  # a comment",
             "$ skipbo evaluate --agents a b && python -m skipbo_env.recipes.cleanrl_ppo --help | head"]
    from doc_commands import _commands

    parsed = [Command("p.md", n, argv, False) for n, argv in _commands(lines, 1)]
    assert [c.argv for c in parsed] == [("skipbo", "train", "--config", "quick", "--total_timesteps", "64"),
                                        ("skipbo", "evaluate", "--agents", "a", "b"),
                                        ("python", "-m", "skipbo_env.recipes.cleanrl_ppo", "--help"), ("head",)]
    assert [c.program() for c in parsed] == [("skipbo", "train"), ("skipbo", "evaluate"),
                                             ("python -m", "skipbo_env.recipes.cleanrl_ppo"), ("other", "head")]
    assert parsed[0].options() == ["--config", "--total_timesteps"]
