"""The selection pipeline shared by the endpoint and ``tool-selector eval``.

request -> deduplicated tools -> catalog (texts, BM25 index) -> BM25 scores
-> tool embeddings (cache, then model) -> cosine -> fusion -> ranked names.
Synchronous and framework-free: the HTTP layer runs it in a worker thread.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from tool_selector.embeddings.cache import EmbeddingCache, NullCache, embedding_key
from tool_selector.embeddings.encoder import Encoder
from tool_selector.ranking.bm25 import FieldWeights
from tool_selector.ranking.catalog import Catalog, build_catalog, dedupe
from tool_selector.ranking.dense import FloatArray, cosine_scores
from tool_selector.ranking.fusion import FusionParams
from tool_selector.ranking.ranker import Query, Ranking, select
from tool_selector.ranking.text import TEXT_FORMAT_VERSION
from tool_selector_client.wire import SearchRequest

RankingPath = Literal["hybrid", "lexical"]


@dataclass(slots=True)
class Outcome:
    """A ranking plus what it took to make it (for metrics and logs)."""

    ranking: Ranking
    path: RankingPath
    tools: int
    duplicates: int
    unknown_always_keep: int
    cache_hits: int = 0
    cache_misses: int = 0
    timings: dict[str, float] = field(default_factory=dict)


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start


class Selector:
    """Ranks a request's tools. Thread-safe; ``encoder`` may be attached after construction."""

    def __init__(
        self,
        encoder: Encoder | None = None,
        cache: EmbeddingCache | None = None,
        params: FusionParams | None = None,
        weights: FieldWeights | None = None,
    ) -> None:
        self.encoder = encoder
        self.cache: EmbeddingCache = cache if cache is not None else NullCache()
        self.params = params or FusionParams()
        self.weights = weights or FieldWeights()

    def select(self, request: SearchRequest) -> Outcome:
        """Rank ``request.tools`` for ``request.pattern`` per SPEC.md rules 1-5."""
        timings: dict[str, float] = {}
        unique, duplicates = dedupe(request.tools)
        with _timed(timings, "lexical"):
            catalog = build_catalog(unique, self.weights)
            query = Query.parse(request.pattern)
            bm25 = catalog.index.scores(query.terms)
        encoder = self.encoder
        dense: FloatArray | None = None
        hits = misses = 0
        if encoder is not None and len(catalog):
            with _timed(timings, "embed"):
                matrix, hits, misses = self._tool_matrix(encoder, catalog)
                qvec = encoder.encode([request.pattern])[0]
                dense = cosine_scores(qvec, matrix)
        with _timed(timings, "fuse"):
            ranking = select(
                catalog,
                query,
                bm25=bm25,
                dense=dense,
                top_k=request.top_k,
                always_keep=request.always_keep,
                params=self.params,
            )
        unknown = sum(1 for n in set(request.always_keep) if n not in catalog.positions)
        return Outcome(
            ranking=ranking,
            path="hybrid" if dense is not None else "lexical",
            tools=len(catalog),
            duplicates=duplicates,
            unknown_always_keep=unknown,
            cache_hits=hits,
            cache_misses=misses,
            timings=timings,
        )

    def _tool_matrix(self, encoder: Encoder, catalog: Catalog) -> tuple[FloatArray, int, int]:
        """Embeddings of every tool text: cached ones looked up, the rest encoded and stored."""
        texts = [t.dense_text() for t in catalog.texts]
        keys = [embedding_key(encoder.model_id, TEXT_FORMAT_VERSION, t) for t in texts]
        found = self.cache.get_many(keys)
        missing = [i for i, v in enumerate(found) if v is None]
        matrix = np.zeros((len(texts), encoder.dim), dtype=np.float32)
        for i, vec in enumerate(found):
            if vec is not None:
                matrix[i] = vec
        if missing:
            fresh = encoder.encode([texts[i] for i in missing])
            matrix[missing] = fresh
            self.cache.put_many([(keys[i], fresh[j]) for j, i in enumerate(missing)])
        return matrix, len(texts) - len(missing), len(missing)
