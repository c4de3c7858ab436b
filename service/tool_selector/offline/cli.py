"""The ``tool-selector`` command: serve, export-openapi, settings, eval, lint, ..."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tool_selector.embeddings.models import BGE_SMALL, MINILM
from tool_selector.errors import ConfigError, MissingDependencyError
from tool_selector.offline import lint_cli
from tool_selector.offline.arguments import DefaultsHelpFormatter, positive_int, seconds
from tool_selector.offline.evaluation import cli as eval_cli
from tool_selector.offline.outputs import check_files, check_folder
from tool_selector.offline.security_cli import (
    add_probe_command,
    add_security_arguments,
    apply_security_arguments,
    probe,
)
from tool_selector.settings import Settings, settings_table

#: The encoders that have a static table (``distill-static --model``), MiniLM's first.
STATIC_MODELS = (MINILM.name, BGE_SMALL.name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a subcommand; a file it cannot read or write (a directory, a missing folder, a
    full disk) is one line naming it and status 2, not a traceback."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tool-selector {args.command}: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tool-selector", description=__doc__, formatter_class=DefaultsHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the HTTP API with granian")
    serve.add_argument("--host", help="bind address (default TOOL_SELECTOR_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="bind port (default TOOL_SELECTOR_PORT or 8080)")
    add_security_arguments(serve)
    export = sub.add_parser("export-openapi", help="write the OpenAPI document")
    export.add_argument(
        "--output", "-o", type=Path, default=Path("openapi.yaml"), help="file to write"
    )
    sub.add_parser("settings", help="print every setting as a markdown table")
    _add_distill_static(sub)
    _add_fetch_model(sub)
    add_probe_command(sub)
    _add_shadow_compare(sub)
    eval_cli.add_parser(sub)
    lint_cli.add_parser(sub)
    for command in sub.choices.values():
        command.formatter_class = DefaultsHelpFormatter
    return parser


def _run(args: argparse.Namespace) -> int:
    if args.command == "eval":
        return eval_cli.run(args)
    if args.command == "lint":
        return lint_cli.run(args)
    try:
        settings = Settings.from_env(os.environ)
    except ConfigError as exc:
        print(f"tool-selector: {exc}", file=sys.stderr)
        return 2
    commands: dict[str, Callable[[], int]] = {
        "serve": lambda: _serve_checked(settings, args),
        "probe": lambda: probe(settings, args.path, args.timeout),
        "shadow-compare": lambda: _shadow_compare(args),
        "export-openapi": lambda: _export_openapi(args.output),
        "settings": _print_settings,
        "distill-static": lambda: _distill_static(settings, args),
        "fetch-model": lambda: _fetch_model(args.name, args.output, args.wheel, args.force),
    }
    return commands[args.command]()


def _add_shadow_compare(sub: Any) -> None:
    p = sub.add_parser("shadow-compare", help="report captured decisions vs relevance picks")
    p.add_argument(
        "capture", type=Path, help="capture JSONL, or the proxy's own tool_discovery.jsonl"
    )
    p.add_argument("--url", help="replay against this service (default: report the capture)")
    p.add_argument(
        "--catalog",
        type=Path,
        help="the proxy's tool list (JSON or JSONL of raw provider tools) to replay its "
        "logged search queries over",
    )
    p.add_argument(
        "--top-k",
        type=positive_int,
        default=5,
        help="names asked per replayed proxy search (default 5)",
    )
    p.add_argument("--token", help="bearer token for --url")
    p.add_argument("--timeout", type=seconds, default=5.0, help="per-request deadline (s)")
    p.add_argument("--html", type=Path, default=Path("shadow-report.html"), help="HTML report")
    p.add_argument("--json", type=Path, default=Path("shadow-summary.json"), help="JSON summary")


def _shadow_compare(args: argparse.Namespace) -> int:
    # imported here: the client stack (httpx) is not needed by serve or the exec probes
    from tool_selector.offline import shadow_compare  # noqa: PLC0415

    return shadow_compare.run(args)


def _export_openapi(output: Path) -> int:
    from tool_selector.http.openapi import openapi_yaml  # noqa: PLC0415

    check_files([output])
    output.write_text(openapi_yaml(Settings()))
    print(f"wrote {output}")
    return 0


def _distill_static(settings: Settings, args: argparse.Namespace) -> int:
    """``--model``'s table into ``--output`` (default: the setting's folder, else where the
    service reads it); MiniLM's needs torch and its int8 ONNX files (``--fit-model``),
    bge-small's its ONNX files."""
    from tool_selector.embeddings import distill  # noqa: PLC0415
    from tool_selector.embeddings.factory import second_folder  # noqa: PLC0415
    from tool_selector.embeddings.models import MODELS  # noqa: PLC0415
    from tool_selector.embeddings.static import default_static_path  # noqa: PLC0415

    model, output, force = args.model, args.output, args.force
    first = model == MINILM.name
    setting = settings.static_model_path if first else settings.second_static_model_path
    folder = output or Path(setting or default_static_path(model))
    weights = None if first else MODELS[model].weights_digest
    if not force and distill.is_current(folder, model, weights):
        print(f"{folder}: up to date (--force rebuilds)")
        return 0
    check_folder(folder)  # before the build: one line naming it (main)
    try:
        if first:
            manifest = distill.distill(folder, fit_folder=args.fit_model)
        else:
            manifest = distill.distill_onnx(
                folder, MODELS[model], second_folder(settings, MODELS[model])
            )
    except (MissingDependencyError, ConfigError) as exc:  # torch, or the model's files
        print(f"tool-selector: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {folder}: {manifest['id']} in {manifest['build_seconds']} s")
    return 0


def _print_settings() -> int:
    print(settings_table())
    return 0


def _serve_checked(settings: Settings, args: argparse.Namespace) -> int:
    """Serve once the flags, the packages, the model files and the address are checked: each
    refusal is one line on stderr naming the problem and the fix, and exit status 2."""
    from tool_selector.embeddings.factory import check_model_files, require_packages  # noqa: PLC0415
    from tool_selector.http.server import check_address, serve  # noqa: PLC0415
    from tool_selector.pipeline.warmup import check_warmup_file  # noqa: PLC0415

    port = settings.port if args.port is None else args.port
    try:
        settings, options = apply_security_arguments(settings, args)
        require_packages(settings)
        check_model_files(settings)
        check_warmup_file(settings.warmup_file)
        check_address(settings.host, port)  # last: the closest to granian's own bind
    except ConfigError as exc:
        print(f"tool-selector: {exc}", file=sys.stderr)
        return 2
    return serve(settings, settings.host, port, options)


def _add_distill_static(sub: Any) -> None:
    distill = sub.add_parser(
        "distill-static", help="build an encoder's static embedding table (default: MiniLM's)"
    )
    distill.add_argument(
        "--model",
        choices=STATIC_MODELS,
        default=STATIC_MODELS[0],
        help="whose table: all-MiniLM-L6-v2 from the bundled full-precision model (the "
        "offline extra), bge-small-en-v1.5 from its ONNX files (onnxruntime only)",
    )
    distill.add_argument("--output", "-o", type=Path, help="directory (default: the setting's)")
    distill.add_argument("--force", action="store_true", help="rebuild even if up to date")
    distill.add_argument(
        "--fit-model",
        type=Path,
        metavar="DIR",
        help="MiniLM's table: the folder of the int8 all-MiniLM-L6-v2 it is fitted toward "
        "(`fetch-model all-MiniLM-L6-v2 -o DIR`; default: where the service reads it)",
    )


def _add_fetch_model(sub: Any) -> None:
    fetch = sub.add_parser(
        "fetch-model", help="place an ONNX encoder's files from its wheels, digests checked"
    )
    fetch.add_argument("name", help="the model's row (embeddings/models.py)")
    fetch.add_argument("--output", "-o", type=Path, help="directory (default: beside the table)")
    fetch.add_argument(
        "--wheel",
        type=Path,
        action="append",
        default=[],
        help="a wheel already downloaded (repeat for a row of several wheels)",
    )
    fetch.add_argument("--force", action="store_true", help="fetch even if up to date")


def _fetch_model(name: str, output: Path | None, wheels: list[Path], force: bool) -> int:
    from tool_selector.embeddings.models import MODELS, default_model_dir  # noqa: PLC0415
    from tool_selector.offline import fetch_model  # noqa: PLC0415

    model = MODELS.get(name)
    if model is None:
        print(f"tool-selector: no model {name!r} (known: {', '.join(MODELS)})", file=sys.stderr)
        return 2
    try:
        print(fetch_model.fetch(model, output or default_model_dir(model), wheels, force))
    except ConfigError as exc:
        print(f"tool-selector: {exc}", file=sys.stderr)
        return 1
    return 0
