"""Fit and check the calibrated relevance behind ``min_score`` (``fusion.relevance``).

    python -m tool_selector.offline.evaluation.relevance fit      # dev split: (slope, offset)
    python -m tool_selector.offline.evaluation.relevance report   # test split: min_score table

``fit``: per ranking path (hybrid; static with the model's query vector, ``cross``; static
with the static query vector while the model loads, ``static``; lexical), every tool an
answer of ``top_k`` 10 carries on the dev split of the seven sets (at most ``SAMPLE``
queries a set, each set weighing the same) is a sample: its fused score, and whether it is
a gold tool. Isotonic regression (weighted, increasing; Zadrozny & Elkan 2002) maps the fused
score to ``P(gold)``, kept as the points that ``fusion.relevance`` interpolates; the
reliability table (predicted vs observed per bin) is printed with it.
Samples are kept under ``loadtests/.cache/relevance/`` (``--cached`` refits from them).

``report``: on the test split (at most ``SAMPLE`` queries a set), per set, the shipped
calibration's answers at ``top_k`` 5 for a few ``min_score`` values: how many tools they
carry and the R@5 they keep.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.isotonic import IsotonicRegression  # type: ignore[import-untyped]

from tool_selector.embeddings.encoder import Encoder
from tool_selector.offline.evaluation import dataset as bench
from tool_selector.offline.evaluation.runner import models_from_env, path_selectors
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.calibration import Calibration
from tool_selector.ranking.fusion import relevance

SETS = ("agent", "arcade", "azure_mcp", "bfcl", "livemcpbench", "metatool", "sealtools")
#: Queries sampled per set and split (by the hash of their id: deterministic).
SAMPLE = 250
MIN_SCORES = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7)
#: Levels of a path's calibration closer than this are merged.
LEVEL_STEP = 0.02
CACHE = bench.REPO_ROOT / "loadtests" / ".cache" / "relevance"


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")


def sample(data: bench.Dataset, split: str, limit: int = SAMPLE) -> list[bench.BenchQuery]:
    """At most ``limit`` queries with gold of ``split``, picked by the hash of their id."""
    own = [q for q in data.queries if q.gold and bench.split_of(q.id) == split]
    own.sort(key=lambda q: hashlib.sha256(q.id.encode()).digest())
    return own[:limit]


@dataclass(frozen=True, slots=True)
class Samples:
    """Fused scores, gold labels and sample weights of one path."""

    score: np.ndarray
    gold: np.ndarray
    weight: np.ndarray


def collect(selector: Selector, sets: Sequence[bench.Dataset]) -> Samples:
    """Every tool of every dev answer at ``top_k`` 10 (see the module)."""
    scores: list[float] = []
    gold: list[bool] = []
    weight: list[float] = []
    for data in sets:
        queries = sample(data, "dev")
        tools = ToolSource.of(list(data.tools), key=f"relevance:{data.name}")
        for q in queries:
            for p in selector.select(Ask(q.text, tools, top_k=10)).ranking.picked:
                scores.append(p.score)
                gold.append(p.name in q.gold)
                weight.append(1.0 / len(queries))
    return Samples(np.array(scores), np.array(gold, dtype=float), np.array(weight))


def isotonic(samples: Samples) -> Calibration:
    """The increasing map from fused score to gold share (weighted isotonic regression), as
    the first and last score of each of its levels, levels closer than ``LEVEL_STEP``
    merged (at most about ``1 / LEVEL_STEP`` levels)."""
    fitted = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(
        samples.score, samples.gold, sample_weight=samples.weight
    )
    xs, ys = fitted.X_thresholds_, fitted.y_thresholds_
    points: list[tuple[float, float]] = []
    level, last = -1.0, float(xs[0])
    for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
        if not points or y - level >= LEVEL_STEP:
            if points and points[-1][0] < last:
                points.append((last, level))  # where the previous level ends
            points.append((x, y))
            level = y
        last = x
    points.append((last, level))
    return tuple(dict.fromkeys((round(x, 3), round(y, 3)) for x, y in points))


def reliability(samples: Samples, table: Calibration) -> Iterator[str]:
    """Lines of the reliability table: predicted vs observed gold share per bin."""
    p = relevance(samples.score.astype(np.float32), table).astype(np.float64)
    for lo in np.arange(0.0, 1.0, 0.1):
        inside = (p >= lo) & (p < lo + 0.1 + (1e-9 if lo >= 0.9 else 0.0))
        if inside.any():
            w = samples.weight[inside]
            pred = float(np.average(p[inside], weights=w))
            seen = float(np.average(samples.gold[inside], weights=w))
            yield f"| {lo:.1f}-{lo + 0.1:.1f} | {int(inside.sum())} | {pred:.3f} | {seen:.3f} |"


def fit_paths(
    encoder: Encoder, static: Encoder | None, sets: Sequence[bench.Dataset], cached: bool
) -> None:
    """Fit and print every path's calibration (``fit``)."""
    paths = dict(path_selectors(encoder, static))
    if static is not None:
        paths["cross"] = paths.pop("static")
        paths["static"] = Selector(encoder=None, static=static, catalogs=CatalogStore(50_000))
    CACHE.mkdir(parents=True, exist_ok=True)
    for name, selector in paths.items():
        path = CACHE / f"{name}.npz"
        if cached and path.exists():
            with np.load(path) as kept:
                samples = Samples(kept["score"], kept["gold"], kept["weight"])
        else:
            samples = collect(selector, sets)
            np.savez(path, score=samples.score, gold=samples.gold, weight=samples.weight)
        table = isotonic(samples)
        _out(f"\n{name}: relevance = {table}  ({len(samples.score)} samples)")
        _out("| bin | n | predicted | observed |")
        for line in reliability(samples, table):
            _out(line)


def report(encoder: Encoder, sets: Sequence[bench.Dataset]) -> None:
    """Print the ``min_score`` table on the test split (``report``)."""
    selector = next(iter(path_selectors(encoder, None)))[1]
    _out("| set | " + " | ".join(f"min_score {m}: tools / R@5" for m in MIN_SCORES) + " |")
    for data in sets:
        queries = sample(data, "test")
        tools = ToolSource.of(list(data.tools), key=f"relevance:{data.name}")
        cells = []
        for floor in MIN_SCORES:
            sizes, hits = 0, 0.0
            for q in queries:
                ask = Ask(q.text, tools, top_k=5, min_score=floor or None)
                names = selector.select(ask).ranking.names
                sizes += len(names)
                hits += len(set(q.gold) & set(names)) / len(q.gold)
            cells.append(f"{sizes / len(queries):.2f} / {100 * hits / len(queries):.1f}")
        _out(f"| {data.name} | " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    """``fit`` or ``report`` (see the module)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["fit", "report"])
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--cached", action="store_true", help="refit from the kept samples")
    args = parser.parse_args(argv)
    encoder, static = models_from_env("relevance")
    sets = [bench.load_dataset(bench.default_bench_dir(), name) for name in args.sets]
    _out(f"$ python -m tool_selector.offline.evaluation.relevance {' '.join(argv or sys.argv[1:])}")
    if args.mode == "fit":
        fit_paths(encoder, static, sets, args.cached)
    else:
        report(encoder, sets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
