"""The one ``select``, shared by the endpoint and ``tool-selector eval``.

``Ask`` -> the catalog store, looked up once (the catalog reused, or its tools decoded,
deduplicated and built: texts, BM25 index) -> BM25 scores -> tool-embedding matrix (reused,
or cache tiers, or encoded within the deadline, else embedded in the background) -> query
vector (LRU) -> cosine -> fusion -> ranked names. While the full model has no matrix for the
catalog, the static arm (a table lookup per token, ``embeddings/static.py``) gives the dense
scores, fused with the static arm's own parameters (path ``static``); without it the answer
is BM25 alone. A pattern written in another language (``ranking/language.py``) is followed
by the English words of its gloss (``ranking/glossary.py``) for BM25 and the name rule, and
gets the multilingual arm's cosines (``embeddings/multilingual.py``) of the pattern as sent,
blended with the English model's cosines of the gloss (``GLOSS_MODEL_SHARE``), in place of
the English model's cosines; its tool vectors are cached like the model's, its lexical half
damped (``multilingual_params_of``). Patterns read as English never reach either. With a
second encoder (``MeanEncoder``: the cosine is the mean of both models'), each model's tool
vectors and query vectors are had and cached under its own model id and joined (the second
model embeds each tool's name, description and search text, not its parameters); until the
second model's tool vectors are in, the first model answers alone; the static arm reads the
first model's query vector alone.
Synchronous and framework-free: the HTTP layer runs it in a worker thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Literal

import msgspec
import numpy as np

from tool_selector.embeddings.cache import EmbeddingCache, NullCache
from tool_selector.embeddings.encoder import (
    Encoder,
    MeanEncoder,
    encode_query,
    parts_of,
    primary_of,
)
from tool_selector.embeddings.static import static_matrix, static_text
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogEntry, CatalogStore, Found, stack
from tool_selector.pipeline.jobs import EmbeddingJobs
from tool_selector.pipeline.step_vectors import (
    QueryCache,
    Spans,
    clause_cosines,
    read_spans,
    wants_spans,
)
from tool_selector.ranking.bm25 import FieldWeights
from tool_selector.ranking.calibration import CROSS, STATIC
from tool_selector.ranking.catalog import Catalog, build_catalog
from tool_selector.ranking.context import (
    RECENT_TOOLS,
    ContextWeights,
    context_boost,
    context_text,
)
from tool_selector.ranking.controls import BoolArray, allowed
from tool_selector.ranking.dense import FloatArray, cosine_scores, windows
from tool_selector.ranking.fusion import FusionParams, standardise
from tool_selector.ranking.glossary import Glossary
from tool_selector.ranking.language import reads_foreign
from tool_selector.ranking.ranker import NO_LIMITS, Clause, Limits, Query, Ranking, rank
from tool_selector.ranking.steps import StepRule, clauses, locate
from tool_selector_client.wire import Context, Filters, SearchRequest, Tool

_ENCODE = msgspec.json.Encoder().encode
RankingPath = Literal["hybrid", "static", "lexical"]
#: Fusion of the static arm's tool vectors with a static query vector (while the model
#: loads; ``fit --arm static``) and with the model's query vector (the cold path's usual
#: case: the table keeps the model's 384 dimensions; ``fit --arm cross``): the same fusion,
#: each with its own weights fitted on the dev split over its own cosines
#: (``python -m tool_selector.offline.evaluation.fit --arm ...``; both trust the static
#: cosines' rank less and the pattern's words more than the hybrid does) and its own floors
#: (the static query's higher: its cosines run higher), swept by ``loadtests.calibrate``
#: (docs/performance.md, "The static arm").
STATIC_PARAMS = FusionParams(
    cos_weight=1.226,
    z_weight=0.82,
    rank_weight=0.306,
    specificity_weight=5.003,
    name_weight=10.465,
    peak_weight=1.508,
    long_weight=0.58,
    tool_floor=0.11,
    no_match_floor=0.23,
    relevance=STATIC,
)
CROSS_PARAMS = FusionParams(
    cos_weight=0.601,
    z_weight=0.749,
    rank_weight=0.731,
    specificity_weight=5.782,
    name_weight=9.637,
    peak_weight=0.976,
    long_weight=0.526,
    tool_floor=0.08,
    no_match_floor=0.14,
    relevance=CROSS,
)
#: Encode at most this many texts per batch in a job, storing each batch as it completes
#: (``TOOL_SELECTOR_EMBED_BATCH_SIZE``): ONNX Runtime keeps the peak working memory of the
#: largest batch it has run, about 450 MB at 64 long tool texts and 220 MB at 16.
DEFAULT_BATCH = 16
#: How much of the lexical half a non-English pattern keeps (``multilingual_params_of``):
#: its own words and its gloss's (dev half of ``eval/multilingual``, docs/quality.md).
MULTILINGUAL_LEXICAL = 0.5
#: Share of the English model's cosines of a non-English pattern's gloss in its dense score
#: (the rest: the multilingual arm's cosines of the pattern as sent).
GLOSS_MODEL_SHARE = 0.2


def multilingual_params_of(
    params: FusionParams, lexical: float = MULTILINGUAL_LEXICAL
) -> FusionParams:
    """``params`` with the lexical half scaled by ``lexical``, for non-English patterns: their
    few words a tool shares (a product name, a path) say less about the need than in English,
    where every word can (dev half of ``eval/multilingual``, docs/quality.md)."""
    return replace(
        params,
        specificity_weight=lexical * params.specificity_weight,
        name_weight=lexical * params.name_weight,
        peak_weight=lexical * params.peak_weight,
        long_weight=lexical * params.long_weight,
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    """A ranking plus what it took to make it (for metrics and logs). ``removed``: how many
    tools each of the caller's controls left out (``Removed``'s fields; empty: none sent)."""

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
    removed: dict[str, int] = field(default_factory=dict)
    #: The key the catalog is stored under (logged: ``POST /v1/catalog/lint`` takes it).
    catalog_key: str = ""


@dataclass(frozen=True, slots=True)
class Pattern:
    """A request's pattern as sent (``text``), the English words of its gloss (``gloss``,
    non-English patterns only), whether it reads as not English, and its steps (``steps``:
    a multi-step English pattern's clauses, ``ranking.steps``)."""

    text: str
    gloss: str = ""
    foreign: bool = False
    steps: tuple[str, ...] = ()

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """Each step's character span in ``text``."""
        return locate(self.text, self.steps)

    @property
    def words(self) -> str:
        """The pattern as its words are ranked: itself, then its gloss."""
        return f"{self.text} {self.gloss}" if self.gloss else self.text

    def query(self) -> Query:
        """The lexical query: terms and name words of ``words`` (the gloss too), the exact-
        and near-name rules on ``text`` (a name is matched as sent, not with its gloss)."""
        return replace(Query.parse(self.words), pattern=self.text)


@dataclass(frozen=True, slots=True)
class ToolMatrix:
    """The catalog's embedding matrix if it could be had in time, and what that took."""

    matrix: FloatArray | None = None
    hits: int = 0
    misses: int = 0
    deferred: bool = False


@dataclass(frozen=True, slots=True)
class DenseArm:
    """The dense scores a request is fused with (``None``: lexical) and how they were had:
    the tool matrix they came from and the encoder of the query side (context reuses both)."""

    scores: FloatArray | None
    params: FusionParams
    path: RankingPath
    tools: ToolMatrix
    query_cached: bool = False
    matrix: FloatArray | None = None
    query_encoder: Encoder | None = None
    #: The first model's cosines when ``scores`` are a second encoder's mean: the relevance
    #: bar and the context read those (their floors are MiniLM's cosines).
    evidence: FloatArray | None = None


def _mask(catalog: Catalog, filters: Filters) -> tuple[BoolArray, dict[str, int]]:
    """The tools ``filters`` leave in (read-only: it is kept for later requests)."""
    mask, removed = allowed([(t.name, t.bare_name) for t in catalog.texts], catalog.traits, filters)
    mask.setflags(write=False)
    return mask, removed


def _first_cosines(encoder: Encoder, qvec: FloatArray, matrix: FloatArray) -> FloatArray | None:
    """For a second encoder's mean, the first model's own cosines (the relevance bar's
    scale); else none (the scores are those)."""
    if not isinstance(encoder, MeanEncoder):
        return None
    return cosine_scores(encoder.first(qvec), encoder.first(matrix))


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
    ``multilingual`` (an ``Encoder`` of many languages): read for non-English patterns once
    its tool vectors are at hand (same deadline and background jobs as the model's).
    """

    def __init__(
        self,
        encoder: Encoder | None = None,
        cache: EmbeddingCache | None = None,
        params: FusionParams | None = None,
        weights: FieldWeights | None = None,
        *,
        catalogs: CatalogStore | None = None,
        queries: QueryCache | None = None,
        jobs: EmbeddingJobs | None = None,
        embed_deadline: float = 0.06,
        batch_size: int = DEFAULT_BATCH,
        static: Encoder | None = None,
        static_params: FusionParams = STATIC_PARAMS,
        cross_params: FusionParams = CROSS_PARAMS,
        context_weights: ContextWeights | None = None,
        multilingual: Encoder | None = None,
        multilingual_params: FusionParams | None = None,
        glossary: Glossary | None = None,
        steps: StepRule | None = None,
    ) -> None:
        self.encoder = encoder
        # ``is None``, not ``or``: an empty cache has len() 0 and would read as falsy
        self.cache: EmbeddingCache = NullCache() if cache is None else cache
        self.params = FusionParams() if params is None else params
        self.weights = FieldWeights() if weights is None else weights
        self.catalogs = CatalogStore(0) if catalogs is None else catalogs
        self.queries: QueryCache = BoundedLRU(0) if queries is None else queries
        self.jobs = EmbeddingJobs() if jobs is None else jobs
        self.embed_deadline = embed_deadline
        self.batch_size = max(1, batch_size)
        self.static, self.static_params, self.cross_params = static, static_params, cross_params
        self.context_weights = ContextWeights() if context_weights is None else context_weights
        self.multilingual = multilingual
        self.multilingual_params = multilingual_params or multilingual_params_of(self.params)
        self.glossary, self.gloss_share, self.steps = glossary, GLOSS_MODEL_SHARE, steps
        # a second encoder's query encodes: one helper thread, used while no other is running
        self._helper: ThreadPoolExecutor | None = None
        self._encoding, self._encoding_lock = 0, threading.Lock()

    def select(self, request: Ask | SearchRequest) -> Outcome:
        """Rank the request's tools per SPEC.md rules 1-5 (a ``SearchRequest`` as ``Ask.of`` it)."""
        ask = request if isinstance(request, Ask) else Ask.of(request)
        started, timings = time.perf_counter(), dict[str, float]()
        with _timed(timings, "catalog"):
            catalog = (found := self.entry(ask.tools)).entry.catalog
        with _timed(timings, "lexical"):
            query = (sent := self._glossed(ask.pattern)).query()
            bm25 = catalog.index.scores(query.terms)
        dense = self._dense_arm(found, sent, started, timings)
        with _timed(timings, "fuse"):
            limits, filtered = self._limits(ask, found.entry, dense)
            ranking = rank(
                catalog,
                query,
                bm25=bm25,
                dense=dense.scores,
                top_k=ask.top_k,
                always_keep=ask.always_keep,
                params=dense.params,
                limits=limits,
                clauses=self._clauses(catalog, sent, dense),
                abstain=not sent.foreign,
            )
        return Outcome(
            ranking=ranking,
            path=dense.path,
            tools=len(catalog),
            duplicates=found.duplicates,
            unknown_always_keep=sum(1 for n in set(ask.always_keep) if n not in catalog.positions),
            cache_hits=dense.tools.hits,
            cache_misses=dense.tools.misses,
            timings=timings,
            catalog_reused=found.reused,
            query_cached=dense.query_cached,
            deferred=dense.tools.deferred,
            catalog=catalog,
            removed={**filtered, **ranking.removed},
            catalog_key=found.key,
        )

    def _limits(
        self, ask: Ask, entry: CatalogEntry, dense: DenseArm
    ) -> tuple[Limits, dict[str, int]]:
        """The caller's controls as ``rank`` applies them, and what the filters removed
        (both derived once per catalog for the same filters and context: ``memo``)."""
        context, filters, catalog = ask.context, ask.filters, entry.catalog
        plain = filters is None and ask.budget is None and ask.min_score is None
        if plain and not context and dense.evidence is None:
            return NO_LIMITS, {}
        mask, filtered = None, dict[str, int]()
        if filters is not None:
            mask, filtered = entry.memo(
                ("filters", _ENCODE(filters)), lambda: _mask(catalog, filters)
            )
        budget = ask.budget
        boost, seen = None, None
        if context is not None:
            model = "" if dense.query_encoder is None else dense.query_encoder.model_id
            key = ("context", dense.path, model, _ENCODE(context))
            boost, seen = entry.memo(key, lambda: self._context(context, catalog, dense))
        return Limits(
            allowed=mask,
            boost=boost,
            context_evidence=seen,
            max_tools=None if budget is None else budget.max_tools,
            max_bytes=None if budget is None else budget.max_bytes,
            min_score=ask.min_score,
            dense_evidence=dense.evidence,
        ), filtered

    def _glossed(self, pattern: str) -> Pattern:
        """The pattern as its words are ranked, and whether it reads as not English: a
        non-English pattern followed by the English words of its gloss (``glossary``), which
        BM25, the exact-name rule and (without the multilingual arm) the model read."""
        if (self.multilingual is None and self.glossary is None) or not reads_foreign(pattern):
            return Pattern(pattern, steps=clauses(pattern, self.steps) if self.steps else ())
        words = self.glossary.gloss(pattern) if self.glossary is not None else []
        return Pattern(pattern, " ".join(words), foreign=True)

    def _dense_arm(
        self, found: Found, sent: Pattern, started: float, timings: dict[str, float]
    ) -> DenseArm:
        """The full model's cosines when the catalog's matrix is at hand (``hybrid``), else
        the static arm's (``static``), else none (``lexical``); for a pattern that reads as
        not English, the multilingual arm's first (``_foreign_arm``)."""
        foreign = self._foreign_arm(found, sent, started, timings) if sent.foreign else None
        if foreign is not None:
            return foreign
        pattern = sent.words
        encoder, tools = self.encoder, ToolMatrix()
        if encoder is not None and len(found.entry.catalog):
            with _timed(timings, "embed"):
                tools = self._tool_matrix(encoder, found, started)
                if tools.matrix is None and isinstance(encoder, MeanEncoder):
                    encoder, tools = self._first_alone(encoder, found, tools)
                if tools.matrix is not None:
                    qvec, cached = self._query_vector(encoder, pattern, self._spans(sent))
                    scores = cosine_scores(qvec, tools.matrix)
                    return DenseArm(
                        scores,
                        self.params,
                        "hybrid",
                        tools,
                        cached,
                        tools.matrix,
                        encoder,
                        _first_cosines(encoder, qvec, tools.matrix),
                    )
        if self.static is not None and len(found.entry.catalog):
            with _timed(timings, "static"):
                return self._static_arm(self.static, found.entry, pattern, tools)
        return DenseArm(None, self.params, "lexical", tools)

    def _first_alone(
        self, encoder: MeanEncoder, found: Found, tools: ToolMatrix
    ) -> tuple[Encoder, ToolMatrix]:
        """While a second encoder's vectors are still being embedded, the first model alone
        when its matrix is at hand: the answer MiniLM alone gives, not the static arm's."""
        first = primary_of(encoder)
        matrix = found.entry.matrix(first.model_id)
        if matrix is None:
            return encoder, tools
        return first, replace(tools, matrix=matrix)

    def _foreign_arm(
        self, found: Found, sent: Pattern, started: float, timings: dict[str, float]
    ) -> DenseArm | None:
        """For a pattern that is not English (``reads_foreign``), the multilingual arm's
        cosines over its tool vectors (of ``static_text``) fused with ``multilingual_params``,
        once those vectors are at hand (same deadline and jobs as the model's); else none."""
        multilingual = self.multilingual
        if multilingual is None or not len(found.entry.catalog):
            return None
        with _timed(timings, "multilingual"):
            found.entry.read_as(multilingual.model_id, static_text)
            tools = self._tool_matrix(multilingual, found, started)
            if tools.matrix is None:
                return None
            qvec, cached = self._query_vector(multilingual, sent.text)
            scores = cosine_scores(qvec, tools.matrix)
            scores = self._with_gloss_cosines(found, sent, scores, started)
        params = self.multilingual_params
        return DenseArm(scores, params, "hybrid", tools, cached, tools.matrix, multilingual)

    def _with_gloss_cosines(
        self, found: Found, sent: Pattern, scores: FloatArray, started: float
    ) -> FloatArray:
        """``scores`` blended with the English model's cosines of the gloss alone
        (``gloss_share`` of them) when the pattern has a gloss and the model's matrix is at
        hand (of a second encoder's pair, the first model's alone, as before it)."""
        encoder = None if self.encoder is None else primary_of(self.encoder)
        if not self.gloss_share or encoder is None or not sent.gloss:
            return scores
        english = self._tool_matrix(encoder, found, started)
        if english.matrix is None:
            return scores
        qvec, _ = self._query_vector(encoder, sent.gloss)
        blend = cosine_scores(qvec, english.matrix)
        return np.asarray(
            (1 - self.gloss_share) * scores + self.gloss_share * blend, dtype=np.float32
        )

    def entry(self, tools: ToolSource) -> Found:
        """The catalog store's entry for ``tools``, found (or built) as ``select`` finds it
        (``tool-selector lint`` reads the built catalog and its matrices from it). A second
        encoder's model (each part of a ``MeanEncoder`` after the first: bge-small) embeds
        each tool's name, description and search text, not its parameters (``static_text``,
        as the static and multilingual arms read tools): a retrieval model trained on
        passages of prose, it ranked better without the schema's words on every set but
        BFCL (docs/quality.md, "What the second encoder reads of a tool, and the bar's reach")."""
        found = self.catalogs.find(tools, self._build)
        for part in parts_of(self.encoder)[1:] if self.encoder is not None else ():
            found.entry.read_as(part.model_id, static_text)
        return found

    def _build(self, tools: list[Tool]) -> Catalog:
        return build_catalog(tools, self.weights)

    def warm(self, tools: list[Tool]) -> int:
        """Build and fully embed one tool catalog now, in this thread (startup warm-up).

        Returns how many tool texts had to be encoded (the rest came from the caches).
        """
        entry = self._entry_for(tools)
        encoder = self.encoder
        if encoder is None or not len(entry.catalog) or entry.matrix(encoder.model_id) is not None:
            return 0
        found = [v for p in parts_of(encoder) for v in self.cache.get_many(entry.keys(p.model_id))]
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
        return self.entry(ToolSource.of(tools)).entry

    def _tool_matrix(self, encoder: Encoder, found: Found, started: float) -> ToolMatrix:
        """The catalog's embedding matrix if it can be had within the deadline (of each
        part, for a ``MeanEncoder``: ``_mean_matrix``)."""
        model, entry = encoder.model_id, found.entry
        matrix = entry.matrix(model)
        if matrix is not None:
            return ToolMatrix(matrix, hits=len(entry.catalog))
        if isinstance(encoder, MeanEncoder):
            return self._mean_matrix(encoder, found, started)
        cached = self.cache.get_many(entry.keys(model))
        misses = sum(v is None for v in cached)
        hits = len(cached) - misses
        if not misses:
            matrix = stack(cached, encoder.dim)
            entry.set_matrix(model, matrix)
            return ToolMatrix(matrix, hits)
        remaining = self.embed_deadline - (time.perf_counter() - started)
        job, owner = self.jobs.claim(f"{model}\x00{found.key}")
        if not owner:
            return ToolMatrix(None if job.background else job.wait(remaining), hits, misses)
        if self.jobs.estimate(misses) <= remaining:
            done = self.jobs.run_inline(job, lambda: self._complete(encoder, entry))
            return ToolMatrix(done, hits, misses)
        self.jobs.enqueue(job, self._background(encoder, found.key, entry))
        return ToolMatrix(None, hits, misses, deferred=True)

    def _mean_matrix(self, encoder: MeanEncoder, found: Found, started: float) -> ToolMatrix:
        """Each part's matrix as ``_tool_matrix`` has it (own cache keys, own jobs), joined
        once all are at hand and kept on the entry; else none (the static arm answers)."""
        got = [self._tool_matrix(part, found, started) for part in encoder.parts]
        hits, misses = sum(g.hits for g in got), sum(g.misses for g in got)
        deferred = any(g.deferred for g in got)
        if any(g.matrix is None for g in got):
            return ToolMatrix(None, hits, misses, deferred)
        matrix = encoder.combine([g.matrix for g in got if g.matrix is not None])
        found.entry.set_matrix(encoder.model_id, matrix)
        return ToolMatrix(matrix, hits, misses, deferred)

    def _background(
        self, encoder: Encoder, key: str, entry: CatalogEntry
    ) -> Callable[[], FloatArray]:
        """A queued job that holds only the texts and their keys, not the built catalog: a
        catalog evicted while its job waits is freed (the vectors still fill the caches), and
        the matrix goes to the catalog cached under ``key`` when it is still there."""
        model = encoder.model_id
        keys, texts = entry.keys(model), entry.texts(model)

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
        if isinstance(encoder, MeanEncoder):
            kept = [entry.matrix(p.model_id) for p in encoder.parts]
            matrix = encoder.combine(
                [
                    self._complete(p, entry, stoppable=stoppable, yielding=yielding)
                    if m is None
                    else m
                    for p, m in zip(encoder.parts, kept, strict=True)
                ]
            )
        else:
            keys, texts = entry.keys(encoder.model_id), entry.texts(encoder.model_id)
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

    def _static_arm(
        self, static: Encoder, entry: CatalogEntry, pattern: str, tools: ToolMatrix
    ) -> DenseArm:
        """Cosines from the static arm and the parameters that fuse them. Its matrix is built
        on first use (milliseconds) and kept on the entry; never cached by text (recomputing
        is as cheap as a lookup). The query is the model's vector when it shares the table's
        space (same dimensions; the static rows are the model's own outputs; of a second
        encoder's pair, the first model's alone), else static."""
        matrix = entry.matrix(static.model_id)
        if matrix is None:
            matrix = static_matrix(static, entry.catalog.texts)
            entry.set_matrix(static.model_id, matrix)
        encoder = None if self.encoder is None else primary_of(self.encoder)
        params = self.cross_params
        if encoder is None or encoder.dim != static.dim:
            encoder, params = static, self.static_params
        qvec, cached = self._query_vector(encoder, pattern)
        scores = cosine_scores(qvec, matrix)
        return DenseArm(scores, params, "static", tools, cached, matrix, encoder)

    def _context(
        self, context: Context, catalog: Catalog, dense: DenseArm
    ) -> tuple[FloatArray | None, FloatArray | None]:
        """What the conversation adds to each tool's score and to its evidence for the bar
        (``ranking.context``): the dense arm's similarities when there is one, else BM25's."""
        positions = catalog.positions
        recent = [positions[n] for n in context.recent_tools[-RECENT_TOOLS:] if n in positions]
        text = context_text(context.messages)
        terms = Query.parse(text).terms if text else ()
        matrix, encoder = dense.matrix, dense.query_encoder
        if isinstance(encoder, MeanEncoder) and matrix is not None:  # MiniLM's, as the bar's
            matrix, encoder = encoder.first(matrix), primary_of(encoder)
        if matrix is None or encoder is None:
            words = list(dict.fromkeys(w for i in recent for w in catalog.texts[i].name_tokens()))
            index = catalog.index
            said = index.scores(terms) if text else None
            near = index.scores(words) if recent else None
            seen = [
                index.idf_coverage(terms) if text else None,
                index.idf_coverage(words) if recent else None,
            ]
        else:
            cos = cosine_scores(self._query_vector(encoder, text)[0], matrix) if text else None
            said = None
            if cos is not None:
                said = standardise(cos) + standardise(catalog.index.scores(terms))
            near = (matrix[recent] @ matrix.T).max(axis=0) if recent else None
            seen = [cos, near]
        strength = [s for s in seen if s is not None]
        return (
            context_boost(said, near, self.context_weights),
            np.max(strength, axis=0) if strength else None,
        )

    def _clauses(self, catalog: Catalog, sent: Pattern, dense: DenseArm) -> list[Clause]:
        """The steps of a multi-step English pattern (``Pattern.steps``; none when off), each
        with its BM25 scores and, on a dense path, its cosines: of its own vector from the
        arm's query encoder (encoded together, cached like patterns), the whole pattern's
        mixed with its own in the pattern's context (``StepRule.in_context``, on the hybrid
        path: ``step_vectors``), the whole pattern's alone (``own_vectors`` off, or the
        in-context read unavailable), or none (``StepRule.words_only``)."""
        rule, texts = self.steps, sent.steps
        if rule is None or not texts:
            return []
        queries = [Query.parse(t) for t in texts]
        cosines: list[FloatArray | None] = [None if rule.words_only else dense.scores] * len(texts)
        encoder, matrix = dense.query_encoder, dense.matrix
        own = rule.own_vectors and not rule.words_only and dense.scores is not None
        spans = self._spans(sent) if dense.path == "hybrid" else ()
        if own and encoder is not None and matrix is not None:
            cosines = [cosine_scores(v, matrix) for v in self._query_vectors(encoder, texts)]
        elif spans and encoder is not None and matrix is not None and dense.scores is not None:
            tools = (matrix, dense.scores)
            read = clause_cosines(encoder, self.queries, sent.words, spans, tools)
            cosines = cosines if read is None else list(read)
        return [
            Clause(q, catalog.index.scores(q.terms), cos, rule.reach)
            for q, cos in zip(queries, cosines, strict=True)
        ]

    def _spans(self, sent: Pattern) -> tuple[tuple[int, int], ...]:
        """The spans of ``sent``'s steps when its clauses are read in its context
        (``StepRule.in_context``, not ``own_vectors`` nor ``words_only``), else none."""
        rule = self.steps
        if rule is None or not rule.in_context or rule.own_vectors or rule.words_only:
            return ()
        return sent.spans

    def _query_vectors(self, encoder: Encoder, texts: Sequence[str]) -> list[FloatArray]:
        """``_query_vector`` of each text, those the cache lacks encoded in one call (as queries:
        ``encode_query``, so a clause reads as the whole pattern does)."""
        got = [self.queries.get((encoder.model_id, t)) for t in texts]
        missing = [i for i, v in enumerate(got) if v is None]
        parts = [windows(texts[i]) for i in missing]
        flat = [w for ws in parts for w in ws]
        encoded = encode_query(encoder, flat) if flat else np.zeros((0, encoder.dim), np.float32)
        at = 0
        for i, ws in zip(missing, parts, strict=True):
            rows = encoded[at : at + len(ws)]
            vec = np.ascontiguousarray(rows[0] if len(ws) == 1 else rows, dtype=np.float32)
            vec.setflags(write=False)
            self.queries.put((encoder.model_id, texts[i]), vec)
            got[i], at = vec, at + len(ws)
        return [v for v in got if v is not None]

    def _query_vector(
        self, encoder: Encoder, pattern: str, spans: Spans = ()
    ) -> tuple[FloatArray, bool]:
        """The pattern's vector (d,), or one per window (w, d) for a long pattern, and
        whether it came from the cache. A ``MeanEncoder``'s joins its parts' (each cached
        under its own model id; the static arm reads the first's). With ``spans`` (a
        multi-step pattern's clauses, ``_spans``) the same pass reads the clauses' vectors
        into the cache too (``step_vectors``)."""
        cached = self.queries.get((encoder.model_id, pattern))
        if wants_spans(encoder, self.queries, pattern, spans):
            read = read_spans(encoder, self.queries, pattern, spans)
            if cached is None:
                self.queries.put((encoder.model_id, pattern), read)
            return (read if cached is None else cached), False
        if cached is not None:
            return cached, True
        if isinstance(encoder, MeanEncoder):
            got = self._part_queries(encoder, pattern, spans)
            return encoder.combine([v for v, _ in got]), all(c for _, c in got)
        parts = windows(pattern)
        encoded = encode_query(encoder, parts)
        vec: FloatArray = np.ascontiguousarray(
            encoded[0] if len(parts) == 1 else encoded, dtype=np.float32
        )
        vec.setflags(write=False)
        self.queries.put((encoder.model_id, pattern), vec)
        return vec, False

    def _part_queries(
        self, encoder: MeanEncoder, pattern: str, spans: Spans = ()
    ) -> list[tuple[FloatArray, bool]]:
        """Each part's query vector (``_query_vector``). When no other request is encoding
        one, the parts after the first are encoded on a helper thread meanwhile (ONNX Runtime
        leaves the GIL: an idle core takes them), else one after another in this thread."""
        with self._encoding_lock:
            self._encoding += 1
            alone = self._encoding == 1
            if alone and self._helper is None:
                self._helper = ThreadPoolExecutor(1, thread_name_prefix="query-encode")
        try:
            first, rest = encoder.parts[0], encoder.parts[1:]
            if not alone or self._helper is None:
                return [self._query_vector(part, pattern, spans) for part in encoder.parts]
            later = [self._helper.submit(self._query_vector, part, pattern, spans) for part in rest]
            return [self._query_vector(first, pattern, spans), *(f.result() for f in later)]
        finally:
            with self._encoding_lock:
                self._encoding -= 1
