"""Run the service's selection pipeline and the reference rankers over a benchmark.

The service is measured exactly as the endpoint runs it: ``Selector.select`` on a
``SearchRequest`` holding the dataset's whole catalog, with the real encoder and an
in-process ``MemoryCache`` (so tool embeddings are computed once per process, then hit).
Two rows come from it: ``service`` (its real answer, abstention included) and
``service (no abstention)`` (its top-k order before the relevance bar).

No-match calibration: each dataset's tools are also searched with negatives (needs they do
not serve, see ``Evaluator.negatives``); the abstention rate is the share answered with
nothing, next to the share of the dataset's own queries answered with nothing.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tool_selector.catalogs import CatalogCache
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import Encoder
from tool_selector.evaluation.dataset import (
    DATASETS,
    BenchQuery,
    Dataset,
    DatasetError,
    Split,
    load_dataset,
    pick_queries,
)
from tool_selector.evaluation.metrics import MetricSums
from tool_selector.evaluation.references import reference_rankers
from tool_selector.selector import Selector
from tool_selector_client.wire import SearchRequest, Tool

SERVICE = "service"
SERVICE_RANKED = "service (no abstention)"
SERVICE_OWN = "service, per-query catalogs"
#: Tools of a catalog a negative query is searched against.
NEGATIVE_TOOLS = 20
_CACHE_BYTES = 256 * 1024 * 1024
#: Built catalogs kept for a run, in total tools: every dataset's pool plus BFCL's own lists.
_CATALOG_TOOLS = 50_000


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """What to run: datasets, split, per-dataset query limit, k, negatives per other dataset."""

    bench_dir: Path
    datasets: Sequence[str]
    split: Split = "test"
    limit: int | None = None
    k: int = 5
    negatives: int = 100
    progress: bool = True
    per_query_catalogs: bool = False


@dataclass(slots=True)
class DatasetResult:
    """Metrics of every ranker on one dataset, plus the abstention rates."""

    dataset: str
    tools: int
    queries: int
    rankers: dict[str, dict[str, float]]
    abstain_positive: float = 0.0
    abstain_negative: float | None = None
    negatives: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "tools": self.tools,
            "queries": self.queries,
            "rankers": self.rankers,
            "abstain_positive_pct": self.abstain_positive,
            "abstain_negative_pct": self.abstain_negative,
            "negatives": self.negatives,
        }


@dataclass(slots=True)
class EvalReport:
    """The results of one ``tool-selector eval`` run."""

    config: EvalConfig
    results: list[DatasetResult] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.config.split,
            "k": self.config.k,
            "limit": self.config.limit,
            "negatives_per_other_dataset": self.config.negatives,
            "split_rule": "dev if sha256(query id)[0] is even, else test",
            "seconds": round(self.seconds, 1),
            "results": [r.as_dict() for r in self.results],
        }


def _bar(items: Sequence[Any], desc: str, enabled: bool) -> Iterable[Any]:
    if not enabled:
        return items
    from tqdm import tqdm  # noqa: PLC0415

    bar: Iterable[Any] = tqdm(items, desc=desc, unit="q", leave=False, mininterval=1.0)
    return bar


class Evaluator:
    """Holds the encoder and one embedding cache for a whole run (catalogs embedded once)."""

    def __init__(self, encoder: Encoder, config: EvalConfig) -> None:
        self.encoder = encoder
        self.config = config
        self.cache = MemoryCache(_CACHE_BYTES)
        # no embedding deadline: eval measures the hybrid answer a warm catalog gets, not the
        # lexical stand-in a cold catalog gets for its first requests
        # the catalog cache keeps each dataset's built catalog across its queries, as the
        # endpoint does for a catalog a proxy resends
        self.selector = Selector(
            encoder=encoder,
            cache=self.cache,
            catalogs=CatalogCache(_CATALOG_TOOLS),
            embed_deadline=math.inf,
        )
        self._datasets: dict[str, Dataset] = {}

    def dataset(self, name: str) -> Dataset:
        if name not in self._datasets:
            self._datasets[name] = load_dataset(self.config.bench_dir, name)
        return self._datasets[name]

    def run(self) -> EvalReport:
        """Evaluate every configured dataset."""
        start = time.perf_counter()
        report = EvalReport(config=self.config)
        for name in self.config.datasets:
            report.results.append(self.evaluate(name))
        report.seconds = time.perf_counter() - start
        return report

    def request(self, tools: Sequence[Any], pattern: str) -> SearchRequest:
        return SearchRequest(pattern=pattern, tools=list(tools), top_k=self.config.k)

    def evaluate(self, name: str) -> DatasetResult:
        """Service and references on one dataset's chosen queries, then its negatives."""
        cfg = self.config
        data = self.dataset(name)
        queries = pick_queries(data.queries, cfg.split, cfg.limit)
        catalog, matrix = self.selector.embedded(list(data.tools))
        if matrix is None:
            raise DatasetError(f"{name}: empty catalog")
        refs = reference_rankers(list(catalog.texts), matrix, cfg.k)
        qvecs = self.encoder.encode([q.text for q in queries])
        sums = {SERVICE: MetricSums(k=cfg.k), SERVICE_RANKED: MetricSums(k=cfg.k)}
        sums.update({ref: MetricSums(k=cfg.k) for ref in refs})
        for q, qvec in zip(_bar(queries, name, cfg.progress), qvecs, strict=True):
            t0 = time.perf_counter()
            outcome = self.selector.select(self.request(data.tools, q.text))
            elapsed = time.perf_counter() - t0
            sums[SERVICE].add(outcome.ranking.names, q.gold, elapsed)
            sums[SERVICE_RANKED].add(list(outcome.ranking.ranked), q.gold, elapsed)
            for ref, rank in refs.items():
                t0 = time.perf_counter()
                ranked = rank(q.text, qvec)
                sums[ref].add(ranked, q.gold, time.perf_counter() - t0)
        result = DatasetResult(
            dataset=name,
            tools=len(data.tools),
            queries=len(queries),
            rankers={key: s.summary() for key, s in sums.items()},
            abstain_positive=sums[SERVICE].summary()["empty%"],
        )
        negatives = self.negatives(data)
        if negatives:
            empty = sum(
                not self.selector.select(self.request(tools, text)).ranking.names
                for text, tools in _bar(negatives, f"{name} negatives", cfg.progress)
            )
            result.negatives = len(negatives)
            result.abstain_negative = round(100 * empty / len(negatives), 1)
        if cfg.per_query_catalogs and name == "bfcl":
            result.rankers[SERVICE_OWN] = self._own_catalogs(data, queries)
        return result

    def negatives(self, data: Dataset) -> list[tuple[str, list[Tool]]]:
        """Needs this catalog does not serve, as ``(pattern, tools)`` requests.

        Queries of each other dataset against ``NEGATIVE_TOOLS`` tools of this one (sampled
        per query, seeded by the query id); for BFCL also BFCL's irrelevance idea: a query
        against another query's own tool list, minus any of its gold tools.
        """
        count = self.config.negatives
        out: list[tuple[str, list[Tool]]] = []
        if count <= 0:
            return out
        for other in DATASETS:
            if other == data.name:
                continue
            for q in pick_queries(self.dataset(other).queries, self.config.split, count):
                rng = random.Random(hashlib.sha256(q.id.encode()).digest())  # noqa: S311
                size = min(NEGATIVE_TOOLS, len(data.tools))
                out.append((q.text, rng.sample(list(data.tools), size)))
        if data.name == "bfcl":
            by_name = {t.name: t for t in data.tools}
            pool = [q for q in data.queries if q.catalog]
            for q in pick_queries(data.queries, self.config.split, count):
                rng = random.Random(hashlib.sha256(q.id.encode()).digest())  # noqa: S311
                other_q = rng.choice(pool)
                tools = [by_name[n] for n in other_q.catalog if n not in q.gold and n in by_name]
                if tools and other_q.id != q.id:
                    out.append((q.text, tools))
        return out

    def _own_catalogs(self, data: Dataset, queries: Sequence[BenchQuery]) -> dict[str, float]:
        """The service on each BFCL query's own small tool list (``catalogs.jsonl``)."""
        wanted = {q.id: q for q in queries}
        sums = MetricSums(k=self.config.k)
        rows = [(qid, tools) for qid, tools in data.catalogs() if qid in wanted]
        for qid, tools in _bar(rows, "bfcl own catalogs", self.config.progress):
            t0 = time.perf_counter()
            outcome = self.selector.select(self.request(tools, wanted[qid].text))
            sums.add(outcome.ranking.names, wanted[qid].gold, time.perf_counter() - t0)
        return sums.summary()
