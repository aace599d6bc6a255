"""The command line as a pip user meets it: every subcommand's help names the real program, its
arguments and the agents it accepts; the shipped configurations by name; a missing extra is one
line naming it; links to the documentation are absolute. (.ci/check-wheel runs the commands on a
core-only install of the wheel, outside the repository.)"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

import pytest

from skipbo_env import cli
from skipbo_env.agents import known_agents
from skipbo_env.extras import DOCS_URL, EXTRA_OF_MODULE, MissingExtraError, docs_url, missing_extra_line
from skipbo_env.training import commands
from skipbo_env.training.configs import (
    CONFIGS_DIR,
    DEFAULT_CONFIG,
    UnknownConfigError,
    config_names,
    resolve_config,
    shipped_config,
)
from skipbo_env.web import __main__ as web_main

ROOT = Path(__file__).resolve().parents[1]


def pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def help_text(run, argv: list[str], capsys) -> str:
    """What ``run(argv + ["--help"])`` prints (argparse exits 0 after the help)."""
    with pytest.raises(SystemExit) as exit_:
        run([*argv, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


def flat(text: str) -> str:
    return " ".join(text.split())


# ======================================================================= help
@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_every_subcommand_help_names_the_real_program(command, capsys):
    if command == "train-rllib":
        pytest.importorskip("ray.rllib")  # its help needs the rllib extra (CI runs this file in .venv-rllib too)
    text = help_text(cli.main, [command], capsys)
    assert text.startswith(f"usage: skipbo {command} ")


def test_replay_help_shows_its_file_argument(capsys):
    usage = help_text(cli.main, ["replay"], capsys).split("\n\n")[0]
    assert usage.startswith("usage: skipbo replay") and usage.rstrip().endswith("FILE")


@pytest.mark.parametrize("argv", [["play"], ["evaluate"], ["train"], ["demo"]])
def test_help_lists_every_agent_name_of_the_registry(argv, capsys):
    text = flat(help_text(cli.main, argv, capsys))
    missing = [name for name in known_agents() if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)]
    assert missing == [], f"skipbo {argv[0]} --help does not name {missing}"


def test_play_help_lists_the_trained_and_search_opponents(capsys):
    text = flat(help_text(cli.main, ["play"], capsys))
    opponents = text.split("--opponents AGENT [AGENT ...]")[2]  # the option's own help, after the usage
    for name in ("ppo-2p", "turn-2p", "search", "heuristic"):
        assert name in opponents.split("--allow-pickle")[0]


def test_skipbo_play_and_web_name_their_own_programs(capsys):
    assert help_text(cli.play_main, [], capsys).startswith("usage: skipbo-play ")
    text = help_text(web_main.main, [], capsys)
    assert text.startswith("usage: skipbo-web ")
    assert all(name in flat(text) for name in known_agents())


def test_train_help_names_the_configs_and_its_program(capsys):
    text = flat(help_text(cli.main, ["train"], capsys))
    assert all(name in text for name in config_names())
    assert "--list-configs" in text and "--print-config NAME" in text
    script = help_text(lambda argv: commands.main(argv, prog="train.py"), [], capsys)
    assert script.startswith("usage: train.py ") and "train.py --config quick" in script


@pytest.mark.parametrize("argv", [["play"], ["replay"], ["evaluate"], ["train"], ["bench"], ["web"]])
def test_help_links_the_documentation_absolutely(argv, capsys):
    run = web_main.main if argv == ["web"] else cli.main
    text = help_text(run, [] if argv == ["web"] else argv, capsys)
    assert DOCS_URL in text  # whole on one line: the layout never breaks a link at a hyphen
    assert not re.search(r"(?<![/\w])docs/\w", text), "a relative docs/ pointer leads nowhere outside the repository"


def test_the_documentation_url_is_the_package_metadata_one(capsys):
    assert pyproject()["project"]["urls"]["Documentation"] == DOCS_URL
    assert docs_url("play") == DOCS_URL + "play/"
    assert set(pyproject()["project"]["urls"]) == {"Homepage", "Documentation", "Source", "Issues", "Changelog"}
    assert cli.main(["--help"]) == 0
    assert DOCS_URL in capsys.readouterr().out


# ==================================================================== configs
def test_the_configs_live_once_and_ship_with_the_package():
    assert CONFIGS_DIR == ROOT / "skipbo_env" / "configs"
    assert CONFIGS_DIR.resolve() == (ROOT / "configs").resolve()  # the package's folder is the repository's
    assert config_names() == sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    assert "configs/*.yaml" in pyproject()["tool"]["setuptools"]["package-data"]["skipbo_env"]
    assert {"default", "quick"} <= set(config_names())


def test_list_configs(capsys):
    assert cli.main(["train", "--list-configs"]) == 0
    out = capsys.readouterr().out
    for name in config_names():
        assert re.search(rf"^  {name} +\S", out, re.M), name


def test_print_config_prints_the_file_as_shipped(capsys):
    assert cli.main(["train", "--print-config", "quick"]) == 0
    assert capsys.readouterr().out == (ROOT / "configs" / "quick.yaml").read_text()


@pytest.mark.parametrize("argv", [["--print-config", "quik"], ["--config", "quik"], ["--config=quik"],
                                  ["--list-configs", "--seed", "3"], ["--print-config", "quick", "--config", "4p"]])
def test_config_misuse_is_one_line(argv, capsys):
    assert cli.main(["train", *argv]) == 2
    captured = capsys.readouterr()
    assert (
        captured.out == "" and len(captured.err.splitlines()) == 1 and captured.err.startswith("skipbo train: error: ")
    )
    if "quik" in argv[-1]:
        assert all(name in captured.err for name in config_names())


def test_a_name_resolves_from_any_directory_and_a_path_still_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert Path(resolve_config("quick")) == CONFIGS_DIR / "quick.yaml"
    default = commands.build_parser().parse_args([]).config
    assert default == DEFAULT_CONFIG and Path(resolve_config(default)).is_file()
    mine = tmp_path / "mine.yaml"
    mine.write_text(shipped_config("quick").read_text())
    assert resolve_config("mine.yaml") == "mine.yaml" and resolve_config(str(mine)) == str(mine)
    assert resolve_config("sub/missing.yaml") == "sub/missing.yaml"  # the loader names the missing file
    with pytest.raises(UnknownConfigError, match="neither a shipped configuration nor a file; shipped: 4p"):
        resolve_config("quik")


def test_a_recipe_config_runs_by_name(monkeypatch, capsys):
    ran = []

    def run_recipe(cfg, progress):
        ran.append(cfg)
        return {"agent_file": "x", "seconds": 0, "checks": {}}

    recipe = commands.RECIPES["turnnet"]
    monkeypatch.setitem(commands.RECIPES, "turnnet", commands.Recipe(recipe.config, run_recipe, recipe.module))
    assert commands.main(["--config", "turnnet_2p", "--no-progress"]) == 0
    assert [cfg.name for cfg in ran] == ["turnnet_2p"]


# ============================================================= missing extras
def test_every_extra_module_is_in_that_extra_of_the_metadata():
    """EXTRA_OF_MODULE agrees with pyproject.toml: the distribution that installs each module is a
    requirement of the extra named for it."""
    extras = pyproject()["project"]["optional-dependencies"]
    provided = importlib.metadata.packages_distributions()
    for module, extra in EXTRA_OF_MODULE.items():
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in provided.get(module, [])}
        names = {re.sub(r"[-_.]+", "-", re.split(r"[<>=\[ ;]", r)[0]).lower() for r in extras[extra]}
        assert dists & names, f"{module} ({dists}) is not installed by the {extra!r} extra ({names})"


def test_missing_extra_line():
    exc = ModuleNotFoundError("No module named 'tqdm'", name="tqdm")
    assert missing_extra_line(exc, "skipbo evaluate") == (
        "skipbo evaluate needs the 'train' extra (tqdm is not installed): pip install 'skipbo-env[train]'")
    assert missing_extra_line(ModuleNotFoundError("x", name="numba.core"), "p").startswith("p needs the 'fast' extra")
    assert missing_extra_line(ModuleNotFoundError("x", name="no_such_module"), "p") is None
    assert missing_extra_line(ImportError("cannot import name 'x'", name="torch"), "p") is None  # a bug, not an extra
    assert missing_extra_line(MissingExtraError("the thing needs ..."), "p") == "p: the thing needs ..."


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_an_import_of_a_missing_extra_is_one_line_on_every_subcommand(command, monkeypatch, capsys):
    def run(argv):
        import no_such_module_torch  # noqa: F401  (stands for torch on a core install)

    monkeypatch.setitem(EXTRA_OF_MODULE, "no_such_module_torch", "train")
    monkeypatch.setitem(cli.COMMANDS, command, cli.Command(run, "stub"))
    assert cli.main([command]) == 1
    err = capsys.readouterr().err
    assert err == (f"skipbo {command} needs the 'train' extra (no_such_module_torch is not installed): "
                   "pip install 'skipbo-env[train]'\n")


def test_an_unrelated_import_error_is_not_hidden(monkeypatch):
    def run(argv):
        import no_such_module_at_all  # noqa: F401

    monkeypatch.setitem(cli.COMMANDS, "demo", cli.Command(run, "stub"))
    with pytest.raises(ModuleNotFoundError):
        cli.main(["demo"])


def without(*modules: str):
    """``importlib.util.find_spec`` as on an install that lacks ``modules``."""
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name.split(".")[0] in modules else real(name, *args, **kwargs)

    return find_spec


def test_evaluate_without_the_train_extra_is_one_line_before_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(importlib.util, "find_spec", without("tqdm"))
    assert cli.main(["evaluate", "--agents", "heuristic", "greedy", "--games", "10"]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "needs the 'train' extra (tqdm is not installed)" in captured.err
    assert captured.err.startswith("skipbo evaluate: ") and list(tmp_path.iterdir()) == []


def test_web_without_the_web_extra_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(importlib.util, "find_spec", without("starlette"))
    assert web_main.main(["--port", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("skipbo-web: ") and "pip install 'skipbo-env[web]'" in err
