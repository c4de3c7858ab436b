"""A small slice of the six public bench sets for the test suite (``tests/fixtures/bench``).

``python -m tool_selector.offline.evaluation.bench_slice --bench-dir DIR --output
tests/fixtures/bench`` writes, per set, the queries ``pick_queries`` samples first from each
split (``PER_SPLIT`` of dev and of test, so a test asking for at most that many of a split
reads the very queries it reads on the whole set), every query that reads as not English
(``ranking.language.reads_foreign``), and for ``WHOLE`` sets every query; the tools are the
whole catalog for the sets whose tests read it whole, else the tools the kept queries name
(gold and BFCL's per-query ``catalog``). Lines are copied as they are, in file order, with
each set's ``SOURCE.md`` (origin and licence). The suite reads the slice, so it runs the same
wherever the checkout lies; ``tool-selector eval`` reads the whole sets.

Slicing the slice gives the slice (tested): it holds every query and tool it would pick.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tool_selector.offline.evaluation.dataset import (
    AGENT_SETS,
    API_SETS,
    BenchQuery,
    default_bench_dir,
    load_dataset,
    pick_queries,
)
from tool_selector.ranking.language import reads_foreign

#: Queries sampled from each split of each set.
PER_SPLIT = 100
#: Sets whose every query is kept (the Arcade context test reads each ``needs_context`` one).
WHOLE = frozenset({"arcade", "azure_mcp"})
#: Sets whose whole catalog is kept (tests rank or lint it whole).
WHOLE_CATALOG = frozenset({"arcade", "azure_mcp", "metatool"})
FILES = ("tools.jsonl", "queries.jsonl", "SOURCE.md")


def slice_set(source: Path, name: str, output: Path) -> tuple[int, int]:
    """Write set ``name`` of the bench at ``source`` sliced into ``output / name``; how many
    queries and tools it kept."""
    data = load_dataset(source, name)
    kept = {q.id for q in data.queries} if name in WHOLE else _sampled(data.queries)
    queries = [
        (line, row)
        for line, row in _lines(source / name / "queries.jsonl")
        if str(row["id"]) in kept
    ]
    named = {n for _, row in queries for n in (*row["gold"], *(row.get("catalog") or ()))}
    tools = [
        line
        for line, row in _lines(source / name / "tools.jsonl")
        if name in WHOLE_CATALOG or row["name"] in named
    ]
    folder = output / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queries.jsonl").write_text("".join(line for line, _ in queries), encoding="utf-8")
    (folder / "tools.jsonl").write_text("".join(tools), encoding="utf-8")
    if (source / name / "SOURCE.md").resolve() != (folder / "SOURCE.md").resolve():
        shutil.copyfile(source / name / "SOURCE.md", folder / "SOURCE.md")
    return len(queries), len(tools)


def _sampled(queries: Sequence[BenchQuery]) -> set[str]:
    chosen = [*pick_queries(queries, "dev", PER_SPLIT), *pick_queries(queries, "test", PER_SPLIT)]
    return {q.id for q in chosen} | {q.id for q in queries if reads_foreign(q.text)}


def _lines(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each non-blank line of a JSONL file as it is (its newline kept) and decoded."""
    with path.open(encoding="utf-8", newline="") as fh:
        return [(line, json.loads(line)) for line in fh if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-dir", type=Path, default=default_bench_dir())
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    for name in (*API_SETS, *AGENT_SETS):
        queries, tools = slice_set(args.bench_dir, name, args.output)
        sys.stdout.write(f"{name}: {queries} queries, {tools} tools\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
