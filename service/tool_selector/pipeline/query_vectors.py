"""A pattern's query vectors: read once per model, kept in a bounded cache.

``QueryVectors.vector`` gives a pattern's vector (one per window for a long pattern,
``ranking.dense.windows``) for an ensemble: each part's from the cache under its own model
id, or encoded as a query (``encode_query``); the parts after the first on the helper thread
(``pipeline.helper``) while no other request is encoding.
With the spans of a multi-step pattern's clauses, the same forward pass reads the clauses'
vectors into the cache too (``step_vectors``).

``QueryVectors.early`` starts those later parts on the helper as soon as the pattern is read,
before the selector looks its catalog up (the raw bytes' name and the BM25 scores run beside
it), and gives the request its futures (``Ahead``): its ``vector`` then encodes the first part
in its own thread and takes the others from them. The futures are the request's own, so
nothing is left behind when its path needs no vector. The vectors are the ones ``one`` gives
either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import partial

import numpy as np

from tool_selector.embeddings.encoder import Encoder, Ensemble, encode_query
from tool_selector.pipeline.helper import Helper, side_by_side
from tool_selector.pipeline.step_vectors import QueryCache, Spans, read_spans, wants_spans
from tool_selector.ranking.dense import FloatArray, windows

_Key = tuple[str, str, tuple[tuple[int, int], ...]]
#: The vectors the helper is encoding ahead of one request (``QueryVectors.early``), by
#: model, pattern and clauses: the request's own, each taken once by its ``vector``.
Ahead = dict[_Key, Future[tuple[FloatArray, bool]]]
#: Work on the first model's query vector while the later ones are read (``vector``).
Meanwhile = Callable[[FloatArray], None]


class QueryVectors:
    """Query vectors by (model id, pattern) in ``cache`` (thread-safe); ``helper``: the
    thread the later parts are encoded on (shared with the shortlist's encodes)."""

    def __init__(self, cache: QueryCache, helper: Helper | None = None) -> None:
        self.cache = cache
        self.helper = Helper() if helper is None else helper

    def vector(
        self,
        encoders: Ensemble,
        pattern: str,
        spans: Spans = (),
        ahead: Ahead | None = None,
        meanwhile: Meanwhile | None = None,
    ) -> tuple[FloatArray, bool]:
        """The pattern's vector (d,), or one per window (w, d) for a long pattern, and
        whether every part's came from the cache: the parts' joined (``Ensemble.combine``),
        or the ensemble's own when a caller cached it whole (``lint.probes.prefill``).
        ``ahead``: the request's parts the helper is encoding (``early``). ``meanwhile``:
        called in this thread with the first part's vector once it is read, before the
        others are waited for (work that needs only it runs while the helper encodes)."""
        if encoders.several:
            whole = self.cache.get((encoders.model_id, pattern))
            if whole is not None:
                return whole, True
        got = self._parts(encoders, pattern, spans, ahead, meanwhile)
        return encoders.combine([v for v, _ in got]), all(c for _, c in got)

    def one(
        self, encoder: Encoder, pattern: str, spans: Spans = (), ahead: Ahead | None = None
    ) -> tuple[FloatArray, bool]:
        """One model's vector of ``pattern`` and whether it came from the cache. With
        ``spans`` the same pass reads the clauses' vectors into the cache
        (``step_vectors.read_spans``) when the model can and the cache lacks them. One the
        helper is encoding ahead for this request (``ahead``) is taken from it when done."""
        pending = ahead.pop(_key(encoder, pattern, spans), None) if ahead else None
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

    def early(self, encoders: Ensemble, pattern: str, spans: Spans = ()) -> Ahead:
        """Start the parts after the first on the helper thread now, when no other request
        is encoding and the cache lacks them (nor holds the ensemble's whole vector), and
        give the request their futures for its ``vector`` (same ``spans``). The request
        counts as encoding until the last is done. Nothing for one model."""
        if encoders.several and self.cache.get((encoders.model_id, pattern)) is not None:
            return {}
        rest = [p for p in encoders.parts[1:] if self.cache.get((p.model_id, pattern)) is None]
        if not rest:
            return {}
        helper = self.helper.take()
        if helper is None:
            return {}
        ahead: Ahead = {}
        try:
            for n, part in enumerate(rest, 1):
                read = self._read if n < len(rest) else self._read_and_settle
                ahead[_key(part, pattern, spans)] = helper.submit(read, part, pattern, spans)
        except RuntimeError:  # the helper is shut down: the last never ran
            self.helper.leave()
            return {}
        return ahead

    def _read_and_settle(
        self, encoder: Encoder, pattern: str, spans: Spans
    ) -> tuple[FloatArray, bool]:
        """The last early part: the request no longer counts as encoding once it is read
        (before its future is done, so the request it wakes finds the helper free)."""
        try:
            return self._read(encoder, pattern, spans)
        finally:
            self.helper.leave()

    def _parts(
        self,
        encoders: Ensemble,
        pattern: str,
        spans: Spans,
        ahead: Ahead | None,
        meanwhile: Meanwhile | None,
    ) -> list[tuple[FloatArray, bool]]:
        """Each part's ``one``: the parts after the first on the helper thread while no
        other request is encoding, else one after another in this thread (a part the
        helper is encoding ``ahead`` is taken from it either way; parts the cache holds
        whole are read here, without the helper's hand-over); ``meanwhile`` of the first
        part's vector before the others are read or waited for."""
        first, rest = encoders.parts[0], encoders.parts[1:]
        if not rest:
            return [self._first(first, pattern, spans, ahead, meanwhile)]
        kept = [] if ahead else [self._kept(part, pattern, spans) for part in rest]
        cached = [v for v in kept if v is not None]
        if kept and len(cached) == len(kept):
            got = self._first(first, pattern, spans, ahead, meanwhile)
            return [got, *((v, True) for v in cached)]
        helper = self.helper.enter()
        try:
            got, others = side_by_side(
                helper,
                partial(self._first, first, pattern, spans, ahead, meanwhile),
                [partial(self.one, part, pattern, spans, ahead) for part in rest],
            )
            return [got, *others]
        finally:
            self.helper.leave()

    def _kept(self, encoder: Encoder, pattern: str, spans: Spans) -> FloatArray | None:
        """``encoder``'s cached vector of ``pattern`` when the cache holds everything
        ``_read`` would read (its clauses' too): what ``_read`` gives, nothing to encode, no
        need of the helper; else ``None``."""
        cached = self.cache.get((encoder.model_id, pattern))
        if cached is None or wants_spans(encoder, self.cache, pattern, spans):
            return None
        return cached

    def _first(
        self,
        encoder: Encoder,
        pattern: str,
        spans: Spans,
        ahead: Ahead | None,
        meanwhile: Meanwhile | None,
    ) -> tuple[FloatArray, bool]:
        """The first part's ``one``, handed to ``meanwhile`` as soon as it is read."""
        got = self.one(encoder, pattern, spans, ahead)
        if meanwhile is not None:
            meanwhile(got[0])
        return got


def _key(encoder: Encoder, pattern: str, spans: Spans) -> _Key:
    """What an early vector is found by: the model, the pattern and the clauses read with it."""
    return encoder.model_id, pattern, tuple(spans)
