"""The ``tool-selector`` command: serve, export-openapi, settings."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tool_selector.errors import ConfigError
from tool_selector.evaluation import cli as eval_cli
from tool_selector.settings import Settings, settings_table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tool-selector", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the HTTP API with granian")
    serve.add_argument("--host", help="bind address (default TOOL_SELECTOR_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="bind port (default TOOL_SELECTOR_PORT or 8080)")
    export = sub.add_parser("export-openapi", help="write the OpenAPI document")
    export.add_argument("--output", "-o", type=Path, default=Path("openapi.yaml"))
    sub.add_parser("settings", help="print every setting as a markdown table")
    eval_cli.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "eval":
        return eval_cli.run(args)
    try:
        settings = Settings.from_env(os.environ)
    except ConfigError as exc:
        print(f"tool-selector: {exc}", file=sys.stderr)
        return 2
    if args.command == "serve":
        return _serve(settings, args.host, args.port)
    if args.command == "export-openapi":
        from tool_selector.openapi import openapi_yaml  # noqa: PLC0415

        args.output.write_text(openapi_yaml(Settings()))
        print(f"wrote {args.output}")
        return 0
    print(settings_table())
    return 0


def _serve(settings: Settings, host: str | None, port: int | None) -> int:
    from granian import Granian  # noqa: PLC0415
    from granian.constants import Interfaces, Loops  # noqa: PLC0415

    host = host or settings.host
    port = settings.port if port is None else port
    # granian's factory re-reads the environment in the worker, so pass overrides through it
    os.environ["TOOL_SELECTOR_HOST"] = host
    os.environ["TOOL_SELECTOR_PORT"] = str(port)
    Granian(
        "tool_selector.app:app_from_env",
        factory=True,
        address=host,
        port=port,
        interface=Interfaces.ASGI,
        workers=1,
        loop=Loops.uvloop,
        log_access=False,
    ).serve()
    return 0
