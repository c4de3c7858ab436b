"""Fusion variants on the dev split, refitted and scored in seconds each.

``python -m tool_selector.offline.evaluation.variants [--variants NAME ...]``. Offline only.

Each dev query's signals (``ranker.signals`` over the catalog the service builds, the
bundled model) and every reference arm's top k (``references.reference_rankers``) are
computed once per set. A variant is a function of a query's ``Signals`` returning feature
columns: a column named like one of the fit's seven (``fit.WEIGHTS`` without ``_weight``)
replaces it, any other is added. Each variant's weights are refitted by the fit's listwise
loss (``fit.loss``, its blocks and sample: at most ``fit.MAX_QUERIES`` queries per set), then
every dev query is ranked by the fitted score with the named-tool lift (``ranker.lift_named``)
and no relevance bar, i.e. the eval's ``service (no abstention)`` row; ``shipped`` is the
shipped score itself (no refit) and reproduces that row. Reported per variant: R@1/R@5 per
set, and the (set, category, R@k) cells of at least ``--min-queries`` queries where it is
below the best reference arm (``bm25``, ``bm25+params``, ``dense``, ``rrf``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tool_selector.offline.evaluation import dataset as bench
from tool_selector.offline.evaluation.fit import (
    MAX_QUERIES,
    MIN_CATEGORY,
    WEIGHTS,
    Block,
    category_blocks,
    encode_queries,
    minimise,
    model_selector,
    shipped,
    signal_columns,
    target,
)
from tool_selector.offline.evaluation.metrics import recall_at
from tool_selector.offline.evaluation.references import reference_rankers
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.catalog import Catalog
from tool_selector.ranking.dense import FloatArray, cosine_scores
from tool_selector.ranking.fitted import HYBRID
from tool_selector.ranking.fusion import (
    FusionParams,
    Signals,
    length_share,
    ranks,
    standardise,
)
from tool_selector.ranking.ranker import Query, lift_named, named_tools, signals

#: The fit's seven features by short name (``cos`` for ``cos_weight``...), in order.
BASE = tuple(w.removesuffix("_weight") for w in WEIGHTS)
#: Reference arms a variant is held against (``relevance`` is never the best arm).
ARMS = ("bm25", "bm25+params", "dense", "rrf")
K = 5

Columns = dict[str, FloatArray]
Variant = Callable[[Signals], Columns]


@dataclass(frozen=True, slots=True)
class Row:
    """One dev query: its signals, gold positions, named tools and the arms' top k."""

    dataset: str
    category: str
    pattern: str
    signals: Signals
    gold: tuple[int, ...]
    named: tuple[set[int], set[int]]
    arms: Mapping[str, tuple[int, ...]]
    fitted: bool


@dataclass(frozen=True, slots=True)
class SetRows:
    """One set's catalog and dev rows."""

    catalog: Catalog
    rows: list[Row]


def _cos(s: Signals) -> FloatArray:
    if s.dense is None:
        raise ValueError("variants need the model's cosines")
    return s.dense


def base_columns(s: Signals) -> Columns:
    """The fit's seven features of one query: ``fuse``'s halves at unit weights."""
    return dict(zip(BASE, signal_columns(s), strict=True))


def _lexical_rank(scores: FloatArray) -> FloatArray:
    out = np.asarray(10.0 / (10.0 + ranks(scores)), dtype=np.float32)
    out[scores <= 0] = 0.0
    return out


def _long(
    s: Signals, gate: FloatArray | float, clip: float = 10.0, params: FusionParams | None = None
) -> Columns:
    z = np.clip(standardise(s.bm25), -3.0, clip)
    share = length_share(s.terms, HYBRID if params is None else params)
    return {"long": np.asarray(share * z * gate, np.float32)}


def _conditioned(s: Signals) -> Columns:
    base, share = base_columns(s), length_share(s.terms, HYBRID)
    return {f"{k}*explained": v * s.explained for k, v in base.items()} | {
        f"{k}*long": v * share for k, v in base.items()
    }


def _dense_rank(s: Signals) -> FloatArray:
    return np.asarray(10.0 / (10.0 + ranks(_cos(s))), dtype=np.float32)


#: The variants tried on 2026-11-24 (docs/quality.md, "The hybrid's remaining losses").
VARIANTS: dict[str, Variant | None] = {
    "shipped": None,
    "refit": lambda s: {},
    "lexical-rank": lambda s: {"lexical rank": s.explained * _lexical_rank(s.bm25)},
    "lexical-rank-undamped": lambda s: {"lexical rank": _lexical_rank(s.bm25)},
    "z-bm25-every-length": lambda s: {"z": np.clip(standardise(s.bm25), -3.0, 10.0)},
    "dense-gated-lexical": lambda s: {
        "specificity*dense rank": s.specificity * _dense_rank(s),
        "name*dense rank": s.name * _dense_rank(s),
    },
    "dense-by-unexplained": lambda s: {
        "z(cos)*(1-explained)": (1 - s.explained) * standardise(_cos(s)),
        "rank*(1-explained)": (1 - s.explained) * _dense_rank(s),
    },
    "long-clip-2": lambda s: _long(s, 1.0, 2.0),
    "long-clip-3": lambda s: _long(s, 1.0, 3.0),
    "long-clip-5": lambda s: _long(s, 1.0, 5.0),
    "long-by-specificity": lambda s: _long(s, np.minimum(1.0, 4 * s.specificity)),
    "long-by-held-terms-2": lambda s: _long(s, np.minimum(1.0, s.specificity * s.terms / 2)),
    "long-by-held-terms-4": lambda s: _long(s, np.minimum(1.0, s.specificity * s.terms / 4)),
    "long-ramp-8-20": lambda s: _long(s, 1.0, params=replace(HYBRID, short_terms=8, long_terms=20)),
    "query-conditioned": _conditioned,
}


def columns(s: Signals, variant: Variant | None) -> tuple[list[str], FloatArray]:
    """A query's feature matrix (tools, features) under ``variant``, and the column names."""
    cols = base_columns(s) | ({} if variant is None else variant(s))
    return list(cols), np.stack(list(cols.values()), axis=1).astype(np.float32)


def collect(selector: Selector, data: bench.Dataset, split: bench.Split = "dev") -> SetRows:
    """Every ``split`` query of ``data`` with gold tools, as rows (the model runs here, once)."""
    queries = bench.pick_queries([q for q in data.queries if q.gold], split, None)
    fitted = {q.id for q in bench.pick_queries(queries, split, MAX_QUERIES)}
    catalog, matrix = selector.embedded(list(data.tools))
    if matrix is None or selector.encoder is None:
        return SetRows(catalog, [])
    refs = reference_rankers(list(catalog.texts), matrix, K)
    qvecs = encode_queries(selector.encoder, [q.text for q in queries])
    params, rows = HYBRID, []
    for q, v in zip(queries, qvecs, strict=True):
        query, cos = Query.parse(q.text), cosine_scores(v, matrix)
        sig = signals(catalog, query, catalog.index.scores(query.terms), cos, params.explained_top)
        arms = {a: tuple(catalog.positions[n] for n in refs[a](q.text, v)) for a in ARMS}
        gold = tuple(catalog.positions[g] for g in q.gold)
        named = named_tools(catalog, q.text, params)
        rows.append(Row(data.name, q.category, q.text, sig, gold, named, arms, q.id in fitted))
    return SetRows(catalog, rows)


def blocks(
    sets: Sequence[SetRows], variant: Variant | None, min_category: int = MIN_CATEGORY
) -> list[Block]:
    """The fit's blocks (one per category of at least ``min_category`` fitted queries)."""
    out = []
    for rows in sets:
        fitted = [
            (r.category, columns(r.signals, variant)[1], target(len(rows.catalog), r.gold))
            for r in rows.rows
            if r.fitted
        ]
        if fitted:
            out += category_blocks(rows.rows[0].dataset, fitted, min_category)
    return out


def fit_weights(
    sets: Sequence[SetRows], variant: Variant | None, min_category: int = MIN_CATEGORY
) -> FloatArray:
    """The variant's weights: the shipped ones for ``shipped`` (None), else refitted."""
    if variant is None:
        return np.array(list(shipped().values()), dtype=np.float64)
    return np.asarray(minimise(blocks(sets, variant, min_category)).x)


def top(rows: SetRows, row: Row, variant: Variant | None, w: FloatArray) -> tuple[int, ...]:
    """The row's top k under the variant's score, named tools lifted (no bar)."""
    fused = np.asarray(columns(row.signals, variant)[1] @ w, dtype=np.float32)
    lifted = lift_named(rows.catalog, row.pattern, fused, row.named, HYBRID)
    return tuple(int(i) for i in np.argsort(-lifted, kind="stable")[:K])


Cells = dict[tuple[str, str], dict[str, list[float]]]


def score(sets: Sequence[SetRows], variant: Variant | None, w: FloatArray) -> Cells:
    """Per (set, category or ``all``): R@1 and R@5 lists of the variant and of every arm."""
    cells: Cells = {}
    for rows in sets:
        for row in rows.rows:
            ranked = {"variant": top(rows, row, variant, w), **row.arms}
            for key in ((row.dataset, "all"), (row.dataset, row.category)):
                cell = cells.setdefault(key, {})
                for name, got in ranked.items():
                    names, gold = [str(i) for i in got], [str(i) for i in row.gold]
                    for k in (1, K):
                        cell.setdefault(f"{name}@{k}", []).append(recall_at(names, gold, k))
    return cells


def losses(cells: Cells, min_queries: int) -> list[str]:
    """The cells of at least ``min_queries`` queries where the variant is below an arm."""
    out = []
    for (dataset, cat), cell in cells.items():
        n = len(cell["variant@1"])
        for k in (1, K):
            mean = {a: 100 * float(np.mean(cell[f"{a}@{k}"])) for a in ("variant", *ARMS)}
            best = max(ARMS, key=lambda a: mean[a])
            if n >= min_queries and mean["variant"] < mean[best] - 1e-9:
                out.append(f"{dataset} {cat} R@{k} {mean['variant']:.1f} < {best} {mean[best]:.1f}")
    return out


def report(
    name: str, sets: Sequence[SetRows], min_queries: int, min_category: int = MIN_CATEGORY
) -> str:
    """One variant, refitted and scored: its R@1/R@5 per set and the cells it loses."""
    variant = VARIANTS[name]
    w = fit_weights(sets, variant, min_category)
    cells = score(sets, variant, w)
    per_set = " ".join(
        f"{d}:{100 * np.mean(c['variant@1']):.1f}/{100 * np.mean(c[f'variant@{K}']):.1f}"
        for (d, cat), c in cells.items()
        if cat == "all"
    )
    lost = losses(cells, min_queries)
    head = f"== {name}: {len(lost)} cells below an arm (>= {min_queries} queries)"
    return "\n".join([head, f"   R@1/R@{K} {per_set}", *(f"   {c}" for c in lost)])


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tool_selector.offline.evaluation.variants",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("--bench-dir", type=Path, default=bench.default_bench_dir())
    p.add_argument("--datasets", nargs="+", default=list(bench.DATASETS), metavar="NAME")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument("--min-queries", type=int, default=10, help="smallest cell reported (10)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Collect every set's dev rows once, then refit and score each variant."""
    args = _parser().parse_args(argv)
    selector = model_selector()
    sets = [collect(selector, bench.load_dataset(args.bench_dir, name)) for name in args.datasets]
    for name in args.variants:
        sys.stdout.write(report(name, sets, args.min_queries) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
