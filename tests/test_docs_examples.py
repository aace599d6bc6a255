"""README truth: every ```python and ```bash block of README.md and the user pages of docs/ runs as written.

Each block is run on its own, exactly as it stands in the file, in a fresh
subprocess whose working directory is the repository root, with the
interpreter that runs the tests: `python` and the project's console scripts
on PATH are this interpreter's, as in an activated virtual environment (one
thread per process), so the blocks say `python ...`, never a path to one
virtual environment. A block that fails makes its test fail with the file and
line of its opening fence, its exit status and the end of its output.

The research log (`docs/research/`) records commands as they were run at the
time; its blocks are not run (nor counted).

A block that cannot run in CI as written (it needs the `rllib` extra, a long
training run, a cluster, a person at the keyboard) is excluded only by an
explicit marker on the line right before its fence (blank lines between are
allowed)::

    <!-- not run: needs the rllib extra -->

Excluded blocks are reported as skipped with their reason (`pytest -rs`), and
`test_excluded_blocks_are_few_and_explained` lists them all. Blocks in other
languages (``json``, plain text, terminal transcripts) are not run.

What a block says it prints is checked: a comment ``# prints: TEXT`` (in a ```python or
```bash block, at the end of a line or on a line of its own) claims that the block's standard
output has a line ``TEXT``; ``...`` in ``TEXT`` stands for any text. A block's claims are found in
its output in the order they are written. In a ```python block, a comment at the end of a
``print(...)`` line must be such a claim: a reader takes any other comment there for the output.
A block with claims must print the same on every run: it runs with a guard that stops any draw
from a generator seeded from fresh entropy (an unseeded numpy generator or Gymnasium space).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN_LANGS = ("python", "bash")
MARKER = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.*?)\s*-->\s*$")
OPEN = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)\s*$")
TIMEOUT_S = 300
# Blocks that change an environment (install packages, create or set up a venv, start a
# cluster) must carry a marker: the test refuses to run them rather than touch the venv it runs in.
ENV_CHANGING = re.compile(r"pip\s+install|-m\s+venv|\.ci/setup|\.ci/run|ray\s+start|uv\s+pip")
OUTPUT_TAIL = 4000
CLAIM = re.compile(r"#\s*prints:\s?(?P<text>.*?)\s*$")
PRINT_COMMENT = re.compile(r"\bprint\(.*\)\s*#(?P<comment>.*)$")


@dataclass(frozen=True)
class Block:
    name: str  # the file, relative to the repository root
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    excluded: str | None  # the marker's reason, None when the block runs

    @property
    def where(self) -> str:
        return f"{self.name}:{self.line}"

    @property
    def claims(self) -> list[str]:
        """The lines of output the block claims (``# prints: TEXT``), in order."""
        return [m["text"] for line in self.code.splitlines() if (m := CLAIM.search(line))]


RESEARCH_LOG = ROOT / "docs" / "research"
# A running block calls the interpreter on PATH, not one virtual environment's.
VENV_PATH = re.compile(r"(?<![\w-])\.venv[\w-]*/bin/")


def doc_files() -> list[Path]:
    """README.md and the user pages of docs/ (the research log is a record, not run)."""
    pages = [p for p in sorted((ROOT / "docs").rglob("*.md")) if RESEARCH_LOG not in p.parents]
    return [ROOT / "README.md", *pages]


def extract_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced code blocks of one Markdown file, with the marker before each."""
    name = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m["indent"], m["lang"], i
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        if j == len(lines):
            raise AssertionError(f"{name}:{start + 1}: unclosed code block")
        body = [ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines[start + 1 : j]]
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = MARKER.match(lines[k]) if k >= 0 else None
        excluded = marker["reason"] if marker else None
        if marker is not None and not excluded:
            raise AssertionError(f"{name}:{k + 1}: 'not run' marker without a reason")
        blocks.append(Block(name, start + 1, lang, "\n".join(body) + "\n", excluded))
        i = j + 1
    return blocks


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in extract_blocks(path) if b.lang in RUN_LANGS]


BLOCKS = all_blocks()


# Loaded first by a block that claims its output: a draw from a generator seeded from fresh
# entropy (numpy's `default_rng()`, a Gymnasium space never seeded) stops the block with a
# message, since such a block's output can change from run to run (an unseeded
# `action_space(agent).sample()` once made a documented "random moves reach the turn limit" game
# end with a winner). An unseeded generator that is replaced before it draws (a bot built without
# a seed and reseeded at reset) is fine, so numpy's is refused at its first draw.
UNSEEDED_GUARD = """
import numpy.random
import gymnasium.utils.seeding as _seeding

_default_rng, _np_random = numpy.random.default_rng, _seeding.np_random


def _refuse(what):
    raise RuntimeError(
        what + " seeded from fresh entropy in a block that claims its output (# prints:): "
        "seed it, e.g. env.action_space(agent).seed(i), so the block prints the same every run"
    )


class _Unseeded(numpy.random.Generator):
    def __getattribute__(self, name):
        if not name.startswith("__"):
            _refuse("a draw (" + name + ") from numpy.random.default_rng()")
        return super().__getattribute__(name)


def default_rng(seed=None):
    return _Unseeded(numpy.random.PCG64()) if seed is None else _default_rng(seed)


def np_random(seed=None):
    if seed is None:
        _refuse("a Gymnasium generator (an action space or env)")
    return _np_random(seed)


numpy.random.default_rng, _seeding.np_random = default_rng, np_random
"""


def run_env(guard_dir: str | None = None) -> dict[str, str]:
    """The blocks' environment; with ``guard_dir`` (holding the unseeded guard as
    ``sitecustomize.py``) Python loads the guard before the block."""
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONPATH", None)
    if guard_dir is not None:
        env["PYTHONPATH"] = guard_dir
    return env


def tail(text: str) -> str:
    return text if len(text) <= OUTPUT_TAIL else "...\n" + text[-OUTPUT_TAIL:]


def claim_pattern(text: str) -> re.Pattern[str]:
    """A claimed output line as a pattern: literal text, ``...`` for any text."""
    return re.compile(".*".join(re.escape(part) for part in text.split("...")))


def unmet_claims(claims: list[str], stdout: str) -> list[str]:
    """The claims not found, in order, as whole lines (trailing blanks ignored) of ``stdout``."""
    lines = [line.rstrip() for line in stdout.splitlines()]
    at, unmet = 0, []
    for claim in claims:
        pattern = claim_pattern(claim)
        found = next((i for i in range(at, len(lines)) if pattern.fullmatch(lines[i])), None)
        if found is None:
            unmet.append(claim)
        else:
            at = found + 1
    return unmet


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_doc_block_runs(block: Block) -> None:
    if block.excluded is not None:
        pytest.skip(f"{block.where}: not run: {block.excluded}")
    if VENV_PATH.search(block.code):
        pytest.fail(
            f"{block.where}: this block names a virtual environment's interpreter; write `python`, "
            "which is the interpreter running the tests",
            pytrace=False,
        )
    if block.lang == "bash" and ENV_CHANGING.search(block.code):
        pytest.fail(
            f"{block.where}: this block changes an environment (installs, venvs, clusters); "
            "mark it '<!-- not run: reason -->' instead of running it here",
            pytrace=False,
        )
    with tempfile.TemporaryDirectory() as tmp:
        guard_dir = None
        if block.claims:
            guard_dir = str(Path(tmp) / "guard")
            Path(guard_dir).mkdir()
            (Path(guard_dir) / "sitecustomize.py").write_text(UNSEEDED_GUARD, encoding="utf-8")
        if block.lang == "python":
            script = Path(tmp) / "doc_block.py"
            script.write_text(block.code, encoding="utf-8")
            cmd = [sys.executable, str(script)]
        else:
            cmd = ["bash", "-e", "-o", "pipefail", "-c", block.code]
        try:
            proc = subprocess.run(
                cmd,
                cwd=ROOT,
                env=run_env(guard_dir),
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"{block.where}: ```{block.lang} block ran past {TIMEOUT_S} s\n{block.code}", pytrace=False
            )
    if proc.returncode != 0:
        pytest.fail(
            f"{block.where}: ```{block.lang} block failed with exit status {proc.returncode}\n"
            f"--- block ---\n{block.code}--- stdout ---\n{tail(proc.stdout)}\n--- stderr ---\n{tail(proc.stderr)}",
            pytrace=False,
        )
    unmet = unmet_claims(block.claims, proc.stdout)
    if unmet:
        pytest.fail(
            f"{block.where}: the block does not print what it says (# prints: ...), missing in order: {unmet}\n"
            f"--- stdout ---\n{tail(proc.stdout)}",
            pytrace=False,
        )


def test_print_comments_are_checked_claims() -> None:
    """A comment after ``print(...)`` in a Python block reads as its output: it must be a
    ``# prints: TEXT`` claim, which the block's run checks (explanations go on their own line)."""
    loose = [
        f"{b.where}: {line.strip()}"
        for b in BLOCKS if b.lang == "python"
        for line in b.code.splitlines()
        if PRINT_COMMENT.search(line) and not CLAIM.search(line)
    ]
    assert not loose, "write '# prints: TEXT' (checked) or move the comment above the print:\n" + "\n".join(loose)


def test_claims_are_matched_in_order_with_ellipses() -> None:
    block = Block("x.md", 1, "python", "print(1)  # prints: a 1 ...\nx = 2\n# prints: end\n", None)
    assert block.claims == ["a 1 ...", "end"]
    assert unmet_claims(block.claims, "start\na 1 b c\nend\n") == []
    assert unmet_claims(block.claims, "end\na 1 b\n") == ["end"]  # order matters
    assert unmet_claims(["a 1"], "a 12\n") == ["a 1"]  # whole lines only
    assert unmet_claims(["{'x': 1.0}"], "{'x': 1.0}   \n") == []


def test_excluded_blocks_are_few_and_explained(capsys: pytest.CaptureFixture[str]) -> None:
    """Lists every excluded block with its reason; most blocks must run."""
    excluded = [b for b in BLOCKS if b.excluded is not None]
    with capsys.disabled():
        print(f"\ndoc code blocks: {len(BLOCKS) - len(excluded)} run, {len(excluded)} excluded")
        for b in excluded:
            print(f"  {b.where} ({b.lang}): not run: {b.excluded}")
    assert len(BLOCKS) >= 20, "the docs lost their examples, or the extractor broke"
    assert len(excluded) * 2 < len(BLOCKS), "more than half of the doc blocks are excluded"


def test_markers_sit_before_a_block() -> None:
    """A 'not run' marker that precedes no code block is a mistake (a moved block)."""
    stray = []
    for path in doc_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if MARKER.match(line):
                k = n + 1
                while k < len(lines) and not lines[k].strip():
                    k += 1
                if k == len(lines) or not OPEN.match(lines[k]):
                    stray.append(f"{path.relative_to(ROOT)}:{n + 1}")
    assert not stray, f"'not run' markers not followed by a code block: {stray}"


def test_extractor_reads_markers_and_indented_blocks(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(
        "text\n\n<!-- not run: needs Ray -->\n\n```bash\nray start\n```\n\n"
        "- item\n\n  ```python\n  print(1)\n  ```\n\n```json\n{}\n```\n"
    )
    blocks = extract_blocks(doc, root=tmp_path)
    assert [(b.line, b.lang, b.code, b.excluded) for b in blocks] == [
        (5, "bash", "ray start\n", "needs Ray"),
        (11, "python", "print(1)\n", None),
        (15, "json", "{}\n", None),
    ]


def test_doc_files_are_the_readme_and_the_user_pages() -> None:
    files = doc_files()
    assert files[0] == ROOT / "README.md" and ROOT / "docs" / "search.md" in files
    assert not [p for p in files if RESEARCH_LOG in p.parents]


def test_a_block_naming_a_venv_interpreter_is_caught() -> None:
    assert VENV_PATH.search(".venv/bin/python evaluate.py")
    assert VENV_PATH.search("x && .venv-rllib/bin/python train_rllib.py")
    assert not VENV_PATH.search("python evaluate.py --out runs/.venvs")


HISTORY = re.compile(r"issue [0-9]+|[Rr]ound [0-9]+")


def test_user_docs_say_what_is_not_which_round_found_it() -> None:
    """The README, the CHANGELOG, the user pages and the model cards cite no issue or round
    number: measurement history belongs in the research log (docs/research/)."""
    pages = [*doc_files(), ROOT / "CHANGELOG.md", *sorted((ROOT / "skipbo_env" / "models").glob("*.md"))]
    cited = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in pages
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert not cited, "move measurement history to docs/research/:\n" + "\n".join(cited)


def docs_url() -> str:
    """The documentation site the package names (``[project.urls] Documentation``)."""
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Documentation"]


RELATIVE_DOC = re.compile(r"\]\((?!https?://|#)[^)]*\)|(?<![\w/.:-])docs/[\w/.-]+\.md")


def test_pages_a_pip_user_reads_link_to_the_site() -> None:
    """The README (the package's long description on PyPI) and the model cards shipped in the wheel
    point to pages by absolute links into the documentation site the metadata names."""
    url = docs_url()
    pages = [ROOT / "README.md", *sorted((ROOT / "skipbo_env" / "models").glob("*.md"))]
    relative = [
        f"{path.relative_to(ROOT)}:{n}: {m.group(0)}"
        for path in pages
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for m in RELATIVE_DOC.finditer(line)
    ]
    assert not relative, f"link to {url}... instead:\n" + "\n".join(relative)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(url) >= 10


def test_pages_name_every_extra_and_every_shipped_agent() -> None:
    """The README's extras table and the landing page name every extra of pyproject.toml, say
    what ``all`` holds, and name every shipped trained agent."""
    import tomllib

    from skipbo_env.agents import SHIPPED

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    in_all = sorted(re.findall(r"skipbo-env\[([\w,]+)\]", extras["all"][0])[0].split(","))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| `([\w-]+)` \| (.*) \|$", readme, flags=re.M))
    assert set(table) >= set(extras) - {"dev"}, f"README's extras table lacks {set(extras) - {'dev'} - set(table)}"
    assert sorted(re.findall(r"\b(fast|train|render|web|ray|openspiel|rllib)\b", table["all"].split("(")[0])) == in_all
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for extra in set(extras) - {"dev"}:
        assert f"`{extra}`" in index, f"docs/index.md does not name the {extra!r} extra"
    listed = re.search(r"`all` \(([^);]*)", index)
    assert listed and sorted(re.findall(r"`(\w+)`", listed.group(1))) == in_all
    for name in SHIPPED:
        assert f"`{name}`" in readme and f"`{name}`" in index, f"{name} is shipped but not listed"


def test_unseeded_guard_stops_draws_from_fresh_entropy(tmp_path: Path) -> None:
    """The guard loaded before a claiming block lets seeded generators and unused unseeded ones
    pass, and stops the first draw from an unseeded numpy generator or Gymnasium space."""
    (tmp_path / "sitecustomize.py").write_text(UNSEEDED_GUARD, encoding="utf-8")

    def run(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code], env=run_env(str(tmp_path)), capture_output=True, text=True, timeout=60
        )

    seeded = run(
        "import numpy as np, gymnasium as gym\n"
        "unused = np.random.default_rng()\n"
        "space = gym.spaces.Discrete(5, seed=3)\n"
        "print(np.random.default_rng(1).integers(10), space.sample())\n"
    )
    assert seeded.returncode == 0, seeded.stderr
    for draw in ("np.random.default_rng().integers(10)", "gym.spaces.Discrete(5).sample()"):
        proc = run(f"import numpy as np, gymnasium as gym\n{draw}\n")
        assert proc.returncode != 0 and "seeded from fresh entropy" in proc.stderr, draw


def test_the_readme_stays_skimmable() -> None:
    """The README is the landing page: at most 150 lines; measurements live in the docs pages."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail to docs/"
