"""Multi-step tasks by their steps, tuned on dev: ``python -m loadtests.steps``.

Offline measurement only. For each set, the service's answer (``Selector.select`` over the
whole catalog, the eval's ``service`` row: lift and bar included) on its dev queries (at
most ``--dev-limit``) and on its test queries (at most ``--test-limit``, on each of
``--paths``: the eval's ``service``, ``service lexical`` and ``service cold (static)`` rows)
with multi-step ranking off and under each ``StepRule`` of ``VARIANTS`` (``ranking.steps``);
R@1 / R@5 per set, the share of queries read as multi-step, and the in-process ms/query
(which includes the clauses' encodes, one batch per query: the whole queries are encoded
up front, batched, as the eval does).

The rule is not fitted, but choosing a variant is tuning, so each set is also judged on a
variant chosen without it: per held-out set, the variant with the best mean dev R@5 gain
over the **other** sets among those that lower none of them (none qualifies: off), and that
variant's test row on the held-out set.

Every selector shares one catalog store, embedding cache and query cache, so a catalog is
embedded once and a clause encoded once per run. Run under ``nice -n 19`` on a shared host.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tests.support import static_table

from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.embeddings.static import StaticEncoder
from tool_selector.lru import BoundedLRU
from tool_selector.offline.evaluation.dataset import (
    DATASETS,
    Dataset,
    default_bench_dir,
    load_dataset,
    pick_queries,
)
from tool_selector.offline.evaluation.fit import encode_queries
from tool_selector.offline.evaluation.metrics import MetricSums
from tool_selector.offline.evaluation.runner import cold_selector
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fitted import SHIPPED_STEPS, Rules
from tool_selector.ranking.glossary import default_glossary
from tool_selector.ranking.steps import StepRule, clauses
from tool_selector.settings import Settings

#: The rules measured, by name (``off``: no multi-step ranking).
VARIANTS: dict[str, StepRule | None] = {
    "off": None,
    "2+ clauses": StepRule(),
    "2+ clauses, whole cos": StepRule(own_vectors=False),
    "3+ clauses": StepRule(min_clauses=3),
    "3+ clauses, whole cos": StepRule(min_clauses=3, own_vectors=False),
    "long tasks, own vectors": replace(SHIPPED_STEPS, own_vectors=True),
    "long tasks, whole cos": replace(SHIPPED_STEPS, in_context=False),
    "long tasks, in context (shipped)": SHIPPED_STEPS,
    "long tasks, words only": replace(SHIPPED_STEPS, words_only=True),
}


@dataclass(frozen=True, slots=True)
class Cell:
    """One variant on one set: R@1, R@5, share read as multi-step, ms/query."""

    r1: float
    r5: float
    split: float
    ms: float


def path_selector(base: Selector, rule: StepRule | None, path: str) -> Selector:
    """A selector sharing ``base``'s caches, ranking multi-step patterns by ``rule``, on the
    eval row's ``path``: hybrid, lexical (no encoder) or cold (``runner.cold_selector``)."""
    selector = Selector(
        encoder=None if path == "lexical" else base.encoder,
        cache=base.cache,
        catalogs=base.catalogs,
        queries=base.queries,
        embed_deadline=math.inf,
        glossary=base.glossary,
        rules=Rules(steps=rule),
    )
    if path == "cold":
        assert base.static is not None
        return cold_selector(selector, base.static)
    return selector


def measure(
    base: Selector,
    data: Dataset,
    rule: StepRule | None,
    *,
    split: str,
    limit: int | None,
    path: str = "hybrid",
) -> Cell:
    """The service's answer on ``data``'s queries with ``rule`` on ``path``."""
    selector = path_selector(base, rule, path)
    queries = pick_queries(data.queries, split, limit)  # type: ignore[arg-type]
    tools, sums = ToolSource.of(list(data.tools)), MetricSums(k=5)
    many = 0
    for q in queries:
        t0 = time.perf_counter()
        answer = selector.select(Ask(pattern=q.text, tools=tools, top_k=5))
        sums.add(answer.ranking.names, q.gold, time.perf_counter() - t0)
        many += rule is not None and bool(clauses(q.text, rule))
    out = sums.summary()
    return Cell(
        out.get("r@1", 0.0), out.get("r@5", 0.0), 100 * many / len(queries), out["ms/query"]
    )


def choose(rows: Mapping[str, Mapping[str, Cell]], sets: Sequence[str]) -> str:
    """The variant with the best mean R@5 gain over ``sets`` among those lowering none of
    them (R@1 or R@5) below ``off``; ``off`` when none qualifies."""
    best, gain = "off", 0.0
    for name in next(iter(rows.values())):
        if name == "off":
            continue
        deltas = [
            (rows[s][name].r5 - rows[s]["off"].r5, rows[s][name].r1 - rows[s]["off"].r1)
            for s in sets
        ]
        if any(d5 < 0 or d1 < 0 for d5, d1 in deltas):
            continue
        mean = sum(d5 for d5, _ in deltas) / len(deltas)
        if mean > gain:
            best, gain = name, mean
    return best


def _base_selector() -> Selector:
    """The model, the static table and the glossary, with caches for a whole run."""
    return Selector(
        encoder=encoder_from_settings(Settings.from_env({})),
        cache=MemoryCache(512 * 1024 * 1024),
        catalogs=CatalogStore(50_000),
        queries=BoundedLRU(200_000),
        embed_deadline=math.inf,
        glossary=default_glossary(),
        static=StaticEncoder(static_table()),
    )


def _encode(base: Selector, texts: list[str]) -> None:
    """Every query in batches, once, into the shared query cache."""
    encoder = base.encoder
    assert encoder is not None
    for text, vec in zip(texts, encode_queries(encoder, texts), strict=True):
        vec.setflags(write=False)
        base.queries.put((encoder.model_id, text), vec)


def _print_table(title: str, rows: Mapping[str, Mapping[str, Cell]]) -> None:
    variants = list(next(iter(rows.values())))
    print(f"\n| set ({title}) | split 2+ / 3+ | {' | '.join(variants)} |")
    print("|---|---|" + "---|" * len(variants))
    for name, cells in rows.items():
        shares = " / ".join(
            f"{cells[v].split:.0f}%" for v in ("2+ clauses", "3+ clauses") if v in cells
        )
        body = " | ".join(f"{c.r1:.1f} / {c.r5:.1f} ({c.ms:.1f} ms)" for c in cells.values())
        print(f"| {name} | {shares} | {body} |")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m loadtests.steps", description=__doc__.splitlines()[0]
    )
    p.add_argument("--bench-dir", default=default_bench_dir())
    p.add_argument("--datasets", nargs="+", default=list(DATASETS))
    p.add_argument("--dev-limit", type=int, default=300, help="dev queries per set (300)")
    p.add_argument("--test-limit", type=int, default=1000, help="test queries per set (1000)")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument(
        "--paths",
        nargs="+",
        default=["hybrid", "lexical", "cold"],
        choices=("hybrid", "lexical", "cold"),
        help="test rows: service (hybrid), service lexical, service cold (static)",
    )
    args = p.parse_args(argv)
    base, began = _base_selector(), time.perf_counter()
    tables: dict[str, dict[str, dict[str, Cell]]] = {}
    runs = [("dev", "hybrid", args.dev_limit)] + [("test", x, args.test_limit) for x in args.paths]
    for name in args.datasets:
        data = load_dataset(args.bench_dir, name)
        base.embedded(list(data.tools))
        for split, limit in (("dev", args.dev_limit), ("test", args.test_limit)):
            _encode(base, [q.text for q in pick_queries(data.queries, split, limit)])  # type: ignore[arg-type]
        for split, path, limit in runs:
            cells = {
                v: measure(base, data, VARIANTS[v], split=split, limit=limit, path=path)
                for v in args.variants
            }
            tables.setdefault(f"{split}, {path}", {})[name] = cells
            line = " | ".join(f"{v} {c.r1:.1f}/{c.r5:.1f}" for v, c in cells.items())
            sys.stderr.write(
                f"{name} {split} {path}: {line} ({time.perf_counter() - began:.0f} s)\n"
            )
    for title, rows in tables.items():
        _print_table(title, rows)
    dev, test = tables["dev, hybrid"], tables.get("test, hybrid", {})
    if test:
        print("\n| held-out set | chosen on the others' dev | test off | test chosen |")
        print("|---|---|---|---|")
        for held in dev:
            pick = choose(dev, [s for s in dev if s != held])
            off, got = test[held]["off"], test[held][pick]
            print(
                f"| {held} | {pick} | {off.r1:.1f} / {off.r5:.1f} | {got.r1:.1f} / {got.r5:.1f} |"
            )
    print(
        f"\n`python -m loadtests.steps {' '.join(sys.argv[1:] if argv is None else argv)}` "
        f"({time.perf_counter() - began:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
