"""Judge a fit leave-one-set-out (``python -m tool_selector.offline.evaluation.fit -h``).

Offline only; the server never imports it. A fusion fitted to our seven sets' wording learns
their wording, so a fitted change is judged on sets the fit never read: for each
set, the weights are fitted (``fit.fit``, the listwise loss) on the **other** sets' dev blocks
and the service's own answer (``Selector.select``, named-tool lift and relevance bar included,
as ``tool-selector eval``'s ``service`` row) is measured on the held-out set's **test** split
with them, next to the shipped weights and the weights fitted on every set at once. The rule:
a fitted change is kept only when no held-out set is lower than with the shipped weights
(``lower``). A gain that shows only when the set was in the fit is not kept.

Nothing is computed twice: each set's dev blocks (its features: BM25, signals and cosines
over its catalog) are built once and every fit picks its blocks from them (``fold_blocks``);
each catalog is embedded once and each test query encoded once, and every weighting's
selector shares those (one catalog store, one query cache, one embedding cache).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tool_selector.embeddings.encoder import Encoder
from tool_selector.offline.evaluation.dataset import Dataset, Split, pick_queries
from tool_selector.offline.evaluation.fit import WEIGHTS, Block, Fit, encode_queries, fit
from tool_selector.offline.evaluation.metrics import MetricSums
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.fusion import FusionParams

#: What a measure returns for one set and one weighting (``None``: the shipped weights).
Measure = Callable[[str, Mapping[str, float] | None], "Score"]
Fitter = Callable[[Sequence[Block]], Fit]


@dataclass(frozen=True, slots=True)
class Fold:
    """One set held out (measured, never fitted on) and the sets its weights are fitted on."""

    held_out: str
    train: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Score:
    """R@1 and R@5 (percent, over real needs) of one answer on one set's test queries."""

    r1: float
    r5: float
    queries: int


@dataclass(frozen=True, slots=True)
class Row:
    """One held-out set: the shipped weights, the fit on every set (the held-out one in it)
    and the fit on the others (it left out), each measured on its test split."""

    held_out: str
    train: tuple[str, ...]
    shipped: Score
    pooled: Score
    held: Score
    weights: dict[str, float]


def folds(names: Sequence[str]) -> list[Fold]:
    """One fold per set, in order: that set held out, every other one fitted on."""
    unique = list(dict.fromkeys(names))
    if len(unique) < 2:
        raise ValueError("leave-one-set-out needs at least two sets")
    return [Fold(name, tuple(n for n in unique if n != name)) for name in unique]


def fold_blocks(blocks: Sequence[Block], fold: Fold) -> list[Block]:
    """The blocks a fold's fit reads: its training sets' only (never the held-out set's)."""
    train = set(fold.train) - {fold.held_out}
    return [b for b in blocks if b.dataset in train]


def leave_one_out(
    blocks: Sequence[Block],
    names: Sequence[str],
    measure: Measure,
    fitter: Fitter = fit,
) -> list[Row]:
    """Per fold (``folds(names)``): fit on ``fold_blocks``, measure the held-out set with the
    shipped weights, the fit on every block and that fit; rows in ``names`` order."""
    pooled = fitter(blocks).weights
    rows = []
    for fold in folds(names):
        weights = fitter(fold_blocks(blocks, fold)).weights
        rows.append(
            Row(
                held_out=fold.held_out,
                train=fold.train,
                shipped=measure(fold.held_out, None),
                pooled=measure(fold.held_out, pooled),
                held=measure(fold.held_out, weights),
                weights=weights,
            )
        )
    return rows


def lower(rows: Sequence[Row]) -> list[str]:
    """The held-out sets whose R@1 or R@5 with the weights fitted without them is below the
    shipped weights' (empty: the fit may be kept)."""
    return [r.held_out for r in rows if r.held.r1 < r.shipped.r1 or r.held.r5 < r.shipped.r5]


def _cell(score: Score) -> str:
    return f"{score.r1:.1f} / {score.r5:.1f}"


def _delta(a: float, b: float) -> str:
    return f"{a - b:+.1f}"


def table(rows: Sequence[Row]) -> str:
    """The rows as a markdown table, then the verdict (``lower``)."""
    lines = [
        "| held-out set | test queries | shipped R@1 / R@5 | fit on all sets | "
        "fit on the others (held out) | held out - shipped R@1 / R@5 |",
        "|---|---:|---|---|---|---|",
    ]
    for r in rows:
        delta = f"{_delta(r.held.r1, r.shipped.r1)} / {_delta(r.held.r5, r.shipped.r5)}"
        lines.append(
            f"| {r.held_out} | {r.shipped.queries} | {_cell(r.shipped)} | {_cell(r.pooled)} | "
            f"{_cell(r.held)} | {delta} |"
        )
    worse = lower(rows)
    lines.append("")
    lines.append(
        "Verdict: no held-out set lower than shipped: the fit may be kept."
        if not worse
        else f"Verdict: lower than shipped held out on {', '.join(worse)}: not kept."
    )
    return "\n".join(lines)


def weights_table(rows: Sequence[Row], shipped: Mapping[str, float]) -> str:
    """Each fold's fitted weights beside the shipped ones (markdown)."""
    head = "| weight | shipped | " + " | ".join(f"without {r.held_out}" for r in rows) + " |"
    lines = [head, "|---|---:|" + "---:|" * len(rows)]
    for name in WEIGHTS:
        cells = " | ".join(f"{r.weights[name]:.3f}" for r in rows)
        lines.append(f"| {name} | {shipped[name]:.3f} | {cells} |")
    return "\n".join(lines)


class HeldOut:
    """The service's answer on a set's ``split`` (``Measure``): ``Selector.select`` over the
    set's whole catalog, as ``tool-selector eval``'s ``service`` row, with the fusion's
    weights replaced (``None``: ``base``'s own).

    Every weighting's selector shares ``selector``'s catalog store, query cache and
    embedding cache, so a catalog is embedded and a query encoded once per run.
    """

    def __init__(
        self,
        selector: Selector,
        datasets: Mapping[str, Dataset],
        *,
        split: Split = "test",
        limit: int | None = None,
        k: int = 5,
        multilingual: Encoder | None = None,
    ) -> None:
        if selector.encoder is None:
            raise ValueError("measuring needs an encoder")
        self.selector, self.datasets = selector, datasets
        self.split, self.limit, self.k = split, limit, k
        self.multilingual = multilingual
        self._encoded: set[str] = set()

    def __call__(self, name: str, weights: Mapping[str, float] | None) -> Score:
        data = self.datasets[name]
        queries = pick_queries(data.queries, self.split, self.limit)
        self._encode(name, [q.text for q in queries])
        selector = self.weighted(weights)
        tools = ToolSource.of(list(data.tools))
        sums = MetricSums(k=self.k)
        for q in queries:
            answer = selector.select(Ask(pattern=q.text, tools=tools, top_k=self.k))
            sums.add(answer.ranking.names, q.gold)
        out = sums.summary()
        return Score(out.get("r@1", math.nan), out.get(f"r@{self.k}", math.nan), sums.queries)

    def weighted(self, weights: Mapping[str, float] | None) -> Selector:
        """A selector like ``selector`` whose fusion has ``weights`` (``None``: its own)."""
        base = self.selector
        changed: dict[str, Any] = dict(weights or {})
        params: FusionParams = replace(base.rules.hybrid, **changed)
        return Selector(
            encoder=base.encoder,
            cache=base.cache,
            rules=replace(base.rules, hybrid=params),
            catalogs=base.catalogs,
            queries=base.queries,
            embed_deadline=math.inf,
            multilingual=self.multilingual,
            glossary=base.glossary,
        )

    def _encode(self, name: str, texts: Sequence[str]) -> None:
        """Every query of the set in batches, once, into the shared query cache (windows of a
        long one as the service embeds it)."""
        encoder = self.selector.encoder
        if name in self._encoded or encoder is None:
            return
        for text, vec in zip(texts, encode_queries(encoder, texts), strict=True):
            frozen = np.ascontiguousarray(vec, dtype=np.float32)
            frozen.setflags(write=False)
            self.selector.queries.put((encoder.model_id, text), frozen)
        self._encoded.add(name)
