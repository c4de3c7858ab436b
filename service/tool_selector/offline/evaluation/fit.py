"""Fit the fusion's weights on the dev split: ``python -m tool_selector.offline.evaluation.fit``.

Offline only; the server never imports it. The model is the linear score of
``ranking.fusion`` (``fuse`` is linear in its seven weights), so each tool's feature ``j``
is ``fuse``'s own half (``dense_score`` or ``lexical_score``) with weight ``j`` at 1 and the
others at 0, computed from ``ranker.signals`` over the catalog the service builds: the fit
sees exactly what ``ranker.rank`` scores (before the named-tool lift and the bar).

Loss, listwise softmax cross-entropy (ListNet top-one, Cao et al. 2007)::

    L(w) = sum_blocks weight * sum_q -sum_t y_qt log softmax_t(X_q w) + l2 * |w|^2

with ``y`` spread evenly over a query's gold tools. Queries with gold tools only, at most
``MAX_QUERIES`` per set (``pick_queries``' deterministic sample); one block per category of
at least ``MIN_CATEGORY`` queries, weighing ``1 / (queries in it * categories in the set)``,
so every set and every query kind weighs the same. Minimised by L-BFGS from all zeros.

``--leave-one-out``: each set held out in turn, the weights fitted on the others' dev split
and the service measured on its test split (``loso``: the rule a fitted change must pass).

``--arm cross`` fits the weights of the cold path instead (``fitted.CROSS``: a
catalog the model has not embedded yet, answered with the static table's tool vectors
against the model's query vector): the same features over those cosines. ``--arm static``:
those of the static query vector against them (``fitted.STATIC``, while the model
loads).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize  # type: ignore[import-untyped]

from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import Encoder, encode_query, primary_of
from tool_selector.embeddings.static import static_matrix
from tool_selector.offline.evaluation.dataset import (
    DATASETS,
    Dataset,
    Split,
    default_bench_dir,
    load_dataset,
    pick_queries,
)
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.catalog import Catalog
from tool_selector.ranking.dense import FloatArray, cosine_scores, windows
from tool_selector.ranking.fitted import CROSS, HYBRID, STATIC
from tool_selector.ranking.fusion import FITTED_TERMS, FusionParams, Signals, columns
from tool_selector.ranking.ranker import Query, signals

#: The fitted fields of ``FusionParams``, in feature order (``fusion.FITTED_TERMS``).
WEIGHTS = tuple(t.weight for t in FITTED_TERMS)
#: Most queries per set (the scratch fit's cap; MetaTool alone has ~10,000 dev queries).
MAX_QUERIES = 600
#: Smallest category that gets its own block (smaller ones are left out of the fit).
MIN_CATEGORY = 5
#: L2 penalty on the weights.
L2 = 1e-3
_ENCODE_CHUNK = 512
_CACHE_BYTES = 256 * 1024 * 1024
#: Query vectors kept by ``--leave-one-out`` (every test query of MetaTool, about 10,400).
_QUERY_VECTORS = 50_000
#: The dense arms whose weights can be fitted, with the parameters each ships.
ARMS = {"model": HYBRID, "cross": CROSS, "static": STATIC}


@dataclass(frozen=True, slots=True)
class Block:
    """One category of one set: features ``x`` (queries, tools, weights), targets ``y``."""

    dataset: str
    category: str
    x: FloatArray
    y: FloatArray
    weight: float


@dataclass(frozen=True, slots=True)
class Fit:
    """The fitted weights and the loss at the start (all zeros), the end and the shipped ones."""

    weights: dict[str, float]
    start_loss: float
    end_loss: float
    shipped_loss: float
    iterations: int


def signal_columns(sig: Signals) -> list[FloatArray]:
    """Per weight, the score it multiplies over one query's tools: ``fuse``'s terms at
    weight 1 (``WEIGHTS`` order, ``fusion.columns``)."""
    if sig.dense is None:
        raise ValueError("the fit needs dense cosines")
    return columns(sig, HYBRID)


def tool_features(catalog: Catalog, query: Query, dense: FloatArray) -> FloatArray:
    """Per tool, the score each weight multiplies (tools, weights): ``fuse`` at unit weights."""
    bm25 = catalog.index.scores(query.terms)
    sig = signals(catalog, query, bm25, dense, HYBRID.explained_top)
    return np.stack(signal_columns(sig), axis=1).astype(np.float32)


def encode_queries(encoder: Encoder, texts: Sequence[str]) -> list[FloatArray]:
    """Each text's vector (d,), or one per window (w, d) as the service embeds long patterns.

    Every window of every text goes through the encoder in batches, once.
    """
    parts = [windows(t) for t in texts]
    flat = [p for ps in parts for p in ps]
    chunks = [
        encode_query(encoder, flat[i : i + _ENCODE_CHUNK])
        for i in range(0, len(flat), _ENCODE_CHUNK)
    ]
    vecs = np.concatenate(chunks) if chunks else np.zeros((0, encoder.dim), np.float32)
    out: list[FloatArray] = []
    at = 0
    for ps in parts:
        out.append(vecs[at] if len(ps) == 1 else vecs[at : at + len(ps)])
        at += len(ps)
    return out


def dataset_blocks(
    selector: Selector,
    data: Dataset,
    split: Split = "dev",
    limit: int | None = MAX_QUERIES,
    min_category: int = MIN_CATEGORY,
    *,
    static: Encoder | None = None,
    static_queries: bool = False,
) -> list[Block]:
    """The training blocks of one set: its ``split`` queries with gold tools, by category.

    With ``static``, the tools' vectors are the static table's (the cold path's cosines;
    the models never embed the catalog), and with ``static_queries`` too the queries' (the
    path while the model loads). ``static`` an ensemble of tables (``static_from_settings``
    with the second encoder on) is read against the selector's ensemble of models, as the
    cold path reads it (``arms.StaticArm``)."""
    if selector.encoder is None:
        raise ValueError("fitting needs an encoder")
    queries = pick_queries([q for q in data.queries if q.gold], split, limit)
    if static is None:
        catalog, matrix = selector.embedded(list(data.tools))
    else:
        catalog = selector.entry(ToolSource.of(list(data.tools))).entry.catalog
        matrix = static_matrix(static, catalog.texts) if len(catalog) else None
    if matrix is None or not queries:
        return []
    by = static if static is not None and static_queries else selector.encoder
    qvecs = encode_queries(by, [q.text for q in queries])
    feats = [
        tool_features(catalog, Query.parse(q.text), cosine_scores(v, matrix))
        for q, v in zip(queries, qvecs, strict=True)
    ]
    rows = [
        (q.category, x, target(len(catalog), [catalog.positions[g] for g in q.gold]))
        for q, x in zip(queries, feats, strict=True)
    ]
    return category_blocks(data.name, rows, min_category)


def target(tools: int, gold: Sequence[int]) -> FloatArray:
    """The softmax target of one query: its gold tools' positions share 1 evenly."""
    y = np.zeros(tools, np.float32)
    y[list(gold)] = 1.0 / len(gold)
    return y


def category_blocks(
    dataset: str, rows: Sequence[tuple[str, FloatArray, FloatArray]], min_category: int
) -> list[Block]:
    """``(category, features, target)`` rows of one set as blocks: one per category of at
    least ``min_category`` rows, weighing ``1 / (rows in it * categories in the set)``."""
    categories = sorted({cat for cat, _, _ in rows})
    blocks = []
    for cat in categories:
        chosen = [(x, y) for c, x, y in rows if c == cat]
        if len(chosen) < min_category:
            continue
        x, y = np.stack([x for x, _ in chosen]), np.stack([y for _, y in chosen])
        blocks.append(Block(dataset, cat, x, y, 1.0 / (len(chosen) * len(categories))))
    return blocks


def loss(
    w: npt.NDArray[np.float64], blocks: Sequence[Block], l2: float = L2
) -> tuple[float, npt.NDArray[np.float64]]:
    """The listwise softmax loss (module docstring) and its gradient at ``w``."""
    total, grad = 0.0, np.zeros_like(w, dtype=np.float64)
    for b in blocks:
        s = b.x @ w
        s = s - s.max(axis=1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=1, keepdims=True)
        total -= b.weight * float((b.y * np.log(p + 1e-12)).sum())
        grad -= b.weight * np.einsum("qt,qtf->f", b.y - p, b.x)
    return total + l2 * float(w @ w), np.asarray(grad + 2 * l2 * w, dtype=np.float64)


def shipped(base: FusionParams | None = None) -> dict[str, float]:
    """The weights ``base`` ships (default: the hybrid's ``FusionParams``)."""
    params = asdict(HYBRID if base is None else base)
    return {name: float(params[name]) for name in WEIGHTS}


def minimise(blocks: Sequence[Block]) -> Any:
    """``loss`` minimised by L-BFGS-B from all-zero weights, one per feature column."""
    if not blocks:
        raise ValueError("nothing to fit: no block of queries")
    start = np.zeros(blocks[0].x.shape[2])
    return minimize(loss, start, args=(blocks,), jac=True, method="L-BFGS-B")


def fit(blocks: Sequence[Block], base: FusionParams | None = None) -> Fit:
    """Minimise ``loss`` from all-zero weights (L-BFGS-B); ``base``: the shipped weights."""
    result = minimise(blocks)
    return Fit(
        weights={n: float(v) for n, v in zip(WEIGHTS, result.x, strict=True)},
        start_loss=loss(np.zeros(len(WEIGHTS)), blocks)[0],
        end_loss=float(result.fun),
        shipped_loss=loss(np.array(list(shipped(base).values())), blocks)[0],
        iterations=int(result.nit),
    )


def recall_at(blocks: Sequence[Block], weights: dict[str, float], k: int = 5) -> dict[str, float]:
    """Per set, the mean share of gold tools in the top ``k`` by the linear score (percent).

    The ranked order only: no named-tool lift and no relevance bar, every query counting once.
    """
    w = np.array([weights[n] for n in WEIGHTS])
    hits: dict[str, list[float]] = {}
    for b in blocks:
        top = np.argsort(-(b.x @ w), axis=1, kind="stable")[:, :k]
        got = np.take_along_axis(b.y > 0, top, axis=1).sum(axis=1) / (b.y > 0).sum(axis=1)
        hits.setdefault(b.dataset, []).extend(got.tolist())
    return {name: round(100 * float(np.mean(v)), 1) for name, v in hits.items()}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tool_selector.offline.evaluation.fit", description=__doc__.splitlines()[0]
    )
    p.add_argument("--bench-dir", type=Path, default=default_bench_dir())
    p.add_argument(
        "--datasets", nargs="+", default=list(DATASETS), metavar="NAME", help="default: all seven"
    )
    p.add_argument(
        "--limit", type=int, default=MAX_QUERIES, help=f"most dev queries per set ({MAX_QUERIES})"
    )
    p.add_argument(
        "--arm",
        choices=sorted(ARMS),
        default="model",
        help="model: the hybrid's weights (default); cross: the cold path's (static tools, "
        "model query); static: while the model loads (static tools and query)",
    )
    p.add_argument("--output", type=Path, help="write the fitted weights and losses as JSON")
    p.add_argument(
        "--leave-one-out",
        action="store_true",
        help="for each set: fit on the other sets' dev split, measure the service on its test "
        "split next to the shipped weights (markdown table; --arm model only)",
    )
    p.add_argument(
        "--test-limit",
        type=int,
        help="--leave-one-out: most test queries per held-out set (default: the whole split)",
    )
    return p


def model_selector() -> Selector:
    from tool_selector.embeddings.factory import encoder_from_settings  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415

    encoder = encoder_from_settings(Settings.from_env(os.environ))
    if encoder is None:
        raise ValueError("fitting needs an encoder (TOOL_SELECTOR_ENCODER=none)")
    return Selector(
        encoder=encoder,
        cache=MemoryCache(_CACHE_BYTES),
        catalogs=CatalogStore(50_000),
        embed_deadline=math.inf,
    )


def _static() -> Encoder:
    from tool_selector.embeddings.factory import static_from_settings  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415

    static = static_from_settings(Settings.from_env(os.environ))
    if static is None:
        raise ValueError("this arm needs the static table (TOOL_SELECTOR_STATIC_EMBEDDINGS)")
    return static


def report(
    result: Fit, blocks: Sequence[Block], seconds: float, base: FusionParams | None = None
) -> dict[str, Any]:
    """The fit as a JSON-ready dict: weights next to the shipped ones, losses, dev R@5."""
    return {
        "fitted": {n: round(v, 3) for n, v in result.weights.items()},
        "shipped": shipped(base),
        "loss": {
            "start": result.start_loss,
            "fitted": result.end_loss,
            "shipped": result.shipped_loss,
        },
        "iterations": result.iterations,
        "queries": {
            d: sum(len(b.x) for b in blocks if b.dataset == d)
            for d in dict.fromkeys(b.dataset for b in blocks)
        },
        "dev_ranked_r@5": {
            "fitted": recall_at(blocks, result.weights),
            "shipped": recall_at(blocks, shipped(base)),
        },
        "seconds": round(seconds, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Build the blocks, fit, print the weights beside the shipped ones, write ``--output``."""
    args = _parser().parse_args(argv)
    if args.leave_one_out:
        if args.arm != "model":
            sys.stderr.write("--leave-one-out measures the hybrid: --arm model only\n")
            return 2
        return _leave_one_out(args, argv)
    began = time.perf_counter()
    selector, base = model_selector(), ARMS[args.arm]
    static = None if args.arm == "model" else _static()
    if static is not None and args.arm == "static":
        static = primary_of(static)  # while the models load: MiniLM's table alone
    blocks: list[Block] = []
    for name in args.datasets:
        t0 = time.perf_counter()
        data = load_dataset(args.bench_dir, name)
        blocks += dataset_blocks(
            selector, data, "dev", args.limit, static=static, static_queries=args.arm == "static"
        )
        sys.stderr.write(f"{name}: features in {time.perf_counter() - t0:.0f} s\n")
    out = report(fit(blocks, base), blocks, time.perf_counter() - began, base)
    sys.stdout.write(f"{'weight':20} {'shipped':>8} {'fitted':>8}\n")
    for name in WEIGHTS:
        sys.stdout.write(f"{name:20} {out['shipped'][name]:8.3f} {out['fitted'][name]:8.3f}\n")
    sys.stdout.write(json.dumps(out, indent=2) + "\n")
    if args.output is not None:
        args.output.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


def _loso_selector() -> Selector:
    """The model's selector as ``tool-selector eval`` builds its ``service`` row: a query
    cache for every test query, the glossary when the settings have it."""
    from tool_selector.lru import BoundedLRU  # noqa: PLC0415
    from tool_selector.ranking.glossary import default_glossary  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415

    model = model_selector()
    return Selector(
        encoder=model.encoder,
        cache=model.cache,
        catalogs=model.catalogs,
        queries=BoundedLRU(_QUERY_VECTORS),
        embed_deadline=math.inf,
        glossary=default_glossary() if Settings.from_env(os.environ).glossary else None,
    )


def _leave_one_out(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """Every set's dev blocks once, then ``loso.leave_one_out``: print the tables, the
    command and the time; write the rows as JSON to ``--output``."""
    from tool_selector.embeddings.factory import multilingual_from_settings  # noqa: PLC0415
    from tool_selector.offline.evaluation import loso  # noqa: PLC0415
    from tool_selector.settings import Settings  # noqa: PLC0415

    began, selector = time.perf_counter(), _loso_selector()
    datasets = {name: load_dataset(args.bench_dir, name) for name in args.datasets}
    blocks: list[Block] = []
    for name, data in datasets.items():
        t0 = time.perf_counter()
        blocks += dataset_blocks(selector, data, "dev", args.limit)
        sys.stderr.write(f"{name}: dev features in {time.perf_counter() - t0:.0f} s\n")
    arm = multilingual_from_settings(Settings.from_env(os.environ))
    measure = loso.HeldOut(selector, datasets, limit=args.test_limit, multilingual=arm)
    rows = loso.leave_one_out(blocks, list(datasets), measure)
    command = "python -m tool_selector.offline.evaluation.fit " + shlex.join(
        sys.argv[1:] if argv is None else list(argv)
    )
    seconds = time.perf_counter() - began
    sys.stdout.write(f"{loso.table(rows)}\n\n{loso.weights_table(rows, shipped())}\n\n")
    sys.stdout.write(f"`{command}` ({seconds:.0f} s)\n")
    if args.output is not None:
        out = {"command": command, "seconds": round(seconds, 1), "rows": [asdict(r) for r in rows]}
        args.output.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
