"""Optional extras: what each needs, and the error that names a missing one.

The base install gives the rules, the envs and the scripted agents; ``fast``, ``train``,
``render``, ``web``, ``rllib`` and ``all`` add the rest (``pyproject.toml``). A feature whose extra
is missing raises :func:`missing_extra`'s ImportError naming the extra and its install command; a
command line turns it, or an import of a module an extra provides (:data:`EXTRA_OF_MODULE`), into
one line (:func:`missing_extra_line`). The docs' address (:data:`DOCS_URL`, :func:`docs_url`) and
the help layout that keeps a link whole (:class:`HelpFormatter`) are here too.
"""

from __future__ import annotations

import argparse
import importlib.util
import textwrap

DOCS_URL = "https://skipbo-env.github.io/skipbo-env/"
"""The documentation site (``pyproject.toml``'s ``Documentation`` URL)."""


def docs_url(page: str = "") -> str:
    """The address of a documentation page: ``docs_url("play")`` is the page built from
    ``docs/play.md``; ``docs_url()`` the site's home."""
    return DOCS_URL + (f"{page}/" if page else "")


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, but a line never breaks inside a word (at a hyphen), so that a
    link from :func:`docs_url` and an agent's name (``stock-chaser``) stay whole."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False, break_long_words=False)


EXTRA_OF_MODULE: dict[str, str] = {
    **dict.fromkeys(("torch", "stable_baselines3", "sb3_contrib", "safetensors", "yaml", "dacite", "tqdm",
                     "matplotlib", "openskill", "rich", "tensorboard"), "train"),
    "numba": "fast",
    "PIL": "render",
    "starlette": "web",
    "uvicorn": "web",
    "ray": "ray",
    "pyspiel": "openspiel",
}
"""Top-level module -> the smallest extra that installs it (``pyproject.toml``'s optional
dependencies: ``numba`` comes with ``train`` too; ``ray`` names Ray core, the ``rllib`` extra
adds RLlib)."""


class MissingExtraError(ImportError):
    """A feature needs an optional extra that is not installed."""


def require(extra: str, feature: str, *modules: str) -> None:
    """Raise :class:`MissingExtraError` unless every top-level module in ``modules`` is installed;
    nothing is imported (a cheap check for a package's ``__init__``)."""
    for name in modules:
        if importlib.util.find_spec(name) is None:
            raise missing_extra(ModuleNotFoundError(f"No module named {name!r}", name=name), extra, feature)


def missing_extra(exc: ImportError, extra: str, feature: str) -> MissingExtraError:
    """The error to raise (``from exc``) when importing what ``feature`` needs failed."""
    what = exc.name or str(exc)
    error = MissingExtraError(
        f"{feature} needs the '{extra}' extra ({what} is not installed): pip install 'skipbo-env[{extra}]'"
    )
    error.name = exc.name
    return error


def missing_extra_line(exc: ImportError, program: str) -> str | None:
    """The one line a command line prints when ``exc`` stopped ``program`` (``"skipbo evaluate"``):
    a :class:`MissingExtraError`'s message, or for a module of :data:`EXTRA_OF_MODULE` that is not
    installed the extra to install; ``None`` for any other import error (a bug: let it raise)."""
    if isinstance(exc, MissingExtraError):
        return f"{program}: {exc}"
    top = (exc.name or "").split(".")[0]
    if not isinstance(exc, ModuleNotFoundError) or top not in EXTRA_OF_MODULE:
        return None
    extra = EXTRA_OF_MODULE[top]
    return f"{program} needs the '{extra}' extra ({top} is not installed): pip install 'skipbo-env[{extra}]'"
