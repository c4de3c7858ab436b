"""Does conversation context find a follow-up's tool? Arcade's ``needs_context`` requests
ranked without and with their real earlier turns (``eval/arcade_context/context.jsonl``),
on the three ranking paths, and a sweep of the context weights on the dev half.

    python -m tool_selector.offline.evaluation.context [--sweep]

Prints R@1 / R@5 per split (dev, test, all) for: no context, messages only, recent tools
only, both; and the other Arcade categories (which carry no context) as a check that
nothing else moves. Weights: ``ranking.context.ContextWeights`` (``--sweep`` tries a grid
on dev and prints it; the shipped default is what it chose).
"""

from __future__ import annotations

import argparse
import itertools
import math
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec

from tool_selector.offline.evaluation.dataset import (
    REPO_ROOT,
    BenchQuery,
    Dataset,
    default_bench_dir,
    load_dataset,
    split_of,
)
from tool_selector.offline.evaluation.runner import models_from_env, path_selectors
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.context import ContextWeights
from tool_selector_client.wire import Context

CONTEXT_FILE = REPO_ROOT / "eval" / "arcade_context" / "context.jsonl"
#: The context variants measured: which parts of a row's context a request carries.
VARIANTS = ("none", "messages", "recent_tools", "both")
_GRID = (0.0, 0.5, 1.0, 1.5)


class ContextRow(msgspec.Struct):
    """One row of ``context.jsonl`` (the fields read here)."""

    id: str
    messages: list[str]
    recent_tools: list[str]


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")


def load_contexts(path: Path = CONTEXT_FILE) -> dict[str, Context]:
    """Each ``needs_context`` query's real earlier turns, by query id."""
    decoder = msgspec.json.Decoder(ContextRow)
    rows = [decoder.decode(line) for line in path.read_bytes().splitlines() if line.strip()]
    return {r.id: Context(messages=r.messages, recent_tools=r.recent_tools) for r in rows}


def variant(context: Context, name: str) -> Context | None:
    """The part of ``context`` that variant ``name`` sends."""
    if name == "none":
        return None
    if name == "messages":
        return Context(messages=context.messages)
    if name == "recent_tools":
        return Context(recent_tools=context.recent_tools)
    return context


@dataclass(frozen=True, slots=True)
class Recall:
    """R@1 and R@5 (percent) over ``n`` queries."""

    n: int
    r1: float
    r5: float


def recall(
    selector: Selector,
    data: Dataset,
    queries: Sequence[BenchQuery],
    contexts: dict[str, Context],
    name: str,
) -> Recall:
    """R@1 / R@5 of ``selector`` over ``queries`` (whole catalog), each with variant ``name``
    of its context (none for a query without a row)."""
    tools = ToolSource.of(list(data.tools), key="context-eval")
    hits1 = hits5 = 0.0
    for q in queries:
        row = contexts.get(q.id)
        ask = Ask(q.text, tools, top_k=5, context=None if row is None else variant(row, name))
        names = selector.select(ask).ranking.names
        gold = set(q.gold)
        hits1 += float(bool(names[:1]) and names[0] in gold)
        hits5 += len(gold & set(names[:5])) / len(gold)
    n = len(queries)
    return Recall(n, 100 * hits1 / max(n, 1), 100 * hits5 / max(n, 1))


def _splits(queries: Sequence[BenchQuery]) -> dict[str, list[BenchQuery]]:
    return {
        "dev": [q for q in queries if split_of(q.id) == "dev"],
        "test": [q for q in queries if split_of(q.id) == "test"],
        "all": list(queries),
    }


def _table(selector: Selector, data: Dataset, contexts: dict[str, Context]) -> None:
    follow = [q for q in data.queries if q.id in contexts and q.gold]
    for name in VARIANTS:
        cells = [recall(selector, data, qs, contexts, name) for qs in _splits(follow).values()]
        row = " | ".join(f"{c.r1:5.1f} / {c.r5:5.1f} (n={c.n})" for c in cells)
        _out(f"| needs_context, {name:12} | {row} |")
    others = [q for q in data.queries if q.id not in contexts and q.gold]
    cells = [recall(selector, data, qs, contexts, "none") for qs in _splits(others).values()]
    row = " | ".join(f"{c.r1:5.1f} / {c.r5:5.1f} (n={c.n})" for c in cells)
    _out(f"| other categories (none)   | {row} |")


def _sweep(selector: Selector, data: Dataset, contexts: dict[str, Context]) -> None:
    dev = [q for q in data.queries if q.id in contexts and q.gold and split_of(q.id) == "dev"]
    _out("| w_messages | w_recent | dev R@1 | dev R@5 |")
    for wm, wr in itertools.product(_GRID, _GRID):
        weighted = Selector(
            selector.encoder,
            selector.cache,
            replace(selector.rules, context=ContextWeights(messages=wm, recent=wr)),
            catalogs=selector.catalogs,
            queries=selector.queries,
            embed_deadline=math.inf,
            static=selector.static,
        )
        got = recall(weighted, data, dev, contexts, "both")
        _out(f"| {wm} | {wr} | {got.r1:.1f} | {got.r5:.1f} |")


def main(argv: Sequence[str] | None = None) -> int:
    """Print the context tables (and the sweep with ``--sweep``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweep", action="store_true", help="sweep the weights on dev")
    parser.add_argument("--paths", nargs="*", default=["hybrid", "static", "lexical"])
    args = parser.parse_args(argv)
    encoder, static = models_from_env("context eval")
    data, contexts = load_dataset(default_bench_dir(), "arcade"), load_contexts()
    _out(f"$ python -m tool_selector.offline.evaluation.context {shlex.join(argv or sys.argv[1:])}")
    _out(f"weights: {ContextWeights()}")
    for path, selector in path_selectors(encoder, static):
        if path not in args.paths:
            continue
        _out(f"\n{path}: R@1 / R@5 | dev | test | all |")
        if args.sweep:
            _sweep(selector, data, contexts)
        _table(selector, data, contexts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
