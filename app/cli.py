"""The command line: ``attnscope serve [--host 127.0.0.1] [--port 8000] [--reload]``.

Runs uvicorn on the app factory (``app.main:create_app``); settings come from the
environment (``ATTNSCOPE_*``, see app/config.py).
"""

from __future__ import annotations

import argparse
import logging


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attnscope", description="attnscope: attention, "
                                     "traced step by step, in your browser and as JSON.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="start the web server")
    serve.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1; "
                       "0.0.0.0 for every interface)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--reload", action="store_true", help="restart when code changes")
    serve.add_argument("--log-level", default="info",
                       choices=["critical", "error", "warning", "info", "debug"])
    return parser


def serve(host: str, port: int, reload: bool, log_level: str) -> None:
    import uvicorn

    logging.getLogger("app").setLevel(log_level.upper())
    uvicorn.run("app.main:create_app", factory=True, host=host, port=port, reload=reload,
                log_level=log_level)


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        serve(args.host, args.port, args.reload, args.log_level)


if __name__ == "__main__":
    main()
