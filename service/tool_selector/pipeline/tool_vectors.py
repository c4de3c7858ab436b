"""A catalog's tool vectors: what they are, where they come from, when they are ready.

``ToolVectors`` finds a request's catalog entry (``CatalogStore``; each ensemble part after
the first embeds a tool's ``static_text``) and has its embedding matrix per encoder: kept on
the entry, else from the embedding cache tiers, else encoded now when the embedding is
predicted to fit the request's deadline, else queued to the background jobs (the request is
answered by another arm meanwhile, ``ToolMatrix.deferred``). An ensemble's matrix is its
parts' matrices joined once every part's is at hand, each part embedded and cached under its
own model id.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import numpy.typing as npt

from tool_selector.embeddings.cache import EmbeddingCache, MemoryCache
from tool_selector.embeddings.encoder import Encoder, Ensemble
from tool_selector.embeddings.static import static_text
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.catalog_store import CatalogEntry, CatalogStore, Found, stack
from tool_selector.pipeline.helper import Helper, side_by_side
from tool_selector.pipeline.jobs import EmbeddingJobs
from tool_selector.ranking.bm25 import FieldWeights
from tool_selector.ranking.catalog import Catalog, build_catalog
from tool_selector.ranking.dense import FloatArray
from tool_selector_client.wire import Tool

#: Encode at most this many texts per batch in a job, storing each batch as it completes
#: (``TOOL_SELECTOR_EMBED_BATCH_SIZE``): ONNX Runtime keeps the peak working memory of the
#: largest batch it has run, about 450 MB at 64 long tool texts and 220 MB at 16.
DEFAULT_BATCH = 16


#: Seconds a rescue may spend on the shortlist's leaders (``Shortlist.rescue``; the service
#: reads ``TOOL_SELECTOR_SHORTLIST_RESCUE_MS``): a static answer that says no match is read by
#: the models when they are predicted to take no more, well inside a proxy's 1-2 s timeout.
#: The agent set's ten leaders of a need answered empty before: 1,500-1,600 characters for
#: MiniLM, 680-760 for bge-small, so 70-75 ms side by side at a 2-vCPU Intel Xeon's start-up
#: rates (45 / 63 us a character), 260-300 ms at the slowest rates seen (0.17 / 0.39 ms),
#: 600-650 ms at the default before any measure (0.4 ms, calibration off).
RESCUE_SECONDS = 0.5
#: Bytes of the shortlist's own vectors kept (``Shortlist.kept``): about 2,700 vectors of
#: 384 floats, the leaders of 130 catalogs.
SHORTLIST_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class Shortlist:
    """Where the shortlist arm's vectors of a new catalog's leaders come from (``rows``):
    the seconds a request may wait for them, counted from when its catalog is at hand
    (``ArmRequest.started``); the cache they are read from (the vectors the catalogs' jobs
    embedded); and ``kept``, where the vectors it encodes are kept for the next requests,
    apart: the int8 models' dynamic quantization reads each batch, so a leader's vector
    from a batch of ten differs a little from the one a catalog's batch gives, and a
    catalog's matrix is made of its own batches' vectors only (the same as an in-process
    run makes them), whatever was shortlisted before. ``rescue``: the seconds the leaders
    may take, predicted, when the static answer said no match (``ArmRequest.rescue``), or
    what is left of the deadline if more."""

    deadline: float
    cache: EmbeddingCache
    kept: EmbeddingCache = field(default_factory=lambda: MemoryCache(SHORTLIST_BYTES))
    rescue: float = RESCUE_SECONDS

    def room(self, started: float, *, rescue: bool = False) -> float:
        """The seconds the leaders' encode may take now: what is left of the deadline,
        counted from ``started`` (when the catalog was at hand); a rescue's own, if more."""
        left = self.deadline - (time.perf_counter() - started)
        return max(left, self.rescue) if rescue else left


@dataclass(frozen=True, slots=True)
class ToolMatrix:
    """The catalog's embedding matrix if it could be had in time, and what that took."""

    matrix: FloatArray | None = None
    hits: int = 0
    misses: int = 0
    deferred: bool = False


class ToolVectors:
    """The catalog entries and their tool vectors (thread-safe).

    ``embed_deadline`` (seconds) bounds the embedding work one request may wait for; past
    it the work is queued on ``jobs``. ``batch_size`` texts are encoded at a time.
    ``helper``: the thread a second model encodes the shortlist's leaders on (``rows``),
    shared with the query vectors' (``QueryVectors``).
    """

    def __init__(
        self,
        cache: EmbeddingCache,
        catalogs: CatalogStore,
        jobs: EmbeddingJobs,
        fields: FieldWeights,
        *,
        embed_deadline: float,
        batch_size: int,
        shortlist: Shortlist | None = None,
        helper: Helper | None = None,
    ) -> None:
        self.cache, self.catalogs, self.jobs, self.fields = cache, catalogs, jobs, fields
        self.helper = Helper() if helper is None else helper
        self.embed_deadline = embed_deadline
        self.shortlist = Shortlist(embed_deadline, cache) if shortlist is None else shortlist
        self.batch_size = max(1, batch_size)

    def entry(self, tools: ToolSource, encoders: Ensemble | None) -> Found:
        """The catalog store's entry for ``tools``, found or built. Each part of the ensemble
        after the first (a retrieval model trained on passages of prose: bge-small) embeds a
        tool's name, description and search text (``static_text``), not its parameters
        (docs/quality.md, "What the second encoder reads of a tool, and the bar's reach")."""
        found = self.catalogs.find(tools, self._build)
        _read_as(found.entry, encoders)
        return found

    def calibrate(self, encoders: Ensemble, tools: list[Tool]) -> None:
        """Measure each model's rate on ``tools``' texts (``pipeline.calibration``), in calls
        of half of them (9: under ``onnx.BATCH_TEXTS``, so on the one-thread session a
        request's own encodes use, not the background's): two texts to warm it (as close as
        nine, measured), then each half timed and fed to the jobs' prediction. The catalog
        is built apart: nothing is stored or cached."""
        entry = CatalogEntry.of(self._build(tools))
        _read_as(entry, encoders)
        for part in encoders.parts:
            texts = entry.texts(part.model_id)
            half = len(texts) // 2  # 9: the session a request's own encodes run on
            part.encode(texts[:2])
            self._encode(part, texts[:half])
            self._encode(part, texts[half:])

    def _build(self, tools: list[Tool]) -> Catalog:
        return build_catalog(tools, self.fields)

    def matrix(self, encoders: Ensemble, found: Found, started: float) -> ToolMatrix:
        """The catalog's matrix for ``encoders`` if it can be had by the deadline (counted
        from ``started``): each part's (``_part``), joined and kept on the entry once all
        are at hand; else none (another arm answers)."""
        entry = found.entry
        matrix = entry.matrix(encoders.model_id)
        if matrix is not None:
            return ToolMatrix(matrix, hits=len(entry.catalog))
        got = [self._part(part, found, started) for part in encoders.parts]
        hits, misses = sum(g.hits for g in got), sum(g.misses for g in got)
        deferred = any(g.deferred for g in got)
        matrices = [g.matrix for g in got if g.matrix is not None]
        if len(matrices) < len(got):
            return ToolMatrix(None, hits, misses, deferred)
        matrix = encoders.combine(matrices)
        entry.set_matrix(encoders.model_id, matrix)
        return ToolMatrix(matrix, hits, misses, deferred)

    def _part(self, encoder: Encoder, found: Found, started: float) -> ToolMatrix:
        """One model's matrix: kept, cached, encoded within the deadline, or queued."""
        model, entry = encoder.model_id, found.entry
        matrix = entry.matrix(model)
        if matrix is not None:
            return ToolMatrix(matrix, hits=len(entry.catalog))
        cached = self.cache.get_many(entry.keys(model), encoder.dim)
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
        texts = entry.texts(model)
        missing = [texts[i] for i, v in enumerate(cached) if v is None]
        if self.jobs.estimate(model, missing) <= remaining:
            done = self.jobs.run_inline(job, lambda: self.complete(Ensemble.of(encoder), entry))
            return ToolMatrix(done, hits, misses)
        self.jobs.enqueue(job, self._background(encoder, found.key, entry))
        return ToolMatrix(None, hits, misses, deferred=True)

    def rows(
        self,
        encoders: Ensemble,
        found: Found,
        positions: npt.NDArray[np.intp],
        started: float,
        *,
        rescue: bool = False,
    ) -> list[FloatArray] | None:
        """Each model's vectors of the tools at ``positions`` (``Selector``'s shortlist): the
        entry's matrix rows, the catalogs' cache's or the shortlist's own, the rest encoded
        now and kept (``Shortlist.kept``) when all are predicted to fit (``Shortlist.room``);
        else none (nothing encoded). With the helper thread free the models encode side by
        side and the longest one's prediction is the cost; else one after another, the sum."""
        kept, entry = self.shortlist.kept, found.entry
        parts, at = encoders.parts, [int(i) for i in positions]
        keys = [[each[i] for i in at] for each in (entry.keys(p.model_id) for p in parts)]
        got: list[list[FloatArray | None]] = []
        for part, own in zip(parts, keys, strict=True):
            matrix = entry.matrix(part.model_id)
            got.append(list(matrix[at]) if matrix is not None else self._cached(own, part.dim))
        gaps = [[j for j, v in enumerate(vectors) if v is None] for vectors in got]
        texts = [
            [entry.texts(p.model_id)[at[j]] for j in g] for p, g in zip(parts, gaps, strict=True)
        ]
        todo = [i for i, new in enumerate(texts) if new]
        helper = self.helper.take() if len(todo) > 1 else None
        try:
            costs = [self.jobs.estimate(parts[i].model_id, texts[i]) for i in todo]
            # side by side: the first here, the others in turn on the one helper thread
            cost = max(costs[0], sum(costs[1:])) if helper is not None else sum(costs)
            if todo and cost > self.shortlist.room(started, rescue=rescue):
                return None  # nothing to encode needs no time
            for i, fresh in self._side_by_side(parts, texts, todo, helper).items():
                _keep(kept, keys[i], got[i], gaps[i], fresh)
        finally:
            if helper is not None:
                self.helper.leave()
        return [stack(vectors, part.dim) for part, vectors in zip(parts, got, strict=True)]

    def _cached(self, keys: list[bytes], dim: int) -> list[FloatArray | None]:
        """The shortlist's vectors of ``keys``: its own (the same as the last shortlist that
        read them; no round trip to a Redis tier), else the catalogs' cache's."""
        got = self.shortlist.kept.get_many(keys, dim)
        gaps = [j for j, v in enumerate(got) if v is None]
        if gaps and self.shortlist.kept is not self.shortlist.cache:
            for j, v in zip(
                gaps, self.shortlist.cache.get_many([keys[j] for j in gaps], dim), strict=True
            ):
                got[j] = v
        return got

    def _side_by_side(
        self,
        parts: tuple[Encoder, ...],
        texts: list[list[str]],
        todo: list[int],
        helper: ThreadPoolExecutor | None,
    ) -> dict[int, FloatArray]:
        """The vectors of ``texts[i]`` by ``parts[i]`` for each ``i`` in ``todo``: the first
        in this thread, the others on ``helper`` meanwhile (without it, here in turn;
        ``helper.side_by_side``)."""
        if not todo:
            return {}
        one, others = side_by_side(
            helper,
            partial(self._encode, parts[todo[0]], texts[todo[0]]),
            [partial(self._encode, parts[i], texts[i]) for i in todo[1:]],
        )
        return dict(zip(todo, [one, *others], strict=True))

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

    def complete(
        self,
        encoders: Ensemble,
        entry: CatalogEntry,
        *,
        stoppable: bool = False,
        yielding: bool = False,
    ) -> FloatArray:
        """Every part's matrix (kept, or its tool texts the caches lack embedded now, in
        chunks stored as they finish), joined and kept on the entry.

        ``stoppable`` (background and warm-up work, never a request's own): raises
        ``EmbeddingStopped`` between chunks once the jobs are closing (shutdown).
        ``yielding`` (warm-up): waits between chunks while requests' catalogs are embedded.
        """
        matrices = []
        for part in encoders.parts:
            model = part.model_id
            kept = entry.matrix(model)
            if kept is None:
                keys, texts = entry.keys(model), entry.texts(model)
                kept = self._embed(part, keys, texts, stoppable=stoppable, yielding=yielding)
                entry.set_matrix(model, kept)
            matrices.append(kept)
        matrix = encoders.combine(matrices)
        entry.set_matrix(encoders.model_id, matrix)
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
        ``batch_size`` and stored as each batch finishes (``_keep``)."""
        found = self.cache.get_many(keys, encoder.dim)
        missing = [i for i, v in enumerate(found) if v is None]
        for start in range(0, len(missing), self.batch_size):
            if yielding:
                self.jobs.yield_to_asked()
            if stoppable:
                self.jobs.checkpoint()
            chunk = missing[start : start + self.batch_size]
            fresh = self._encode(encoder, [texts[i] for i in chunk])
            _keep(self.cache, keys, found, chunk, fresh)
        return stack(found, encoder.dim)

    def _encode(self, encoder: Encoder, texts: list[str]) -> FloatArray:
        """``encoder``'s vectors of ``texts``, its time fed to the jobs' prediction."""
        began = time.perf_counter()
        fresh = encoder.encode(texts)
        self.jobs.observe(encoder.model_id, texts, time.perf_counter() - began)
        return fresh

    def warm(self, tools: list[Tool], encoders: Ensemble | None) -> int:
        """Build and fully embed one tool catalog now, in this thread (start-up warm-up).

        Returns how many tool texts had to be encoded (the rest came from the caches).
        """
        entry = self.entry(ToolSource.of(tools), encoders).entry
        if (
            encoders is None
            or not len(entry.catalog)
            or entry.matrix(encoders.model_id) is not None
        ):
            return 0
        found = [
            v for p in encoders.parts for v in self.cache.get_many(entry.keys(p.model_id), p.dim)
        ]
        self.complete(encoders, entry, stoppable=True, yielding=True)
        return sum(v is None for v in found)

    def embedded(
        self, tools: list[Tool], encoders: Ensemble | None
    ) -> tuple[Catalog, FloatArray | None]:
        """The catalog of ``tools`` and its embedding matrix, embedding it now if it must."""
        entry = self.entry(ToolSource.of(tools), encoders).entry
        if encoders is None or not len(entry.catalog):
            return entry.catalog, None
        matrix = entry.matrix(encoders.model_id)
        return entry.catalog, matrix if matrix is not None else self.complete(encoders, entry)


def _read_as(entry: CatalogEntry, encoders: Ensemble | None) -> None:
    """Each part after the first reads ``static_text`` of a tool (``ToolVectors.entry``)."""
    for part in encoders.parts[1:] if encoders is not None else ():
        entry.read_as(part.model_id, static_text)


def _keep(
    cache: EmbeddingCache,
    keys: list[bytes],
    found: list[FloatArray | None],
    at: list[int],
    fresh: FloatArray,
) -> None:
    """``fresh`` (the vectors of the texts at ``at``, in order) put in ``found`` at those
    places and in ``cache`` under their keys. Each a copy: a row view would keep its whole
    batch alive for as long as the cache keeps the row."""
    rows = [np.array(fresh[j], dtype=np.float32) for j in range(len(at))]
    for j, i in enumerate(at):
        found[i] = rows[j]
    cache.put_many([(keys[i], rows[j]) for j, i in enumerate(at)])
