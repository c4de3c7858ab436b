"""``tool-selector eval``: measure ranking quality on ../shared/bench next to the references."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from tool_selector.errors import ConfigError
from tool_selector.evaluation.dataset import DATASETS, DatasetError, default_bench_dir
from tool_selector.settings import Settings


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``eval`` subcommand."""
    p = sub.add_parser("eval", help="measure ranking quality on ../shared/bench")
    p.add_argument(
        "--dataset",
        action="append",
        choices=DATASETS,
        help="dataset to run (repeatable; default: all three)",
    )
    p.add_argument("--limit", type=int, help="most queries per dataset (deterministic sample)")
    p.add_argument("--split", choices=("dev", "test", "all"), default="test")
    p.add_argument("--k", type=int, default=5, help="top_k of every request (default 5)")
    p.add_argument(
        "--negatives",
        type=int,
        default=100,
        help="negative queries per other dataset for the no-match rates (0: skip)",
    )
    p.add_argument(
        "--per-query-catalogs",
        action="store_true",
        help="also rank each BFCL query's own small tool list (catalogs.jsonl)",
    )
    p.add_argument(
        "--bench-dir",
        type=Path,
        default=default_bench_dir(),
        help="benchmark folder (default: ../shared/bench next to the repository)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=Path("reports/quality.json"),
        help="results file; the markdown table goes next to it as .md ('-': don't write)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    """Run the evaluation, print the table and the JSON, write the results file."""
    from tool_selector.embeddings.factory import encoder_from_settings  # noqa: PLC0415
    from tool_selector.evaluation.report import markdown, write  # noqa: PLC0415
    from tool_selector.evaluation.runner import EvalConfig, Evaluator  # noqa: PLC0415

    for flag, value in (("--limit", args.limit), ("--k", args.k)):
        if value is not None and value < 1:
            sys.stderr.write(f"tool-selector eval: {flag} must be >= 1\n")
            return 2
    config = EvalConfig(
        bench_dir=args.bench_dir,
        datasets=tuple(args.dataset or DATASETS),
        split=args.split,
        limit=args.limit,
        k=args.k,
        negatives=args.negatives,
        progress=not args.no_progress,
        per_query_catalogs=args.per_query_catalogs,
    )
    command = "tool-selector " + shlex.join(sys.argv[1:] if sys.argv[1:2] == ["eval"] else [])
    try:
        encoder = encoder_from_settings(Settings.from_env(os.environ))
    except ConfigError as exc:
        sys.stderr.write(f"tool-selector eval: {exc}\n")
        return 2
    if encoder is None:
        sys.stderr.write("tool-selector eval: needs an encoder (TOOL_SELECTOR_ENCODER=none)\n")
        return 2
    try:
        report = Evaluator(encoder, config).run()
    except DatasetError as exc:
        sys.stderr.write(f"tool-selector eval: {exc}\n")
        return 2
    sys.stdout.write(markdown(report, command) + "\n")
    sys.stdout.write(json.dumps(report.as_dict(), indent=2) + "\n")
    if str(args.output) != "-":
        md = write(report, args.output, command)
        sys.stderr.write(f"wrote {args.output} and {md}\n")
    return 0
