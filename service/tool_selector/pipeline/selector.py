"""The selection pipeline shared by the endpoint and ``tool-selector eval``.

request -> deduplicated tools -> fingerprint -> catalog (reused, or built: texts, BM25 index)
-> BM25 scores -> tool-embedding matrix (reused, or cache tiers, or encoded within the
deadline, else embedded in the background) -> query vector (LRU) -> cosine -> fusion ->
ranked names. While the full model has no matrix for the catalog, the static arm (a
table lookup per token, ``embeddings/static.py``) gives the dense scores, fused with the
static arm's own parameters (path ``static``); without it the answer is BM25 alone.
Synchronous and framework-free: the HTTP layer runs it in a worker thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from tool_selector.embeddings.cache import EmbeddingCache, NullCache
from tool_selector.embeddings.encoder import Encoder
from tool_selector.embeddings.static import static_text
from tool_selector.pipeline.catalog_store import (
    CatalogCache,
    CatalogEntry,
    EmbeddingJobs,
    QueryCache,
    fingerprint,
    stack,
)
from tool_selector.ranking.bm25 import FieldWeights
from tool_selector.ranking.catalog import Catalog, build_catalog, dedupe
from tool_selector.ranking.dense import FloatArray, cosine_scores, windows
from tool_selector.ranking.fusion import FusionParams
from tool_selector.ranking.ranker import Query, Ranking, select
from tool_selector_client.wire import SearchRequest, Tool

RankingPath = Literal["hybrid", "static", "lexical"]
#: Fusion of the static arm with a static query vector (while the model loads): the same
#: fusion, floors higher (its cosines run higher). Fusion of the static arm with the model's
#: query vector (the usual case: the table keeps the model's 384 dimensions): a lower tool
#: floor. Both swept by ``loadtests.calibrate`` (docs/performance.md, "The static arm").
STATIC_PARAMS = FusionParams(tool_floor=0.13, no_match_floor=0.23)
CROSS_PARAMS = FusionParams(tool_floor=0.10, no_match_floor=0.14)
#: Encode at most this many texts per batch in a job, storing each batch as it completes
#: (``TOOL_SELECTOR_EMBED_BATCH_SIZE``): ONNX Runtime keeps the peak working memory of the
#: largest batch it has run, about 450 MB at 64 long tool texts and 220 MB at 16.
DEFAULT_BATCH = 16


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
    catalog_reused: bool = False
    query_cached: bool = False
    deferred: bool = False
    catalog: Catalog | None = None


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start


class Selector:
    """Ranks a request's tools. Thread-safe; ``encoder`` may be attached after construction.

    ``embed_deadline`` (seconds) bounds the embedding work one request may wait for: when the
    catalog's missing tool embeddings are predicted to take longer, the request is answered
    from the static arm (``static``, when set) or lexically, and the embedding finishes in the
    background (``Outcome.deferred``). The static arm's tool vectors are scored against the
    model's query vector with ``cross_params`` once the model is loaded (it ranks better),
    else against the static query vector with ``static_params``: each its own floors.
    """

    def __init__(
        self,
        encoder: Encoder | None = None,
        cache: EmbeddingCache | None = None,
        params: FusionParams | None = None,
        weights: FieldWeights | None = None,
        *,
        catalogs: CatalogCache | None = None,
        queries: QueryCache | None = None,
        jobs: EmbeddingJobs | None = None,
        embed_deadline: float = 0.06,
        batch_size: int = DEFAULT_BATCH,
        static: Encoder | None = None,
        static_params: FusionParams = STATIC_PARAMS,
        cross_params: FusionParams = CROSS_PARAMS,
    ) -> None:
        self.encoder = encoder
        # ``is None``, not ``or``: an empty cache has len() 0 and would read as falsy
        self.cache: EmbeddingCache = NullCache() if cache is None else cache
        self.params = FusionParams() if params is None else params
        self.weights = FieldWeights() if weights is None else weights
        self.catalogs = CatalogCache(0) if catalogs is None else catalogs
        self.queries = QueryCache(0) if queries is None else queries
        self.jobs = EmbeddingJobs() if jobs is None else jobs
        self.embed_deadline = embed_deadline
        self.batch_size = max(1, batch_size)
        self.static = static
        self.static_params = static_params
        self.cross_params = cross_params

    def select(
        self,
        request: SearchRequest,
        catalog_key: str | None = None,
        entry: CatalogEntry | None = None,
    ) -> Outcome:
        """Rank ``request.tools`` for ``request.pattern`` per SPEC.md rules 1-5.

        ``catalog_key`` (from ``fastpath.RequestDecoder``) identifies the tool list when the
        caller already hashed it; otherwise the deduplicated tools are fingerprinted here.
        ``entry`` is the catalog the caller already found under ``catalog_key`` for a resent
        tool list it did not decode: ``request.tools`` is then not read.
        """
        started = time.perf_counter()
        timings: dict[str, float] = {}
        with _timed(timings, "catalog"):
            if entry is not None:
                if catalog_key is None:
                    raise ValueError("a cached catalog entry needs its catalog_key")
                key, reused, duplicates = catalog_key, True, entry.duplicates
            else:
                unique, duplicates = dedupe(request.tools)
                key = catalog_key or fingerprint(unique)
                entry, reused = self._entry(key, unique, duplicates, by_bytes=bool(catalog_key))
        catalog = entry.catalog
        with _timed(timings, "lexical"):
            query = Query.parse(request.pattern)
            bm25 = catalog.index.scores(query.terms)
        outcome = Outcome(
            ranking=Ranking(picked=(), no_match=True),
            path="lexical",
            tools=len(catalog),
            duplicates=duplicates,
            unknown_always_keep=sum(
                1 for n in set(request.always_keep) if n not in catalog.positions
            ),
            timings=timings,
            catalog_reused=reused,
            catalog=catalog,
        )
        encoder = self.encoder
        dense: FloatArray | None = None
        params = self.params
        if encoder is not None and len(catalog):
            with _timed(timings, "embed"):
                matrix = self._tool_matrix(encoder, key, entry, started, outcome)
                if matrix is not None:
                    qvec = self._query_vector(encoder, request.pattern, outcome)
                    dense, outcome.path = cosine_scores(qvec, matrix), "hybrid"
        if dense is None and self.static is not None and len(catalog):
            with _timed(timings, "static"):
                dense, params = self._static_scores(self.static, entry, request.pattern, outcome)
                outcome.path = "static"
        with _timed(timings, "fuse"):
            outcome.ranking = select(
                catalog,
                query,
                bm25=bm25,
                dense=dense,
                top_k=request.top_k,
                always_keep=request.always_keep,
                params=params,
            )
        return outcome

    def warm(self, tools: list[Tool]) -> int:
        """Build and fully embed one tool catalog now, in this thread (startup warm-up).

        Returns how many tool texts had to be encoded (the rest came from the caches).
        """
        entry = self._entry_for(tools)
        encoder = self.encoder
        if encoder is None or not len(entry.catalog) or entry.matrix(encoder.model_id) is not None:
            return 0
        found = self.cache.get_many(entry.keys(encoder.model_id))
        self._complete(encoder, entry, stoppable=True, yielding=True)
        return sum(v is None for v in found)

    def embedded(self, tools: list[Tool]) -> tuple[Catalog, FloatArray | None]:
        """The catalog of ``tools`` and its embedding matrix, embedding it now if it must.

        The same cached entry ``select`` answers from, so callers that need the texts or the
        vectors (``tool-selector eval``'s reference rankers) never derive them a second time.
        """
        entry = self._entry_for(tools)
        encoder = self.encoder
        if encoder is None or not len(entry.catalog):
            return entry.catalog, None
        matrix = entry.matrix(encoder.model_id)
        return entry.catalog, matrix if matrix is not None else self._complete(encoder, entry)

    def _entry_for(self, tools: list[Tool]) -> CatalogEntry:
        unique, _ = dedupe(tools)
        entry, _ = self._entry(fingerprint(unique), unique)
        return entry

    def _entry(
        self, key: str, unique: list[Tool], duplicates: int = 0, *, by_bytes: bool = False
    ) -> tuple[CatalogEntry, bool]:
        """The cached entry under ``key``, else a new one (built, or aliased: see below).

        ``by_bytes``: ``key`` hashes the request's raw tool bytes. On a miss the tools' own
        fingerprint is tried too (0.8 ms for 300 tools, 12.5 ms for 4,000, against 42 and
        421 ms to build), so a catalog from the warm-up file, or the same tools spelled in
        other bytes, is reused instead of rebuilt, and aliased under ``key`` for next time.
        """
        entry = self.catalogs.get(key)
        if entry is not None:
            return entry, True
        if by_bytes:
            known = self.catalogs.get(fingerprint(unique))
            if known is not None:
                return self.catalogs.put(key, known.alias(duplicates)), True
        entry = CatalogEntry.of(build_catalog(unique, self.weights), duplicates)
        return self.catalogs.put(key, entry), False

    def _tool_matrix(
        self, encoder: Encoder, key: str, entry: CatalogEntry, started: float, outcome: Outcome
    ) -> FloatArray | None:
        """The catalog's embedding matrix if it can be had within the deadline, else ``None``."""
        model = encoder.model_id
        matrix = entry.matrix(model)
        if matrix is not None:
            outcome.cache_hits = len(entry.catalog)
            return matrix
        found = self.cache.get_many(entry.keys(model))
        missing = sum(v is None for v in found)
        outcome.cache_hits, outcome.cache_misses = len(found) - missing, missing
        if not missing:
            matrix = stack(found, encoder.dim)
            entry.set_matrix(model, matrix)
            return matrix
        remaining = self.embed_deadline - (time.perf_counter() - started)
        job, owner = self.jobs.claim(f"{model}\x00{key}")
        if not owner:
            return None if job.background else job.wait(remaining)
        if self.jobs.estimate(missing) <= remaining:
            return self.jobs.run_inline(job, lambda: self._complete(encoder, entry))
        outcome.deferred = True
        self.jobs.enqueue(job, self._background(encoder, key, entry))
        return None

    def _background(
        self, encoder: Encoder, key: str, entry: CatalogEntry
    ) -> Callable[[], FloatArray]:
        """A queued job that holds only the texts and their keys, not the built catalog: a
        catalog evicted while its job waits is freed (the vectors still fill the caches), and
        the matrix goes to the catalog cached under ``key`` when it is still there."""
        model, keys, texts = encoder.model_id, entry.keys(encoder.model_id), entry.dense_texts

        def task() -> FloatArray:
            matrix = self._embed(encoder, keys, texts, stoppable=True)
            cached = self.catalogs.get(key)
            if cached is not None:
                cached.set_matrix(model, matrix)
            return matrix

        return task

    def _complete(
        self,
        encoder: Encoder,
        entry: CatalogEntry,
        *,
        stoppable: bool = False,
        yielding: bool = False,
    ) -> FloatArray:
        """Embed every tool text the caches lack, in chunks stored as they finish; stack them.

        ``stoppable`` (background and warm-up work, never a request's own): raises
        ``EmbeddingStopped`` between chunks once the jobs are closing (shutdown).
        ``yielding`` (warm-up): waits between chunks while requests' catalogs are embedded.
        """
        keys, texts = entry.keys(encoder.model_id), entry.dense_texts
        matrix = self._embed(encoder, keys, texts, stoppable=stoppable, yielding=yielding)
        entry.set_matrix(encoder.model_id, matrix)
        return matrix

    def _embed(
        self,
        encoder: Encoder,
        keys: list[bytes],
        texts: list[str],
        *,
        stoppable: bool,
        yielding: bool = False,
    ) -> FloatArray:
        """The stacked vectors of ``texts``: from the caches, the rest encoded in batches of
        ``batch_size`` and stored as each batch finishes. A stored vector is a copy: a row
        view would keep its whole batch alive for as long as the cache keeps the row."""
        found = self.cache.get_many(keys)
        missing = [i for i, v in enumerate(found) if v is None]
        for start in range(0, len(missing), self.batch_size):
            if yielding:
                self.jobs.yield_to_asked()
            if stoppable:
                self.jobs.checkpoint()
            chunk = missing[start : start + self.batch_size]
            began = time.perf_counter()
            fresh = encoder.encode([texts[i] for i in chunk])
            self.jobs.observe(len(chunk), time.perf_counter() - began)
            rows = [np.array(fresh[j], dtype=np.float32) for j in range(len(chunk))]
            for j, i in enumerate(chunk):
                found[i] = rows[j]
            self.cache.put_many([(keys[i], rows[j]) for j, i in enumerate(chunk)])
        return stack(found, encoder.dim)

    def _static_scores(
        self, static: Encoder, entry: CatalogEntry, pattern: str, outcome: Outcome
    ) -> tuple[FloatArray, FusionParams]:
        """Cosines from the static arm and the parameters that fuse them. Its matrix is built
        on first use (milliseconds) and kept on the entry; never cached by text (recomputing
        is as cheap as a lookup). The query is the model's vector when it shares the table's
        space (same dimensions; the static rows are the model's own outputs), else static."""
        matrix = entry.matrix(static.model_id)
        if matrix is None:
            texts = [static_text(t) for t in entry.catalog.texts]
            matrix = np.ascontiguousarray(static.encode(texts), dtype=np.float32)
            entry.set_matrix(static.model_id, matrix)
        encoder = self.encoder
        if encoder is not None and encoder.dim == static.dim:
            qvec = self._query_vector(encoder, pattern, outcome)
            return cosine_scores(qvec, matrix), self.cross_params
        qvec = self._query_vector(static, pattern, outcome)
        return cosine_scores(qvec, matrix), self.static_params

    def _query_vector(self, encoder: Encoder, pattern: str, outcome: Outcome) -> FloatArray:
        """The pattern's vector (d,), or one per window (w, d) for a long pattern."""
        cached = self.queries.get(encoder.model_id, pattern)
        if cached is not None:
            outcome.query_cached = True
            return cached
        parts = windows(pattern)
        encoded = encoder.encode(parts)
        vec: FloatArray = np.ascontiguousarray(
            encoded[0] if len(parts) == 1 else encoded, dtype=np.float32
        )
        self.queries.put(encoder.model_id, pattern, vec)
        return vec
