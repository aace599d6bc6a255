"""The shell commands the user docs tell people to run, and a check that an installed package has them.

Imported by ``tests/test_docs_commands.py``; run as a script by ``.ci/check-wheel`` with the
wheel's Python, outside the repository: ``python doc_commands.py REPO`` asks every command of the
package that the user pages name (``skipbo SUB``, ``python -m skipbo_env....``) for ``--help`` and
checks that each option the docs pass to it is in that help. Standard library only.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DEVELOPER_PAGES = ("contributing.md", "architecture.md")
"""Pages for people working in a clone; ``docs/research/`` is measurement history."""
REPO_MARK = "# in a clone of the repository"
"""The first line of a code block whose commands need a clone (repository scripts, tests)."""
SHELLS = ("bash", "sh", "shell", "console")
OURS = ("skipbo", "skipbo-web", "skipbo-play")


@dataclass(frozen=True)
class Command:
    """One command of a code block: where it is, its words, and whether its block is marked as a clone's."""

    page: str
    line: int
    argv: tuple[str, ...]
    in_clone: bool

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}: {' '.join(self.argv)}"

    def program(self) -> tuple[str, ...]:
        """What it runs: ``("skipbo", SUB)``, ``("python -m", MODULE)``, ``("script", PATH)``,
        ``("pytest",)``, or ``("other", WORD)`` for a command that is not Python's or ours."""
        argv = list(self.argv)
        first = argv[0].rsplit("/", 1)[-1]
        if first in OURS:
            sub = argv[1] if len(argv) > 1 and not argv[1].startswith("-") else ""
            return ("skipbo", sub) if first == "skipbo" else (first,)
        if first == "pytest":
            return ("pytest",)
        if re.fullmatch(r"python(3(\.\d+)?)?", first):
            if len(argv) > 2 and argv[1] == "-m":
                return ("pytest",) if argv[2] == "pytest" else ("python -m", argv[2])
            if len(argv) > 1 and argv[1].endswith(".py"):
                return ("script", argv[1])
        return ("other", first)

    def options(self) -> list[str]:
        """The ``--long`` options it passes (``--a=b`` counts as ``--a``)."""
        return [w.split("=", 1)[0] for w in self.argv if w.startswith("--") and len(w) > 2]


def user_pages(repo: Path) -> list[Path]:
    """README.md and the docs pages for users (not the developer pages, not docs/research/)."""
    pages = sorted((repo / "docs").glob("*.md"))
    return [repo / "README.md", *[p for p in pages if p.name not in DEVELOPER_PAGES]]


def _blocks(text: str):
    """(first line number, lines) of each fenced shell block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opener = lines[i].strip()
        if opener.startswith("```") and opener[3:].strip() in SHELLS:
            start, body = i + 2, []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            yield start, body
        i += 1


def _commands(body: list[str], start: int):
    """(line number, words) of each command: continuations joined, ``$ `` prompts, comments,
    ``VAR=value`` prefixes and ``&&``/``;``/``|`` chains split off."""
    joined: list[tuple[int, str]] = []
    for offset, raw in enumerate(body):
        if joined and joined[-1][1].endswith("\\"):
            joined[-1] = (joined[-1][0], joined[-1][1][:-1] + " " + raw.strip())
        else:
            joined.append((start + offset, raw.strip().removeprefix("$ ")))
    for number, text in joined:
        try:
            words = shlex.split(text, comments=True)
        except ValueError:
            continue  # not a command (output shown in a shell block)
        part: list[str] = []
        for word in [*words, ";"]:
            if word in ("&&", "||", ";", "|"):
                while part and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", part[0]):
                    part.pop(0)
                if part:
                    yield number, tuple(part)
                part = []
            else:
                part.append(word)


def doc_commands(repo: Path) -> list[Command]:
    """Every command of every shell block of the user pages."""
    found = []
    for page in user_pages(repo):
        for start, body in _blocks(page.read_text()):
            in_clone = bool(body) and body[0].strip() == REPO_MARK
            for number, argv in _commands(body, start):
                found.append(Command(str(page.relative_to(repo)), number, argv, in_clone))
    return found


def package_programs(commands: list[Command]) -> dict[tuple[str, ...], set[str]]:
    """The package's own programs the user pages run outside clone blocks, with the options passed to each."""
    wanted: dict[tuple[str, ...], set[str]] = {}
    for command in commands:
        program = command.program()
        ours = program[0] in ("skipbo", *OURS) or (program[0] == "python -m" and program[1].startswith("skipbo_env"))
        if ours and not command.in_clone:
            wanted.setdefault(program, set()).update(command.options())
    return wanted


def help_argv(program: tuple[str, ...]) -> list[str]:
    """The command line that prints ``program``'s help."""
    if program[0] == "python -m":
        return [sys.executable, "-m", program[1], "--help"]
    bin_dir = Path(sys.executable).parent
    if program[0] == "skipbo":
        return [str(bin_dir / "skipbo"), *([program[1]] if program[1] else []), "--help"]
    return [str(bin_dir / program[0]), "--help"]


def check_installed(repo: Path) -> list[str]:
    """Problems with the installed package's programs that the user pages name: one that is missing,
    or an option the docs pass that its help does not list. A program that needs an extra which is
    not installed (one line naming it) is left unchecked."""
    problems = []
    for program, options in sorted(package_programs(doc_commands(repo)).items()):
        run = subprocess.run(help_argv(program), capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            if "extra" in run.stderr and len(run.stderr.strip().splitlines()) == 1:
                print(f"  {' '.join(program)}: needs an extra that is not installed here ({run.stderr.strip()})")
                continue
            problems.append(f"{' '.join(program)} --help failed: {run.stderr.strip()[-300:]}")
            continue
        missing = sorted(o for o in options if o not in run.stdout)
        if missing:
            problems.append(f"{' '.join(program)}: the docs pass {missing}, which its --help does not list")
        print(f"  {' '.join(program)}: --help lists the {len(options)} options the docs pass")
    return problems


if __name__ == "__main__":
    problems = check_installed(Path(sys.argv[1]))
    for problem in problems:
        print(f"doc_commands: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)
