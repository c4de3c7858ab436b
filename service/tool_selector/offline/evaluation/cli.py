"""``tool-selector eval``: measure ranking quality on eval data sets next to the references.

By default the seven known sets (``DATASETS``), whole test split; ``--dataset NAME|PATH``
picks sets or folders in the bench format, ``--catalog FILE --queries FILE`` one more as two
files. Bad data (a gold name missing from the catalog, a tool with no name, a query id given
twice) exits 2 with the file and line; so does a set with no query in the chosen split.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tool_selector.errors import ConfigError, DatasetError
from tool_selector.offline.arguments import count, share
from tool_selector.offline.evaluation.dataset import DATASETS, check_split, default_bench_dir
from tool_selector.offline.outputs import check_files
from tool_selector.settings import Settings

if TYPE_CHECKING:
    from tool_selector.embeddings.encoder import Encoder
    from tool_selector.offline.evaluation.dataset import Dataset
    from tool_selector.offline.evaluation.runner import EvalConfig, EvalReport
    from tool_selector.ranking.glossary import Glossary
    from tool_selector.ranking.steps import StepRule


#: ``--output``'s default.
_QUALITY = Path("reports/quality.json")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``eval`` subcommand."""
    p = sub.add_parser("eval", help="measure ranking quality on eval data sets")
    p.add_argument(
        "--dataset",
        action="append",
        metavar="NAME|PATH",
        help=f"data set: one of {', '.join(DATASETS)} or a folder holding tools.jsonl and "
        "queries.jsonl (repeatable; default: the seven known sets)",
    )
    p.add_argument("--catalog", type=Path, help="tools file (JSONL); needs --queries")
    p.add_argument(
        "--queries", type=Path, help="queries file (JSONL, one id per query); needs --catalog"
    )
    p.add_argument("--limit", type=int, help="most queries per dataset (deterministic sample)")
    p.add_argument(
        "--split",
        choices=("dev", "test", "all"),
        default="test",
        help="which queries of each set (by a hash of the id: dataset.split_of); a set with "
        "none in it, or with an id on two lines, is refused",
    )
    p.add_argument("--k", type=int, default=5, help="top_k of every request (default 5)")
    p.add_argument(
        "--negatives",
        type=count,
        default=0,
        help="also N synthetic negatives per other API-style set (queries of another set "
        "against 20 of this catalog's tools); default 0: the sets' own no-match queries only",
    )
    p.add_argument(
        "--per-query-catalogs",
        action="store_true",
        help="also rank each BFCL query's own small tool list (catalogs.jsonl)",
    )
    _learn_arguments(p)
    _output_arguments(p)


def _learn_arguments(p: argparse.ArgumentParser) -> None:
    """``--learn`` and how its simulated traffic behaves."""
    p.add_argument(
        "--learn",
        action="store_true",
        help="judge the learned arm instead: replay each set's traffic with simulated feedback, "
        "measure its other queries (--split dev: halves of dev; test: dev learned, test "
        "measured), R@1 and R@5 without and with the evidence (writes reports/learn.json); "
        "--limit samples each set's queries of every split",
    )
    p.add_argument(
        "--wrong",
        type=share,
        nargs="+",
        default=[0.1, 0.3],
        help="with --learn: the shares of the simulated model's calls that go to another "
        "shown tool, one run each (default 0.1 0.3)",
    )
    p.add_argument(
        "--flood",
        type=count,
        default=1000,
        help="with --learn: also a run at the first --wrong with this many hostile searches "
        "(0: none; default 1000)",
    )


def _output_arguments(p: argparse.ArgumentParser) -> None:
    """Where the data and the results live, and how the run reports."""
    p.add_argument(
        "--bench-dir",
        type=Path,
        default=default_bench_dir(),
        help="bench folder (default: TOOL_SELECTOR_BENCH_DIR, else shared/bench above the repo)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=_QUALITY,
        help="results file; the markdown table goes next to it as .md ('-': don't write; "
        "default: reports/quality.json, with --learn reports/learn.json)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument(
        "--answers",
        type=Path,
        help="also write the service's answer to every query, one JSON line each (two runs "
        "that answer alike write equal files)",
    )
    p.add_argument(
        "--update-readme",
        type=Path,
        metavar="PAGE",
        help="also regenerate the quality block of this page (docs/quality.md) from the results",
    )


def run(args: argparse.Namespace) -> int:
    """Run the evaluation, print the tables and the JSON, write the results file."""
    from tool_selector.embeddings.factory import (  # noqa: PLC0415
        encoder_from_settings,
        multilingual_from_settings,
    )
    from tool_selector.offline.evaluation.runner import Evaluator, load_all  # noqa: PLC0415
    from tool_selector.ranking.fitted import SHIPPED_STEPS  # noqa: PLC0415
    from tool_selector.ranking.glossary import default_glossary  # noqa: PLC0415

    problem = _bad_arguments(args)
    if problem:
        sys.stderr.write(f"tool-selector eval: {problem}\n")
        return 2
    _check_outputs(args)
    config = _config(args)
    try:
        datasets = load_all(config)  # first: a bad file is reported before the model loads
        check_split(datasets, args.split)
        settings = Settings.from_env(os.environ)
        encoder = encoder_from_settings(settings)
        if encoder is None:
            raise ConfigError("eval needs an encoder (TOOL_SELECTOR_ENCODER=none)")
        arm = multilingual_from_settings(settings)
        glossary = default_glossary() if settings.glossary else None
        steps = SHIPPED_STEPS if settings.multi_step else None
        if args.learn:
            return _learn(args, encoder, glossary, datasets, steps)
        report = Evaluator(
            encoder, config, datasets, _static(settings), arm, glossary=glossary, steps=steps
        ).run()
    except (ConfigError, DatasetError) as exc:
        sys.stderr.write(f"tool-selector eval: {exc}\n")
        return 2
    command = "tool-selector " + shlex.join(sys.argv[1:] if sys.argv[1:2] == ["eval"] else [])
    return _emit(report, command, args)


def _learn(
    args: argparse.Namespace,
    encoder: Encoder,
    glossary: Glossary | None,
    datasets: list[Dataset],
    steps: StepRule | None,
) -> int:
    """``--learn``: the learned arm's table (``offline.evaluation.learn``) and its JSON."""
    from tool_selector.offline.evaluation.learn import (  # noqa: PLC0415
        LearnEval,
        Traffic,
        replay_all,
        sampled,
        table,
    )
    from tool_selector.ranking.fitted import Rules  # noqa: PLC0415

    traffics = [Traffic(w) for w in args.wrong]
    if args.flood:
        traffics.append(Traffic(args.wrong[0], args.flood))
    run = LearnEval(encoder, Rules(steps=steps), glossary=glossary, k=args.k)

    def say(message: str) -> None:
        if not args.no_progress:
            sys.stderr.write(message + "\n")

    results = replay_all(run, sampled(datasets, args.limit), args.split, traffics, say)
    command = "tool-selector " + shlex.join(sys.argv[1:] if sys.argv[1:2] == ["eval"] else [])
    sys.stdout.write(f"`{command}`\n\n{table(results)}\n")
    output = _learn_output(args)
    if str(output) != "-":
        output.parent.mkdir(parents=True, exist_ok=True)
        data = {"command": command, "results": [r.as_dict() for r in results]}
        output.write_text(json.dumps(data, indent=2) + "\n")
        sys.stderr.write(f"wrote {output}\n")
    return 0


def _learn_output(args: argparse.Namespace) -> Path:
    """``--output``, whose default is ``reports/learn.json`` with ``--learn``."""
    return Path("reports/learn.json") if args.output == _QUALITY else args.output


def _check_outputs(args: argparse.Namespace) -> None:
    """Every file the run will write can be written, before the work (``offline.outputs``):
    the results and their ``.md`` (``--learn``: its results), ``--answers``, and the page
    ``--update-readme`` rewrites (which must exist)."""
    if args.learn:
        output = _learn_output(args)
        check_files([] if str(output) == "-" else [output], folders_made=True)
        return
    results = [] if str(args.output) == "-" else [args.output, args.output.with_suffix(".md")]
    answers = [] if args.answers is None else [args.answers]
    check_files([*results, *answers], folders_made=True)
    page = args.update_readme
    if page is not None:
        check_files([page])
        if not page.exists():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(page))


def _static(settings: Settings) -> Encoder | None:
    """The static arm for the cold row; none (and a warning) when its table is missing."""
    from tool_selector.embeddings.factory import static_from_settings  # noqa: PLC0415

    try:
        return static_from_settings(settings)
    except ConfigError as exc:
        sys.stderr.write(f"tool-selector eval: no cold row: {exc}\n")
        return None


def _bad_arguments(args: argparse.Namespace) -> str | None:
    for flag, value in (("--limit", args.limit), ("--k", args.k)):
        if value is not None and value < 1:
            return f"{flag} must be >= 1"
    if (args.catalog is None) != (args.queries is None):
        return "--catalog and --queries go together"
    return None


def _config(args: argparse.Namespace) -> EvalConfig:
    from tool_selector.offline.evaluation.runner import EvalConfig  # noqa: PLC0415

    files = ((args.catalog, args.queries),) if args.catalog else ()
    return EvalConfig(
        bench_dir=args.bench_dir,
        datasets=tuple(args.dataset or (() if files else DATASETS)),
        files=files,
        split=args.split,
        limit=args.limit,
        k=args.k,
        negatives=args.negatives,
        progress=not args.no_progress,
        per_query_catalogs=args.per_query_catalogs,
        answers=args.answers,
    )


def _emit(report: EvalReport, command: str, args: argparse.Namespace) -> int:
    """Print the tables and the JSON; write the results (and the quality block)."""
    from tool_selector.offline.evaluation import readme  # noqa: PLC0415
    from tool_selector.offline.evaluation.report import render, results_dict, write  # noqa: PLC0415

    data = results_dict(report, command)
    sys.stdout.write(render(data) + "\n")
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
    if str(args.output) != "-":
        md = write(data, args.output)
        sys.stderr.write(f"wrote {args.output} and {md}\n")
    if args.update_readme is not None:
        path = args.update_readme
        try:
            path.write_text(readme.update(path.read_text(encoding="utf-8"), data))
        except (OSError, ValueError) as exc:
            sys.stderr.write(f"tool-selector eval: {path} not updated: {exc}\n")
            return 2
        sys.stderr.write(f"updated the quality block of {path}\n")
    return 0
