"""``skipbo-web``: serve the Skip-Bo page on 127.0.0.1."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..agents import known_agents
from ..extras import HelpFormatter, MissingExtraError, docs_url, missing_extra_line, require
from ..files import FileReadError

DEFAULT_PORT = 8765


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skipbo-web", formatter_class=HelpFormatter,
        description="Play Skip-Bo against agents, watch agents play and replay recorded games in the "
                    "browser. The server listens on 127.0.0.1 only.",
        epilog=f"Agents offered: {', '.join(known_agents())}, and the agent files of --agent. "
               f"The page: {docs_url('web')}",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0: a free port, printed)")
    parser.add_argument("--agent", action="append", default=[], metavar="PATH",
                        help="offer an agent file (.safetensors), or every agent file in a folder; repeatable "
                             "(the scripted agents and the shipped trained agents are always offered)")
    parser.add_argument("--records", action="append", default=[], metavar="PATH",
                        help="offer record files for replay: a file, or a folder of them such as "
                             "skipbo evaluate --save-records writes; repeatable")
    parser.add_argument("--allow-pickle", action="store_true",
                        help="also offer and load pickled model files (MaskablePPO .zip checkpoints). A pickled "
                             "file can run arbitrary code when it is loaded; only use it for files you made or trust")
    parser.add_argument("--max-games", type=int, default=100, help="games held in memory at most (default 100)")
    parser.add_argument("--expire", type=float, default=30.0, metavar="MINUTES",
                        help="drop a game after this many minutes without a request (default 30)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until it is stopped; returns the exit code (a missing extra: one line, 1)."""
    try:
        return _serve(argv)
    except ImportError as exc:  # an import a web page needs, beyond the check in _serve
        line = missing_extra_line(exc, "skipbo-web")
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 1


def _serve(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be in 0..65535, got {args.port}")
    if args.max_games < 1:
        parser.error(f"--max-games must be >= 1, got {args.max_games}")
    if not args.expire > 0:
        parser.error(f"--expire must be > 0 minutes, got {args.expire}")
    try:
        require("web", "the browser table", "starlette", "uvicorn")
    except MissingExtraError as exc:
        print(missing_extra_line(exc, "skipbo-web"), file=sys.stderr)
        return 1
    from .app import create_app  # the web extra (starlette)
    from .server import listen, make_server  # the web extra (uvicorn)

    try:
        app = create_app(agent_paths=args.agent, records=args.records, allow_pickle=args.allow_pickle,
                         max_games=args.max_games, ttl=args.expire * 60)
    except FileReadError as exc:
        parser.error(str(exc))
    try:
        sock = listen(args.port)
    except OSError as exc:
        print(f"skipbo-web: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"skipbo-web: open http://127.0.0.1:{sock.getsockname()[1]}/", flush=True)
    make_server(app).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
