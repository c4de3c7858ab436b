"""A pattern's query vectors: read once per model, kept in a bounded cache.

``QueryVectors.vector`` gives a pattern's vector (one per window for a long pattern,
``ranking.dense.windows``) for an ensemble: each part's from the cache under its own model
id, or encoded as a query (``encode_query``); the parts after the first on a helper thread
while no other request is encoding (ONNX Runtime leaves the GIL, so the idle core takes them).
With the spans of a multi-step pattern's clauses, the same forward pass reads the clauses'
vectors into the cache too (``step_vectors``).

``QueryVectors.early`` starts those later parts on the helper as soon as the pattern is read,
before the selector looks its catalog up (at 4,000 tools the raw bytes' hash and the BM25
scores take about 1.3 ms): the request's ``vector`` then encodes the first part in its own
thread and takes the others from the helper (``one`` waits for a vector the helper is
encoding, never encodes it twice). The vectors are the ones ``one`` gives either way.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from tool_selector.embeddings.encoder import Encoder, Ensemble, encode_query
from tool_selector.pipeline.step_vectors import QueryCache, Spans, read_spans, wants_spans
from tool_selector.ranking.dense import FloatArray, windows


class QueryVectors:
    """Query vectors by (model id, pattern) in ``cache`` (thread-safe)."""

    def __init__(self, cache: QueryCache) -> None:
        self.cache = cache
        self._helper: ThreadPoolExecutor | None = None
        self._encoding, self._lock = 0, threading.Lock()
        #: Vectors the helper is encoding ahead of their request (``early``).
        self._pending: dict[_Key, Future[tuple[FloatArray, bool]]] = {}

    def vector(
        self, encoders: Ensemble, pattern: str, spans: Spans = ()
    ) -> tuple[FloatArray, bool]:
        """The pattern's vector (d,), or one per window (w, d) for a long pattern, and
        whether every part's came from the cache: the parts' joined (``Ensemble.combine``),
        or the ensemble's own when a caller cached it whole (``lint.probes.prefill``)."""
        if encoders.several:
            whole = self.cache.get((encoders.model_id, pattern))
            if whole is not None:
                return whole, True
        got = self._parts(encoders, pattern, spans)
        return encoders.combine([v for v, _ in got]), all(c for _, c in got)

    def one(self, encoder: Encoder, pattern: str, spans: Spans = ()) -> tuple[FloatArray, bool]:
        """One model's vector of ``pattern`` and whether it came from the cache. With
        ``spans`` the same pass reads the clauses' vectors into the cache
        (``step_vectors.read_spans``) when the model can and the cache lacks them. One the
        helper is encoding ahead (``early``) is taken from it when done."""
        with self._lock:
            pending = self._pending.pop(_key(encoder, pattern, spans), None)
        if pending is not None:
            return pending.result()
        return self._read(encoder, pattern, spans)

    def _read(self, encoder: Encoder, pattern: str, spans: Spans) -> tuple[FloatArray, bool]:
        cached = self.cache.get((encoder.model_id, pattern))
        if wants_spans(encoder, self.cache, pattern, spans):
            read = read_spans(encoder, self.cache, pattern, spans)
            if cached is None:
                self.cache.put((encoder.model_id, pattern), read)
            return (read if cached is None else cached), False
        if cached is not None:
            return cached, True
        parts = windows(pattern)
        encoded = encode_query(encoder, parts)
        vec: FloatArray = np.ascontiguousarray(
            encoded[0] if len(parts) == 1 else encoded, dtype=np.float32
        )
        vec.setflags(write=False)
        self.cache.put((encoder.model_id, pattern), vec)
        return vec, False

    def many(self, encoder: Encoder, texts: Sequence[str]) -> list[FloatArray]:
        """``one`` of each text, those the cache lacks encoded in one call (as queries, so a
        clause reads as the whole pattern does)."""
        got = [self.cache.get((encoder.model_id, t)) for t in texts]
        missing = [i for i, v in enumerate(got) if v is None]
        parts = [windows(texts[i]) for i in missing]
        flat = [w for ws in parts for w in ws]
        encoded = encode_query(encoder, flat) if flat else np.zeros((0, encoder.dim), np.float32)
        at = 0
        for i, ws in zip(missing, parts, strict=True):
            rows = encoded[at : at + len(ws)]
            vec = np.ascontiguousarray(rows[0] if len(ws) == 1 else rows, dtype=np.float32)
            vec.setflags(write=False)
            self.cache.put((encoder.model_id, texts[i]), vec)
            got[i], at = vec, at + len(ws)
        return [v for v in got if v is not None]

    def early(self, encoders: Ensemble, pattern: str, spans: Spans = ()) -> None:
        """Start the parts after the first on the helper thread now, when no other request
        is encoding and the cache lacks them; the request counts as encoding until they are
        done, and its ``vector`` takes them (same ``spans``; each is taken once, and those
        a request never took, its path needing no vector, are dropped by the next
        ``early``: no request encodes then, so they are done). Nothing for one model."""
        rest = [p for p in encoders.parts[1:] if self.cache.get((p.model_id, pattern)) is None]
        if not rest:
            return
        with self._lock:
            if self._encoding:
                return
            self._encoding += 1
            if self._helper is None:
                self._helper = ThreadPoolExecutor(1, thread_name_prefix="query-encode")
            keys = [_key(p, pattern, spans) for p in rest]
            futures = [self._helper.submit(self._read, p, pattern, spans) for p in rest]
            self._pending = dict(zip(keys, futures, strict=True))
        futures[-1].add_done_callback(self._settled)

    def _settled(self, _: Future[tuple[FloatArray, bool]]) -> None:
        """The early vectors are done (a failure is raised to the request that takes them):
        the request no longer counts as encoding."""
        with self._lock:
            self._encoding -= 1

    def _parts(
        self, encoders: Ensemble, pattern: str, spans: Spans
    ) -> list[tuple[FloatArray, bool]]:
        """Each part's ``one``: the parts after the first on the helper thread while no
        other request is encoding, else one after another in this thread."""
        first, rest = encoders.parts[0], encoders.parts[1:]
        if not rest:
            return [self.one(first, pattern, spans)]
        with self._lock:
            self._encoding += 1
            alone = self._encoding == 1
            if alone and self._helper is None:
                self._helper = ThreadPoolExecutor(1, thread_name_prefix="query-encode")
        try:
            if not alone or self._helper is None:
                return [self.one(part, pattern, spans) for part in encoders.parts]
            later = [self._helper.submit(self.one, part, pattern, spans) for part in rest]
            return [self.one(first, pattern, spans), *(f.result() for f in later)]
        finally:
            with self._lock:
                self._encoding -= 1


_Key = tuple[str, str, tuple[tuple[int, int], ...]]


def _key(encoder: Encoder, pattern: str, spans: Spans) -> _Key:
    """What an early vector is found by: the model, the pattern and the clauses read with it."""
    return encoder.model_id, pattern, tuple(spans)
