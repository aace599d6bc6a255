"""Train a MaskablePPO agent against scripted opponents (``skipbo train``; in the repository also ``python train.py``).

    skipbo train --config quick                   # a shipped configuration, by name
    skipbo train --list-configs                   # the shipped configurations
    skipbo train --print-config quick > my.yaml   # start one of your own from one
    skipbo train --config my.yaml --seed 3 --ppo.learning_rate 1e-4
    skipbo train --resume runs/default            # continue from the last checkpoint
    skipbo train --export runs/default/best.zip my_agent.safetensors --allow-pickle   # to share

Override any field by its dotted name, values as YAML (``--opponents.mix '{greedy: 1}'``); outputs in ``runs/<name>/``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import io
import json
import sys
import textwrap
import typing
from collections.abc import Callable
from typing import Any

from ..agents.modelfile import CheckpointError
from ..agents.registry import known_agents
from ..extras import docs_url
from ..rules import ConfigError, GameConfig, SkipBoError
from . import turn_recipe, value_recipe
from .configs import (
    DEFAULT_CONFIG,
    UnknownConfigError,
    config_names,
    list_configs,
    resolve_config,
    shipped_config,
)
from .settings import TrainConfig
from .settings_io import YamlConfig, load_yaml_text, recipe_of


def build_parser(prog: str = "skipbo train") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1].replace("skipbo train", prog)
        + f"\nAgents (opponents, evaluations): {', '.join(known_agents())}, or an agent file."
        + f"\nEvery field and the recipes: {docs_url('training')}",
    )
    parser.add_argument("--config", default=DEFAULT_CONFIG, metavar="NAME_OR_FILE",
                        help=f"a shipped configuration ({', '.join(config_names())}) or a YAML file "
                             "(default: %(default)s, ppo-2p's recipe)")
    parser.add_argument("--list-configs", action="store_true",
                        help="list the shipped configurations and exit")
    parser.add_argument("--print-config", metavar="NAME",
                        help="print a shipped configuration (to start one of your own) and exit")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar: a progress line at every evaluation instead (for logs)")
    parser.add_argument("--export", nargs=2, metavar=("MODEL", "OUT"),
                        help="write the checkpoint MODEL (e.g. runs/default/best.zip) as the agent file OUT "
                             "(.safetensors: weights and a JSON description, nothing pickled, safe for anyone to "
                             "load; plays exactly as MODEL); needs --allow-pickle; then exit")
    parser.add_argument("--allow-pickle", action="store_true",
                        help="with --export: load MODEL although it is a pickle (a .zip checkpoint). A pickled "
                             "model file can run arbitrary code when loaded; only use it for files you made or trust")
    _add_field_options(parser, TrainConfig)
    return parser


def _add_field_options(parser: argparse.ArgumentParser, config_cls: type) -> None:
    """One ``--<dotted.field> VALUE`` option per leaf field of ``config_cls`` (read by :func:`parse_overrides`)."""
    group = parser.add_argument_group("configuration fields (override the YAML file)")
    for name, tp, help_text in flat_fields(config_cls):
        type_name = getattr(tp, "__name__", str(tp)).replace("typing.", "")
        group.add_argument(f"--{name}", dest=f"set:{name}", default=argparse.SUPPRESS, metavar="VALUE",
                           help=f"{help_text} [{type_name}]".strip())


def parse_overrides(args: argparse.Namespace, prog: str = "skipbo train") -> dict[str, object]:
    """The ``--<dotted.field> VALUE`` overrides, each read as strictly as a configuration file."""
    overrides = {}
    for key, raw in vars(args).items():
        if key.startswith("set:"):
            shown = raw if len(raw) <= 60 else raw[:45] + "..."
            try:  # as strictly as a configuration file: no duplicate keys, no aliases
                overrides[key[4:]] = load_yaml_text(raw, f"--{key[4:]} {shown!r}")
            except ConfigError as exc:
                raise SystemExit(f"{prog}: error: {str(exc).removeprefix('config: ')}") from None
    return overrides


def flat_fields(cls: type, prefix: str = "") -> list[tuple[str, Any, str]]:
    """(dotted name, type, help) of every leaf field of the configuration dataclass ``cls``, for the
    command line; the help is the field's attribute docstring."""
    docs = _attribute_docs(cls)
    out = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        name = f"{prefix}{f.name}"
        tp = hints[f.name]
        if tp is GameConfig:
            for g in dataclasses.fields(GameConfig):
                out.append((f"{name}.{g.name}", g.type, "game setting, see skipbo_env.rules.GameConfig"))
        elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
            out.extend(flat_fields(tp, f"{name}."))
        else:
            out.append((name, tp, docs.get(f.name, "")))
    return out


def _attribute_docs(cls: type) -> dict[str, str]:
    """The attribute docstrings of class ``cls`` (a string right under a field), by field name."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    docs: dict[str, str] = {}
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    for first, second in zip(body, body[1:], strict=False):
        if (isinstance(first, ast.AnnAssign) and isinstance(first.target, ast.Name)
                and isinstance(second, ast.Expr) and isinstance(second.value, ast.Constant)
                and isinstance(second.value.value, str)):
            docs[first.target.id] = " ".join(second.value.value.split())
    return docs


def _recipe(argv: list[str]) -> str | None:
    """The recipe that ``--config`` names (``recipe: turnnet`` or ``recipe: value`` at the top of
    its file), ``None`` for a PPO configuration. Raises :class:`UnknownConfigError`."""
    for i, arg in enumerate(argv):
        if arg == "--config" and i + 1 < len(argv):
            return recipe_of(resolve_config(argv[i + 1]))
        if arg.startswith("--config="):
            return recipe_of(resolve_config(arg.split("=", 1)[1]))
    return None


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A recipe that ``train.py`` runs from a file with its ``recipe`` key."""

    config: type[YamlConfig]
    """Its configuration class."""
    run: Callable[[Any, bool], dict[str, Any]]
    """Its ``run_recipe(cfg, progress)``: the summary written to ``metrics.json``."""
    module: str
    """The module that documents it."""


RECIPES = {
    "turnnet": Recipe(turn_recipe.CONFIG, turn_recipe.run_recipe, turn_recipe.__name__),
    "value": Recipe(value_recipe.CONFIG, value_recipe.run_recipe, value_recipe.__name__),
}
"""Recipe name (a config file's ``recipe`` key) -> the recipe."""


def recipe_main(argv: list[str], prog: str = "skipbo train", recipe: str = "turnnet") -> int:
    """``train.py --config RECIPE.yaml [--dotted.key VALUE ...] [--no-progress]`` for a recipe file
    (``recipe: turnnet``, :mod:`skipbo_env.training.turn_recipe`; ``recipe: value``,
    :mod:`skipbo_env.training.value_recipe`)."""
    if recipe not in RECIPES:
        print(f"{prog}: error: recipe: unknown recipe {recipe!r}; recipes: {', '.join(RECIPES)}", file=sys.stderr)
        return 2
    chosen = RECIPES[recipe]
    parser = argparse.ArgumentParser(prog=prog, description=f"Run the {recipe} recipe ({chosen.module}).",
                                     epilog=f"The recipes: {docs_url('training')}")
    parser.add_argument("--config", required=True, metavar="NAME_OR_FILE",
                        help="a shipped configuration or a YAML file with this recipe")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_field_options(parser, chosen.config)
    args = parser.parse_args(argv)
    try:
        cfg = chosen.config.from_yaml(resolve_config(args.config), parse_overrides(args, prog))
        summary = chosen.run(cfg, not args.no_progress)
    except (ConfigError, CheckpointError, ConnectionError) as exc:
        # the run folder's lock refuses with a CheckpointError; no Ray cluster at the ray setting: ConnectionError
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({k: summary[k] for k in ("agent_file", "seconds", "checks")}, indent=2))
    return 0


def main(argv: list[str] | None = None, prog: str = "skipbo train") -> int:
    """Run the command; returns the exit code (errors print one line naming ``prog``)."""
    argv = sys.argv[1:] if argv is None else argv
    if isinstance(sys.stdout, io.TextIOWrapper):  # progress lines reach a redirected log as the run goes
        sys.stdout.reconfigure(line_buffering=True)
    try:
        recipe = _recipe(argv)
    except UnknownConfigError as exc:
        print(f"{prog}: error: --config {exc}", file=sys.stderr)
        return 2
    if recipe is not None:  # the turn-network and value-network recipes have their own settings
        return recipe_main(argv, prog, recipe)
    args = build_parser(prog).parse_args(argv)
    if args.list_configs or args.print_config is not None:
        return _show_configs(args, argv, prog)
    # the train extra (torch, stable-baselines3) loads with these modules: after argument parsing, so --help is instant
    from .checkpoints import export_agent
    from .run import load_run_config, print_summary, train

    overrides = parse_overrides(args, prog)
    if args.allow_pickle and not args.export:
        print(f"{prog}: error: --allow-pickle only applies to --export (a run loads its own checkpoints)",
              file=sys.stderr)
        return 2
    if args.export:
        try:
            out = export_agent(*args.export, allow_pickle=args.allow_pickle)
        except CheckpointError as exc:
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
        return 0
    try:
        if args.resume:
            cfg = load_run_config(args.resume, overrides)
        else:
            cfg = TrainConfig.from_yaml(resolve_config(args.config), overrides)
        summary = train(cfg, resume_dir=args.resume, progress=not args.no_progress)
    except (SkipBoError, CheckpointError) as exc:  # a run folder's lock and write errors are CheckpointErrors
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. a run folder that cannot be created
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{prog}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    print_summary(summary)
    return 0


def _show_configs(args: argparse.Namespace, argv: list[str], prog: str) -> int:
    """``--list-configs`` or ``--print-config NAME``, which take no other option."""
    flag = "--list-configs" if args.list_configs else "--print-config"
    others = [a for a in argv if a.startswith("--") and not a.startswith(flag)]
    if others:
        print(f"{prog}: error: {flag} takes no other option, got {' '.join(others)}", file=sys.stderr)
        return 2
    if args.list_configs:
        print(list_configs())
        return 0
    try:
        print(shipped_config(args.print_config).read_text(encoding="utf-8"), end="")
    except UnknownConfigError as exc:
        print(f"{prog}: error: --print-config {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
