"""Train a MaskablePPO agent against scripted opponents.

    python train.py --config configs/quick.yaml
    python train.py --config configs/default.yaml --seed 3 --ppo.learning_rate 1e-4
    python train.py --resume runs/default            # continue from the last checkpoint
    python train.py --export runs/default/best.zip models/my_agent.safetensors --allow-pickle   # to share

Every configuration field (see ``--help``) can be overridden with its dotted
name; values are read as YAML (``--opponents.mix '{greedy: 1, heuristic: 1}'``).
Outputs go to ``runs/<name>/`` (see skipbo_env/training/run.py and README).
"""

from __future__ import annotations

import argparse
import sys

from skipbo_env.rules import ConfigError, SkipBoError
from skipbo_env.training.config import TrainConfig, flat_fields, load_yaml_text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--config", default="configs/default.yaml", help="YAML file (default: %(default)s)")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--export", nargs=2, metavar=("MODEL", "OUT"),
                        help="write the checkpoint MODEL (e.g. runs/default/best.zip) as the agent file OUT "
                             "(.safetensors: weights and a JSON description, nothing pickled, safe for anyone to "
                             "load; plays exactly as MODEL); needs --allow-pickle; then exit")
    parser.add_argument("--allow-pickle", action="store_true",
                        help="with --export: load MODEL although it is a pickle (a .zip checkpoint). A pickled "
                             "model file can run arbitrary code when loaded; only use it for files you made or trust")
    group = parser.add_argument_group("configuration fields (override the YAML file)")
    for name, tp, help_text in flat_fields():
        type_name = getattr(tp, "__name__", str(tp)).replace("typing.", "")
        group.add_argument(f"--{name}", dest=f"set:{name}", default=argparse.SUPPRESS, metavar="VALUE",
                           help=f"{help_text} [{type_name}]".strip())
    return parser


def parse_overrides(args: argparse.Namespace) -> dict[str, object]:
    overrides = {}
    for key, raw in vars(args).items():
        if key.startswith("set:"):
            shown = raw if len(raw) <= 60 else raw[:45] + "..."
            try:  # as strictly as a configuration file: no duplicate keys, no aliases
                overrides[key[4:]] = load_yaml_text(raw, f"--{key[4:]} {shown!r}")
            except ConfigError as exc:
                raise SystemExit(f"train.py: error: {str(exc).removeprefix('config: ')}") from None
    return overrides


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # torch and stable-baselines3 load with these modules: after argument parsing, so --help is instant
    from skipbo_env.training.checkpoints import CheckpointError, export_agent
    from skipbo_env.training.run import load_run_config, print_summary, train

    overrides = parse_overrides(args)
    if args.allow_pickle and not args.export:
        print("train.py: error: --allow-pickle only applies to --export (a run loads its own checkpoints)",
              file=sys.stderr)
        return 2
    if args.export:
        try:
            out = export_agent(*args.export, allow_pickle=args.allow_pickle)
        except CheckpointError as exc:
            print(f"train.py: error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
        return 0
    try:
        if args.resume:
            cfg = load_run_config(args.resume, overrides)
        else:
            cfg = TrainConfig.from_yaml(args.config, overrides)
        summary = train(cfg, resume_dir=args.resume, progress=not args.no_progress)
    except (SkipBoError, CheckpointError) as exc:  # a run folder's lock and write errors are CheckpointErrors
        print(f"train.py: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. a run folder that cannot be created
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"train.py: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    print_summary(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
