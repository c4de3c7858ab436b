"""``tool-selector lint``: the catalog report of a tool list file, as text, JSON or HTML.

The file is read as ``shadow-compare --catalog`` reads it (``tool_file``: JSON or JSONL, any
provider shape, wrappers included; a ``search_text`` key next to a tool's description is its
search-only text). What the file holds that a search does not take is reported, not dropped
without a word (``lint.entries``: names the service refuses, entries with no name, names
given twice; the tools linted are the ones a search takes). Every probe is answered by the
service's own ``Selector``:

- ``--ranking auto`` (default): ``hybrid`` up to ``AUTO_HYBRID_TOOLS`` tools, ``static``
  above (embedding 4,076 tools first made a hybrid lint take 2 min 28 s on 2 quiet cores;
  the static arm lints them in 23 s, and is what the endpoint answers a large new catalog
  with while the model embeds it);
- ``--ranking hybrid``: the bundled model, as the endpoint answers a catalog it has embedded
  (the model loads from the files ``make install`` placed, offline);
- ``--ranking static``: the static arm, as the endpoint answers a catalog while the model
  loads (thousands of tools in seconds);
- ``--ranking lexical``: BM25 alone (``TOOL_SELECTOR_ENCODER=none``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import msgspec
from threadpoolctl import threadpool_limits

from tool_selector.errors import ConfigError
from tool_selector.lint import entries
from tool_selector.lru import BoundedLRU
from tool_selector.offline.arguments import positive_int
from tool_selector.offline.evaluation.dataset import tools_of
from tool_selector.offline.outputs import check_files
from tool_selector.offline.tool_file import ToolFileError, load_tools, read_tool_list
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings
from tool_selector_client.catalog_lint import Finding, LintReport
from tool_selector_client.wire import Tool

#: Query vectors kept while one catalog is linted (every probe of 4,000 tools fits).
_PROBE_VECTORS = 50_000


def add_parser(sub: Any) -> None:
    """Register the ``lint`` subcommand."""
    p = sub.add_parser("lint", help="report why tools of a catalog are not found")
    p.add_argument("--catalog", type=Path, required=True, help="tool list file (JSON or JSONL)")
    p.add_argument("--format", choices=("text", "json", "html"), default="text", help="report as")
    p.add_argument("--output", "-o", type=Path, help="write here (default: standard output)")
    p.add_argument("--ranking", choices=("auto", "hybrid", "static", "lexical"), default="auto",
                   help="which ranker answers the probes (default auto: the model up to "
                   f"{AUTO_HYBRID_TOOLS} tools, the static arm above)")  # fmt: skip
    p.add_argument(
        "--top-k", type=positive_int, default=5, help="answer size a probe must hit (default 5)"
    )
    p.add_argument(
        "--every-probe",
        action="store_true",
        help="ask every probe (own-probe recall), not only until one finds its tool",
    )


def read_catalog(path: Path) -> list[Tool]:
    """The wire tools of a tool list file (raises ``ToolFileError``)."""
    return _wire(path, load_tools(path))


def read_checked(path: Path, settings: Settings) -> tuple[list[Tool], list[Finding]]:
    """The tools of a tool list file that a search takes, and the findings on the rest
    (``lint.entries``: names it refuses, entries with no name, names given twice); raises
    ``ToolFileError`` when no tool is left."""
    found = read_tool_list(path)
    tools = _wire(path, found.tools)
    written = [(f"{where}: ", name) for where, name in found.unusable if name is not None]
    refused = entries.refused_names([*written, *(("", t.name) for t in tools)], settings)
    out = {name for f in refused for name in f.tools}
    taken = [t for t in tools if t.name not in out]
    if not taken:
        raise ToolFileError(f"{path}: no tool with a name a search takes ({len(refused)} refused)")
    nameless = [where for where, name in found.unusable if name is None]
    more = [
        *entries.unusable_entries(nameless),
        *entries.repeated_names(found.repeated, found.differing),
    ]
    return taken, [*refused, *more]


def _wire(path: Path, rows: list[Any]) -> list[Tool]:
    tools: list[Tool] = []
    for row in rows:
        try:
            tools += tools_of(row)
        except ValueError as exc:
            raise ToolFileError(f"{path}: {exc}") from exc
    return tools


#: ``--ranking auto`` lints catalogs up to this many tools with the model, larger ones with
#: the static arm (a minute's budget on 2 cores: the model embeds about 60 tool texts/s).
AUTO_HYBRID_TOOLS = 1000


def chosen_ranking(ranking: str, tools: int) -> str:
    """``ranking``, with ``auto`` resolved by the catalog's size."""
    if ranking != "auto":
        return ranking
    return "hybrid" if tools <= AUTO_HYBRID_TOOLS else "static"


def lint_selector(ranking: str, settings: Settings) -> Selector:
    """A selector answering as the endpoint does on the chosen ranking path."""
    from tool_selector.embeddings.factory import (  # noqa: PLC0415
        encoder_from_settings,
        static_from_settings,
    )

    if ranking == "lexical":
        return Selector(catalogs=CatalogStore(1_000_000))
    if ranking == "static":
        return Selector(catalogs=CatalogStore(1_000_000), static=static_from_settings(settings))
    encoder = encoder_from_settings(settings)
    if encoder is None:
        raise ConfigError("--ranking hybrid needs an encoder (TOOL_SELECTOR_ENCODER=none)")
    return Selector(
        encoder=encoder,
        catalogs=CatalogStore(1_000_000),
        queries=BoundedLRU(_PROBE_VECTORS),
        embed_deadline=math.inf,
    )


def run(args: argparse.Namespace) -> int:
    """Lint the catalog file and write the report in the chosen format."""
    from tool_selector.lint.report import lint, with_findings  # noqa: PLC0415

    if args.output is not None:  # before the probes: one line naming it (cli.main)
        check_files([args.output], folders_made=True)
    try:
        settings = Settings.from_env(os.environ)
        tools, read = read_checked(args.catalog, settings)
        args.ranking = chosen_ranking(args.ranking, len(tools))
        selector = lint_selector(args.ranking, settings)
    except (ConfigError, ToolFileError) as exc:
        sys.stderr.write(f"tool-selector lint: {exc}\n")
        return 2
    # one BLAS thread, as the service runs (``blas_threads``): a cosine over 4,000 tools
    # took 20 ms with the default threads on 2 busy cores, 3 ms with one
    threadpool_limits(limits=settings.blas_threads or 1, user_api="blas")
    report = lint(selector, ToolSource.of(tools), top_k=args.top_k, every=args.every_probe)
    report = with_findings(report, read)
    text = render(report, args.format, str(args.catalog))
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        sys.stderr.write(f"wrote {args.output}\n")
    return 0


def render(report: LintReport, fmt: str, title: str) -> str:
    """The report as ``text``, ``json`` or a self-contained ``html`` page."""
    from tool_selector.lint.report import render_text  # noqa: PLC0415

    if fmt == "json":
        return json.dumps(msgspec.to_builtins(report), indent=2) + "\n"
    if fmt == "html":
        from tool_selector.offline.report_html import lint_page  # noqa: PLC0415

        return lint_page(msgspec.to_builtins(report), title)
    return render_text(report)
